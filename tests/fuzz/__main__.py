"""The fuzzer's long run: ``python -m tests.fuzz --minutes 30`` (from the repository root).

Starts the table service in-process (as the integration tests do) on
``$REDIS_URL`` with the DB index ``$FELT_TEST_REDIS_DB`` (default 15; DB 0 is
refused, since every example flushes its DB), or on a private redis-server
when ``REDIS_URL`` is unset, and runs the state machine in batches until the
time is up. Each new kind of violation is shrunk to a minimal sequence, printed
and then counted as known, so that the rest of the run looks for other defects.
Ends with the figures: calls, sequences, minutes, violations. Exit status 1 if
any violation was found.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import uuid

import redis.asyncio as redis_async_lib

from felt_dev.devserver import ensure_redis
from tests.conftest import with_redis_db
from tests.fuzz.command import fuzz_arguments, print_violations
from tests.fuzz.machine import Harness
from tests.fuzz.run import Report, run_timed
from tests.integration.table.harness import TableEnv


def _redis_url() -> str:
    base = os.environ.get("REDIS_URL") or ensure_redis()
    db = int(os.environ.get("FELT_TEST_REDIS_DB", "15"))
    if db == 0:
        raise SystemExit("FELT_TEST_REDIS_DB must not be 0: the fuzzer flushes its DB")
    return with_redis_db(base, db)


async def _main(args: argparse.Namespace) -> tuple[Report, Harness]:
    url = _redis_url()
    client = redis_async_lib.Redis.from_url(url)
    env = TableEnv(url, client, f"fuzz{uuid.uuid4().hex[:8]}:ai:decisions")
    harness = Harness(env, asyncio.get_running_loop())
    print(f"fuzzing the table service on {url} for {args.minutes} min", flush=True)
    try:
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
        await harness.stop()
        await client.flushdb()
        await client.aclose()
    return report, harness


def _summary(harness: Harness, report: Report) -> None:
    print_violations(report.findings, harness.found)
    print(
        f"\nhands dealt: {harness.hands}  pots won at showdown: {harness.showdowns}"
        f"\ncalls: {harness.calls}  sequences: {harness.sequences}  "
        f"minutes: {report.minutes:.1f}  violations: {len(harness.found)}",
        flush=True,
    )


def main() -> None:
    args = fuzz_arguments(
        "python -m tests.fuzz", __doc__, examples=20, steps=40, shrink_seconds=60.0
    )
    report, harness = asyncio.run(_main(args))
    _summary(harness, report)
    sys.exit(1 if harness.found else 0)


if __name__ == "__main__":
    main()
