"""A player who leaves mid-hand has its cards folded at its turn (poker.v1 ``LeaveSeat``).

Before, a leaving seat was played like a timed-out one (check, else fold), so an absent
player could check a hand down to the showdown and win the pot.
"""

from __future__ import annotations

import pytest

from felt.core.rules.commands import Act, ActionKind, Discard, Forfeit, IllegalAction, ShowCards
from felt.core.rules.config import Variant
from felt.core.rules.events import PlayerChecked, PlayerFolded
from felt.core.table.aggregate import (
    CreateTable,
    LeaveSeat,
    PlayHand,
    SeatPlayer,
    StartNextHand,
    TableState,
    decide_table,
    passive_action,
)
from felt.core.table.events import PlayerLeft, PlayerSatOut, TableConfig
from felt.wire.convert import table_view_to_proto
from tests.unit.table.tables import run


def _heads_up(variant: Variant) -> TableState:
    config = (
        TableConfig("t", Variant.NLHE, 2, small_blind=5, big_blind=10)
        if variant == Variant.NLHE
        else TableConfig("t", Variant.DRAW5, 2, ante=5, small_bet=10, big_bet=20)
    )
    state = run(None, CreateTable(config))
    for seat in (0, 1):
        state = run(state, SeatPlayer(seat, f"p{seat}", f"P{seat}", 1000, "h"))
    return run(state, StartNextHand(b"\x01" * 32))


def test_a_leaving_seat_folds_at_its_turn_even_when_it_could_check() -> None:
    state = _heads_up(Variant.NLHE)
    hand = state.hand
    assert hand is not None
    button = hand.actor_seat  # heads-up: the button (small blind) acts first preflop
    assert button is not None
    big_blind = 1 - button
    state = run(state, PlayHand(Act(button, ActionKind.CALL)))
    assert state.hand is not None and state.hand.actor_seat == big_blind
    # The big blind could check; it leaves instead.
    assert decide_table(state, LeaveSeat(big_blind)) == [PlayerSatOut(big_blind, "leaving")]
    state = run(state, LeaveSeat(big_blind))
    assert state.hand is not None
    action = passive_action(state.hand, gone=True)
    assert action == Forfeit(big_blind)
    events = decide_table(state, PlayHand(action))
    assert events[0] == PlayerFolded(big_blind)
    # The hand ends (the caller wins the blinds) and the seat is vacated with its chips.
    assert events[-1] == PlayerLeft(big_blind, 990)
    # A seat that merely timed out still checks.
    assert passive_action(state.hand) == Act(big_blind, ActionKind.CHECK)
    assert PlayerChecked(big_blind) not in events


def test_a_leaving_seat_stands_pat_in_the_draw_then_folds() -> None:
    state = _heads_up(Variant.DRAW5)
    hand = state.hand
    assert hand is not None
    first = hand.actor_seat
    assert first is not None
    other = 1 - first
    state = run(state, PlayHand(Act(first, ActionKind.CHECK)))  # antes only: no bet yet
    assert state.hand is not None and state.hand.actor_seat == other
    state = run(state, PlayHand(Act(other, ActionKind.CHECK)))
    # The draw: the first to draw leaves, stands pat, and folds at its next betting turn.
    assert state.hand is not None
    drawer = state.hand.actor_seat
    assert drawer is not None
    state = run(state, LeaveSeat(drawer))
    assert state.hand is not None
    assert passive_action(state.hand, gone=True) == Discard(drawer, ())
    with pytest.raises(IllegalAction) as refused:
        decide_table(state, PlayHand(Forfeit(drawer)))
    assert refused.value.code == "WRONG_PHASE"
    while state.hand_running:
        assert state.hand is not None
        seat = state.hand.actor_seat
        assert seat is not None
        gone = seat == drawer
        action = passive_action(state.hand, gone=gone)
        if gone and not isinstance(action, Discard):
            assert action == Forfeit(drawer)
        state = run(state, PlayHand(action))
    assert state.player(drawer) is None  # left with its chips at the hand's end


def test_only_the_seat_to_act_can_be_forfeited() -> None:
    state = _heads_up(Variant.NLHE)
    assert state.hand is not None
    waiting = 1 - (state.hand.actor_seat or 0)
    with pytest.raises(IllegalAction) as refused:
        decide_table(state, PlayHand(Forfeit(waiting)))
    assert refused.value.code == "NOT_YOUR_TURN"


def test_a_seats_next_occupant_neither_sees_nor_shows_the_last_players_cards() -> None:
    """The last hand stays the table's until the next deal; its cards stay its players'."""
    state = _heads_up(Variant.NLHE)
    hand = state.hand
    assert hand is not None
    first = hand.actor_seat
    assert first is not None
    state = run(state, PlayHand(Act(first, ActionKind.FOLD)))  # the hand ends at once
    state = run(state, LeaveSeat(first))
    assert state.hand_viewer(first) is None
    state = run(state, SeatPlayer(first, "mallory", "Mallory", 500, "h2"))
    assert state.hand is not None and state.hand.ended
    assert state.hand_viewer(first) is None  # another player sits there now
    assert state.hand_viewer(1 - first) == 1 - first  # the other seat's player is the same
    view = table_view_to_proto(state, first, 1)
    cards = {s.seat: s.cards for s in view.hand.seats}
    assert all(c.hidden for c in cards[first])
    with pytest.raises(IllegalAction) as refused:
        decide_table(state, PlayHand(ShowCards(first)))
    assert refused.value.code == "NOT_YOUR_HAND"
    # The player who was dealt them may still show them.
    assert decide_table(state, PlayHand(ShowCards(1 - first)))
