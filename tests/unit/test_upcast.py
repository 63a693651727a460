"""The upcast hook (``felt.messages.upcast``): an old shape decoded as today's, bytes untouched.

The worked example of the module's docstring, registered for these tests
only: a ``PlayerSatOut`` written without a reason decodes as a requested
sit-out, folds like one, and its stored bytes stay as they were.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from felt.core.rules.config import Variant
from felt.core.table.aggregate import replay_table
from felt.core.table.events import PlayerSatOut, PlayerSeated, TableConfig, TableCreated
from felt.messages import upcast as upcasting
from felt.messages.events import EventMeta
from felt.messages.values import CodecError
from felt.storage.eventstore.codec import decode_event, encode_event
from poker.events.v1 import events_pb2 as pb


def sit_out_reason_of_old_event(stored: pb.StoredEvent) -> None:
    """The docstring's example: a sit-out written before reasons existed was a request."""
    if stored.player_sat_out.reason == pb.SIT_OUT_REASON_UNSPECIFIED:
        stored.player_sat_out.reason = pb.SIT_OUT_REASON_REQUESTED


@pytest.fixture
def old_sit_outs() -> Iterator[None]:
    upcasting.UPCASTERS["player_sat_out"] = (sit_out_reason_of_old_event,)
    try:
        yield
    finally:
        del upcasting.UPCASTERS["player_sat_out"]


def _old_sit_out(seat: int, sequence: int) -> bytes:
    """A ``PlayerSatOut`` as the imagined old writer stored it: no reason at all."""
    stored = pb.StoredEvent(sequence=sequence, table_id="t")
    stored.player_sat_out.seat = seat
    return stored.SerializeToString()


def test_without_an_upcaster_the_old_shape_is_refused() -> None:
    assert "player_sat_out" not in upcasting.UPCASTERS  # Felt's own streams need none for it
    with pytest.raises(CodecError, match="sit-out reason"):
        decode_event(_old_sit_out(2, 3))


def test_an_old_shape_decodes_as_todays_and_folds(old_sit_outs: None) -> None:
    data = _old_sit_out(2, 3)
    event, meta = decode_event(data)
    assert event == PlayerSatOut(2, "requested")
    assert meta.sequence == 3
    # Same meaning as today's spelling of it, and the stored bytes are not rewritten.
    today = encode_event(PlayerSatOut(2, "requested"), EventMeta("t", sequence=3))
    assert decode_event(today)[0] == event
    assert data == _old_sit_out(2, 3)
    config = TableConfig("t", Variant.NLHE, 3, small_blind=1, big_blind=2)
    seated = PlayerSeated(2, "p2", "P2", 100, "h" * 64)
    state = replay_table([TableCreated(config), seated, event])
    player = state.player(2)
    assert player is not None and player.sitting_out and player.sit_out_reason == "requested"


def test_current_events_pass_unchanged(old_sit_outs: None) -> None:
    """Idempotent: an event already in today's shape is not touched."""
    for reason in ("requested", "timeouts", "busted", "leaving"):
        data = encode_event(PlayerSatOut(1, reason), EventMeta("t", sequence=9))
        assert decode_event(data)[0] == PlayerSatOut(1, reason)
