"""An AI seat is never sat out for its time-outs (Felt's decision; RULES.md is silent).

A person who lets the clock run out ``max_timeouts`` times in a row has walked away: the seat
is sat out until they sit back in. An AI seat's clock runs out only when the AI workers do not
answer (an outage, a deployment): sat out, nothing would ever sit it back in, and a lounge
would lose its bots for good (the table dealing no hand once fewer than two can play). So an
AI seat plays passively (check, else fold) while its workers are away, and plays again as soon
as they answer.
"""

from __future__ import annotations

from felt.core.rules.config import Variant
from felt.core.table.aggregate import (
    CreateTable,
    PlayHand,
    SeatPlayer,
    StartNextHand,
    TableState,
    TimeOut,
    passive_action,
)
from felt.core.table.events import TableConfig
from tests.unit.table.tables import run


def _heads_up(ai_level: str) -> TableState:
    """A heads-up table with a clock sitting a seat out after 2 time-outs: seat 0 a person,
    seat 1 of ``ai_level`` ("" a person too)."""
    config = TableConfig("t", Variant.NLHE, 2, small_blind=5, big_blind=10, max_timeouts=2)
    state = run(None, CreateTable(config))
    state = run(state, SeatPlayer(0, "p0", "P0", 1_000, "h"))
    return run(state, SeatPlayer(1, "p1", "P1", 1_000, "h", ai_level))


def _seat_1_times_out(state: TableState, hands: int) -> TableState:
    """``hands`` hands in which seat 1's clock runs out at each of its turns and seat 0 plays
    passively (check, else fold)."""
    for n in range(hands):
        if not state.can_start_hand():
            break
        state = run(state, StartNextHand(bytes([n + 1]) * 32))
        while state.hand_running:
            hand = state.hand
            assert hand is not None and hand.actor_seat is not None
            command = TimeOut(1) if hand.actor_seat == 1 else PlayHand(passive_action(hand))
            state = run(state, command)
    return state


def test_a_person_who_lets_the_clock_run_out_is_sat_out() -> None:
    state = _seat_1_times_out(_heads_up(""), hands=6)
    player = state.player(1)
    assert player is not None and player.sitting_out and player.sit_out_reason == "timeouts"


def test_an_ai_seat_whose_workers_do_not_answer_plays_on_passively() -> None:
    state = _seat_1_times_out(_heads_up("easy"), hands=6)
    player = state.player(1)
    assert player is not None and not player.sitting_out
    assert state.can_start_hand()  # the next hand deals it in: it plays once its AI answers
