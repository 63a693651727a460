"""The event store contract, run against both stores: in-memory and Redis Streams.

Redis tests use the ``redis_url`` fixture (``$REDIS_URL`` or an embedded
server) and a fresh random table id per test; they never flush anything.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from typing import cast

import pytest
import redis.asyncio as aioredis

from felt.storage.eventstore import (
    EventStore,
    EventsTrimmed,
    MemoryEventStore,
    RedisEventStore,
    StoredRecord,
    VersionConflict,
    archived_key,
    events_key,
    lease_key,
    meta_key,
    requests_key,
)
from felt.storage.eventstore.base import TRIM_PAGE
from felt.storage.redis_client import connect_redis
from tests.integration.lost_cancellation import LosesOneCancellation

WAIT = 5.0  # seconds any single wait in these tests may take


@pytest.fixture(params=["memory", "redis", "redis-py", "cluster", "cluster-redis-py"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[EventStore]:
    """The in-memory store, the Redis one with appends pipelined (the default) or not, and
    the same two on a Redis Cluster of three masters."""
    if request.param == "memory":
        yield MemoryEventStore()
        return
    client = await connect_redis(request.getfixturevalue(_url_fixture(request.param)))
    store = RedisEventStore(client, pipeline=not request.param.endswith("redis-py"))
    try:
        yield store
    finally:
        await store.aclose()
        await client.aclose()


@pytest.fixture
async def new_table(request: pytest.FixtureRequest) -> AsyncIterator[Callable[[], str]]:
    """Makes unique table ids; deletes their Redis keys afterwards (never anything else)."""
    made: list[str] = []

    def make() -> str:
        table_id = f"test-{uuid.uuid4().hex}"
        made.append(table_id)
        return table_id

    yield make
    callspec = getattr(request.node, "callspec", None)
    kind = "redis" if callspec is None else callspec.params.get("store", "redis")
    if kind != "memory" and made:
        client = await connect_redis(request.getfixturevalue(_url_fixture(kind)))
        try:
            for t in made:
                await client.delete(
                    events_key(t), meta_key(t), requests_key(t), lease_key(t), archived_key(t)
                )
        finally:
            await client.aclose()


def _url_fixture(kind: str) -> str:
    """The fixture giving the URL of the server a store parameter runs on."""
    return "redis_cluster_url" if kind.startswith("cluster") else "redis_url"


def payloads(*names: str) -> list[bytes]:
    return [n.encode() for n in names]


def seqs(records: list[StoredRecord]) -> list[int]:
    return [r.sequence for r in records]


# ------------------------------------------------------------ append and read


async def test_new_table_is_empty(store: EventStore, new_table: Callable[[], str]) -> None:
    t = new_table()
    assert await store.version(t) == 0
    assert await store.read(t) == []


async def test_append_then_read_in_order(store: EventStore, new_table: Callable[[], str]) -> None:
    t = new_table()
    first = await store.append(t, payloads("a", "b"), expected_version=0)
    assert (first.first_sequence, first.last_sequence, first.duplicate) == (1, 2, False)
    assert list(first.sequences) == [1, 2]
    second = await store.append(t, payloads("c"), expected_version=2, request_id="r1")
    assert (second.first_sequence, second.last_sequence) == (3, 3)
    assert await store.version(t) == 3

    records = await store.read(t)
    assert records == [
        StoredRecord(1, b"a", None),
        StoredRecord(2, b"b", None),
        StoredRecord(3, b"c", "r1"),
    ]
    assert seqs(await store.read(t, from_sequence=1)) == [2, 3]
    assert seqs(await store.read(t, from_sequence=1, count=1)) == [2]
    assert await store.read(t, from_sequence=3) == []
    assert await store.read(t, from_sequence=10) == []


async def test_payloads_are_binary_safe(store: EventStore, new_table: Callable[[], str]) -> None:
    t = new_table()
    blobs = [bytes(range(256)), b"", b"a:b:c\x00\r\n", "é♠".encode()]
    response = b"1:2:\x00resp:onse"
    result = await store.append(t, blobs, 0, request_id="bin", response=response)
    assert result.response == response
    assert [r.payload for r in await store.read(t)] == blobs
    again = await store.append(t, [b"x"], 0, request_id="bin")
    assert again.response == response and again.duplicate


async def test_large_read_pages(store: EventStore, new_table: Callable[[], str]) -> None:
    t = new_table()
    version = 0
    for start in range(0, 2500, 500):
        await store.append(t, [str(i).encode() for i in range(start, start + 500)], version)
        version += 500
    records = await store.read(t)
    assert seqs(records) == list(range(1, 2501))
    assert [r.payload for r in records[-2:]] == [b"2498", b"2499"]
    assert seqs(await store.read(t, 999, count=1500)) == list(range(1000, 2500))


async def test_invalid_arguments(store: EventStore, new_table: Callable[[], str]) -> None:
    t = new_table()
    with pytest.raises(ValueError):
        await store.append(t, [], 0)
    with pytest.raises(ValueError):
        await store.append(t, [b"x"], -1)
    with pytest.raises(ValueError):
        await store.append("bad{id}", [b"x"], 0)


# ------------------------------------------------------------ version checks


async def test_version_conflict(store: EventStore, new_table: Callable[[], str]) -> None:
    t = new_table()
    await store.append(t, payloads("a", "b"), 0)
    for wrong in (0, 1, 3):
        with pytest.raises(VersionConflict) as info:
            await store.append(t, payloads("x"), wrong, request_id=f"w{wrong}")
        assert (info.value.expected, info.value.actual) == (wrong, 2)
    assert seqs(await store.read(t)) == [1, 2]
    # A refused request id was not recorded: it may be used once the version matches.
    assert (await store.append(t, payloads("c"), 2, request_id="w0")).first_sequence == 3


async def test_concurrent_writers_exactly_one_wins(
    store: EventStore, new_table: Callable[[], str]
) -> None:
    t = new_table()
    version = 0
    for round_ in range(20):
        writers = 5
        results = await asyncio.gather(
            *(
                store.append(t, [f"{round_}-{w}".encode()] * 2, version, request_id=f"{round_}-{w}")
                for w in range(writers)
            ),
            return_exceptions=True,
        )
        winners = [r for r in results if not isinstance(r, BaseException)]
        losers = [r for r in results if isinstance(r, BaseException)]
        assert len(winners) == 1, results
        assert all(isinstance(e, VersionConflict) and e.actual == version + 2 for e in losers)
        assert winners[0].sequences == range(version + 1, version + 3)
        version += 2
    records = await store.read(t)
    assert seqs(records) == list(range(1, 41))
    # Each round's two events come from one writer: no interleaving.
    for i in range(0, 40, 2):
        assert records[i].payload == records[i + 1].payload
        assert records[i].request_id == records[i + 1].request_id


# ------------------------------------------------------------ idempotency


async def test_retry_returns_the_original_result(
    store: EventStore, new_table: Callable[[], str]
) -> None:
    t = new_table()
    await store.append(t, payloads("a"), 0, request_id="first", response=b"resp-1")
    original = await store.append(t, payloads("b", "c"), 1, request_id="act", response=b"resp-2")
    assert (original.first_sequence, original.last_sequence) == (2, 3)

    # The retry comes with the version the request was decided on (now stale)...
    retry = await store.append(t, payloads("b", "c"), 1, request_id="act", response=b"other")
    assert (retry.first_sequence, retry.last_sequence) == (2, 3)
    assert retry.response == b"resp-2"
    assert retry.duplicate
    # ...or even after the table moved on, with any payload: nothing is appended.
    await store.append(t, payloads("d"), 3, request_id="next")
    late = await store.append(t, payloads("zzz"), 4, request_id="act")
    assert (late.first_sequence, late.last_sequence, late.response) == (2, 3, b"resp-2")
    assert await store.version(t) == 4
    assert [r.request_id for r in await store.read(t)] == ["first", "act", "act", "next"]
    # Request ids are per table.
    other = new_table()
    fresh = await store.append(other, payloads("a"), 0, request_id="act")
    assert (fresh.first_sequence, fresh.duplicate) == (1, False)


async def test_request_result_looks_up_without_appending(
    store: EventStore, new_table: Callable[[], str]
) -> None:
    t = new_table()
    assert await store.request_result(t, "act") is None
    await store.append(t, payloads("a", "b"), 0, request_id="act", response=b"resp")
    found = await store.request_result(t, "act")
    assert found is not None
    assert (found.first_sequence, found.last_sequence, found.response) == (1, 2, b"resp")
    assert found.duplicate
    assert await store.request_result(t, "") is None
    assert await store.version(t) == 2


async def test_concurrent_retries_append_once(
    store: EventStore, new_table: Callable[[], str]
) -> None:
    t = new_table()
    results = await asyncio.gather(
        *(store.append(t, payloads("a"), 0, request_id="same", response=b"r") for _ in range(8))
    )
    assert sorted(r.duplicate for r in results) == [False] + [True] * 7
    assert {(r.first_sequence, r.last_sequence, r.response) for r in results} == {(1, 1, b"r")}
    assert await store.version(t) == 1


# ------------------------------------------------------------ subscribe


async def collect(
    store: EventStore, table_id: str, from_sequence: int, n: int
) -> list[StoredRecord]:
    got: list[StoredRecord] = []
    async for record in store.subscribe(table_id, from_sequence, block_ms=100):
        got.append(record)
        if len(got) == n:
            break
    return got


async def test_subscribe_resumes_and_follows(
    store: EventStore, new_table: Callable[[], str]
) -> None:
    t = new_table()
    await store.append(t, payloads("1", "2", "3"), 0)
    task = asyncio.create_task(collect(store, t, from_sequence=1, n=6))
    await asyncio.sleep(0.2)  # let it catch up and block
    await store.append(t, payloads("4"), 3)
    await asyncio.sleep(0.05)
    await store.append(t, payloads("5", "6", "7"), 4)
    got = await asyncio.wait_for(task, WAIT)
    assert seqs(got) == [2, 3, 4, 5, 6, 7]
    assert [r.payload for r in got] == payloads("2", "3", "4", "5", "6", "7")


async def test_subscribe_from_head_waits_for_new_events(
    store: EventStore, new_table: Callable[[], str]
) -> None:
    t = new_table()
    task = asyncio.create_task(collect(store, t, from_sequence=0, n=2))
    await asyncio.sleep(0.3)  # several empty blocking reads on a table that does not exist yet
    assert not task.done()
    await store.append(t, payloads("a"), 0)
    await store.append(t, payloads("b"), 1)
    assert seqs(await asyncio.wait_for(task, WAIT)) == [1, 2]


async def test_subscribers_resume_without_gaps_or_repeats(
    store: EventStore, new_table: Callable[[], str]
) -> None:
    t = new_table()

    async def writer() -> None:
        for v in range(30):
            await store.append(t, [str(v + 1).encode()], v)
            if v % 7 == 0:
                await asyncio.sleep(0.01)

    # A reader that reconnects every 4 events, resuming after the last one it saw.
    async def reconnecting_reader() -> list[int]:
        seen: list[int] = []
        while len(seen) < 30:
            after = seen[-1] if seen else 0
            seen.extend(seqs(await collect(store, t, after, min(4, 30 - len(seen)))))
        return seen

    readers = [asyncio.create_task(reconnecting_reader()) for _ in range(3)]
    await writer()
    for result in await asyncio.wait_for(asyncio.gather(*readers), WAIT):
        assert result == list(range(1, 31))


async def test_closing_a_subscription(store: EventStore, new_table: Callable[[], str]) -> None:
    t = new_table()
    task = asyncio.create_task(collect(store, t, 0, 1))
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The store still works after a cancelled blocking read.
    await store.append(t, payloads("a"), 0)
    assert seqs(await store.read(t)) == [1]


async def test_a_subscription_ends_when_its_cancellation_is_lost_in_a_read(
    store: EventStore, new_table: Callable[[], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """redis-py awaits a reply through ``asyncio.wait_for``, which on Python 3.11 returns the
    reply when a cancellation lands as the read ends, losing the cancellation: a cancelled
    subscription to an idle stream then blocked for ever (once in CI). This read loses it."""
    if not isinstance(store, RedisEventStore):
        pytest.skip("only a Redis read can lose a cancellation")
    read = LosesOneCancellation()
    monkeypatch.setattr(store._redis, "xread", read.read)
    await read.assert_cancel_ends(collect(store, new_table(), 0, 1))


# ------------------------------------------------------------ trimming


async def test_trim_drops_events_and_their_requests(
    store: EventStore, new_table: Callable[[], str]
) -> None:
    t = new_table()
    await store.append(t, payloads("a", "b"), 0, request_id="r1")
    await store.append(t, payloads("c"), 2, request_id="r2")
    await store.append(t, payloads("d"), 3, request_id="r3")
    assert await store.trim(t, 0) == 0
    assert await store.trim(t, 3) == 3
    assert await store.version(t) == 4
    assert seqs(await store.read(t, 3)) == [4]
    with pytest.raises(EventsTrimmed) as info:
        await store.read(t)
    assert (info.value.after_sequence, info.value.first_available) == (0, 4)
    with pytest.raises(EventsTrimmed):
        await collect(store, t, 1, 1)
    # r1's record went with its events; r3's stayed.
    with pytest.raises(VersionConflict):
        await store.append(t, payloads("a", "b"), 0, request_id="r1")
    assert (await store.append(t, payloads("d"), 3, request_id="r3")).duplicate
    # Trimming everything keeps the version.
    assert await store.trim(t, 10) == 1
    with pytest.raises(EventsTrimmed):
        await store.read(t, 2)
    assert await store.read(t, 4) == []
    assert (await store.append(t, payloads("e"), 4)).first_sequence == 5
    assert seqs(await store.read(t, 4)) == [5]


async def test_trimming_keeps_the_admins_request_records(
    store: EventStore, new_table: Callable[[], str]
) -> None:
    """The kept records (``k/`` keys: the lobby's seatings and leaves, retried until answered)
    outlive their events; the others go with theirs."""
    t = new_table()
    admin, seat = "k/" + "1" * 32, "c/" + "2" * 32
    await store.append(t, payloads("seated"), 0, request_id=admin, response=b"grant")
    await store.append(t, payloads("acted"), 1, request_id=seat, response=b"view")
    await store.append(t, payloads("snap"), 2, snapshot_at=3)
    await store.record_archived(t, 3)
    assert await store.trim_archived(t, 3) == 2
    kept = await store.request_result(t, admin)
    assert kept is not None and (kept.first_sequence, kept.response) == (1, b"grant")
    again = await store.append(t, payloads("seated"), 3, request_id=admin, response=b"other")
    assert again.duplicate and again.response == b"grant"
    assert await store.request_result(t, seat) is None
    assert await store.trim(t, 3) == 1
    assert await store.request_result(t, admin) is not None


async def test_one_trim_drops_at_most_a_page(
    store: EventStore, new_table: Callable[[], str]
) -> None:
    """A trim is one script that blocks Redis while it runs: a table long unarchived is
    trimmed a page at a time (the oldest first), never in one go."""
    t = new_table()
    many = TRIM_PAGE + 3
    await store.append(t, [b"x"] * many, 0, request_id="r-many")
    await store.append(t, payloads("snap"), many, snapshot_at=many + 1)
    await store.record_archived(t, many + 1)
    assert await store.trim_archived(t, many + 1) == TRIM_PAGE
    assert seqs(await store.read(t, TRIM_PAGE, 1)) == [TRIM_PAGE + 1]
    assert await store.request_result(t, "r-many") is None
    assert await store.trim_archived(t, many + 1) == 3
    assert seqs(await store.read(t, many)) == [many + 1]
    assert await store.trim(t, many + 1) == 1


# ------------------------------------------------------------ snapshots and archived trimming


async def test_snapshot_pointer_and_tail(store: EventStore, new_table: Callable[[], str]) -> None:
    t = new_table()
    assert await store.latest_snapshot(t) == 0
    assert await store.read_tail(t) == []
    await store.append(t, payloads("created", "seated"), 0, request_id="r1")
    assert seqs(await store.read_tail(t)) == [1, 2]  # no snapshot: the whole stream
    await store.append(t, payloads("snap", "deal"), 2, request_id="r2", snapshot_at=3)
    await store.append(t, payloads("act"), 4)
    assert await store.latest_snapshot(t) == 3
    tail = await store.read_tail(t)
    assert seqs(tail) == [3, 4, 5] and tail[0].payload == b"snap"
    await store.append(t, payloads("a", "snap2"), 5, snapshot_at=7)
    assert await store.latest_snapshot(t) == 7
    assert seqs(await store.read_tail(t)) == [7]
    # A duplicate or refused append moves no pointer; a snapshot outside the batch is refused.
    assert (await store.append(t, payloads("x"), 0, request_id="r2", snapshot_at=1)).duplicate
    with pytest.raises(VersionConflict):
        await store.append(t, payloads("x"), 3, snapshot_at=4)
    with pytest.raises(ValueError):
        await store.append(t, payloads("x"), 7, snapshot_at=9)
    assert await store.latest_snapshot(t) == 7
    assert await store.version(t) == 7


async def test_archived_position_only_rises(
    store: EventStore, new_table: Callable[[], str]
) -> None:
    t = new_table()
    assert await store.archived(t) == 0
    assert await store.record_archived(t, 5) == 5
    assert await store.record_archived(t, 3) == 5
    assert await store.archived(t) == 5


async def test_trim_archived_keeps_what_is_not_archived_or_after_the_snapshot(
    store: EventStore, new_table: Callable[[], str]
) -> None:
    t = new_table()
    await store.append(t, payloads("created", "seated"), 0, request_id="r1")
    await store.append(t, payloads("h1", "h1-end"), 2, request_id="r2")
    await store.append(t, payloads("snap", "h2"), 4, request_id="r3", snapshot_at=5)
    await store.append(t, payloads("h2-end"), 6, request_id="r4")
    # Nothing archived: nothing goes, whatever the snapshot.
    assert await store.trim_archived(t, 5) == 0
    # Archived up to 2: only 1..2 go (with r1's record), not the unarchived hand.
    await store.record_archived(t, 2)
    assert await store.trim_archived(t, 5) == 2
    assert seqs(await store.read(t, 2)) == [3, 4, 5, 6, 7]
    with pytest.raises(VersionConflict):
        await store.append(t, payloads("created", "seated"), 0, request_id="r1")
    assert (await store.append(t, payloads("h1", "h1-end"), 2, request_id="r2")).duplicate
    # Archived past the snapshot: trimmed up to the snapshot, never the snapshot itself.
    await store.record_archived(t, 7)
    assert await store.trim_archived(t, 5) == 2
    assert seqs(await store.read_tail(t)) == [5, 6, 7]
    assert seqs(await store.read(t, 4)) == [5, 6, 7]
    with pytest.raises(EventsTrimmed):
        await store.read(t)
    assert (await store.append(t, payloads("snap", "h2"), 4, request_id="r3")).duplicate
    # Asked to trim past the latest snapshot: capped at it.
    assert await store.trim_archived(t, 100) == 0
    assert await store.version(t) == 7
    assert seqs(await store.read_tail(t)) == [5, 6, 7]


async def test_read_tail_survives_a_trim_to_a_newer_snapshot(
    store: EventStore, new_table: Callable[[], str]
) -> None:
    """A rebuild that read the pointer before a newer snapshot and a trim still gets no hole."""
    t = new_table()
    await store.append(t, payloads("created"), 0)
    await store.append(t, payloads("snap1", "h1"), 1, snapshot_at=2)
    await store.append(t, payloads("snap2", "h2"), 3, snapshot_at=4)
    await store.record_archived(t, 4)
    real_latest = store.latest_snapshot
    calls = 0

    async def stale_then_real(table_id: str) -> int:
        nonlocal calls
        calls += 1
        if calls == 1:
            await store.trim_archived(t, 4)  # lands between the pointer and the read
            return 2
        return await real_latest(table_id)

    store.latest_snapshot = stale_then_real  # type: ignore[method-assign]
    try:
        tail = await store.read_tail(t)
    finally:
        del store.latest_snapshot
    assert seqs(tail) == [4, 5] and tail[0].payload == b"snap2"
    assert calls == 2


# ------------------------------------------------------------ Redis layout


async def test_redis_layout(redis_url: str, new_table: Callable[[], str]) -> None:
    """Stream IDs are ``<sequence>-0`` and all keys carry the ``{table_id}`` hash tag."""
    t = new_table()
    client = aioredis.Redis.from_url(redis_url)
    store = RedisEventStore(client)
    try:
        await store.append(t, payloads("a", "b"), 0, request_id="r", response=b"x")
        assert events_key(t) == f"table:{{{t}}}:events"
        for key in (meta_key(t), requests_key(t), lease_key(t)):
            assert f"{{{t}}}" in key
        entries = cast("list[tuple[bytes, dict[bytes, bytes]]]", await client.xrange(events_key(t)))
        assert [entry_id for entry_id, _ in entries] == [b"1-0", b"2-0"]
        assert entries[0][1] == {b"e": b"a", b"r": b"r"}
        assert await client.hget(meta_key(t), "version") == b"2"
        assert await client.hget(requests_key(t), "r") == b"1:2:x"
    finally:
        await store.aclose()
        await client.aclose()


@pytest.mark.parametrize("pipelined", [True, False], ids=["pipelined", "redis-py"])
async def test_entries_are_read_by_field_name(
    redis_url: str, new_table: Callable[[], str], pipelined: bool
) -> None:
    """Both read paths find ``e`` and ``r`` wherever they are in an entry, as XADD allows."""
    t = new_table()
    client = aioredis.Redis.from_url(redis_url)
    store = RedisEventStore(client, pipeline=pipelined)
    try:
        await client.xadd(events_key(t), {"r": "req", "e": b"first", "x": "other"}, id="1-0")
        await client.xadd(events_key(t), {"e": b"second"}, id="2-0")
        await client.xadd(events_key(t), {"e": b"third", "r": "req-3"}, id="3-0")
        await client.hset(meta_key(t), "version", 3)
        records = await store.read(t)
        assert [(r.sequence, r.payload, r.request_id) for r in records] == [
            (1, b"first", "req"),
            (2, b"second", None),
            (3, b"third", "req-3"),
        ]
    finally:
        await store.aclose()
        await client.aclose()


async def test_a_read_cut_off_by_a_lost_connection_is_tried_again(
    redis_url: str, new_table: Callable[[], str]
) -> None:
    """Reads change nothing, so the pipelined store retries one on a new connection."""
    t = new_table()
    client = aioredis.Redis.from_url(redis_url)
    store = RedisEventStore(client)
    try:
        await store.append(t, payloads("a", "b", "c"), 0)
        pipe = store._pipeline
        assert pipe is not None and pipe._protocol is not None
        first = pipe._protocol
        reading = asyncio.create_task(store.read(t))
        await asyncio.sleep(0)  # the read is queued on the connection...
        assert first.waiters and first.transport is not None
        first.transport.abort()  # ...which drops before the reply
        assert [r.payload for r in await asyncio.wait_for(reading, WAIT)] == [b"a", b"b", b"c"]
        assert first.closed and pipe._protocol is not first
    finally:
        await store.aclose()
        await client.aclose()


async def test_many_tables_append_at_once(store: EventStore, new_table: Callable[[], str]) -> None:
    """Appends to many tables started together each run once (on a cluster: on the nodes of
    their slots, through a client made ready first; see felt.storage.redis_client.ready)."""
    tables = [new_table() for _ in range(16)]

    async def play(table_id: str) -> None:
        for version in range(20):
            await store.append(table_id, [f"e{version}".encode()], version)

    await asyncio.gather(*(play(t) for t in tables))
    for t in tables:
        assert await store.version(t) == 20
        assert [r.payload for r in await store.read(t)] == [f"e{n}".encode() for n in range(20)]


async def test_a_pipelined_store_trims_on_its_pipeline(
    store: EventStore, new_table: Callable[[], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deal's trim takes the pipelined connection, as its append does (through redis-py
    it cost a deal about 150 us of CPU more): with redis-py's script call broken, it works."""
    if not isinstance(store, RedisEventStore) or store._pipe(new_table()) is None:
        pytest.skip("a store without a pipelined connection")

    async def broken(**_: object) -> object:
        raise AssertionError("the trim went through redis-py")

    monkeypatch.setattr(store, "_trim_archived", broken)
    t = new_table()
    await store.append(t, payloads("a", "b"), 0)
    await store.append(t, payloads("snap"), 2, snapshot_at=3)
    await store.record_archived(t, 3)
    assert await store.trim_archived(t, 3) == 2
