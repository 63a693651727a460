"""The event store's pipelined connections on a Redis Cluster (``cluster_pipeline``).

On a real three-master cluster: appends and reads go over the connection to the master of
each table's slot (one connection per master, not per table), and when the slot map is
wrong (the master asked replies ``MOVED``: it ran nothing) the store makes the call
through redis-py, which follows the redirection, so nothing is lost or written twice.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import cast

import pytest
from redis.asyncio import Redis, RedisCluster
from redis.asyncio.cluster import ClusterNode
from redis.exceptions import ResponseError

from felt.storage.eventstore import RedisEventStore, events_key
from felt.storage.eventstore.cluster_pipeline import ClusterPipelines, redirected
from felt.storage.eventstore.pipeline import Endpoint, RedisPipeline
from felt.storage.redis_client import connect_redis, redis_from_url


@pytest.fixture
async def client(redis_cluster_url: str) -> AsyncIterator[Redis]:
    """A cluster client, typed as the stores take it (``felt.storage.redis_client``)."""
    made = await connect_redis(redis_cluster_url)
    assert isinstance(made, RedisCluster)
    try:
        yield made
    finally:
        await made.aclose()


def _master(cluster: RedisCluster, key: str) -> ClusterNode:
    node = cluster.get_node_from_key(key)
    assert node is not None
    return node


def test_redirections_are_told_from_other_refusals() -> None:
    assert redirected(ResponseError("MOVED 3999 127.0.0.1:6381"))
    assert redirected(ResponseError("ASK 3999 127.0.0.1:6381"))
    assert redirected(ResponseError("TRYAGAIN Multiple keys request during rehashing of slot"))
    assert redirected(ResponseError("CLUSTERDOWN The cluster is down"))
    assert not redirected(ResponseError("NOSCRIPT No matching script"))
    assert not redirected(ResponseError("ERR wrong number of arguments"))


async def test_each_table_goes_to_the_master_of_its_slot(client: Redis) -> None:
    cluster = cast(RedisCluster, client)
    store = RedisEventStore(client)
    tables = [f"route-{uuid.uuid4().hex}" for _ in range(12)]
    try:
        for t in tables:
            await store.append(t, [b"a", b"b"], 0)
            assert [r.payload for r in await store.read(t)] == [b"a", b"b"]
        masters = {_master(cluster, events_key(t)).name for t in tables}
        assert store._nodes is not None
        assert set(store._nodes._pipes) == masters  # one connection per master
        assert len(masters) > 1
    finally:
        await store.aclose()
        await cluster.delete(*(events_key(t) for t in tables))


async def test_a_wrong_slot_map_falls_back_to_redis_py(
    client: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster = cast(RedisCluster, client)
    store = RedisEventStore(client)
    t = f"moved-{uuid.uuid4().hex}"
    right = _master(cluster, events_key(t))
    wrong = next(n for n in cluster.get_primaries() if n.name != right.name)
    # The map says another master holds the slot: that master answers MOVED, running nothing.
    monkeypatch.setattr(cluster, "get_node_from_key", lambda key, replica=False: wrong)
    try:
        first = await store.append(t, [b"a"], 0, "req-1", b"answer")
        again = await store.append(t, [b"a"], 0, "req-1", b"answer")
        assert (first.first_sequence, first.duplicate) == (1, False)
        assert again.duplicate and again.response == b"answer"
        await store.append(t, [b"b"], 1)
        assert [r.payload for r in await store.read(t)] == [b"a", b"b"]
        assert await store.version(t) == 2
    finally:
        monkeypatch.undo()
        await store.aclose()
        await cluster.delete(events_key(t))


async def test_a_store_made_from_a_cluster_url_learns_the_slot_map_first(
    redis_cluster_url: str,
) -> None:
    # Its first append raised SlotNotCoveredError: the client it made knew no slot yet.
    store = RedisEventStore.from_url(redis_cluster_url)
    t = f"from-url-{uuid.uuid4().hex}"
    try:
        await store.append(t, [b"a"], 0)
        assert [r.payload for r in await store.read(t)] == [b"a"]
    finally:
        await store._redis.delete(events_key(t))
        await store.aclose()


async def test_a_client_that_knows_no_slot_goes_through_redis_py(redis_cluster_url: str) -> None:
    fresh = redis_from_url(redis_cluster_url)
    try:
        pipes = ClusterPipelines(cast(RedisCluster, fresh), [])
        assert pipes.for_key("any-key") is None  # not SlotNotCoveredError
    finally:
        await fresh.aclose()


async def test_a_refresh_closes_the_pipes_of_nodes_no_longer_masters(client: Redis) -> None:
    cluster = cast(RedisCluster, client)
    pipes = ClusterPipelines(cluster, [])
    try:
        live = pipes.for_key("some-key")
        assert live is not None
        # A master that failed over: its pipe stays in the map under a name no master has.
        pipes._pipes["127.0.0.1:1"] = RedisPipeline(Endpoint(host="127.0.0.1", port=1))
        await pipes.refresh()
        assert "127.0.0.1:1" not in pipes._pipes
        assert list(pipes._pipes.values()) == [live]
    finally:
        await pipes.aclose()
