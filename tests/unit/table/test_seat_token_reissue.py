"""Reissuing a seat token: the new hash replaces the old one in the fold, a rebuild agrees,
snapshots carry it and clients never see it."""

from __future__ import annotations

import pytest

from felt.core.rules.commands import IllegalAction
from felt.core.rules.config import Variant
from felt.core.table.aggregate import (
    CreateTable,
    LeaveSeat,
    ReissueSeatToken,
    SeatPlayer,
    StartNextHand,
    TableState,
    apply_event,
    decide_table,
    snapshot_of,
    state_from_snapshot,
)
from felt.core.table.events import AnyEvent, SeatTokenReissued, TableConfig
from felt.core.table.redaction import redact_event
from felt.messages.events import EventMeta
from felt.storage.eventstore.codec import decode_event, encode_event
from services.table.auth import Credential, check_occupant
from services.table.refusals import Refused

OLD, NEW, OTHER = "a" * 64, "b" * 64, "c" * 64


def _table() -> tuple[TableState, list[AnyEvent]]:
    config = TableConfig("t", Variant.NLHE, 3, small_blind=1, big_blind=2)
    events: list[AnyEvent] = []
    state: TableState | None = None
    for command in (
        CreateTable(config),
        SeatPlayer(0, "ann", "Ann", 100, OLD),
        SeatPlayer(1, "bea", "Bea", 100, OTHER),
    ):
        for event in decide_table(state, command):
            events.append(event)
            state = apply_event(state, event)
    assert state is not None
    return state, events


def _reissue(state: TableState, events: list[AnyEvent], command: ReissueSeatToken) -> TableState:
    for event in decide_table(state, command):
        events.append(event)
        state = apply_event(state, event)
    return state


def test_after_a_reissue_the_old_token_is_refused_and_the_new_one_accepted() -> None:
    state, events = _table()
    check_occupant(state, Credential(0, OLD))
    state = _reissue(state, events, ReissueSeatToken(0, "ann", NEW))
    assert events[-1] == SeatTokenReissued(0, "ann", NEW)
    check_occupant(state, Credential(0, NEW))
    with pytest.raises(Refused):
        check_occupant(state, Credential(0, OLD))
    # Nothing else about the seat changed.
    before, after = _table()[0].player(0), state.player(0)
    assert before is not None and after is not None
    assert (after.player_id, after.stack, after.name) == (before.player_id, 100, "Ann")


def test_a_reissue_for_another_player_than_the_occupant_is_refused() -> None:
    state, events = _table()
    with pytest.raises(IllegalAction) as refused:
        decide_table(state, ReissueSeatToken(0, "bea", NEW))
    assert refused.value.code == "NOT_OCCUPANT"
    with pytest.raises(IllegalAction) as empty:
        decide_table(state, ReissueSeatToken(2, "ann", NEW))
    assert empty.value.code == "SEAT_EMPTY"
    # The old occupant's leave-and-return cannot revive a reissued token either.
    state = _reissue(state, events, ReissueSeatToken(0, "ann", NEW))
    for event in decide_table(state, LeaveSeat(0)):
        state = apply_event(state, event)
    with pytest.raises(IllegalAction):
        decide_table(state, ReissueSeatToken(0, "ann", OLD))


def test_a_reissue_is_allowed_during_a_hand_and_a_rebuild_agrees() -> None:
    state, events = _table()
    for event in decide_table(state, StartNextHand(bytes(32))):
        events.append(event)
        state = apply_event(state, event)
    assert state.hand_running
    state = _reissue(state, events, ReissueSeatToken(0, "ann", NEW))
    rebuilt: TableState | None = None
    for event in events:
        decoded, _ = decode_event(encode_event(event, EventMeta("t")))
        rebuilt = apply_event(rebuilt, decoded)
    assert rebuilt == state


def test_a_snapshot_carries_the_current_hash_and_clients_never_see_it() -> None:
    state, events = _table()
    state = _reissue(state, events, ReissueSeatToken(0, "ann", NEW))
    snapshot = snapshot_of(state, {0: 1, 1: 2})
    restored = state_from_snapshot(snapshot)
    check_occupant(restored, Credential(0, NEW))
    with pytest.raises(Refused):
        check_occupant(restored, Credential(0, OLD))
    redacted = redact_event(events[-1], None)
    assert isinstance(redacted, SeatTokenReissued) and redacted.token_hash == ""
    assert redact_event(events[-1], 0) == SeatTokenReissued(0, "ann", "")
