"""Spectators' frames (``services.table.frames``): one encoding per live event for them all.

The watchers of a table share one decoded event per record (the feed's); every
spectator is sent the same bytes for it, encoded once. A seat's items never come
here; an equal-looking event decoded elsewhere (a replay, another table) is
encoded for itself, never served another's frame.
"""

from __future__ import annotations

import pytest

from felt.core.table.commitment import CardOpening
from felt.core.table.events import ChipsAdded
from felt.messages.events import EventMeta
from poker.v1 import table_service_pb2 as pb
from services.table.frames import SpectatorFrames
from services.table.queries import Seen
from services.table.service import _encoded


class Counting:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, seen: Seen) -> bytes:
        self.calls += 1
        return _encoded(seen)


def seen(event: ChipsAdded, sequence: int, proofs: list[CardOpening] | None = None) -> Seen:
    meta = EventMeta("t-1", sequence, hand_id="")
    return Seen(sequence, event, meta, None, proofs or [])


def test_every_spectator_of_an_event_gets_one_encoding() -> None:
    encode = Counting()
    frames = SpectatorFrames(encode)
    event = ChipsAdded(seat=0, amount=5)
    first = frames.frame(seen(event, 7))
    for _ in range(999):  # the other spectators' streams, each its own Seen of the feed's event
        assert frames.frame(seen(event, 7)) is first
    assert encode.calls == 1
    item = pb.WatchTableResponse.FromString(first)
    assert item.event.sequence == 7
    assert item.event.chips_added.amount == 5


def test_another_decoding_of_an_equal_event_is_encoded_for_itself() -> None:
    encode = Counting()
    frames = SpectatorFrames(encode)
    frames.frame(seen(ChipsAdded(seat=0, amount=5), 7))
    frames.frame(seen(ChipsAdded(seat=0, amount=5), 7))  # a replay's own decoding
    assert encode.calls == 2
    event = ChipsAdded(seat=1, amount=1)
    proof = CardOpening(3, 12, "00" * 16, ())
    with_proof = frames.frame(seen(event, 8, [proof]))
    assert frames.frame(seen(event, 8)) != with_proof  # other proofs: another frame
    assert encode.calls == 4


def test_frames_are_bounded() -> None:
    frames = SpectatorFrames(_encoded, entries=4)
    events = [ChipsAdded(seat=0, amount=n) for n in range(10)]
    for n, event in enumerate(events):
        frames.frame(seen(event, n + 1))
    assert len(frames._frames) == 4


def test_a_seats_items_are_never_shared() -> None:
    frames = SpectatorFrames(_encoded)
    mine = Seen(3, ChipsAdded(seat=0, amount=1), EventMeta("t-1", 3), 0, [])
    with pytest.raises(AssertionError):
        frames.frame(mine)
