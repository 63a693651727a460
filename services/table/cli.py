"""``felt table-service``: run the table service (configured from the environment)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "table-service",
        help="run the table service (gRPC); configured by REDIS_URL, FELT_TABLE_ADDR, ...",
        description="Run the table service. See services/table/server.py for the environment.",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    from felt.logging import configure_logging
    from services.table.server import TableServerConfig, serve

    configure_logging(json=True)
    asyncio.run(serve(TableServerConfig.from_env()))
    return 0
