"""The table-registry contract (``felt.storage.registry``).

Run against the Redis adapter and the fake.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from felt.storage.redis_client import connect_redis
from felt.storage.registry import MemoryTableRegistry, RedisTableRegistry, TableRegistry


def _url_fixture(kind: str) -> str:
    """The fixture giving the URL of the server a Redis parameter runs on."""
    return "redis_cluster_url" if kind == "cluster" else "redis_url"


@pytest.fixture(params=["memory", "redis", "cluster"])
async def registry(request: pytest.FixtureRequest) -> AsyncIterator[TableRegistry]:
    if request.param == "memory":
        yield MemoryTableRegistry()
        return
    prefix = f"test-{uuid.uuid4().hex}"
    client = await connect_redis(request.getfixturevalue(_url_fixture(request.param)))
    try:
        yield RedisTableRegistry(client, f"{prefix}:tables", f"{prefix}:quarantined")
    finally:
        await client.delete(f"{prefix}:tables", f"{prefix}:quarantined")
        await client.aclose()


async def test_registered_tables(registry: TableRegistry) -> None:
    assert not await registry.exists("a")
    assert await registry.table_ids() == set()
    await registry.add("a")
    await registry.add("a")
    await registry.add("b")
    assert await registry.exists("a")
    assert await registry.table_ids() == {"a", "b"}


async def test_quarantine_records(registry: TableRegistry) -> None:
    await registry.add("a")
    assert await registry.quarantine_reason("a") is None
    await registry.quarantine("a", {"reason": "bad fold", "version": 3})
    assert await registry.quarantine_reason("a") == "bad fold"
    assert await registry.quarantined_ids() == {"a"}
    assert await registry.quarantined() == {"a": {"reason": "bad fold", "version": 3}}
    assert await registry.exists("a")  # still registered: an operator repairs it


async def test_an_operators_note_is_its_own_reason(registry: TableRegistry) -> None:
    if isinstance(registry, RedisTableRegistry):
        await registry.redis.hset(registry.quarantine_key, "a", "hands off")
    else:
        assert isinstance(registry, MemoryTableRegistry)
        registry.quarantined_raw["a"] = "hands off"
    assert await registry.quarantine_reason("a") == "hands off"
    assert await registry.quarantined() == {"a": {"reason": "hands off"}}
