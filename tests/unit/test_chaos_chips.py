"""The chaos run's chips check on a table's stream (``tests.chaos_run._stream_chips``): it
passes a table whose hands and leaves add up, and catches a chip made up in a hand, a seat
leaving with a stack the stream never gave it, and a table closed with a seat still held."""

from __future__ import annotations

import pytest

from felt.storage.eventstore import StoredRecord
from poker.events.v1 import events_pb2 as epb
from tests.chaos_run import _stream_chips


def _stream(*events: epb.StoredEvent) -> list[StoredRecord]:
    records = []
    for n, e in enumerate(events, start=1):
        e.sequence = n
        records.append(StoredRecord(n, e.SerializeToString()))
    return records


def _seated(seat: int, stack: int) -> epb.StoredEvent:
    return epb.StoredEvent(player_seated=epb.PlayerSeated(seat=seat, stack=stack))


def _ended(*stacks: tuple[int, int]) -> epb.StoredEvent:
    return epb.StoredEvent(
        hand_ended=epb.HandEnded(stacks=[epb.SeatStack(seat=s, stack=c) for s, c in stacks])
    )


def _started(*stacks: tuple[int, int]) -> epb.StoredEvent:
    seats = [epb.SeatSetup(seat=s, stack=c) for s, c in stacks]
    return epb.StoredEvent(hand_started=epb.HandStarted(setup=epb.HandSetup(seats=seats)))


def _left(seat: int, stack: int) -> epb.StoredEvent:
    return epb.StoredEvent(player_left=epb.PlayerLeft(seat=seat, stack=stack))


def test_a_table_whose_chips_add_up_passes() -> None:
    records = _stream(
        _seated(0, 1000),
        _seated(1, 1000),
        _started((0, 1000), (1, 1000)),
        _ended((0, 1200), (1, 800)),
        _seated(2, 500),  # joins between hands, dealt in from the next one
        _started((0, 1200), (1, 800), (2, 500)),
        _left(1, 799),  # folded after its ante: leaves mid-hand with what it has behind
        _ended((0, 1101), (1, 799), (2, 600)),
        _left(0, 1101),
        _left(2, 600),
    )
    assert _stream_chips("t", records) == (2500, 2500)


@pytest.mark.parametrize(
    "events",
    [
        (_seated(0, 1000), _seated(1, 1000), _ended((0, 1201), (1, 800))),  # a chip minted
        (_seated(0, 1000), _ended((0, 1000)), _left(0, 900)),  # left with the wrong stack
        (_seated(0, 1000), _seated(1, 1000), _left(0, 1000)),  # a seat still held at the end
        (  # left mid-hand with more than the hand's end shows
            _seated(0, 1000),
            _seated(1, 1000),
            _started((0, 1000), (1, 1000)),
            _left(1, 1000),
            _ended((0, 1001), (1, 999)),
        ),
    ],
    ids=["minted", "wrong-stack", "seat-held", "left-mid-hand"],
)
def test_chips_that_do_not_add_up_fail(events: tuple[epb.StoredEvent, ...]) -> None:
    with pytest.raises(AssertionError):
        _stream_chips("t", _stream(*events))
