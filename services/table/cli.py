"""``felt table-service``: run the table service (configured from the environment)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "table-service",
        help="run the table service (gRPC); configured by REDIS_URL, FELT_TABLE_ADDR, ...",
        description="Run the table service. See services/table/server.py for the environment. "
        "It refuses to start without FELT_TOKEN_SECRET (32 bytes or more) and "
        "FELT_ADMIN_TOKEN unless development mode is asked for (--dev or FELT_DEV_MODE=1).",
    )
    p.add_argument(
        "--dev",
        action="store_true",
        help="development mode: the public development secret and service credential "
        "(never expose it)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from felt.service.logging import configure_logging
    from services.table.server import run_service

    configure_logging(dev=args.dev or None)
    return run_service(dev=args.dev)
