"""The decision-queue contract (``felt.storage.decisions``), run against the Redis adapter
and the fake.

What the AI workers rely on: a request goes to one consumer, stays pending
until acknowledged, counts its deliveries, can be claimed by another consumer
once idle (and not while its holder keeps touching it), and is dead-lettered
together with its acknowledgement. Redis runs use a stream named per test.
"""

from __future__ import annotations

import asyncio
import socket
import uuid
import zlib
from collections.abc import AsyncIterator
from typing import cast

import pytest
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from felt.storage.decisions import (
    AI_STREAM,
    DecisionQueue,
    Entry,
    MemoryDecisionQueue,
    RedisDecisionQueue,
    ShardCountMismatch,
    ShardedDecisionQueue,
    agree_on_shards,
    ai_stream_from_env,
    dead_letter_stream,
    payload_of,
    redis_sharded_queue,
    shard_dead_stream,
    shard_of,
    shard_stream,
    shard_streams,
)
from felt.storage.redis_client import connect_redis
from poker.v1 import ai_pb2
from tests.integration.lost_cancellation import LosesOneCancellation

SHARDS = 3


@pytest.fixture(params=["memory", "redis", "sharded-memory", "sharded-redis", "sharded-cluster"])
async def queue(request: pytest.FixtureRequest) -> AsyncIterator[DecisionQueue]:
    """One stream (in memory, on Redis), and ``SHARDS`` streams by table (in memory, and on a
    Redis Cluster of three masters: what the services run)."""
    stream = f"test-{uuid.uuid4().hex}:decisions"
    if request.param == "memory":
        yield MemoryDecisionQueue(stream, "workers")
        return
    if request.param == "sharded-memory":
        shards: list[DecisionQueue] = [
            MemoryDecisionQueue(shard_stream(stream, i), "workers") for i in range(SHARDS)
        ]
        yield ShardedDecisionQueue(shards, stream)
        return
    if request.param == "redis":
        client = aioredis.Redis.from_url(request.getfixturevalue("redis_url"))
        try:
            yield RedisDecisionQueue(client, stream, "workers")
        finally:
            await client.delete(stream, dead_letter_stream(stream))
            await client.aclose()
        return
    if request.param == "sharded-redis":  # one server: one XREADGROUP over every shard
        client = aioredis.Redis.from_url(request.getfixturevalue("redis_url"))
        try:
            yield redis_sharded_queue(client, stream, SHARDS, "workers")
        finally:
            await client.delete(*shard_streams(stream, SHARDS))
            await client.delete(*(shard_dead_stream(stream, i) for i in range(SHARDS)))
            await client.aclose()
        return
    cluster = await connect_redis(request.getfixturevalue("redis_cluster_url"))
    try:
        yield redis_sharded_queue(cluster, stream, SHARDS, "workers")
    finally:
        for i in range(SHARDS):
            await cluster.delete(shard_stream(stream, i))
            await cluster.delete(shard_dead_stream(stream, i))
        await cluster.aclose()


async def dead_letters(queue: DecisionQueue) -> list[dict[bytes, bytes]]:
    """Every record in the queue's dead-letter stream(s)."""
    if isinstance(queue, MemoryDecisionQueue):
        return list(queue.dead)
    if isinstance(queue, ShardedDecisionQueue):
        return [r for shard in queue.shards for r in await dead_letters(shard)]
    redis = cast(RedisDecisionQueue, queue).redis
    entries = cast("list[tuple[bytes, dict[bytes, bytes]]]", await redis.xrange(queue.dead_stream))
    return [fields for _, fields in entries]


async def claim_round(queue: DecisionQueue, consumer: str, idle_ms: int, count: int) -> list[Entry]:
    """``claim_idle`` from ``0-0`` until the cursor comes back to it: one call may look at
    part of the pending entries only (a sharded queue: one shard per call)."""
    cursor: bytes | str = "0-0"
    taken: list[Entry] = []
    for _ in range(100):
        cursor, got = await queue.claim_idle(consumer, idle_ms, count - len(taken), cursor)
        taken += got
        if cursor in ("0-0", b"0-0") or len(taken) >= count:
            return taken
    raise AssertionError("claim_idle never came back to 0-0")


