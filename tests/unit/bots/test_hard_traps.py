"""Hard checks part of its strong hands heads-up on the flop and turn (``HardBot._traps``).

Without it hard's checks after the flop held no strong hand, and a best response shoved
into them with anything (docs/ai.md, "Hard's checking range"). The tests play a real
hand through ``HardBot.decide``: the big blind (hard) calls the button's open and flops a
set, so it is first to act after the flop with a hand its equity rule bets.
"""

from __future__ import annotations

import random
from functools import cache

from felt.core.cards import rank_of
from felt.core.rules.commands import Act, ActionKind, StartHand
from felt.core.rules.config import Variant
from felt.core.rules.engine import execute
from felt.core.rules.events import Event
from felt.core.rules.legal import legal_actions
from felt.core.rules.state import HandState
from felt.core.rules.views import redact_all, view_for
from felt.core.table.stats import SeatStats
from felt.players.bots.hard import HardBot, HardTuning
from felt_dev.ladder import deck_for, hand_setup, master_key

HARD = 1  # the big blind, first to act after the flop
# Bets under a fifth of its later actions: it seldom bets when checked to.
PASSIVE = SeatStats(
    hands=200, vpip=120, pfr=40, faced=60, folded=24, bets=20, calls=90, checks=90,
    showdowns=50, shown=40, shown_bettor=8, shown_bettor_weak=1,
)  # fmt: skip


def play(state: HandState, history: list[Event], moves: list[tuple[ActionKind, int]]) -> HandState:
    for kind, to in moves:
        legal = legal_actions(state)
        assert legal is not None
        state, events = execute(state, Act(legal.seat, kind, to))
        history.extend(events)
    return state


OPEN_CALL = ((ActionKind.RAISE, 250), (ActionKind.CALL, 0))
# Three-handed: the button opens, the small blind folds, the big blind (seat 2) calls.
OPEN_FOLD_CALL = ((ActionKind.RAISE, 250), (ActionKind.FOLD, 0), (ActionKind.CALL, 0))


@cache
def flopped_set(
    seat: int = HARD, seats: int = 2, preflop: tuple[tuple[ActionKind, int], ...] = OPEN_CALL
) -> int:
    """The first deal of a fixed seed on which ``seat`` flops a set after ``preflop``."""
    for deal in range(5000):
        state, history = start(deal, seats)
        state = play(state, history, list(preflop))
        hole = [c for c in view_for(state, seat).seat(seat).cards if c is not None]
        board_ranks = {rank_of(c) for c in state.board}
        if rank_of(hole[0]) == rank_of(hole[1]) and rank_of(hole[0]) in board_ranks:
            return deal
    raise AssertionError("no flopped set in 5000 deals")


def start(deal: int, seats: int = 2) -> tuple[HandState, list[Event]]:
    deck = deck_for(Variant.NLHE, master_key(9), deal, seats)
    setup = hand_setup(Variant.NLHE, "h-trap", deck, 0, seats)
    state, events = execute(None, StartHand(setup))
    return state, list(events)


def to_street(streets: int) -> tuple[HandState, list[Event]]:
    """Hard to act first on the flop (1), turn (2) or river (3), everything checked before."""
    state, history = start(flopped_set())
    moves = [*OPEN_CALL] + [(ActionKind.CHECK, 0)] * (2 * (streets - 1))
    return play(state, history, moves), history


def kinds(
    state: HandState,
    history: list[Event],
    tuning: HardTuning,
    table: dict[int, SeatStats] | None = None,
) -> set[ActionKind]:
    """The moves of hard, the seat to act, over 40 random streams."""
    legal = legal_actions(state)
    assert legal is not None
    seat = legal.seat
    bot = HardBot(tuning=tuning)
    out = set()
    for i in range(40):
        move = bot.decide(
            view_for(state, seat), redact_all(history, seat), legal, random.Random(i), table
        )
        assert isinstance(move, Act)
        out.add(move.kind)
    return out


def test_a_strong_hand_out_of_position_sometimes_checks_on_the_flop_and_turn() -> None:
    for streets in (1, 2):
        state, history = to_street(streets)
        assert kinds(state, history, HardTuning(trap_share=0.0)) == {ActionKind.BET}
        assert kinds(state, history, HardTuning()) == {ActionKind.BET, ActionKind.CHECK}
        assert kinds(state, history, HardTuning(trap_share=1.0)) == {ActionKind.CHECK}


def test_in_position_when_checked_to_by_its_own_share() -> None:
    state, history = start(flopped_set(seat=0))
    state = play(state, history, [*OPEN_CALL, (ActionKind.CHECK, 0)])
    assert kinds(state, history, HardTuning(trap_share=1.0, trap_share_ip=0.0)) == {ActionKind.BET}
    assert kinds(state, history, HardTuning(trap_share=0.0, trap_share_ip=1.0)) == {
        ActionKind.CHECK
    }


def test_not_in_a_pot_dealt_to_more_players_and_left_heads_up() -> None:
    state, history = start(flopped_set(seat=2, seats=3, preflop=OPEN_FOLD_CALL), seats=3)
    state = play(state, history, list(OPEN_FOLD_CALL))
    every = HardTuning(trap_share=1.0, trap_share_ip=1.0)
    assert kinds(state, history, every) == {ActionKind.BET}


def test_never_on_the_river() -> None:
    state, history = to_street(3)
    assert kinds(state, history, HardTuning(trap_share=1.0)) == {ActionKind.BET}


def test_not_against_a_player_who_seldom_bets_when_checked_to() -> None:
    state, history = to_street(1)
    assert kinds(state, history, HardTuning(trap_share=1.0), {0: PASSIVE}) == {ActionKind.BET}


def test_a_trapped_hand_check_raises_a_bet_and_calls_a_shove() -> None:
    state, history = to_street(1)
    trap = HardTuning(trap_share=1.0)
    assert kinds(state, history, trap) == {ActionKind.CHECK}
    state = play(state, history, [(ActionKind.CHECK, 0)])
    legal = legal_actions(state)
    assert legal is not None and legal.seat == 0 and legal.max_raise_to is not None
    pot = sum(s.committed for s in state.seats)
    for to, answer in ((pot // 2, ActionKind.RAISE), (legal.max_raise_to, ActionKind.CALL)):
        facing = list(history)
        after = play(state, facing, [(ActionKind.BET, to)])
        assert kinds(after, facing, trap) == {answer}
