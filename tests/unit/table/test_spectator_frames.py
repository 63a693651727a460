"""Spectators' frames (``services.table.frames``): one encoding per live event for them all.

The watchers of a table share one decoded event per record (the feed's); every
spectator is sent the same bytes for it, encoded once. A seat's items and a
replay's never come here (``WatchTable`` sends them as messages of their own;
``frame`` refuses them with ``ValueError``, an explicit check that ``-O`` keeps);
an equal-looking event decoded elsewhere (another table) is encoded for itself,
never served another's frame. Only a :class:`Frame` skips the stream's serializer.
"""

from __future__ import annotations

import pytest

from felt.core.table.commitment import CardOpening
from felt.core.table.events import ChipsAdded
from felt.messages.events import EventMeta
from felt.service.interceptors import Frame, frames_as_they_are
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


_METAS: dict[int, tuple[ChipsAdded, EventMeta]] = {}


def seen(event: ChipsAdded, sequence: int, proofs: list[CardOpening] | None = None) -> Seen:
    """A spectator's item of the live feed: the feed decodes one meta with each event, so
    every stream's item of one event has the same meta object."""
    kept = _METAS.get(id(event))
    if kept is None or kept[0] is not event:
        kept = _METAS[id(event)] = (event, EventMeta("t-1", sequence, hand_id=""))
    return Seen(sequence, event, kept[1], None, proofs or [], live=True)


def test_every_spectator_of_an_event_gets_one_encoding() -> None:
    encode = Counting()
    frames = SpectatorFrames(encode)
    event = ChipsAdded(seat=0, amount=5)
    first = frames.frame(seen(event, 7))
    for _ in range(999):  # the other spectators' streams, each its own Seen of the feed's event
        assert frames.frame(seen(event, 7)) is first
    assert encode.calls == 1
    item = pb.WatchTableResponse.FromString(first.data)
    assert item.event.sequence == 7
    assert item.event.chips_added.amount == 5


def test_another_decoding_of_an_equal_event_is_encoded_for_itself() -> None:
    encode = Counting()
    frames = SpectatorFrames(encode)
    frames.frame(seen(ChipsAdded(seat=0, amount=5), 7))
    frames.frame(seen(ChipsAdded(seat=0, amount=5), 7))  # another table's feed's decoding
    assert encode.calls == 2
    event = ChipsAdded(seat=1, amount=1)
    proof = CardOpening(3, 12, "00" * 16, ())
    with_proof = frames.frame(seen(event, 8, [proof]))
    assert frames.frame(seen(event, 8)).data != with_proof.data  # other proofs: another frame
    assert encode.calls == 4
    other_meta = Seen(8, event, EventMeta("t-2", 8), None, [proof], live=True)
    assert frames.frame(other_meta) is not with_proof  # another decoding's meta: encoded anew
    assert encode.calls == 5


def test_frames_are_bounded_and_the_least_recently_used_go_first() -> None:
    encode = Counting()
    frames = SpectatorFrames(encode, entries=4)
    events = [ChipsAdded(seat=0, amount=n) for n in range(10)]
    for n, event in enumerate(events[:4]):
        frames.frame(seen(event, n + 1))
    frames.frame(seen(events[0], 1))  # a hit: the oldest entry is the most recent now
    for n, event in enumerate(events[4:7], start=4):
        frames.frame(seen(event, n + 1))
    assert len(frames._frames) == 4
    calls = encode.calls
    frames.frame(seen(events[0], 1))  # kept: used after 1-3, which went first
    assert encode.calls == calls
    frames.frame(seen(events[1], 2))  # evicted
    assert encode.calls == calls + 1


def test_a_seats_items_and_a_replays_are_never_shared() -> None:
    encode = Counting()
    frames = SpectatorFrames(encode)
    event = ChipsAdded(seat=0, amount=1)
    mine = Seen(3, event, EventMeta("t-1", 3), 0, [], live=True)
    with pytest.raises(ValueError):
        frames.frame(mine)
    replayed = Seen(3, event, EventMeta("t-1", 3), None, [], live=False)
    with pytest.raises(ValueError):
        frames.frame(replayed)
    assert encode.calls == 0 and not frames._frames  # nothing encoded nor kept for them


def test_only_a_frame_skips_the_serializer() -> None:
    serialize = frames_as_they_are(pb.WatchTableResponse.SerializeToString)
    assert serialize is not None
    frame = SpectatorFrames(_encoded).frame(seen(ChipsAdded(seat=0, amount=5), 7))
    assert isinstance(frame, Frame)
    assert serialize(frame) is frame.data
    message = pb.WatchTableResponse.FromString(frame.data)
    assert serialize(message) == frame.data
    with pytest.raises(TypeError):
        serialize(frame.data)  # plain bytes are not a frame: the serializer refuses them
