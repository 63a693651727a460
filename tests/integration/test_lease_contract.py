"""The table-lease contract (``felt.storage.eventstore.TableLeases``), run against both
implementations.

Leases are implemented by the event stores (see ``TableLeases`` for why), so
the fixture gives the in-memory store and the Redis one, seen as leases only.
Redis tests use a fresh random table id and delete its lease key afterwards.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable

import pytest

from felt.storage.eventstore import MemoryEventStore, RedisEventStore, TableLeases, lease_key
from felt.storage.redis_client import connect_redis


def _url_fixture(kind: str) -> str:
    return "redis_cluster_url" if kind == "cluster" else "redis_url"


@pytest.fixture(params=["memory", "redis", "cluster"])
async def leases(request: pytest.FixtureRequest) -> AsyncIterator[TableLeases]:
    if request.param == "memory":
        yield MemoryEventStore()
        return
    client = await connect_redis(request.getfixturevalue(_url_fixture(request.param)))
    store = RedisEventStore(client)
    try:
        yield store
    finally:
        await store.aclose()
        await client.aclose()


@pytest.fixture
async def new_table(request: pytest.FixtureRequest) -> AsyncIterator[Callable[[], str]]:
    """Makes unique table ids; deletes their lease keys afterwards (never anything else)."""
    made: list[str] = []

    def make() -> str:
        made.append(f"test-{uuid.uuid4().hex}")
        return made[-1]

    yield make
    kind = request.node.callspec.params.get("leases")
    if kind != "memory" and made:
        client = await connect_redis(request.getfixturevalue(_url_fixture(kind)))
        try:
            await client.delete(*(lease_key(t) for t in made))
        finally:
            await client.aclose()


async def test_ttl_must_be_positive(leases: TableLeases, new_table: Callable[[], str]) -> None:
    with pytest.raises(ValueError):
        await leases.acquire_lease(new_table(), "me", 0)


async def test_lease_is_exclusive(leases: TableLeases, new_table: Callable[[], str]) -> None:
    t = new_table()
    assert await leases.lease_owner(t) is None
    assert await leases.acquire_lease(t, "a", 10_000)
    assert await leases.acquire_lease(t, "a", 10_000)  # re-acquiring our own lease extends it
    assert not await leases.acquire_lease(t, "b", 10_000)
    assert await leases.lease_owner(t) == "a"
    assert not await leases.renew_lease(t, "b", 10_000)
    assert not await leases.release_lease(t, "b")
    assert await leases.renew_lease(t, "a", 10_000)
    assert await leases.release_lease(t, "a")
    assert not await leases.release_lease(t, "a")
    assert not await leases.renew_lease(t, "a", 10_000)
    assert await leases.acquire_lease(t, "b", 10_000)
    assert await leases.lease_owner(t) == "b"


async def test_concurrent_acquire_has_one_winner(
    leases: TableLeases, new_table: Callable[[], str]
) -> None:
    t = new_table()
    won = await asyncio.gather(*(leases.acquire_lease(t, f"o{i}", 10_000) for i in range(10)))
    assert sum(won) == 1
    assert await leases.lease_owner(t) == f"o{won.index(True)}"


async def test_lease_expires(leases: TableLeases, new_table: Callable[[], str]) -> None:
    t = new_table()
    assert await leases.acquire_lease(t, "a", 100)
    assert not await leases.acquire_lease(t, "b", 100)
    await asyncio.sleep(0.25)
    assert await leases.lease_owner(t) is None
    assert not await leases.renew_lease(t, "a", 100)  # too late: it expired
    assert await leases.acquire_lease(t, "b", 10_000)
    assert not await leases.release_lease(t, "a")
    assert await leases.lease_owner(t) == "b"


async def test_renew_keeps_the_lease(leases: TableLeases, new_table: Callable[[], str]) -> None:
    t = new_table()
    assert await leases.acquire_lease(t, "a", 150)
    for _ in range(4):
        await asyncio.sleep(0.075)
        assert await leases.renew_lease(t, "a", 150)
    assert not await leases.acquire_lease(t, "b", 150)
    assert await leases.lease_owner(t) == "a"
