"""A hand's public id: drawn by the service, stored in HandStarted, the same on every rebuild;
hands stored before it existed get one derived from their secret deck."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from felt.core.rules.config import Variant, public_hand_id, public_id_from
from felt.core.rules.events import HandStarted
from felt.core.rules.views import redact, view_for
from felt.core.table.aggregate import (
    CreateTable,
    SeatPlayer,
    StartNextHand,
    TableState,
    execute_table,
)
from felt.core.table.events import TableConfig
from felt.messages.events import EventMeta
from felt.storage.eventstore.codec import decode_event, encode_event
from tests.unit.table.tables import play_out, run

HEX32 = re.compile(r"[0-9a-f]{32}")


def _table(table_id: str = "t") -> TableState:
    config = TableConfig(table_id, Variant.NLHE, 6, small_blind=5, big_blind=10)
    state = run(None, CreateTable(config))
    for seat in (0, 1, 2):
        state = run(state, SeatPlayer(seat, f"p{seat}", f"P{seat}", 1000, "h"))
    return state


def _started(state: TableState, command: StartNextHand) -> HandStarted:
    _, events = execute_table(state, command)
    return next(e for e in events if isinstance(e, HandStarted))


def test_the_public_id_is_the_random_bytes_the_command_brings() -> None:
    started = _started(_table(), StartNextHand(b"\x01" * 32, bytes(range(16))))
    assert started.setup.public_id == bytes(range(16)).hex()
    assert started.setup.hand_id == "t:1"  # the internal id is unchanged


def test_a_public_id_needs_sixteen_random_bytes() -> None:
    with pytest.raises(ValueError):
        public_id_from(b"\x01" * 8)
    with pytest.raises(ValueError):
        _started(_table(), StartNextHand(b"\x01" * 32, b"\x01" * 8))


def test_it_is_stored_in_the_event_and_survives_a_rebuild() -> None:
    started = _started(_table(), StartNextHand(b"\x01" * 32, b"\xab" * 16))
    decoded, _ = decode_event(encode_event(started, EventMeta("t", 5, hand_id="t:1")))
    assert isinstance(decoded, HandStarted)
    assert decoded.setup.public_id == "ab" * 16
    assert public_hand_id(decoded.setup) == "ab" * 16


def test_the_view_shows_it_to_every_viewer_and_redaction_keeps_it() -> None:
    state = run(_table(), StartNextHand(b"\x02" * 32, b"\x0c" * 16))
    assert state.hand is not None
    for viewer in (None, 0, 1):
        assert view_for(state.hand, viewer).public_id == "0c" * 16
    started = state.hand_events[0]
    assert isinstance(started, HandStarted)
    shown = redact(started, None)
    assert isinstance(shown, HandStarted) and shown.setup.public_id == "0c" * 16


def test_an_old_hand_without_one_gets_one_derived_from_its_secret_deck() -> None:
    started = _started(_table(), StartNextHand(b"\x03" * 32, b"\x0c" * 16))
    old = replace(started.setup, public_id="")  # as stored before the field existed
    derived = public_hand_id(old)
    assert HEX32.fullmatch(derived)
    assert derived == public_hand_id(old)  # the same on every rebuild
    other_deck = _started(_table(), StartNextHand(b"\x04" * 32)).setup
    assert public_hand_id(replace(other_deck, public_id="")) != derived
    same_deck_other_table = _started(_table("u"), StartNextHand(b"\x03" * 32)).setup
    assert public_hand_id(replace(same_deck_other_table, public_id="")) != derived
    # A redacted copy (no deck) of an old hand cannot name it: nothing guessable is made up.
    assert public_hand_id(replace(old, deck=())) == ""


def test_without_random_bytes_the_core_names_the_hand_by_the_old_hands_rule() -> None:
    state = _table()
    started = _started(state, StartNextHand(b"\x05" * 32))
    assert started.setup.public_id == public_hand_id(replace(started.setup, public_id=""))


def test_every_hand_of_a_table_has_its_own() -> None:
    state = _table()
    ids = set()
    for n in range(1, 6):
        state = run(state, StartNextHand(bytes([n]) * 32, bytes([n]) * 16))
        assert state.hand is not None
        ids.add(state.hand.setup.public_id)
        state = play_out(state)
    assert len(ids) == 5
