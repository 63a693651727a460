"""``felt projector``: run one projector (configured from the environment, flags override)."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "projector",
        help="archive every finished hand into PostgreSQL; DATABASE_URL, REDIS_URL, ...",
        description=(
            "Run a projector: follows the registered tables' streams (shared with the other "
            "live projectors) and writes each finished hand into the archive exactly once. "
            "Environment: DATABASE_URL (required; schema from `felt db migrate`), REDIS_URL, "
            "FELT_PROJECTOR_ID, FELT_PROJECTOR_METRICS_PORT (/metrics, /healthz, /readyz; "
            "'off' disables), FELT_PROJECTOR_LEASE_MS, FELT_PROJECTOR_SCAN_MS, "
            "FELT_PROJECTOR_READ_COUNT, FELT_PROJECTOR_BLOCK_MS, FELT_PROJECTOR_POOL_SIZE. "
            "Flags override them."
        ),
    )
    p.add_argument("--database-url", help="PostgreSQL URL (DATABASE_URL)")
    p.add_argument("--redis-url", help="Redis URL (REDIS_URL)")
    p.add_argument("--id", help="this projector's member id (FELT_PROJECTOR_ID)")
    p.add_argument(
        "--metrics-port", help="HTTP port, 0 for any, 'off' (FELT_PROJECTOR_METRICS_PORT)"
    )
    p.add_argument(
        "--dev",
        action="store_true",
        help="development mode (FELT_DEV_MODE=1): wait a minute for the schema to be migrated",
    )
    p.add_argument("--log-level", default="INFO", help="log level (default INFO)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import sys

    from felt.config import settings as S
    from felt.service.logging import configure_logging
    from services.projector.config import ProjectorConfig
    from services.projector.server import run_service
    from services.settings import ConfigError

    configure_logging(level=args.log_level)
    flags: dict[S.Setting[Any], object] = {
        S.DATABASE_URL: args.database_url,
        S.REDIS_URL: args.redis_url,
        S.FELT_PROJECTOR_ID: args.id,
        S.FELT_PROJECTOR_METRICS_PORT: args.metrics_port,
        S.FELT_DEV_MODE: "1" if args.dev else None,
    }
    try:
        config = ProjectorConfig.from_env(S.overridden(flags))
    except ConfigError as exc:
        print(f"felt projector: {exc}", file=sys.stderr, flush=True)
        return 2
    return run_service(config)
