"""``felt db migrate``: bring the lobby's PostgreSQL schema (``DATABASE_URL``) up to date."""

from __future__ import annotations

import argparse
from pathlib import Path

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
"""The lobby's versioned SQL migrations (``<version>_<name>.sql``), applied in order."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "db",
        help="the lobby's database: `felt db migrate` applies pending schema migrations",
        description="Manage the lobby's PostgreSQL schema (DATABASE_URL).",
    )
    sub = p.add_subparsers(dest="db_command", metavar="ACTION", required=True)
    m = sub.add_parser(
        "migrate",
        help="apply the pending migrations (idempotent; safe with several runners at once)",
    )
    m.add_argument("--database-url", help="PostgreSQL URL (default: $DATABASE_URL)")
    m.set_defaults(handler=run_migrate)


def run_migrate(args: argparse.Namespace) -> int:
    import asyncio
    import sys

    from felt.config.settings import DATABASE_URL
    from felt.storage.migrations import MigrationError, migrate

    dsn = args.database_url or DATABASE_URL.read()
    if not dsn:
        print("felt db migrate: set DATABASE_URL (or pass --database-url)", file=sys.stderr)
        return 2
    from services.lobby.postgres.skeletons import backfill_skeletons

    try:
        applied = asyncio.run(migrate(dsn, MIGRATIONS))
        backfill = asyncio.run(backfill_skeletons(dsn))
    except MigrationError as exc:
        print(f"felt db migrate: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"felt db migrate: cannot reach the database: {exc}", file=sys.stderr)
        return 1
    if applied:
        for m in applied:
            print(f"applied {m.version:04d}_{m.name}")
    else:
        print("the schema is up to date")
    if backfill.filled:
        print(f"name skeletons filled in for {backfill.filled} players")
    if backfill.look_alikes:
        print(
            f"{backfill.look_alikes} players keep names that look like an older player's "
            "(no skeleton recorded: see docs/operations.md)"
        )
    return 0
