"""``felt gateway``: run the HTTP gateway (configured from the environment)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "gateway",
        help="run the HTTP gateway (Connect, gRPC-Web) in front of the lobby and table service",
        description="Serve the lobby's and the table service's APIs to browsers and apps on "
        "one HTTP port (FELT_GATEWAY_ADDR), with the web client at /. See "
        "services/gateway/config.py for the environment.",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from felt.service.logging import configure_logging
    from services.gateway.server import run_service

    configure_logging()
    return run_service()
