"""The lobby fuzzer's long run: ``python -m tests.fuzz.lobby --minutes 30`` (from the repo root).

Starts the table service, the lobby (with its history service) and an AI worker
in-process, on ``$DATABASE_URL``'s server (a database of its own, created and
dropped by the run) and ``$REDIS_URL`` with the DB index ``$FELT_TEST_REDIS_DB``
(default 14; DB 0 is refused, since every example flushes its DB), and runs the
state machine in batches until the time is up. Each new kind of violation is
shrunk to a minimal sequence, printed and then counted as known, so that the rest
of the run looks for other defects. Ends with the figures: calls, sequences,
minutes, violations. Exit status 1 if any violation was found.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import uuid

import asyncpg

from tests.conftest import with_redis_db
from tests.fuzz.command import fuzz_arguments, print_violations
from tests.fuzz.lobby.harness import Harness
from tests.fuzz.lobby.run import run_timed
from tests.fuzz.run import Report
from tests.integration.lobby.conftest import with_database


def _redis_url() -> str:
    base = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    db = int(os.environ.get("FELT_TEST_REDIS_DB", "14"))
    if db == 0:
        raise SystemExit("FELT_TEST_REDIS_DB must not be 0: the fuzzer flushes its DB")
    return with_redis_db(base, db)


async def _admin(url: str, sql: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


async def _main(args: argparse.Namespace) -> tuple[Report, Harness]:
    server = os.environ.get("DATABASE_URL")
    if not server:
        raise SystemExit("set DATABASE_URL to a PostgreSQL server (a database is made on it)")
    name = f"felt_lobby_fuzz_{uuid.uuid4().hex[:8]}"
    await _admin(server, f'CREATE DATABASE "{name}"')
    harness = Harness(with_database(server, name), _redis_url(), asyncio.get_running_loop())
    print(f"fuzzing the lobby on {name} and {harness.redis_url} for {args.minutes} min")
    try:
        await harness.prepare()
        report = await asyncio.to_thread(
            run_timed,
            harness,
            args.minutes,
            args.examples,
            args.steps,
            not args.no_shrink,
            lambda line: print(line, flush=True),
        )
    finally:
        await harness.close()
        await _admin(server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return report, harness


def _summary(harness: Harness, report: Report) -> None:
    print_violations(report.findings, harness.found)
    print(f"\n== calls by RPC and outcome ==\n{harness.coverage()}")
    print(
        f"\nhands dealt: {harness.hands}  refusals: {harness.refusals}"
        f"\ncalls: {harness.calls}  sequences: {harness.sequences}  "
        f"minutes: {report.minutes:.1f}  violations: {len(harness.found)}",
        flush=True,
    )


def main() -> None:
    args = fuzz_arguments(
        "python -m tests.fuzz.lobby", __doc__, examples=10, steps=30, shrink_seconds=120.0
    )
    report, harness = asyncio.run(_main(args))
    _summary(harness, report)
    sys.exit(1 if harness.found else 0)


if __name__ == "__main__":
    main()
