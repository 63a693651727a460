"""The projector on the fakes (memory event store, registry, archive): every hand once, tables
shared between projectors, tables found as they are created, one bad stream harms no other."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import timedelta

import structlog.testing
from redis.exceptions import ConnectionError as RedisConnectionError

from felt.core.rules.config import Variant
from felt.storage.archive import ArchivedHand, MemoryHandArchive
from felt.storage.archive.feed import MemoryProjectorFeed
from felt.storage.eventstore import MemoryEventStore, StoredRecord
from felt.storage.registry import MemoryTableRegistry
from services.projector.metrics import ProjectorMetrics
from services.projector.ownership import owner_of
from services.projector.projector import Projector
from tests.unit.archive.streams import START, archived, play_table, stored

TABLES = {
    f"f-{n}": stored(f"f-{n}", play_table(f"f-{n}", variant, hands=6))
    for n, variant in enumerate([Variant.NLHE, Variant.DRAW5, Variant.NLHE, Variant.DRAW5])
}


async def _append(store: MemoryEventStore, table_id: str, records: Sequence[StoredRecord]) -> None:
    version = await store.version(table_id)
    for r in records:
        assert r.sequence == version + 1
        await store.append(table_id, [r.payload], version)
        version += 1


def _projector(
    member: str,
    feed: MemoryProjectorFeed,
    registry: MemoryTableRegistry,
    archive: MemoryHandArchive,
) -> Projector:
    return Projector(
        member, feed, registry, archive, ProjectorMetrics(member), scan_ms=50, block_ms=20
    )


async def _until(check: object, timeout: float = 10.0) -> None:
    async def wait() -> None:
        while not check():  # type: ignore[operator]
            await asyncio.sleep(0.02)

    await asyncio.wait_for(wait(), timeout)


async def _every_table_stored() -> tuple[
    MemoryTableRegistry, MemoryHandArchive, MemoryProjectorFeed
]:
    """The fakes with every table registered and its whole stream stored."""
    store, registry, archive = MemoryEventStore(), MemoryTableRegistry(), MemoryHandArchive()
    for t, records in TABLES.items():
        await registry.add(t)
        await _append(store, t, records)
    return registry, archive, MemoryProjectorFeed(store)


def _expected() -> dict[str, ArchivedHand]:
    return {h.hand_id: h for t, records in TABLES.items() for h in archived(t, records)}


async def test_two_projectors_share_the_tables_and_archive_every_hand_once() -> None:
    store, registry, archive = MemoryEventStore(), MemoryTableRegistry(), MemoryHandArchive()
    feed = MemoryProjectorFeed(store)
    first_two = list(TABLES)[:2]
    for t in first_two:
        await registry.add(t)
        await _append(store, t, TABLES[t][: len(TABLES[t]) // 2])
    a, b = _projector("a", feed, registry, archive), _projector("b", feed, registry, archive)
    runs = [asyncio.create_task(p.run()) for p in (a, b)]
    try:
        # Tables created later are found, and the rest of every stream arrives as played.
        for t in list(TABLES)[2:]:
            await registry.add(t)
        for t, records in TABLES.items():
            await _append(store, t, records[await store.version(t) :])
        expected = _expected()
        await _until(lambda: len(archive.hands) == len(expected))
        await _until(lambda: all(feed.marks.get(t) == len(r) for t, r in TABLES.items()))
        assert archive.hands == expected
        members = ["a", "b"]
        # a started alone and took every table; once b is live, each keeps only its own.
        await _until(
            lambda: all(
                (t in a.following) == (owner_of(t, members) == "a") != (t in b.following)
                for t in TABLES
            )
        )
        assert {owner_of(t, members) for t in TABLES} == {"a", "b"}  # the hashing shares them
    finally:
        for p in (a, b):
            p.request_stop()
        await asyncio.gather(*runs)
    assert not a.following and not b.following
    # What the archive holds is exactly once per hand: every hand, no hand twice.
    assert sorted(h.number for h in archive.hands.values() if h.table_id == "f-0") == list(
        range(1, 7)
    )


async def test_a_projector_stopped_anywhere_is_resumed_by_another_without_a_duplicate() -> None:
    registry, archive, feed = await _every_table_stored()
    first = _projector("a", feed, registry, archive)
    await first.rebalance()
    await first.step()  # one read and one write of every table, then "dies" (no clean-up)
    assert archive.writes == 1
    second = _projector("b", feed, registry, archive)
    second.lease_ms = 10_000
    # The dead projector's leases must lapse before another takes its tables.
    feed._leases.clear()
    run = asyncio.create_task(second.run())
    try:
        expected = _expected()
        await _until(lambda: archive.hands == expected)
    finally:
        second.request_stop()
        await run


async def test_a_stream_that_cannot_be_projected_is_left_alone_and_the_others_go_on() -> None:
    store, registry, archive = MemoryEventStore(), MemoryTableRegistry(), MemoryHandArchive()
    feed = MemoryProjectorFeed(store)
    await registry.add("bad")
    await store.append("bad", [b"\xff\x00 not an event"], 0)
    good = next(iter(TABLES))
    await registry.add(good)
    await _append(store, good, TABLES[good])
    projector = _projector("a", feed, registry, archive)
    run = asyncio.create_task(projector.run())
    try:
        await _until(lambda: len(archive.hands) == 6)
        assert "bad" in projector.failed and "bad" not in projector.following
    finally:
        projector.request_stop()
        await run


async def test_a_stale_projector_loses_the_race_and_rereads() -> None:
    store, registry, archive = MemoryEventStore(), MemoryTableRegistry(), MemoryHandArchive()
    feed = MemoryProjectorFeed(store)
    t = next(iter(TABLES))
    await registry.add(t)
    await _append(store, t, TABLES[t])
    a, b = _projector("a", feed, registry, archive), _projector("b", feed, registry, archive)
    await a.rebalance()
    # b follows the same table behind a's back (as after a lease lapsed in a stall).
    await b._adopt(t)
    assert await a.step() == 6
    assert await b.step() == 0  # refused: the position moved
    assert t not in b.following and a.metrics.conflicts._value.get() == 0
    assert b.metrics.conflicts._value.get() == 1
    assert len(archive.hands) == 6


async def test_every_event_up_to_the_archived_mark_is_in_the_archive() -> None:
    """The mark lets the table service trim everything up to it, so everything up to it must
    be in PostgreSQL: the hands' events, and the table's own between them (created, seated,
    chips added, left with a stack, snapshots), or a trim loses them for good."""
    registry, archive, feed = await _every_table_stored()
    projector = _projector("a", feed, registry, archive)
    run = asyncio.create_task(projector.run())
    try:
        await _until(lambda: all(feed.marks.get(t) == len(r) for t, r in TABLES.items()))
    finally:
        projector.request_stop()
        await run
    for t, records in TABLES.items():
        kept = {
            e.sequence: e.payload
            for h in archive.hands.values()
            if h.table_id == t
            for e in h.events
        }
        kept.update((e.sequence, e.payload) for e in await archive.table_events(t))
        assert kept == {r.sequence: r.payload for r in records}


# ------------------------------------------------------------------ two histories (issue #24)

_T = next(iter(TABLES))
_EVENTS = play_table(_T, Variant.NLHE, hands=6)
_REPLAYED = stored(_T, _EVENTS, START + timedelta(seconds=1))
"""The same table played again after a Redis restart lost a tail: the same hands and
sequences, other events (their times differ)."""


class _FlakyFeed(MemoryProjectorFeed):
    """The memory feed whose next ``read_new`` fails as a dropped connection does, Redis
    coming back with ``restarted``'s streams."""

    restarted: MemoryEventStore | None = None

    async def read_new(
        self, after: Mapping[str, int], *, count: int, block_ms: int
    ) -> dict[str, list[StoredRecord]]:
        if self.restarted is not None:
            self.store, self.restarted = self.restarted, None
            raise RedisConnectionError("Connection closed by server.")
        return await super().read_new(after, count=count, block_ms=block_ms)


