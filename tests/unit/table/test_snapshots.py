"""A table snapshot is exactly the fold: rebuilt from it plus the tail, a table is the same.

Random tables of both variants (``random_tables``): for every snapshot in
the stream, folding from it gives the state the whole stream gives, after
every later batch; encoding and decoding a snapshot is the identity; a
snapshot never holds a card, a deck or a seed (its message has no field that
could), and its redacted copy no token hash.
"""

from __future__ import annotations

import pytest
from google.protobuf.descriptor import Descriptor
from hypothesis import HealthCheck, given, settings

from felt.core.rules.config import Variant
from felt.core.table.aggregate import (
    CreateTable,
    SeatPlayer,
    SnapshotRefused,
    StartNextHand,
    TableState,
    apply_event,
    snapshot_of,
    state_from_snapshot,
)
from felt.core.table.events import TableConfig, TableSnapshotTaken
from felt.core.table.redaction import redact_event
from felt.messages.events import EventMeta
from felt.storage.eventstore.codec import decode_event, encode_event
from poker.events.v1 import events_pb2 as epb
from tests.unit.table.random_tables import RandomTable, random_table
from tests.unit.table.tables import run

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(random_table())
def test_state_from_a_snapshot_and_its_tail_is_the_state_from_the_whole_stream(
    table: RandomTable,
) -> None:
    # The whole stream's fold, and one fold per snapshot started at it, side by side.
    whole: TableState | None = None
    tails: list[TableState | None] = []
    for index, batch in enumerate(table.batches):
        if index in table.snapshot_batches:
            assert isinstance(batch[0], TableSnapshotTaken)
            tails.append(None)
        for event in batch:
            whole = apply_event(whole, event)
            tails = [apply_event(tail, event) for tail in tails]
        assert all(tail == whole for tail in tails)  # after each atomic append


@SETTINGS
@given(random_table())
def test_a_snapshot_round_trips_and_holds_nothing_secret_once_redacted(
    table: RandomTable,
) -> None:
    snapshots = [e for e in table.events if isinstance(e, TableSnapshotTaken)]
    for snapshot in snapshots:
        decoded, _ = decode_event(encode_event(snapshot, EventMeta(table.config.table_id, 9)))
        assert decoded == snapshot
        redacted = redact_event(snapshot, None)
        assert isinstance(redacted, TableSnapshotTaken)
        assert all(p.token_hash == "" for p in redacted.players)
        assert [p.stack for p in redacted.players] == [p.stack for p in snapshot.players]


@SETTINGS
@given(random_table(max_steps=60))
def test_folding_a_snapshot_changes_nothing(table: RandomTable) -> None:
    state: TableState | None = None
    for event in table.events:
        before = state
        state = apply_event(state, event)
        if isinstance(event, TableSnapshotTaken):
            assert state is before
            assert before is not None and not before.hand_running


def _message_types(descriptor: Descriptor, seen: set[str]) -> set[str]:
    """Every message type reachable from ``descriptor``'s fields."""
    for f in descriptor.fields:
        if f.message_type is not None and f.message_type.full_name not in seen:
            seen.add(f.message_type.full_name)
            _message_types(f.message_type, seen)
    return seen


def test_a_snapshot_message_cannot_carry_a_card_a_deck_or_a_seed() -> None:
    reachable = _message_types(epb.TableSnapshotTaken.DESCRIPTOR, set())
    assert "poker.events.v1.Card" not in reachable
    assert "poker.events.v1.HandSetup" not in reachable
    names = {
        f.name
        for name in {"poker.events.v1.TableSnapshotTaken", *reachable}
        for f in epb.DESCRIPTOR.pool.FindMessageTypeByName(name).fields
    }
    assert not names & {"seed", "deck", "cards", "hole", "salt"}


def test_no_snapshot_while_a_hand_runs() -> None:
    config = TableConfig("t", Variant.NLHE, 2, small_blind=1, big_blind=2)
    state = run(None, CreateTable(config))
    state = run(state, SeatPlayer(0, "a", "A", 100, "x" * 64))
    state = run(state, SeatPlayer(1, "b", "B", 100, "y" * 64))
    snapshot_of(state, {})  # between hands: fine
    state = run(state, StartNextHand(bytes(32)))
    assert state.hand_running
    with pytest.raises(SnapshotRefused):
        snapshot_of(state, {0: 2, 1: 3})


def test_a_stream_trimmed_to_its_snapshot_starts_from_it() -> None:
    config = TableConfig("t", Variant.DRAW5, 3, ante=1, small_bet=2, big_bet=4)
    snapshot = TableSnapshotTaken(config, hands_played=7)
    assert apply_event(None, snapshot) == state_from_snapshot(snapshot)
    assert state_from_snapshot(snapshot).hands_played == 7