def request(n: int) -> ai_pb2.DecisionRequest:
    return ai_pb2.DecisionRequest(request_id=f"ai:t:{n}", table_id="t", seat=1)


def decoded(fields: object) -> ai_pb2.DecisionRequest:
    raw = payload_of(cast("dict[bytes, bytes]", fields))
    assert raw is not None
    return ai_pb2.DecisionRequest.FromString(raw)


def test_one_stream_name() -> None:
    assert ai_stream_from_env({}) == AI_STREAM == "felt:ai:decisions"
    assert ai_stream_from_env({"FELT_AI_STREAM": " mine "}) == "mine"
    assert dead_letter_stream("s") == "s:dead"


async def test_group_reads_what_came_before_it_too(queue: DecisionQueue) -> None:
    # Published before any worker made the group: read, not lost (the group starts at 0).
    await queue.publish(request(0))
    await queue.ensure_group()
    await queue.ensure_group()  # idempotent
    await queue.publish(request(1))
    await queue.publish(request(2))
    got = await queue.read("a", 10, 50)
    assert [decoded(e.fields).request_id for e in got] == ["ai:t:0", "ai:t:1", "ai:t:2"]
    assert cast("dict[bytes, bytes]", got[1].fields)[b"request_id"] == b"ai:t:1"
    assert await queue.read("b", 10, 50) == []  # each entry goes to one consumer
    stats = await queue.stats()
    assert stats is not None and stats.pending == 3 and stats.lag in (0, None)


async def test_read_waits_for_a_publish(queue: DecisionQueue) -> None:
    await queue.ensure_group()
    reader = asyncio.ensure_future(queue.read("a", 1, 2000))
    await asyncio.sleep(0.05)
    await queue.publish(request(7))
    [entry] = await asyncio.wait_for(reader, 3)
    assert decoded(entry.fields).request_id == "ai:t:7"


async def test_ack_and_delivery_counts(queue: DecisionQueue) -> None:
    await queue.ensure_group()
    await queue.publish(request(1))
    [entry] = await queue.read("a", 5, 50)
    assert await queue.delivery_counts("a", [entry.entry_id]) == {entry.entry_id: 1}
    assert await queue.delivery_counts("b", [entry.entry_id]) == {}
    assert not await queue.leave("a")  # it holds something
    await queue.ack(entry.entry_id)
    assert await queue.delivery_counts("a", [entry.entry_id]) == {}
    assert await queue.leave("a")
    stats = await queue.stats()
    assert stats is not None and stats.pending == 0


async def test_idle_entries_are_claimed_unless_touched(queue: DecisionQueue) -> None:
    await queue.ensure_group()
    for n in range(2):
        await queue.publish(request(n))
    first, second = await queue.read("a", 5, 50)
    claimed = await claim_round(queue, "b", 60_000, 10)
    assert claimed == []  # not idle long enough
    await asyncio.sleep(0.15)
    await queue.touch("a", [first.entry_id], 100)  # "a" is still working on the first
    claimed = await claim_round(queue, "b", 100, 10)
    assert [e.entry_id for e in claimed] == [second.entry_id]
    assert decoded(claimed[0].fields).request_id == "ai:t:1"
    assert await queue.delivery_counts("b", [second.entry_id]) == {second.entry_id: 2}
    assert await queue.delivery_counts("a", [first.entry_id]) == {first.entry_id: 1}
    await queue.touch("a", [second.entry_id], 60_000)  # taking it back needs it idle: not yet
    assert await queue.delivery_counts("b", [second.entry_id]) == {second.entry_id: 2}


async def test_dead_letter_acknowledges(queue: DecisionQueue) -> None:
    await queue.ensure_group()
    await queue.publish(request(3))
    [entry] = await queue.read("a", 1, 50)
    assert entry.fields is not None
    await queue.dead_letter("a", entry.entry_id, entry.fields, "poison: bad", "2024-01-01")
    stats = await queue.stats()
    assert stats is not None and stats.pending == 0
    [record] = await dead_letters(queue)
    assert record[b"reason"] == b"poison: bad"
    assert record[b"consumer"] == b"a"
    # The id in its own stream (a sharded queue's ids also name the shard).
    assert entry.entry_id.endswith(record[b"entry_id"])
    assert decoded(record).request_id == "ai:t:3"