async def _first_hand_archived() -> tuple[MemoryTableRegistry, MemoryHandArchive, int]:
    """The archive after a projector archived the first hand of ``_T`` (the stream holding no
    more), and the position of its cursor."""
    records = TABLES[_T]
    end = archived(_T, records)[0].events[-1].sequence
    store, registry, archive = MemoryEventStore(), MemoryTableRegistry(), MemoryHandArchive()
    await registry.add(_T)
    await _append(store, _T, records[:end])
    projector = _projector("a", MemoryProjectorFeed(store), registry, archive)
    await projector.rebalance()
    assert await projector.step() == 1
    assert (await archive.cursor(_T)).position == end
    return registry, archive, end


async def _replayed_store(cut: int, upto: int) -> MemoryEventStore:
    """The stream after a restart cut it after ``cut`` and the table wrote on to ``upto``."""
    store = MemoryEventStore()
    await _append(store, _T, TABLES[_T][:cut] + _REPLAYED[cut:upto])
    return store


async def test_a_stream_that_holds_another_event_at_the_cursor_is_refused_at_adoption() -> None:
    registry, archive, end = await _first_hand_archived()
    before = dict(archive.hands)
    feed = MemoryProjectorFeed(await _replayed_store(end - 4, len(_REPLAYED)))
    projector = _projector("b", feed, registry, archive)
    await projector.rebalance()
    await projector.step()
    assert _T in projector.failed and _T not in projector.following
    assert projector.metrics.failed_tables._value.get() == 1  # what the alert watches
    assert archive.hands == before and (await archive.cursor(_T)).position == end
    assert archive.events.get(_T, {}).keys() <= set(range(1, end + 1))


