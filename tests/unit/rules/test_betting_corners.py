"""Betting corners of issue 15, card by card, for both variants (RULES.md "Betting obligations").

1. A bet or raise exists only when another live seat can put in more than the
   current bet ("has chips" is not enough).
2. Fixed limit: whether a short all-in reopens the betting is judged for each
   seat by what it faces since it last acted (TDA 47): half a bet or more.

Seats are numbered 1..n in dealing order; the button is seat n.
"""

from __future__ import annotations

from felt.core.rules.commands import Act
from felt.core.rules.events import BetPlaced, PlayerCalled, Street, StreetStarted
from tests.unit.rules.hands import ALL_IN, CALL, CHECK, FOLD, RAISE, Game
from tests.unit.rules.test_draw import draw5
from tests.unit.rules.test_nlhe import nlhe

FOUR = ["Ac2d3h4s5c", "KcKdKh9s2h", "7c7d8h8s9c", "QcQdJhJs3c"]
THREE = FOUR[:3]


# ---------------------------------------------------------------------------
# 1. No raise that no opponent can answer


def test_draw_no_raise_when_every_opponent_is_all_in_or_short_of_the_bet() -> None:
    # Stacks 11 / 100 / 5, ante 1, bets 10/20: after the antes 10 / 99 / 4 behind.
    g = Game(draw5(11, 100, 5, hands=THREE, ante=1, small=10, big=20))
    assert g.act(1, ALL_IN) == [BetPlaced(1, 10, 10, True, True)]
    # Seat 3 still has chips, but only 4: it cannot put in more than the 10 bet.
    legal = g.legal
    assert legal.seat == 2 and legal.call_amount == 10 and legal.can_fold
    assert not legal.can_raise and legal.min_raise_to is None and legal.all_in_to is None
    g.refused(Act(2, RAISE, 20), "RAISE_NOT_ALLOWED", "current bet")
    g.refused(Act(2, ALL_IN), "RAISE_NOT_ALLOWED")
    g.act(2, CALL)
    assert g.legal.seat == 3 and g.legal.call_amount == 4 and g.legal.call_is_all_in
    g.act(3, CALL)
    assert g.street() == Street.DRAW
    g.conserved()


def test_draw_a_raise_when_exactly_one_opponent_can_put_in_more() -> None:
    # Seat 3 now has 11 behind: one chip more than the bet, so a raise can be answered.
    g = Game(draw5(11, 100, 12, hands=THREE, ante=1, small=10, big=20))
    g.act(1, ALL_IN)
    legal = g.legal
    assert legal.seat == 2 and legal.min_raise_to == legal.max_raise_to == 20
    g.act(2, RAISE, 20)
    # Seat 3 can only call all-in for 11; seat 2 gets 9 back once the round ends.
    assert g.legal.seat == 3 and g.legal.call_amount == 11 and g.legal.call_is_all_in
    assert not g.legal.can_raise
    g.act(3, CALL)
    assert g.street() == Street.DRAW
    g.conserved()


def test_nlhe_no_raise_when_the_only_opponent_with_chips_cannot_cover_the_bet() -> None:
    # The big blind (seat 2) has 20 behind its 100; the button goes all-in to 500.
    g = Game(nlhe(1000, 120, 500, holes=["AcAd", "KcKd", "QcQd"], board="2h7s9dTh3c"))
    g.act(3, ALL_IN)
    legal = g.legal
    assert legal.seat == 1 and legal.call_amount == 450
    assert not legal.can_raise and legal.all_in_to is None
    g.refused(Act(1, RAISE, 1000), "RAISE_NOT_ALLOWED", "current bet")
    g.act(1, CALL)
    assert g.legal.seat == 2 and g.legal.call_amount == 20 and not g.legal.can_raise


def test_nlhe_a_raise_when_exactly_one_opponent_can_put_in_more() -> None:
    # The big blind now has 401 behind: 501 in all, one more than the 500.
    g = Game(nlhe(1000, 501, 500, holes=["AcAd", "KcKd", "QcQd"], board="2h7s9dTh3c"))
    g.act(3, ALL_IN)
    legal = g.legal
    assert legal.seat == 1 and legal.min_raise_to == 900 and legal.max_raise_to == 1000
    g.act(1, ALL_IN)
    assert g.legal.seat == 2 and g.legal.call_amount == 401 and g.legal.call_is_all_in


