"""``felt decisions``: the sharded AI decision streams, for operators.

``felt decisions streams`` prints the shard streams of the current settings (what KEDA's
ScaledObject and ``redis-cli XINFO`` look at); ``felt decisions migrate`` moves an
unsharded deployment's ``<FELT_AI_STREAM>`` to them once
(``felt.storage.decisions.migrate``; docs/operations.md, "Redis Cluster").
Both read ``REDIS_URL``, ``FELT_AI_STREAM``, ``FELT_DECISION_SHARDS``, ``FELT_AI_GROUP``
and ``FELT_AI_DEAD_STREAM`` as the services do.
"""

from __future__ import annotations

import argparse
import asyncio

from felt.config import settings as S


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "decisions",
        help="the sharded AI decision streams: list them, migrate an unsharded one",
        description="The AI decision requests are sharded by table over FELT_DECISION_SHARDS "
        "streams <FELT_AI_STREAM>:{i}. `streams` lists them; `migrate` moves what the "
        "unsharded stream <FELT_AI_STREAM> of an older release still holds to them (run it "
        "once, with the old table services and AI workers stopped).",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    streams = actions.add_parser("streams", help="print the shard streams, one a line")
    streams.set_defaults(handler=run_streams)
    migrate = actions.add_parser(
        "migrate", help="move the unsharded decision stream to the shards (once)"
    )
    migrate.set_defaults(handler=run_migrate)


def run_streams(_args: argparse.Namespace) -> int:
    from felt.storage.decisions import shard_streams

    for stream in shard_streams(S.FELT_AI_STREAM.read(), S.FELT_DECISION_SHARDS.read()):
        print(stream)
    return 0


def run_migrate(_args: argparse.Namespace) -> int:
    from felt.storage.decisions.migrate import migrate_unsharded
    from felt.storage.redis_client import redis_from_url

    async def run() -> int:
        redis = redis_from_url(S.REDIS_URL.read() or S.LOCAL_REDIS)
        try:
            done = await migrate_unsharded(
                redis,
                S.FELT_AI_STREAM.read(),
                S.FELT_DECISION_SHARDS.read(),
                S.FELT_AI_GROUP.read(),
                S.FELT_AI_DEAD_STREAM.read(),
            )
        finally:
            await redis.aclose()
        print(f"moved {done.requests} unfinished requests and {done.dead_letters} dead letters")
        return 0

    return asyncio.run(run())
