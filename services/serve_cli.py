"""``felt serve`` on the command line: its options here, the program in ``services.serve``.

Kept apart so that building the ``felt`` parser does not import gRPC, Redis
and the services: ``services.serve`` is imported only when ``felt serve`` runs.
"""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "serve",
        help="run the table service and AI workers in one process (development)",
        description="Run the whole product in one process, for a laptop (what `make run` "
        "starts): a table service and AI workers on one Redis (REDIS_URL), with two demo "
        "tables where AI players of all three levels play. In production the same pieces "
        "run as separate processes (felt table-service, felt ai-worker); see deploy/.",
    )
    p.add_argument("--workers", type=int, default=2, help="AI workers in this process")
    p.add_argument(
        "--no-demo", dest="demo", action="store_false", help="do not open the demo tables"
    )
    p.add_argument(
        "--dev",
        action="store_true",
        help="development mode (also FELT_DEV_MODE=1): the public development token secret "
        "and the public development service credential (felt-development-service-token); "
        "without it FELT_TOKEN_SECRET and FELT_ADMIN_TOKEN are required",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from services.serve import run as serve

    return serve(args)
