"""Button and blinds across hands: the dead-button rule of RULES.md (TDA), heads-up included."""

from __future__ import annotations

import itertools

import pytest

from felt.rules.config import Variant
from felt.rules.events import BlindPosted, HandStarted
from felt.table.aggregate import (
    CreateTable,
    LeaveSeat,
    SeatPlayer,
    StartNextHand,
    TableState,
)
from felt.table.events import TableConfig
from felt.table.positions import Positions, dealing_order, next_positions
from tests.unit.table.tables import play_out, run

NLHE = Variant.NLHE


def test_first_hand_button_then_small_then_big_blind() -> None:
    assert next_positions(NLHE, [1, 4, 6], 9, None) == Positions(1, 4, 6)


def test_big_blind_moves_one_seat_dealt_in_each_hand_so_nobody_posts_it_twice() -> None:
    active, previous = [0, 2, 3, 7], None
    big_blinds = []
    for _ in range(8):
        previous = next_positions(NLHE, active, 9, previous)
        big_blinds.append(previous.big_blind)
    assert big_blinds == [3, 7, 0, 2, 3, 7, 0, 2]
    assert all(a != b for a, b in itertools.pairwise(big_blinds))


def test_small_blind_is_dead_when_last_big_blind_left() -> None:
    hand1 = next_positions(NLHE, [0, 1, 2, 3], 6, None)
    assert hand1 == Positions(0, 1, 2)
    # Seat 2 (last big blind) busts: the big blind still moves on one seat, the
    # small blind position is seat 2's (dead), the button goes to seat 1.
    hand2 = next_positions(NLHE, [0, 1, 3], 6, hand1)
    assert hand2 == Positions(button=1, small_blind=2, big_blind=3)


def test_button_is_dead_when_last_small_blind_left() -> None:
    hand1 = next_positions(NLHE, [0, 1, 2, 3], 6, None)
    hand2 = next_positions(NLHE, [0, 2, 3], 6, hand1)  # seat 1 (last small blind) left
    assert hand2 == Positions(button=1, small_blind=2, big_blind=3)
    assert dealing_order(hand2.button, [0, 2, 3], 6) == [2, 3, 0]


def test_heads_up_button_posts_small_blind() -> None:
    assert next_positions(NLHE, [2, 5], 6, None) == Positions(2, 2, 5)
    assert next_positions(NLHE, [2, 5], 6, Positions(2, 2, 5)) == Positions(5, 5, 2)


def test_going_heads_up_nobody_gets_the_big_blind_twice_in_a_row() -> None:
    hand1 = next_positions(NLHE, [0, 1, 2], 6, None)
    assert hand1.big_blind == 2
    for leaver in (0, 1):
        left = [s for s in (0, 1, 2) if s != leaver]
        hand2 = next_positions(NLHE, left, 6, hand1)
        assert hand2.big_blind != 2
        assert hand2.button == hand2.small_blind == 2


def test_draw_button_moves_to_the_next_seat_dealt_in() -> None:
    draw = Variant.DRAW5
    first = next_positions(draw, [1, 3, 4], 6, None)
    assert first == Positions(1)
    assert next_positions(draw, [1, 3, 4], 6, first) == Positions(3)
    assert next_positions(draw, [1, 4], 6, Positions(3)) == Positions(4)


def test_a_hand_needs_two_players() -> None:
    with pytest.raises(ValueError):
        next_positions(NLHE, [3], 6, None)


# --------------------------------------------------------------------------- through the table


def blinds_of(state: TableState) -> dict[int, int]:
    return {e.seat: e.amount for e in state.hand_events if isinstance(e, BlindPosted)}


def test_table_posts_only_live_blinds_and_deals_newcomers_from_the_next_hand() -> None:
    config = TableConfig("t", NLHE, 6, small_blind=5, big_blind=10)
    state = run(None, CreateTable(config))
    for seat in (0, 1, 2, 3):
        state = run(state, SeatPlayer(seat, f"p{seat}", f"P{seat}", 1000, "h"))
    state = run(state, StartNextHand(b"1" * 32))
    assert blinds_of(state) == {1: 5, 2: 10}
    # A newcomer arriving mid-hand is not in this hand...
    state = run(state, SeatPlayer(5, "p5", "P5", 1000, "h"))
    assert state.hand is not None and state.hand.seat_state(5) is None
    # Play the hand out passively; then the last big blind (seat 2) leaves.
    state = play_out(state)
    state = run(state, LeaveSeat(2))
    state = run(state, StartNextHand(b"2" * 32))
    started = next(e for e in state.hand_events if isinstance(e, HandStarted))
    dealt = [s.seat for s in started.setup.seats]
    assert 5 in dealt  # the newcomer is dealt in from the next hand
    # Big blind moved on one seat dealt in (3); the small blind is dead (seat 2 left).
    assert blinds_of(state) == {3: 10}
    assert started.setup.button == 1