# ---------------------------------------------------------------------------
# 2. Limit short all-ins, judged per seat


def _two_short_all_ins(cap: int = 4) -> Game:
    """Stacks 100 / 3 / 100 / 5, ante 1, bets 6/12: check, all-in 2, call, all-in to 4."""
    g = Game(draw5(100, 3, 100, 5, hands=FOUR, ante=1, small=6, big=12, cap=cap))
    g.act(1, CHECK)
    # 2 is less than half of 6: not a full bet.
    assert g.act(2, ALL_IN) == [BetPlaced(2, 2, 2, True, False)]
    g.act(3, CALL)
    # To 4 is two thirds of a bet from nothing: a full bet for the cap and the next raise.
    assert g.act(4, ALL_IN) == [BetPlaced(4, 4, 4, True, True)]
    assert g.state.raises == 1
    return g


def test_draw_cumulative_short_all_ins_reopen_for_one_seat_and_not_another() -> None:
    g = _two_short_all_ins()
    # Seat 1 checked at 0 and now faces 4, at least half a bet: it may raise,
    # one bet above the full level of 4.
    legal = g.legal
    assert legal.seat == 1 and legal.call_amount == 4
    assert legal.min_raise_to == legal.max_raise_to == 10
    g.act(1, CALL)
    # Seat 3 called 2 and faces only 2 more, less than half of 6: call or fold.
    legal = g.legal
    assert legal.seat == 3 and legal.call_amount == 2 and legal.can_fold
    assert not legal.can_raise and legal.min_raise_to is None
    g.refused(Act(3, RAISE, 10), "RAISE_NOT_ALLOWED", "not reopened")
    assert g.act(3, CALL) == [PlayerCalled(3, 2, False), StreetStarted(Street.DRAW)]
    g.conserved()


def test_draw_short_all_ins_reaching_half_a_bet_since_a_seat_acted_reopen_it() -> None:
    # Seat 4 has 5 behind: all-in to 5 is 3 over the 2 seat 3 called, half of 6.
    g = Game(draw5(100, 3, 100, 6, hands=FOUR, ante=1, small=6, big=12))
    g.act(1, CHECK)
    g.act(2, ALL_IN)
    g.act(3, CALL)
    g.act(4, ALL_IN)
    g.act(1, CALL)
    legal = g.legal
    assert legal.seat == 3 and legal.call_amount == 3
    assert legal.min_raise_to == legal.max_raise_to == 11
    g.act(3, RAISE, 11)
    # Seat 1 called 5 and now faces 6 more: a full bet, so it may raise again.
    assert g.legal.seat == 1 and g.legal.min_raise_to == 17


def test_draw_the_cap_counts_the_full_short_all_in_and_stops_a_reopened_seat() -> None:
    # Cap 2: the all-in to 4 is the first full bet, seat 1's raise to 10 the second.
    g = _two_short_all_ins(cap=2)
    g.act(1, RAISE, 10)
    assert g.state.raises == 2
    # Seat 3 faces 8 more since it called (the betting is reopened to it) but the cap is reached.
    legal = g.legal
    assert legal.seat == 3 and legal.call_amount == 8 and not legal.can_raise
    g.refused(Act(3, RAISE, 16), "RAISE_NOT_ALLOWED", "capped")
    g.act(3, CALL)
    assert g.street() == Street.DRAW


def test_draw_the_reopened_seat_may_raise_below_the_cap() -> None:
    g = _two_short_all_ins(cap=3)
    g.act(1, RAISE, 10)
    legal = g.legal
    assert legal.seat == 3 and legal.call_amount == 8
    assert legal.min_raise_to == legal.max_raise_to == 16
    g.act(3, RAISE, 16)
    assert g.state.raises == 3
    assert g.legal.seat == 1 and g.legal.call_amount == 6 and not g.legal.can_raise
    g.act(1, FOLD)
    assert g.street() == Street.DRAW
    g.conserved()