async def test_prune_removes_idle_empty_consumers(queue: DecisionQueue) -> None:
    await queue.ensure_group()
    await queue.publish(request(1))
    await queue.publish(request(2))
    await queue.read("busy", 1, 50)
    [done] = await queue.read("idle", 1, 50)
    await queue.ack(done.entry_id)
    await asyncio.sleep(0.05)
    pruned = await queue.prune("me", 10)
    if isinstance(queue, ShardedDecisionQueue):
        # Per shard: "busy" also went from the shards it holds nothing of.
        assert "idle" in pruned and "me" not in pruned
    else:
        assert pruned == ["idle"]
    stats = await queue.stats()
    assert stats is not None and stats.consumers == 1  # "busy", which holds a request


async def test_trim_acknowledged_never_drops_a_pending_or_unread_request(
    queue: DecisionQueue,
) -> None:
    assert await queue.trim_acknowledged() == 0  # no group yet
    await queue.ensure_group()
    for n in range(5):
        await queue.publish(request(n))
    assert await queue.trim_acknowledged() == 0  # nothing delivered
    entries = await queue.read("a", 3, 50)  # 0, 1, 2 delivered; 3, 4 not yet
    await queue.ack(entries[0].entry_id)
    await queue.ack(entries[2].entry_id)
    assert await queue.trim_acknowledged() == 1  # 0 only: 1 is still pending
    # The pending one can still be claimed and read as it was.
    claimed = await claim_round(queue, "b", 0, 5)
    assert [decoded(e.fields).request_id for e in claimed] == ["ai:t:1"]
    await queue.ack(entries[1].entry_id)
    assert await queue.trim_acknowledged() == 2  # 1 and 2: all delivered are done
    rest = await queue.read("a", 5, 50)
    assert [decoded(e.fields).request_id for e in rest] == ["ai:t:3", "ai:t:4"]
    assert await queue.trim_acknowledged() == 0  # 3, 4 pending
    for e in rest:
        await queue.ack(e.entry_id)
    assert await queue.trim_acknowledged() == 2
    await queue.publish(request(9))
    [last] = await queue.read("a", 5, 50)
    assert decoded(last.fields).request_id == "ai:t:9"


# ---------------------------------------------------------------------- sharding by table


def test_a_table_always_goes_to_the_same_shard() -> None:
    # CRC-32: the same on every process and release (hash() is salted per process).
    assert [shard_of(t, 4) for t in ("t", "lounge-1", "a")] == [
        zlib.crc32(t.encode()) % 4 for t in ("t", "lounge-1", "a")
    ]
    assert shard_of("anything", 1) == 0
    assert shard_streams("felt:ai:decisions", 2) == [
        "felt:ai:decisions:{0}",
        "felt:ai:decisions:{1}",
    ]
    assert shard_dead_stream("s", 1) == "s:dead:{1}"
    assert shard_dead_stream("s", 1, "graveyard") == "graveyard:{1}"


def _tables_on_every_shard(shards: int) -> list[str]:
    found: dict[int, str] = {}
    n = 0
    while len(found) < shards:
        found.setdefault(shard_of(f"table-{n}", shards), f"table-{n}")
        n += 1
    return [found[i] for i in range(shards)]


async def test_one_reader_gets_every_shards_requests(queue: DecisionQueue) -> None:
    await queue.ensure_group()
    tables = _tables_on_every_shard(SHARDS)
    for n, table in enumerate(tables):
        await queue.publish(ai_pb2.DecisionRequest(request_id=f"ai:{n}", table_id=table, seat=1))
    got: list[str] = []
    for _ in range(10):
        got += [decoded(e.fields).table_id for e in await queue.read("a", 10, 50)]
        if len(got) == len(tables):
            break
    assert sorted(got) == sorted(tables)
    stats = await queue.stats()
    assert stats is not None and stats.pending == len(tables)
    if isinstance(queue, ShardedDecisionQueue):  # each table's request is in its shard only
        for i, shard in enumerate(queue.shards):
            held = await shard.read("b", 10, 0)
            assert held == []  # all delivered already
            assert shard.stream == shard_stream(queue.stream, i)