async def test_a_stream_shorter_than_the_archive_is_refused_at_adoption() -> None:
    registry, archive, end = await _first_hand_archived()
    feed = MemoryProjectorFeed(await _replayed_store(end - 4, end - 1))
    projector = _projector("b", feed, registry, archive)
    await projector.rebalance()
    assert _T in projector.failed and _T not in projector.following


async def test_after_a_read_failure_the_tables_are_checked_again_before_reading_on() -> None:
    """Redis restarts under a running projector (its read fails) having lost the archived
    tail, and the table writes it again: the projector fails the table, archives nothing."""
    registry, archive, end = await _first_hand_archived()
    before = dict(archive.hands)
    store = MemoryEventStore()
    await _append(store, _T, TABLES[_T][:end])
    feed = _FlakyFeed(store)
    projector = _projector("b", feed, registry, archive)
    run = asyncio.create_task(projector.run())
    try:
        await _until(lambda: _T in projector.following)
        # The restart: the stream loses its last 4 events, the table plays on from there.
        feed.restarted = await _replayed_store(end - 4, len(_REPLAYED))
        await _until(lambda: _T in projector.failed)
    finally:
        projector.request_stop()
        await run
    assert archive.hands == before and (await archive.cursor(_T)).position == end


class _AwayFeed(MemoryProjectorFeed):
    """Redis away: every look at a stream fails."""

    async def entry_at(self, table_id: str, sequence: int) -> tuple[int, bytes | None]:
        raise RedisConnectionError("Connection refused")


async def test_a_reread_that_fails_for_every_table_logs_one_line() -> None:
    registry, archive, feed = await _every_table_stored()
    projector = _projector("a", feed, registry, archive)
    await projector.rebalance()
    await projector.step()  # every cursor stored: a reread looks at the stream
    projector.feed = _AwayFeed(feed.store)
    with structlog.testing.capture_logs() as logs:
        await projector._reread(list(projector.following))
    assert projector.following == {}  # the next scan adopts them again
    lines = [entry for entry in logs if entry["event"] == "projector_reread_failed"]
    assert [line["tables"] for line in lines] == [len(TABLES)]
    assert not [entry for entry in logs if entry["event"] == "projector_let_go"]
