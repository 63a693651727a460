"""``felt ai-worker``: run one AI worker (configured from the environment, flags override).

Operators scale by running more of these; see ``services/ai_worker/worker.py``
for the environment variables and the design.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "ai-worker",
        help="run an AI worker; configured by REDIS_URL, FELT_TABLE_TARGET, FELT_AI_TOKEN, ...",
        description=(
            "Run an AI worker: reads decision requests from the Redis consumer group and "
            "answers them through the table service. Environment: REDIS_URL, "
            "FELT_TABLE_TARGET, FELT_AI_TOKEN, FELT_AI_CONCURRENCY, FELT_AI_CLAIM_IDLE_MS, "
            "FELT_AI_METRICS_PORT (/metrics, /healthz, /readyz; 'off' disables), "
            "FELT_AI_STREAM, FELT_AI_GROUP, FELT_AI_MAX_DELIVERIES. Flags override them."
        ),
    )
    p.add_argument("--redis-url", help="Redis URL (REDIS_URL)")
    p.add_argument("--table-target", help="table service host:port (FELT_TABLE_TARGET)")
    p.add_argument("--concurrency", type=int, help="decisions in flight (FELT_AI_CONCURRENCY)")
    p.add_argument("--metrics-port", help="HTTP port, 0 for any, 'off' (FELT_AI_METRICS_PORT)")
    p.add_argument("--log-level", default="INFO", help="log level (default INFO)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import asyncio
    import sys

    from felt.config import settings as S
    from felt.config.settings import ConfigError
    from felt.service.logging import configure_logging
    from services.ai_worker.worker import WorkerConfig, serve

    configure_logging(level=args.log_level)
    flags: dict[S.Setting[Any], object] = {
        S.REDIS_URL: args.redis_url,
        S.FELT_TABLE_TARGET: args.table_target,
        S.FELT_AI_CONCURRENCY: args.concurrency,
        S.FELT_AI_METRICS_PORT: args.metrics_port,
    }
    try:
        config = WorkerConfig.from_env(S.overridden(flags))
    except ConfigError as exc:
        print(f"felt ai-worker: {exc}", file=sys.stderr, flush=True)
        return 2
    try:
        return asyncio.run(serve(config))
    except ConfigError as exc:  # refused at start (the shard count disagrees): exit 2
        print(f"felt ai-worker: {exc}", file=sys.stderr, flush=True)
        return 2