async def test_a_read_waits_for_a_publish_on_any_shard(queue: DecisionQueue) -> None:
    await queue.ensure_group()
    for n, table in enumerate(_tables_on_every_shard(SHARDS)):
        reader = asyncio.ensure_future(queue.read("a", 1, 2000))
        await asyncio.sleep(0.05)
        await queue.publish(ai_pb2.DecisionRequest(request_id=f"ai:{n}", table_id=table, seat=1))
        [entry] = await asyncio.wait_for(reader, 3)
        assert decoded(entry.fields).table_id == table
        await queue.ack(entry.entry_id)


async def test_a_read_loop_ends_when_its_cancellation_is_lost_in_a_read(
    queue: DecisionQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    """redis-py awaits a reply through ``asyncio.wait_for``, which on Python 3.11 returns the
    reply when a cancellation lands as the read ends, losing the cancellation: a worker's read
    loop on an idle stream then read on for ever, and its stop waited for it. This read loses
    it; the queue's read must raise ``CancelledError`` all the same (one stream, every shard's
    streams in one read, and the cluster's reads of one shard at a time)."""
    if isinstance(queue, RedisDecisionQueue):
        client: object = queue.redis
    elif isinstance(queue, ShardedDecisionQueue) and isinstance(
        queue.shards[0], RedisDecisionQueue
    ):
        client = queue.shards[0].redis  # the same client for every shard (and ``together``)
    else:
        pytest.skip("only a Redis read can lose a cancellation")
    await queue.ensure_group()
    read = LosesOneCancellation()
    monkeypatch.setattr(client, "xreadgroup", read.read)

    async def read_loop() -> None:  # what a worker does until it is stopped
        while True:
            await queue.read("a", 1, 100)

    await read.assert_cancel_ends(read_loop())


# ---------------------------------------------------------------------- one shard's Redis down


def free_port() -> int:
    """A loopback port nothing listens on (a master that is down)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_a_shard_whose_redis_is_down_does_not_stop_the_others(redis_url: str) -> None:
    """Shard 1's client talks to a port nothing listens on (its master is down): the reads,
    claims, trims and stats of the others go on, and what they gave is not thrown away."""
    stream = f"test-{uuid.uuid4().hex}:decisions"
    live = aioredis.Redis.from_url(redis_url)
    no_retry = Retry(NoBackoff(), 0)  # the refusal at once, not after redis-py's retries
    dead = aioredis.Redis(host="127.0.0.1", port=free_port(), retry=no_retry)
    shards: list[DecisionQueue] = [
        RedisDecisionQueue(dead if i == 1 else live, shard_stream(stream, i), "workers")
        for i in range(SHARDS)
    ]
    queue = ShardedDecisionQueue(shards, stream)  # taking turns, as on a cluster
    tables = _tables_on_every_shard(SHARDS)
    try:
        for i in (0, 2):
            await shards[i].ensure_group()
            await queue.publish(ai_pb2.DecisionRequest(request_id=f"ai:{i}", table_id=tables[i]))
        got = await queue.read("a", 10, 50)
        assert sorted(decoded(e.fields).table_id for e in got) == [tables[0], tables[2]]
        assert await queue.trim_acknowledged() == 0
        stats = await queue.stats()
        assert stats is not None and stats.pending == 2 and stats.lag is None  # 1 unknown
        cursor: bytes | str = "0-0"
        claimed: list[Entry] = []
        for _ in range(SHARDS):  # the dead shard is passed over, the round completes
            cursor, taken = await queue.claim_idle("b", 0, 10, cursor)
            claimed += taken
        assert cursor == b"0-0"
        assert sorted(e.entry_id for e in claimed) == sorted(e.entry_id for e in got)
    finally:
        await live.delete(*shard_streams(stream, SHARDS))
        await live.aclose()
        await dead.aclose()


async def test_every_service_must_shard_alike(redis_url: str) -> None:
    client = aioredis.Redis.from_url(redis_url)
    stream = f"test-{uuid.uuid4().hex}:decisions"
    try:
        await agree_on_shards(client, stream, 4)  # the first to start records its count
        await agree_on_shards(client, stream, 4)
        with pytest.raises(ShardCountMismatch, match="FELT_DECISION_SHARDS is 8 but"):
            await agree_on_shards(client, stream, 8)  # shards 4-7 would never be read
        assert await client.get(f"{stream}:shards") == b"4"
    finally:
        await client.delete(f"{stream}:shards")
        await client.aclose()
