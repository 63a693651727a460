"""The table service's fixtures: ``table_env`` (a :class:`TableEnv`) and ``policies``.

The environment itself (servers, the client, watchers, policies) is in
``tests.integration.table.harness``, importable, so that test modules type
their fixtures with it and mypy checks every call.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import redis.asyncio as redis_async_lib

from tests.integration.table.harness import Policy, TableEnv, passive_policy, random_policy


@pytest.fixture
async def table_env(
    redis_url: str, redis: redis_async_lib.Redis, redis_prefix: str
) -> AsyncIterator[TableEnv]:
    env = TableEnv(redis_url, redis, f"{redis_prefix}ai:decisions")
    try:
        yield env
    finally:
        for watcher in env.watchers:
            await watcher.close()
        for channel in env.channels:
            await channel.close()
        for server in list(env.servers):
            await server.stop()


@pytest.fixture
def policies() -> dict[str, Policy]:
    return {"random": random_policy, "passive": passive_policy}
