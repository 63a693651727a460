"""The projection of a table's stream into archived hands (pure): hand boundaries, late shows,
summary flags, and resuming from any stored cursor writes every hand exactly once."""

from __future__ import annotations

import random

import pytest

from felt.core.cards import full_deck
from felt.core.rules.config import HandSetup, SeatSetup, Variant, public_hand_id
from felt.core.rules.events import (
    BlindPosted,
    CardsShown,
    Event,
    HandEnded,
    HandStarted,
    PlayerCalled,
    PlayerChecked,
    PlayerFolded,
    PotAwarded,
)
from felt.core.table.events import DeckCommitted
from felt.storage.archive import ArchivedHand, seat_summaries
from felt.storage.archive.projection import Batch, TableProjection
from felt.storage.archive.values import Cursor
from felt.storage.eventstore import StoredRecord
from felt.storage.eventstore.codec import decode_event
from tests.golden.record import stream_path
from tests.unit.archive.streams import archived, play_table, stored

STREAMS = {v: stored(f"t-{v.value}", play_table(f"t-{v.value}", v, hands=15)) for v in Variant}


@pytest.mark.parametrize("variant", list(Variant))
def test_every_hand_is_its_events_from_commitment_to_end_and_later_shows(variant: Variant) -> None:
    records = STREAMS[variant]
    hands = archived(f"t-{variant.value}", records)
    assert [h.number for h in hands] == list(range(1, 16))
    by_hand: dict[str, list[int]] = {}
    for record in records:
        _, meta = decode_event(record.payload)
        if meta.hand_id:
            by_hand.setdefault(meta.hand_id, []).append(record.sequence)
    for hand in hands:
        assert [e.sequence for e in hand.events] == by_hand[hand.table_hand_id]
        events = [decode_event(e.payload)[0] for e in hand.events]
        started = next(e for e in events if isinstance(e, HandStarted))
        assert hand.hand_id == public_hand_id(started.setup) and len(hand.hand_id) == 32
        assert sum(s.summary.net for s in hand.seats) == 0  # chips only change hands
        shown = {e.seat: e.cards for e in events if isinstance(e, CardsShown)}
        assert {s.seat: s.shown for s in hand.seats if s.shown} == shown
        pots = [e for e in events if isinstance(e, PotAwarded)]
        assert [p.amount for p in hand.pots] == [p.amount for p in pots]
        for s in hand.seats:
            m = s.summary
            assert m.stack_end - m.stack_start == m.net
            assert not m.pfr or m.vpip
            assert not m.won_at_showdown or m.went_to_showdown
            assert s.display_name.startswith("Player ")
    later = [h for h in hands if not isinstance(decode_event(h.events[-1].payload)[0], HandEnded)]
    assert later, "the streams have voluntary shows after a hand's end"


@pytest.mark.parametrize("variant", list(Variant))
@pytest.mark.parametrize("seed", range(6))
def test_resuming_from_any_stored_cursor_archives_each_hand_once(
    variant: Variant, seed: int
) -> None:
    """A projector that stops anywhere (its batch written or not) and resumes from the cursor
    it last wrote ends with exactly the hands of one uninterrupted run."""
    table_id = f"t-{variant.value}"
    records = STREAMS[variant]
    rng = random.Random(seed)
    written: dict[str, ArchivedHand] = {}
    cursor = Cursor()

    def write(batch: Batch) -> Cursor:
        for hand in batch.hands:
            assert hand.hand_id not in written
            written[hand.hand_id] = hand
        for late in batch.late:
            written[late.hand_id] = written[late.hand_id].with_late(late)
        return batch.cursor

    position = 0
    while position < len(records):
        projection = TableProjection(table_id, cursor)
        upto = rng.randint(cursor.position + 1, len(records))
        for record in records[cursor.position : upto]:
            projection.feed(record)
            if rng.random() < 0.3:  # a batch written
                cursor = write(projection.take())
        position = upto
        if position == len(records):  # the last batch
            cursor = write(projection.take())
        # else: the process dies; whatever it had not written is read again
    assert sorted(written.values(), key=lambda h: h.number) == archived(table_id, records)
    assert cursor.position == len(records)


def test_a_position_stays_before_an_open_hand() -> None:
    records = STREAMS[Variant.NLHE]
    projection = TableProjection("t-NLHE", Cursor())
    for record in records:
        projection.feed(record)
        if projection.hand_open:
            assert projection.position < record.sequence
        else:
            assert projection.position == record.sequence


def test_records_must_follow_on() -> None:
    projection = TableProjection("t", Cursor(position=5))
    with pytest.raises(ValueError):
        projection.feed(StoredRecord(7, b""))


def test_summary_flags_of_a_hand_by_hand() -> None:
    seats = (
        SeatSetup(0, 1000, "a", blind=5),
        SeatSetup(1, 1000, "b", blind=10),
        SeatSetup(2, 1000, "c"),
    )
    s = HandSetup("t:1", Variant.NLHE, 2, seats, full_deck(), min_bet=10)
    hand: list[Event] = [
        HandStarted(s),
        BlindPosted(s.seats[0].seat, 5, False),
        BlindPosted(s.seats[1].seat, 10, False),
        PlayerCalled(s.seats[2].seat, 10, False),
        PlayerCalled(s.seats[0].seat, 5, False),
        PlayerChecked(s.seats[1].seat),
        PlayerFolded(s.seats[0].seat),
        PotAwarded(0, 30, (s.seats[1].seat, s.seats[2].seat), ((s.seats[2].seat, 30),), "pair"),
        HandEnded(((s.seats[0].seat, 990), (s.seats[1].seat, 990), (s.seats[2].seat, 1020))),
    ]
    sb, bb, btn = seat_summaries(hand)
    assert (sb.vpip, sb.pfr, sb.went_to_showdown, sb.net) == (True, False, False, -10)
    assert (bb.vpip, bb.went_to_showdown, bb.won_at_showdown, bb.net) == (False, True, False, -10)
    assert (btn.vpip, btn.went_to_showdown, btn.won_at_showdown, btn.net) == (True, True, True, 20)
    with pytest.raises(ValueError):
        seat_summaries(hand[:-1])


def test_a_stream_whose_envelopes_name_no_hand_is_archived_by_the_fold_alone() -> None:
    """The golden streams were stored without envelope hand ids (and before public ids)."""
    lines = stream_path("holdem").read_text().split()
    records = [StoredRecord(i, bytes.fromhex(line)) for i, line in enumerate(lines, start=1)]
    hands = archived("golden-holdem", records)
    assert [h.number for h in hands] == list(range(1, 41))
    for hand in hands:
        events = [decode_event(e.payload)[0] for e in hand.events]
        assert isinstance(events[0], DeckCommitted)
        assert any(isinstance(e, HandEnded) for e in events)
        assert len(hand.hand_id) == 32  # derived from the secret deck: stored without one
