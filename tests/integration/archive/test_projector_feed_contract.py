"""The ProjectorFeed contract (felt.storage.archive.feed).

Run on Redis and on the fake over a memory store.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import pytest

from felt.storage.archive.feed import MemoryProjectorFeed, ProjectorFeed, RedisProjectorFeed
from felt.storage.eventstore import EventStore, EventsTrimmed, MemoryEventStore, RedisEventStore
from felt.storage.redis_client import connect_redis
from tests.integration.lost_cancellation import LosesOneCancellation


@dataclass
class Feed:
    feed: ProjectorFeed
    store: EventStore


def _url_fixture(kind: str) -> str:
    """The fixture giving the URL of the server a Redis parameter runs on."""
    return "redis_cluster_url" if kind == "cluster" else "redis_url"


@pytest.fixture(params=["memory", "redis", "cluster"])
async def both(request: pytest.FixtureRequest) -> AsyncIterator[Feed]:
    if request.param == "memory":
        store = MemoryEventStore()
        yield Feed(MemoryProjectorFeed(store), store)
        return
    client = await connect_redis(request.getfixturevalue(_url_fixture(request.param)))
    await client.flushdb()  # the test DB only (FELT_TEST_REDIS_DB)
    redis_store = RedisEventStore(client)
    try:
        yield Feed(RedisProjectorFeed(client), redis_store)
    finally:
        await redis_store.aclose()
        await client.aclose()


async def _append(store: EventStore, table_id: str, n: int) -> None:
    version = await store.version(table_id)
    await store.append(table_id, [f"e{version + i}".encode() for i in range(n)], version)


async def test_new_records_of_many_tables_at_once(both: Feed) -> None:
    await _append(both.store, "a", 5)
    await _append(both.store, "b", 2)
    got = await both.feed.read_new({"a": 1, "b": 0, "c": 0}, count=3, block_ms=0)
    assert {t: [r.sequence for r in rs] for t, rs in got.items()} == {"a": [2, 3, 4], "b": [1, 2]}
    assert got["a"][0].payload == b"e1"
    assert await both.feed.read_new({"a": 5, "b": 2}, count=3, block_ms=0) == {}


async def test_a_blocked_read_returns_when_a_table_gets_an_event(both: Feed) -> None:
    await _append(both.store, "a", 1)
    started = time.monotonic()
    reading = asyncio.create_task(both.feed.read_new({"a": 1, "b": 0}, count=10, block_ms=3000))
    await asyncio.sleep(0.1)
    await _append(both.store, "b", 1)
    got = await reading
    assert [r.sequence for r in got["b"]] == [1] and time.monotonic() - started < 2
    assert await both.feed.read_new({"a": 1}, count=10, block_ms=50) == {}


async def test_a_trimmed_gap_is_refused(both: Feed) -> None:
    await _append(both.store, "a", 6)
    await both.store.trim("a", 4)
    with pytest.raises(EventsTrimmed):
        await both.feed.read_new({"a": 2}, count=10, block_ms=0)
    got = await both.feed.read_new({"a": 4}, count=10, block_ms=0)
    assert [r.sequence for r in got["a"]] == [5, 6]


async def test_the_entry_at_a_sequence_and_the_streams_end(both: Feed) -> None:
    """What the projector checks its cursor against after a Redis restart."""
    assert await both.feed.entry_at("a", 3) == (0, None)
    await _append(both.store, "a", 6)
    assert await both.feed.entry_at("a", 3) == (6, b"e2")
    assert await both.feed.entry_at("a", 7) == (6, None)
    await both.store.trim("a", 4)
    assert await both.feed.entry_at("a", 3) == (6, None)  # trimmed: only the end is known
    assert await both.feed.entry_at("a", 5) == (6, b"e4")


async def test_the_archived_mark_only_rises(both: Feed) -> None:
    assert await both.feed.archived("a") == 0
    assert await both.feed.mark_archived("a", 7) == 7
    assert await both.feed.mark_archived("a", 3) == 7
    assert await both.feed.archived("a") == 7
    assert await both.feed.mark_archived("a", 9) == 9


async def test_many_marks_are_raised_at_once_and_never_lowered(both: Feed) -> None:
    await both.feed.mark_archived("a", 5)
    await both.feed.mark_archived_many({"a": 3, "b": 8, "c": 0})
    assert [await both.feed.archived(t) for t in "abc"] == [5, 8, 0]
    await both.feed.mark_archived_many({})
    await both.feed.mark_archived_many({"a": 6, "b": 9})
    assert [await both.feed.archived(t) for t in "ab"] == [6, 9]


async def test_one_projector_follows_a_table_until_its_lease_lapses(both: Feed) -> None:
    assert await both.feed.claim("a", "p1", 200)
    assert not await both.feed.claim("a", "p2", 200)
    assert await both.feed.claim("a", "p1", 200)  # renewed
    assert not await both.feed.release("a", "p2")
    await asyncio.sleep(0.3)
    assert await both.feed.claim("a", "p2", 10_000)  # lapsed: taken over
    assert not await both.feed.release("a", "p1")
    assert await both.feed.release("a", "p2")
    assert await both.feed.claim("a", "p1", 10_000)
    with pytest.raises(ValueError):
        await both.feed.claim("a", "p1", 0)


async def test_live_members_are_those_whose_heartbeat_has_not_expired(both: Feed) -> None:
    assert await both.feed.join("p1", 10_000) == ["p1"]
    assert await both.feed.join("p2", 200) == ["p1", "p2"]
    await asyncio.sleep(0.3)
    assert await both.feed.join("p1", 10_000) == ["p1"]
    await both.feed.leave("p1")
    assert await both.feed.join("p3", 10_000) == ["p3"]


class _PollsLosingOneCancellation:
    """A cluster's pipelined polls (``read_new`` on a cluster), each an idle stream's, whose
    round trip swallows the first cancellation (``lost``) as ``xread`` does below."""

    def __init__(self, round_trip: Callable[[], Awaitable[None]]) -> None:
        self._round_trip = round_trip
        self._reads = 0

    async def __aenter__(self) -> _PollsLosingOneCancellation:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    def xread(self, *args: object, **kwargs: object) -> None:
        self._reads += 1

    async def execute(self) -> list[None]:
        await self._round_trip()
        return [None] * self._reads


async def test_a_read_loop_ends_when_its_cancellation_is_lost_in_a_read(
    both: Feed, monkeypatch: pytest.MonkeyPatch
) -> None:
    """redis-py awaits a reply through ``asyncio.wait_for``, which on Python 3.11 returns the
    reply when a cancellation lands as the read ends, losing the cancellation: the projector's
    reads of idle tables then went on for ever, and whoever awaited it hung. This read (the
    blocking ``XREAD``; on a cluster, the pipelined polls) loses it; ``read_new`` must raise
    ``CancelledError`` all the same."""
    if not isinstance(both.feed, RedisProjectorFeed):
        pytest.skip("only a Redis read can lose a cancellation")
    read = LosesOneCancellation()
    client = both.feed._redis
    monkeypatch.setattr(client, "xread", read.read)
    monkeypatch.setattr(
        client, "pipeline", lambda *a, **k: _PollsLosingOneCancellation(read.round_trip)
    )

    async def read_loop() -> None:  # what the projector does until it is stopped
        while True:
            await both.feed.read_new({"a": 0, "b": 0}, count=10, block_ms=100)

    await read.assert_cancel_ends(read_loop())
