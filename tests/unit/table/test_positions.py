"""Button and blinds across hands: the dead-button rule of RULES.md (TDA), heads-up included."""

from __future__ import annotations

import itertools

import pytest

from felt.core.rules.config import Variant
from felt.core.rules.events import BlindPosted, HandStarted
from felt.core.table.aggregate import (
    CreateTable,
    LeaveSeat,
    SeatPlayer,
    SitIn,
    SitOut,
    StartNextHand,
    TableState,
)
from felt.core.table.events import TableConfig
from felt.core.table.positions import Positions, dealing_order, next_positions
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


# --------------------------------------------------------------------------- issue 15


def test_heads_up_growing_to_three_puts_the_button_before_the_small_blind() -> None:
    # A (0) and B (2) heads-up: A has the button and the small blind, B the big blind.
    heads_up = next_positions(NLHE, [0, 2], 3, None)
    assert heads_up == Positions(0, 0, 2)
    # C sits at seat 1. The big blind moves on to A (0) and B (2) posts the small
    # blind; the button cannot stay on A (the big blind): it goes to C, the
    # nearest seat dealt in before the small blind.
    three = next_positions(NLHE, [0, 1, 2], 3, heads_up)
    assert three == Positions(button=1, small_blind=2, big_blind=0)
    # So the small blind opens the flop, and the button acts last.
    assert dealing_order(three.button, [0, 1, 2], 3) == [2, 0, 1]


def test_heads_up_partner_leaves_and_two_join_behind_the_big_blind() -> None:
    # A (0) big blind, B (1) button and small blind; B leaves, C (2) and D (3) join.
    heads_up = Positions(1, 1, 0)
    after = next_positions(NLHE, [0, 2, 3], 4, heads_up)
    # The big blind moves to C; A, who had it, posts the small blind; the old
    # button's seat 1 lies between them, so the button is D, before the small blind.
    assert after == Positions(button=3, small_blind=0, big_blind=2)
    assert dealing_order(after.button, [0, 2, 3], 4) == [0, 2, 3]


def test_the_old_small_blind_on_the_new_big_blind_gives_the_button_to_a_newcomer() -> None:
    # 6 seats: A (0) button, B (2) small blind, C (4) big blind; A leaves, D joins at 3.
    first = next_positions(NLHE, [0, 2, 4], 6, None)
    assert first == Positions(0, 2, 4)
    after = next_positions(NLHE, [2, 3, 4], 6, first)
    assert after == Positions(button=3, small_blind=4, big_blind=2)


def test_a_dead_button_stays_where_it_belongs() -> None:
    # The old small blind's seat is empty but still before the small blind: a dead button.
    first = next_positions(NLHE, [0, 1, 2, 3, 4], 6, None)
    assert first == Positions(0, 1, 2)
    after = next_positions(NLHE, [0, 2, 3, 4], 6, first)
    assert after == Positions(button=1, small_blind=2, big_blind=3)


def test_a_newcomer_between_the_blinds_is_dealt_in_at_once_without_posting() -> None:
    first = next_positions(NLHE, [0, 2, 4], 6, None)
    assert first == Positions(0, 2, 4)
    # A newcomer at 1 sits between the old button and small blind; one at 5 right after the
    # big blind takes the next big blind.
    after = next_positions(NLHE, [0, 1, 2, 4, 5], 6, first)
    assert after == Positions(button=2, small_blind=4, big_blind=5)


def _table(seats: tuple[int, ...], seat_count: int = 6) -> TableState:
    state = run(None, CreateTable(TableConfig("t", NLHE, seat_count, small_blind=1, big_blind=2)))
    for seat in seats:
        state = run(state, SeatPlayer(seat, f"p{seat}", f"P{seat}", 100, "h"))
    return state


def _hand(state: TableState, seed: bytes) -> tuple[TableState, int]:
    state = run(state, StartNextHand(seed))
    started = next(e for e in state.hand_events if isinstance(e, HandStarted))
    return play_out(state), started.setup.button


def test_after_fewer_than_two_players_the_table_starts_fresh() -> None:
    state = _table((1, 3, 4))
    state, button = _hand(state, b"1" * 32)
    assert button == 1 and state.positions == Positions(1, 3, 4)
    state, button = _hand(state, b"2" * 32)
    assert button == 3
    # Two leave: one player is left, so the button is forgotten...
    state = run(state, LeaveSeat(1))
    assert state.positions is not None
    state = run(state, LeaveSeat(4))
    assert state.positions is None
    # ...and when a newcomer sits down, the lowest seat dealt in has the button (heads-up:
    # and the small blind), whoever had the blinds before.
    state = run(state, SeatPlayer(5, "p5", "P5", 100, "h"))
    state, button = _hand(state, b"3" * 32)
    assert button == 3 and state.positions == Positions(3, 3, 5)


def test_a_sit_out_leaving_one_player_starts_the_table_fresh() -> None:
    state = _table((2, 4))
    state, button = _hand(state, b"1" * 32)
    assert button == 2 and state.positions == Positions(2, 2, 4)
    state = run(state, SitOut(2))
    assert state.positions is None
    # Back from sitting out: dealt in at once, no missed blind; a fresh start from seat 2.
    state = run(state, SitIn(2))
    state, button = _hand(state, b"3" * 32)
    assert button == 2 and state.positions == Positions(2, 2, 4)
