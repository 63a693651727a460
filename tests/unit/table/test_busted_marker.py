"""When a seat went busted (RULES.md, "Chips at the table and sitting out"), as a table records.

A seat left with no chips after a hand is busted since that hand: ``Player.busted_hand`` is the
hand's number (its id ``<table>:<n>``), reset by chips added, set anew by a later bust, kept by
snapshots, and shown as ``Seat.busted_hand``. The lobby frees a seat busted longer than its
lounge's grace with a conditional ``LeaveSeat(seat, busted_hand)``, which the table refuses,
changing nothing, unless the seat is still busted since that very hand.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from felt.core.rules.commands import Act, ActionKind, IllegalAction
from felt.core.rules.config import Variant
from felt.core.table.aggregate import (
    AddChips,
    CreateTable,
    LeaveSeat,
    PlayHand,
    SeatPlayer,
    StartNextHand,
    TableState,
    decide_table,
    replay_table,
    snapshot_of,
    state_from_snapshot,
)
from felt.core.table.events import AnyEvent, PlayerLeft, TableConfig
from felt.messages.events import EventMeta
from felt.storage.eventstore.codec import decode_event, encode_event
from felt.wire.convert import table_view_to_proto
from poker.events.v1 import events_pb2 as pb
from tests.unit.table.tables import run

CONFIG = TableConfig("t", Variant.NLHE, 3, small_blind=5, big_blind=10)


def _all_in_hand(state: TableState, seed: int) -> tuple[TableState, list[AnyEvent]]:
    """A hand in which the first to act shoves and everyone calls: the events too."""
    events: list[AnyEvent] = []

    def step(s: TableState, command: StartNextHand | PlayHand) -> TableState:
        events.extend(decide_table(s, command))
        return run(s, command)

    state = step(state, StartNextHand(seed.to_bytes(32, "big")))
    shoved = False
    while state.hand_running:
        hand = state.hand
        assert hand is not None and hand.actor_seat is not None
        kind = ActionKind.CALL if shoved else ActionKind.ALL_IN
        state = step(state, PlayHand(Act(hand.actor_seat, kind)))
        shoved = True
    return state, events


def _busted_table() -> tuple[TableState, int, list[AnyEvent]]:
    """Seats 0 and 1 (200 chips each) and 2 (1,000) until a hand leaves one of 0 and 1 at 0:
    the table, the busted seat and every event so far."""
    for seed in range(1, 200):
        events: list[AnyEvent] = [*decide_table(None, CreateTable(CONFIG))]
        state = run(None, CreateTable(CONFIG))
        for seat, stack in ((0, 200), (1, 200), (2, 1_000)):
            command = SeatPlayer(seat, f"p{seat}", f"P{seat}", stack, "h" * 64)
            events.extend(decide_table(state, command))
            state = run(state, command)
        state, played = _all_in_hand(state, seed)
        events.extend(played)
        broke = [p.seat for p in state.players if p.stack == 0]
        if broke:
            return state, broke[0], events
    raise AssertionError("no seed busted a seat")


def test_a_seat_left_with_no_chips_is_busted_since_that_hand() -> None:
    state, seat, events = _busted_table()
    player = state.player(seat)
    assert player is not None and player.stack == 0
    assert player.busted_hand == state.hands_played == 1  # the hand "t:1"
    assert all(p.busted_hand == 0 for p in state.players if p.stack)
    # The fold of the stream says the same, and the view shows it.
    assert replay_table(events) == state
    shown = {s.seat: s.busted_hand for s in table_view_to_proto(state, None, 0).table.seats}
    assert shown[seat] == 1 and all(v == 0 for k, v in shown.items() if k != seat)


def test_chips_added_reset_the_marker_and_a_later_bust_sets_the_later_hand() -> None:
    state, seat, _ = _busted_table()
    state = run(state, AddChips(seat, 200))
    player = state.player(seat)
    assert player is not None and player.busted_hand == 0 and player.stack == 200
    for seed in range(1, 500):  # play on until the seat busts again
        state, _ = _all_in_hand(state, seed)
        player = state.player(seat)
        if player is None or player.stack == 0 or len(state.active_seats()) < 2:
            break
    assert player is not None and player.stack == 0
    assert player.busted_hand == state.hands_played > 1  # the later bust's hand, not the first


def test_a_snapshot_keeps_the_marker_and_an_old_snapshot_gets_its_hands_played() -> None:
    state, seat, _ = _busted_table()
    snapshot = snapshot_of(state, {0: 1, 1: 2, 2: 3})
    data = encode_event(snapshot, EventMeta("t", sequence=40))
    decoded, _ = decode_event(data)
    assert decoded == snapshot
    rebuilt = state_from_snapshot(snapshot)
    player = rebuilt.player(seat)
    assert player is not None and player.busted_hand == 1
    # Written before the field existed: no busted_hand. The upcaster gives a seat at 0 the
    # snapshot's own hands played (the latest its bust can have been); a seat with chips none.
    stored = pb.StoredEvent.FromString(data)
    stored.table_snapshot_taken.hands_played = 7
    for s in stored.table_snapshot_taken.seats:
        s.ClearField("busted_hand")
    old, _ = decode_event(stored.SerializeToString())
    assert isinstance(old, type(snapshot))
    marks = {p.seat: p.busted_hand for p in old.players}
    assert marks == {p.seat: (7 if p.stack == 0 else 0) for p in state.players}


def test_the_conditional_leave_frees_only_a_seat_busted_since_that_hand() -> None:
    state, seat, _ = _busted_table()
    for refused in (LeaveSeat(seat, 2), LeaveSeat(1 - seat if seat < 2 else 0, 1)):
        with pytest.raises(IllegalAction) as caught:
            decide_table(state, refused)  # another hand; or a seat with chips
        assert caught.value.code == "NOT_BUSTED"
    assert decide_table(state, LeaveSeat(seat, 1)) == [PlayerLeft(seat, 0, True)]
    assert run(state, LeaveSeat(seat, 1)).player(seat) is None
    # Chips added first (the rebuy won): the same decision is refused, changing nothing.
    rebought = run(state, AddChips(seat, 200))
    with pytest.raises(IllegalAction) as caught:
        decide_table(rebought, LeaveSeat(seat, 1))
    assert caught.value.code == "NOT_BUSTED"
    # A plain leave is unchanged: the player's own, any time.
    assert decide_table(state, LeaveSeat(seat)) == [PlayerLeft(seat, 0)]


def test_the_conditional_leave_is_refused_while_the_seat_is_dealt_in() -> None:
    """All in, a seat shows 0 behind until its hand ends: never busted mid-hand."""
    state = run(None, CreateTable(CONFIG))
    for seat in (0, 1):
        state = run(state, SeatPlayer(seat, f"p{seat}", f"P{seat}", 100, "h" * 64))
    state = run(state, StartNextHand(b"\x02" * 32))
    hand = state.hand
    assert hand is not None and hand.actor_seat is not None
    shover = hand.actor_seat
    state = run(state, PlayHand(Act(shover, ActionKind.ALL_IN)))
    assert state.hand_running
    with pytest.raises(IllegalAction) as caught:
        decide_table(state, LeaveSeat(shover, 1))
    assert caught.value.code == "NOT_BUSTED"
    # The guard itself, not only the marker (0 mid-hand) and the table's stack (the one the
    # hand started with, until it ends): a seat dealt in is refused even at 0 with its marker
    # naming the hand (no stream gets there; the check must not rely on that).
    marked = replace(
        state,
        players=tuple(
            replace(p, stack=0, busted_hand=1) if p.seat == shover else p for p in state.players
        ),
    )
    player = marked.player(shover)
    assert player is not None and player.stack == 0 and marked.dealt_in(shover)
    with pytest.raises(IllegalAction) as caught:
        decide_table(marked, LeaveSeat(shover, 1))
    assert caught.value.code == "NOT_BUSTED"
