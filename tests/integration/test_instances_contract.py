"""The instance-directory contract (``felt.storage.instances``), run against Redis and the fake."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest

from felt.storage.instances import MemoryTableInstances, RedisTableInstances, TableInstances
from felt.storage.redis_client import connect_redis


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _url_fixture(kind: str) -> str:
    """The fixture giving the URL of the server a Redis parameter runs on."""
    return "redis_cluster_url" if kind == "cluster" else "redis_url"


@pytest.fixture(params=["memory", "redis", "cluster"])
async def instances(request: pytest.FixtureRequest) -> AsyncIterator[TableInstances]:
    if request.param == "memory":
        yield MemoryTableInstances()
        return
    client = await connect_redis(request.getfixturevalue(_url_fixture(request.param)))
    directory = RedisTableInstances(client, f"test-{uuid.uuid4().hex}:")
    try:
        yield directory
    finally:
        keys = [k async for k in client.scan_iter(match=f"{directory.prefix}*")]
        keys.append(directory.index.encode())
        if keys:
            await client.delete(*keys)
        await client.aclose()


async def test_an_announced_address_is_found(instances: TableInstances) -> None:
    assert await instances.address_of("table-a") is None
    await instances.announce("table-a", "10.0.0.1:50051", 60_000)
    await instances.announce("table-b", "10.0.0.2:50051", 60_000)
    assert await instances.address_of("table-a") == "10.0.0.1:50051"
    assert await instances.address_of("table-b") == "10.0.0.2:50051"


async def test_announcing_again_replaces_the_address(instances: TableInstances) -> None:
    await instances.announce("table-a", "10.0.0.1:50051", 60_000)
    await instances.announce("table-a", "10.0.0.9:50051", 60_000)
    assert await instances.address_of("table-a") == "10.0.0.9:50051"


async def test_withdraw_only_its_own_address(instances: TableInstances) -> None:
    await instances.announce("table-a", "10.0.0.9:50051", 60_000)
    await instances.withdraw("table-a", "10.0.0.1:50051")  # an older incarnation's
    assert await instances.address_of("table-a") == "10.0.0.9:50051"
    await instances.withdraw("table-a", "10.0.0.9:50051")
    assert await instances.address_of("table-a") is None
    await instances.withdraw("table-a", "10.0.0.9:50051")  # nothing left: no error


async def test_an_address_lapses_unless_renewed(instances: TableInstances) -> None:
    if isinstance(instances, MemoryTableInstances):
        clock = _Clock()
        instances = MemoryTableInstances(clock)
        await instances.announce("table-a", "10.0.0.1:50051", 200)
        clock.now += 0.1
        await instances.announce("table-a", "10.0.0.1:50051", 200)  # renewed
        clock.now += 0.15
        assert await instances.address_of("table-a") == "10.0.0.1:50051"
        clock.now += 0.1
        assert await instances.address_of("table-a") is None
        return
    await instances.announce("table-a", "10.0.0.1:50051", 150)
    assert await instances.address_of("table-a") == "10.0.0.1:50051"
    await asyncio.sleep(0.3)
    assert await instances.address_of("table-a") is None


async def test_the_announced_instances_are_listed(instances: TableInstances) -> None:
    assert await instances.announced() == {}
    await instances.announce("table-a", "10.0.0.1:50051", 60_000)
    await instances.announce("table-b", "10.0.0.2:50051", 60_000)
    await instances.announce("table-b", "10.0.0.3:50051", 60_000)  # moved: listed once
    assert await instances.announced() == {"table-a": "10.0.0.1:50051", "table-b": "10.0.0.3:50051"}
    await instances.withdraw("table-a", "10.0.0.1:50051")
    assert await instances.announced() == {"table-b": "10.0.0.3:50051"}


async def test_a_lapsed_instance_is_not_listed(instances: TableInstances) -> None:
    if isinstance(instances, MemoryTableInstances):
        clock = _Clock()
        instances = MemoryTableInstances(clock)
        await instances.announce("table-a", "10.0.0.1:50051", 200)
        await instances.announce("table-b", "10.0.0.2:50051", 60_000)
        clock.now += 0.3
    else:
        await instances.announce("table-a", "10.0.0.1:50051", 150)
        await instances.announce("table-b", "10.0.0.2:50051", 60_000)
        await asyncio.sleep(0.3)
    assert await instances.announced() == {"table-b": "10.0.0.2:50051"}
    await instances.announce("table-a", "10.0.0.1:50051", 60_000)  # it came back
    assert await instances.announced() == {"table-a": "10.0.0.1:50051", "table-b": "10.0.0.2:50051"}
