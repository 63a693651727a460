"""The HandArchive contract, on the in-memory fake and on PostgreSQL (tests/integration/archive).

Hands come from whole tables played by the pure core (both variants), so every kind of hand
(folds, showdowns, side pots, draws, voluntary shows after the end) is written and read.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from felt.core.rules.config import Variant
from felt.storage.archive import (
    ArchivedHand,
    Cursor,
    HandArchive,
    HandNumberTaken,
    PlayerPageKey,
    PlayerStats,
    PositionMoved,
    TableWrite,
)
from felt.storage.archive.projection import Batch, TableProjection
from felt.storage.eventstore import StoredRecord
from tests.unit.archive.streams import archived, play_table, stored

HOLDEM = stored("c-holdem", play_table("c-holdem", Variant.NLHE, hands=10))
DRAW = stored("c-draw", play_table("c-draw", Variant.DRAW5, hands=10))


def batches(table_id: str, records: list[StoredRecord], every: int = 25) -> list[tuple[int, Batch]]:
    """The table's stream cut into batches of ``every`` records: (expected position, batch)."""
    projection = TableProjection(table_id, Cursor())
    out = []
    expected = 0
    for i, record in enumerate(records, start=1):
        projection.feed(record)
        if i % every == 0 or i == len(records):
            batch = projection.take()
            out.append((expected, batch))
            expected = batch.cursor.position
    return out


def as_write(table_id: str, expected: int, batch: Batch) -> TableWrite:
    return TableWrite(table_id, expected, batch.cursor, batch.hands, batch.late, batch.table_events)


async def write_all(archive: HandArchive, table_id: str, records: list[StoredRecord]) -> None:
    for expected, batch in batches(table_id, records):
        await archive.write([as_write(table_id, expected, batch)])


async def test_hands_read_back_as_written_with_late_shows_joined(archive: HandArchive) -> None:
    await write_all(archive, "c-holdem", HOLDEM)
    await write_all(archive, "c-draw", DRAW)
    for table_id, records in (("c-holdem", HOLDEM), ("c-draw", DRAW)):
        for hand in archived(table_id, records):
            assert await archive.hand(hand.hand_id) == hand
        assert (await archive.cursor(table_id)).position == len(records)
    assert await archive.hand("0" * 32) is None


async def test_every_event_of_the_stream_is_archived_once_in_a_hand_or_the_tables(
    archive: HandArchive,
) -> None:
    """Batches cut mid-hand (every 25 records): the events of no hand read while a hand is open
    wait for the position to pass them, so none is written twice or left out."""
    for table_id, records in (("c-holdem", HOLDEM), ("c-draw", DRAW)):
        await write_all(archive, table_id, records)
        kept: dict[int, bytes] = {}
        for header in await archive.table_hands(table_id, limit=200):
            hand = await archive.hand(header.hand_id)
            assert hand is not None
            kept.update((e.sequence, e.payload) for e in hand.events)
        table_events = await archive.table_events(table_id)
        assert table_events and not kept.keys() & {e.sequence for e in table_events}
        kept.update((e.sequence, e.payload) for e in table_events)
        assert kept == {r.sequence: r.payload for r in records}
        page = await archive.table_events(table_id, after=table_events[1].sequence, limit=2)
        assert page == table_events[2:4]
    with pytest.raises(ValueError):  # a table event past the new position
        await archive.write([TableWrite("t", 0, Cursor(1), table_events=(table_events[-1],))])


async def test_the_cursor_round_trips(archive: HandArchive) -> None:
    assert await archive.cursor("nowhere") == Cursor()
    cursor = Cursor(7, ((0, "p1", "Ann", ""), (3, "bot", "Bot", "hard")), "ab" * 16, "t:2", "f7")
    await archive.write([TableWrite("t", 0, cursor)])
    assert await archive.cursor("t") == cursor
    later = Cursor(9, cursor.players, cursor.last_hand, cursor.last_table_hand, "f9")
    await archive.write([TableWrite("t", 7, later)])
    assert await archive.cursor("t") == later


async def test_a_stale_position_writes_nothing_at_all(archive: HandArchive) -> None:
    (_, first), (_, second) = batches("c-holdem", HOLDEM, every=120)[:2]
    await archive.write([as_write("c-holdem", 0, first)])
    other = batches("c-draw", DRAW, every=120)[0][1]
    with pytest.raises(PositionMoved) as moved:
        # c-draw's part is fine, c-holdem's is stale: neither is stored.
        await archive.write([as_write("c-draw", 0, other), as_write("c-holdem", 0, second)])
    assert (moved.value.table_id, moved.value.expected) == ("c-holdem", 0)
    assert moved.value.actual == first.cursor.position
    assert await archive.cursor("c-draw") == Cursor()
    assert not await archive.table_hands("c-draw")
    for hand in second.hands:
        assert await archive.hand(hand.hand_id) is None


async def test_of_two_racing_writers_exactly_one_wins(archive: HandArchive) -> None:
    _, batch = batches("c-holdem", HOLDEM, every=200)[0]
    assert batch.hands
    results = await asyncio.gather(
        *(archive.write([as_write("c-holdem", 0, batch)]) for _ in range(4)),
        return_exceptions=True,
    )
    assert sum(r is None for r in results) == 1
    assert all(isinstance(r, PositionMoved) for r in results if r is not None)
    assert len(await archive.table_hands("c-holdem", limit=200)) == len(batch.hands)


