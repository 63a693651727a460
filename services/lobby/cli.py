"""``felt lobby``: run the lobby service (configured from the environment)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "lobby",
        help="run the lobby service (gRPC: players, sessions, chips); DATABASE_URL, ...",
        description="Run the lobby. See services/lobby/server.py for the environment. It "
        "refuses to start without FELT_LOBBY_ACCESS_SECRET and FELT_LOBBY_REFRESH_SECRET "
        "(32 bytes or more each), without FELT_ADMIN_TOKEN (the table service's service "
        "credential, at FELT_TABLE_ADDR) or on a schema `felt db migrate` has not brought up "
        "to date, unless development mode is asked for (--dev or FELT_DEV_MODE=1).",
    )
    p.add_argument(
        "--dev",
        action="store_true",
        help="development mode: public development secrets and service credential, the schema "
        "migrated at start",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from felt.service.logging import configure_logging
    from services.lobby.server import run_service

    configure_logging(dev=args.dev or None)
    return run_service(dev=args.dev)