async def test_bad_batches_are_refused(archive: HandArchive) -> None:
    _, batch = batches("c-holdem", HOLDEM, every=200)[0]
    hand = batch.hands[0]
    with pytest.raises(ValueError):  # the position would go back
        await archive.write([TableWrite("t", 5, Cursor(4))])
    with pytest.raises(ValueError):  # a hand past the new position
        await archive.write([TableWrite("c-holdem", 0, Cursor(hand.last_sequence - 1), (hand,))])
    with pytest.raises(ValueError):  # another table's hand
        await archive.write([TableWrite("x", 0, Cursor(10_000), (hand,))])
    with pytest.raises(ValueError):  # one table twice
        await archive.write([TableWrite("t", 0, Cursor(1)), TableWrite("t", 0, Cursor(2))])
    assert await archive.cursor("t") == Cursor()


async def test_a_tables_hands_newest_first_in_pages(archive: HandArchive) -> None:
    await write_all(archive, "c-holdem", HOLDEM)
    hands = archived("c-holdem", HOLDEM)
    page = await archive.table_hands("c-holdem", limit=4)
    assert [h.number for h in page] == [10, 9, 8, 7]
    rest = await archive.table_hands("c-holdem", before=page[-1].number, limit=200)
    assert [h.number for h in rest] == [6, 5, 4, 3, 2, 1]
    by_number = {h.number: h for h in hands}
    assert all(h.hand_id == by_number[h.number].hand_id for h in page + rest)
    with pytest.raises(ValueError):
        await archive.table_hands("c-holdem", limit=0)


async def test_a_players_hands_in_keyset_pages_and_their_statistics(archive: HandArchive) -> None:
    await write_all(archive, "c-holdem", HOLDEM)
    await write_all(archive, "c-draw", DRAW)
    hands: list[ArchivedHand] = archived("c-holdem", HOLDEM) + archived("c-draw", DRAW)
    players = {s.player_id for h in hands for s in h.seats}
    for player in sorted(players):
        mine = [(h, s.summary) for h in hands for s in h.seats if s.player_id == player]
        expected = sorted(mine, key=lambda m: (m[0].ended_at, m[0].hand_id), reverse=True)
        seen = []
        before = None
        while True:
            page = await archive.player_hands(player, before=before, limit=3)
            seen += page
            if len(page) < 3:
                break
            before = PlayerPageKey(page[-1].ended_at, page[-1].hand_id)
        assert [(p.hand_id, p.summary) for p in seen] == [(h.hand_id, s) for h, s in expected]
        summaries = [s for _, s in mine]
        assert await archive.player_stats(player) == PlayerStats(
            player,
            hands=len(summaries),
            net=sum(s.net for s in summaries),
            vpip=sum(s.vpip for s in summaries),
            pfr=sum(s.pfr for s in summaries),
            went_to_showdown=sum(s.went_to_showdown for s in summaries),
            won_at_showdown=sum(s.won_at_showdown for s in summaries),
        )
    assert await archive.player_stats("nobody") == PlayerStats("nobody")
    assert await archive.player_hands("nobody") == []


async def test_a_hand_is_never_stored_twice_even_under_a_fresh_cursor(
    archive: HandArchive,
) -> None:
    _, batch = batches("c-holdem", HOLDEM, every=200)[0]
    await archive.write([as_write("c-holdem", 0, batch)])
    hand = batch.hands[0]
    again = replace(hand, table_id="elsewhere")  # the same public id at another table
    with pytest.raises(Exception):  # noqa: B017 - a unique violation (PG) or ValueError (fake)
        await archive.write([TableWrite("elsewhere", 0, Cursor(10_000), (again,))])
    assert await archive.cursor("elsewhere") == Cursor()


async def test_a_hand_number_archived_under_another_id_is_a_diverged_stream(
    archive: HandArchive,
) -> None:
    """A Redis crash lost archived events and the table played on from before them: its new
    hand 1 is not the archived hand 1. Refused as such, nothing of the batch stored, and the
    other table of the batch is written once it is sent alone."""
    _, batch = batches("c-holdem", HOLDEM, every=200)[0]
    await archive.write([as_write("c-holdem", 0, batch)])
    first = batch.hands[0]
    after = batch.cursor.position  # the table's new events, past what was archived
    replayed = replace(  # the same number, another deal
        first,
        hand_id="f" * 32,
        events=tuple(replace(e, sequence=e.sequence + after) for e in first.events),
    )
    _, draw = batches("c-draw", DRAW, every=200)[0]
    writes = [
        as_write("c-draw", 0, draw),
        TableWrite("c-holdem", batch.cursor.position, Cursor(10_000), (replayed,)),
    ]
    with pytest.raises(HandNumberTaken) as taken:
        await archive.write(writes)
    assert (taken.value.table_id, taken.value.number) == ("c-holdem", first.number)
    assert await archive.cursor("c-draw") == Cursor()
    assert await archive.cursor("c-holdem") == batch.cursor
    assert await archive.hand(replayed.hand_id) is None
    await archive.write([as_write("c-draw", 0, draw)])
    assert await archive.cursor("c-draw") == draw.cursor
