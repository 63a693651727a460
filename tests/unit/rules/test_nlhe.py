"""No-Limit Hold'em rules (RULES.md, Variant 1), one hand written out card by card per rule.

Conventions of these tests: table seats are numbered 1..n in dealing order
(clockwise from the left of the button) and the button is seat n. With three
or more players seat 1 posts the small blind and seat 2 the big blind; heads-up
the button (seat 2) posts the small blind and seat 1 the big blind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from felt.core.cards import cards
from felt.core.evaluator import describe
from felt.core.rules.commands import (
    Act,
    IllegalAction,
    ShowCards,
    StartHand,
)
from felt.core.rules.config import HandSetup, SeatSetup, Variant
from felt.core.rules.engine import execute, replay
from felt.core.rules.events import (
    AntePosted,
    BetPlaced,
    BlindPosted,
    CardsMucked,
    CardsShown,
    HandEnded,
    HandStarted,
    HoleCardsDealt,
    PlayerCalled,
    PlayerChecked,
    PlayerFolded,
    PotAwarded,
    Street,
    StreetStarted,
    UncalledBetReturned,
)
from felt.core.rules.legal import LegalActions
from felt.core.rules.views import view_for
from tests.unit.rules.hands import (
    ALL_IN,
    BET,
    CALL,
    CHECK,
    FOLD,
    RAISE,
    Game,
    deck_for,
    pots,
    shown,
    value,
)

# ---------------------------------------------------------------------------
# helpers


def nlhe(
    *stack_list: int,
    holes: Sequence[str],
    board: str = "",
    sb: int = 50,
    bb: int = 100,
    ante: int = 0,
) -> HandSetup:
    """A Hold'em hand: seats 1..n in dealing order, the button at seat n."""
    n = len(stack_list)
    blinds = (bb, sb) if n == 2 else (sb, bb) + (0,) * (n - 2)
    seats = tuple(
        SeatSetup(seat=i + 1, stack=s, player_id=f"p{i + 1}", ante=ante, blind=blinds[i])
        for i, s in enumerate(stack_list)
    )
    return HandSetup(
        hand_id="h1",
        variant=Variant.NLHE,
        button=n,
        seats=seats,
        deck=deck_for(holes, board),
        min_bet=bb,
    )


def check_down(game: Game, *seats: int) -> None:
    """Every listed seat checks, in order (a street with no bet)."""
    for seat in seats:
        game.act(seat, CHECK)


# ---------------------------------------------------------------------------
# Setup and order of play


def test_blinds_are_posted_cards_dealt_and_preflop_starts_left_of_big_blind() -> None:
    holes = ["AcAd", "KcKd", "QcQd", "JcJd"]
    setup = nlhe(1000, 1000, 1000, 1000, holes=holes, board="2h7s9dTh3c")
    g = Game(setup)
    assert g.started == [
        HandStarted(setup),
        BlindPosted(1, 50, False),
        BlindPosted(2, 100, False),
        HoleCardsDealt(1, cards("AcAd"), (0, 4)),
        HoleCardsDealt(2, cards("KcKd"), (1, 5)),
        HoleCardsDealt(3, cards("QcQd"), (2, 6)),
        HoleCardsDealt(4, cards("JcJd"), (3, 7)),
    ]
    assert g.to_act == 3
    assert g.legal == LegalActions(
        seat=3,
        street=Street.PREFLOP,
        can_fold=True,
        call_amount=100,
        min_raise_to=200,
        max_raise_to=1000,
        all_in_to=1000,
    )
    assert g.act(3, CALL) == [PlayerCalled(3, 100, False)]
    assert g.act(4, CALL) == [PlayerCalled(4, 100, False)]
    assert g.act(1, CALL) == [PlayerCalled(1, 50, False)]
    # The big blind has the option: check or raise, nothing to call.
    assert g.to_act == 2
    assert g.legal.can_check and g.legal.call_amount is None and not g.legal.can_fold
    assert g.legal.min_raise_to == 200
    assert g.act(2, CHECK) == [
        PlayerChecked(2),
        StreetStarted(Street.FLOP, cards("2h7s9d"), (8, 9, 10)),
    ]
    assert g.state.pot == 400
    assert g.stacks() == {1: 900, 2: 900, 3: 900, 4: 900}


def test_postflop_action_starts_with_first_active_player_left_of_button() -> None:
    holes = ["AcAd", "KcKd", "QcQd", "JcJd"]
    g = Game(nlhe(1000, 1000, 1000, 1000, holes=holes, board="2h7s9dTh3c"))
    g.act(3, CALL)
    g.act(4, CALL)
    g.act(1, FOLD)  # the small blind (first left of the button) is out
    g.act(2, CHECK)
    assert g.street() == Street.FLOP
    assert g.to_act == 2
    check_down(g, 2, 3)
    assert g.to_act == 4
    assert g.act(4, CHECK)[-1] == StreetStarted(Street.TURN, cards("Th"), (11,))
    assert g.to_act == 2
    g.act(2, CHECK)
    g.act(3, BET, 100)
    g.act(4, FOLD)
    g.act(2, CALL)
    assert g.street() == Street.RIVER
    assert g.to_act == 2


def test_heads_up_button_posts_small_blind_acts_first_preflop_and_last_after() -> None:
    # Seat 2 is the button: it posts the small blind.
    setup = nlhe(1000, 1000, holes=["AcAd", "KcKd"], board="2h7s9dTh3c")
    assert setup.button == 2
    g = Game(setup)
    blinds = [e for e in g.started if isinstance(e, BlindPosted)]
    assert sorted(blinds, key=lambda e: e.seat) == [
        BlindPosted(1, 100, False),
        BlindPosted(2, 50, False),
    ]
    assert g.to_act == 2  # the button acts first preflop
    assert g.legal.call_amount == 50
    g.act(2, CALL)
    assert g.to_act == 1  # the big blind's option
    g.act(1, CHECK)
    for street in (Street.FLOP, Street.TURN, Street.RIVER):
        assert g.street() == street
        assert g.to_act == 1  # the big blind acts first after the flop
        g.act(1, CHECK)
        assert g.to_act == 2  # and the button last
        g.act(2, CHECK)
    assert g.state.ended


def test_antes_are_dead_money_posted_before_the_blinds() -> None:
    # Ante 10: the big blind (60 chips) has 50 left for its blind and is all-in.
    holes = ["7c7d", "AcAd", "KcKd"]
    setup = nlhe(1000, 60, 1000, holes=holes, board="2h5s9dTh3c", ante=10)
    g = Game(setup)
    assert g.started[1:6] == [
        AntePosted(1, 10, False),
        AntePosted(2, 10, False),
        AntePosted(3, 10, False),
        BlindPosted(1, 50, False),
        BlindPosted(2, 50, True),
    ]
    # Antes do not count toward the bet: seat 3 still calls the full 100.
    assert g.legal.call_amount == 100 and g.legal.min_raise_to == 200
    g.act(3, CALL)
    g.act(1, CALL)
    for _ in range(3):
        g.act(1, CHECK)
        g.act(3, CHECK)
    assert [(p.amount, p.eligible, p.shares) for p in pots(g.log)] == [
        (180, (1, 2, 3), ((2, 180),)),  # 60 from each seat, antes included
        (100, (1, 3), ((3, 100),)),
    ]
    g.conserved()


# ---------------------------------------------------------------------------
# Bet sizes


def test_minimum_bet_is_the_big_blind() -> None:
    g = Game(nlhe(1000, 1000, 1000, holes=["AcAd", "KcKd", "QcQd"], board="2h7s9dTh3c"))
    g.act(3, CALL)
    g.act(1, CALL)
    g.act(2, CHECK)
    assert g.legal.bet and g.legal.min_raise_to == 100 and g.legal.max_raise_to == 900
    g.refused(Act(1, BET, 99), "BELOW_MIN_RAISE", "100", "99")
    g.refused(Act(1, RAISE, 200), "RAISE_NOT_ALLOWED", "bet")
    assert g.act(1, BET, 100) == [BetPlaced(1, 100, 100, False, True)]
    # A raise must add at least the big blind too.
    assert g.legal.min_raise_to == 200
    g.refused(Act(2, BET, 300), "RAISE_NOT_ALLOWED", "raise")


def test_min_raise_is_the_last_full_raise() -> None:
    holes = ["AcAd", "KcKd", "QcQd"]
    g = Game(nlhe(5000, 5000, 5000, holes=holes, board="2h7s9dTh3c"))
    assert g.legal.min_raise_to == 200  # preflop: the big blind plus a big blind
    assert g.act(3, RAISE, 300) == [BetPlaced(3, 300, 300, False, True)]
    # 50/100, raise to 300 (a raise of 200): the next raise is to at least 500.
    assert g.legal.min_raise_to == 500
    g.refused(Act(1, RAISE, 499), "BELOW_MIN_RAISE", "500", "499")
    g.act(1, RAISE, 500)
    assert g.legal.min_raise_to == 700
    g.act(2, RAISE, 1000)  # a raise of 500 sets the new minimum
    assert g.legal.min_raise_to == 1500
    g.act(3, CALL)
    g.act(1, CALL)
    assert g.street() == Street.FLOP
    # A new street starts again from the big blind.
    assert g.legal.min_raise_to == 100
    g.act(1, BET, 100)
    g.act(2, RAISE, 350)
    assert g.legal.min_raise_to == 600
    g.refused(Act(3, RAISE, 599), "BELOW_MIN_RAISE")
    g.act(3, RAISE, 600)
    assert g.legal.min_raise_to == 850


def test_maximum_is_the_stack() -> None:
    g = Game(nlhe(1000, 2000, 700, holes=["AcAd", "KcKd", "QcQd"], board="2h7s9dTh3c"))
    assert g.legal.max_raise_to == 700 and g.legal.all_in_to == 700
    g.refused(Act(3, RAISE, 701), "OVER_STACK", "701", "700")
    assert g.act(3, ALL_IN) == [BetPlaced(3, 700, 700, True, True)]
    assert g.legal.max_raise_to == 1000  # the small blind's 50 plus its 950 behind
    g.refused(Act(1, RAISE, 1001), "OVER_STACK")
    g.act(1, RAISE, 1000)  # all-in for less than a full raise
    # Everybody else is all-in: seat 2 may call the 900 or fold, not raise.
    assert g.legal.call_amount == 900 and not g.legal.can_raise
    g.refused(Act(2, RAISE, 2000), "RAISE_NOT_ALLOWED", "all-in")


# ---------------------------------------------------------------------------
# All-in raises


def _three_way_flop(stacks3: tuple[int, int, int]) -> Game:
    g = Game(nlhe(*stacks3, holes=["AcAd", "KcKd", "QcQd"], board="2h7s9dTh3c"))
    g.act(3, CALL)
    g.act(1, CALL)
    g.act(2, CHECK)
    assert g.street() == Street.FLOP
    return g


def test_incomplete_all_in_raise_does_not_reopen_betting() -> None:
    g = _three_way_flop((1000, 250, 1000))
    g.act(1, BET, 100)
    # Seat 2 has 150 behind: all-in to 150 is a raise of 50, less than a full raise.
    assert g.act(2, ALL_IN) == [BetPlaced(2, 150, 150, True, False)]
    # Seat 3 had not acted: the betting is open to it (min raise = 150 + 100).
    assert g.legal.seat == 3 and g.legal.min_raise_to == 250
    g.act(3, CALL)
    # Seat 1 already acted and faces only the incomplete raise: call or fold.
    legal = g.legal
    assert legal.seat == 1
    assert legal.call_amount == 50 and legal.can_fold
    assert not legal.can_raise and legal.min_raise_to is None and legal.max_raise_to is None
    assert legal.all_in_to is None
    g.refused(Act(1, RAISE, 400), "RAISE_NOT_ALLOWED", "not reopened")
    g.refused(Act(1, ALL_IN), "RAISE_NOT_ALLOWED")
    assert g.act(1, CALL) == [
        PlayerCalled(1, 50, False),
        StreetStarted(Street.TURN, cards("Th"), (9,)),
    ]
    assert g.state.pot == 300 + 450


def test_incomplete_all_ins_adding_up_to_a_full_raise_reopen_betting() -> None:
    holes = ["AcAd", "KcKd", "QcQd", "JcJd"]
    g = Game(nlhe(1000, 250, 310, 1000, holes=holes, board="2h7s9dTh3c"))
    g.act(3, CALL)
    g.act(4, CALL)
    g.act(1, CALL)
    g.act(2, CHECK)
    g.act(1, BET, 100)
    assert g.act(2, ALL_IN) == [BetPlaced(2, 150, 150, True, False)]  # +50: incomplete
    assert g.act(3, ALL_IN) == [BetPlaced(3, 210, 210, True, False)]  # +60: incomplete
    g.act(4, CALL)
    # Together they raised seat 1's bet by 110 >= 100: seat 1 may raise again.
    legal = g.legal
    assert legal.seat == 1 and legal.call_amount == 110
    assert legal.min_raise_to == 310 and legal.max_raise_to == 900
    g.act(1, RAISE, 310)
    # That raise was full (+100) and reopens seat 4, who may re-raise.
    assert g.legal.seat == 4 and g.legal.min_raise_to == 410


def test_two_incomplete_all_ins_short_of_a_full_raise_do_not_reopen() -> None:
    holes = ["AcAd", "KcKd", "QcQd", "JcJd"]
    g = Game(nlhe(1000, 250, 290, 1000, holes=holes, board="2h7s9dTh3c"))
    g.act(3, CALL)
    g.act(4, CALL)
    g.act(1, CALL)
    g.act(2, CHECK)
    g.act(1, BET, 100)
    g.act(2, ALL_IN)  # to 150
    g.act(3, ALL_IN)  # to 190: 90 over seat 1's bet in all
    g.act(4, CALL)
    assert g.legal.seat == 1 and g.legal.call_amount == 90 and not g.legal.can_raise
    g.refused(Act(1, RAISE, 290), "RAISE_NOT_ALLOWED")


def test_all_in_bet_below_the_minimum_does_not_reopen_for_a_player_who_checked() -> None:
    # Robert's Rules, No Limit 3: a player who already acted and faces less than a full
    # wager may not raise an all-in bet that is less than the minimum bet.
    g = _three_way_flop((1000, 150, 1000))
    g.act(1, CHECK)
    assert g.act(2, ALL_IN) == [BetPlaced(2, 50, 50, True, False)]  # below the 100 minimum
    # Seat 3 has not acted: it may raise, by at least the big blind (to 150).
    assert g.legal.seat == 3 and g.legal.call_amount == 50 and g.legal.min_raise_to == 150
    g.act(3, CALL)
    legal = g.legal
    assert legal.seat == 1 and legal.call_amount == 50 and not legal.can_raise
    g.refused(Act(1, RAISE, 150), "RAISE_NOT_ALLOWED", "not reopened")
    g.act(1, CALL)
    assert g.street() == Street.TURN and g.to_act == 1


# ---------------------------------------------------------------------------
# Uncalled bets, short blinds


def test_uncalled_bet_is_returned() -> None:
    g = _three_way_flop((1000, 1000, 1000))
    g.act(1, BET, 300)
    g.act(2, FOLD)
    assert g.act(3, FOLD) == [
        PlayerFolded(3),
        UncalledBetReturned(1, 300),
        PotAwarded(0, 300, (1,), ((1, 300),)),
        HandEnded(((1, 1200), (2, 900), (3, 900))),
    ]
    g.conserved()


def test_big_blind_walk_returns_the_uncalled_part_of_the_big_blind() -> None:
    g = Game(nlhe(1000, 1000, 1000, holes=["AcAd", "KcKd", "QcQd"], board="2h7s9dTh3c"))
    g.act(3, FOLD)
    assert g.act(1, FOLD) == [
        PlayerFolded(1),
        UncalledBetReturned(2, 50),
        PotAwarded(0, 100, (2,), ((2, 100),)),
        HandEnded(((1, 950), (2, 1050), (3, 1000))),
    ]


def test_uncalled_part_of_an_all_in_is_returned() -> None:
    # Seat 1 (big blind) covers the button's all-in of 400; 600 of its 1000 is uncalled.
    g = Game(nlhe(2000, 400, holes=["AcAd", "KcKd"], board="2h7s9dTh3c"))
    g.act(2, CALL)
    g.act(1, CHECK)
    g.act(1, BET, 1000)
    events = g.act(2, ALL_IN)
    assert events[:2] == [PlayerCalled(2, 300, True), UncalledBetReturned(1, 700)]
    assert g.state.ended
    assert g.stacks() == {1: 2400, 2: 0}
    g.conserved()


def test_all_in_for_less_than_the_big_blind_does_not_lower_the_call() -> None:
    holes = ["7c7d", "AcAd", "KcKd"]
    g = Game(nlhe(1000, 40, 1000, holes=holes, board="2h5s9dTh3c"))
    assert BlindPosted(2, 40, True) in g.started
    assert g.state.current_bet == 100
    legal = g.legal
    assert legal.seat == 3 and legal.call_amount == 100 and legal.min_raise_to == 200
    g.act(3, CALL)
    assert g.legal.seat == 1 and g.legal.call_amount == 50
    assert g.act(1, CALL)[-1] == StreetStarted(Street.FLOP, cards("2h5s9d"), (6, 7, 8))
    # Seats 1 and 3 still bet; seat 2 is all-in for the main pot only.
    for _ in range(3):
        g.act(1, CHECK)
        g.act(3, CHECK)
    awards = pots(g.log)
    assert awards == [
        PotAwarded(0, 120, (1, 2, 3), ((2, 120),), describe(value("AcAdTh9d5s"))),
        PotAwarded(1, 120, (1, 3), ((3, 120),), describe(value("KcKdTh9d5s"))),
    ]
    assert g.stacks() == {1: 900, 2: 120, 3: 1020}
    g.conserved()


# ---------------------------------------------------------------------------
# Side pots, odd chips, all-in run-out


def test_side_pots_by_contribution_folded_chips_stay_in() -> None:
    # Stacks 1000/1000/200/500; seat 3 all-in for 200, seat 4 for 500; seat 2 folds later.
    holes = ["5c5d", "KcKd", "AcAd", "QcQd"]
    g = Game(nlhe(1000, 1000, 200, 500, holes=holes, board="2h7s9dTh3c"))
    assert g.act(3, ALL_IN) == [BetPlaced(3, 200, 200, True, True)]
    assert g.act(4, ALL_IN) == [BetPlaced(4, 500, 500, True, True)]
    g.act(1, CALL)
    g.act(2, CALL)
    g.act(1, BET, 300)
    events = g.act(2, FOLD)
    # Seat 1's bet is uncalled; with one seat left able to bet the hands are turned
    # up and the board is run out without betting.
    assert events == [
        PlayerFolded(2),
        UncalledBetReturned(1, 300),
        CardsShown(1, cards("5c5d")),
        CardsShown(3, cards("AcAd")),
        CardsShown(4, cards("QcQd")),
        StreetStarted(Street.TURN, cards("Th"), (11,)),
        StreetStarted(Street.RIVER, cards("3c"), (12,)),
        StreetStarted(Street.SHOWDOWN),
        # Main pot: 200 from each of the four (seat 2's chips stay in), for seats 1, 3, 4.
        PotAwarded(0, 800, (1, 3, 4), ((3, 800),), describe(value("AcAdTh9d7s"))),
        # Side pot: 300 more from seats 1, 2 and 4, for seats 1 and 4.
        PotAwarded(1, 900, (1, 4), ((4, 900),), describe(value("QcQdTh9d7s"))),
        HandEnded(((1, 500), (2, 500), (3, 800), (4, 900))),
    ]
    g.conserved()


def test_three_side_pots_at_different_all_in_levels() -> None:
    # Four players all-in at 100, 300, 600; the big stack covers them all.
    holes = ["2c2d", "KcKd", "QcQd", "AcAd"]  # seat 4 best, then 2, then 3; seat 1 worst
    g = Game(nlhe(5000, 600, 100, 300, holes=holes, board="4h7s9dTh3c"))
    g.act(3, ALL_IN)  # 100: an all-in call of the big blind
    g.act(4, ALL_IN)  # 300
    g.act(1, CALL)  # 300
    g.act(2, ALL_IN)  # 600
    g.act(1, CALL)
    awards = pots(g.log)
    assert [(p.index, p.amount, p.eligible) for p in awards] == [
        (0, 400, (1, 2, 3, 4)),
        (1, 600, (1, 2, 4)),
        (2, 600, (1, 2)),
    ]
    assert [p.shares for p in awards] == [((4, 400),), ((4, 600),), ((2, 600),)]
    assert g.stacks() == {1: 4400, 2: 600, 3: 0, 4: 1000}
    g.conserved()


def test_odd_chips_go_one_at_a_time_clockwise_from_left_of_button() -> None:
    # Seats 2, 4 and 5 each make the same six-high straight; seat 3 (all-in) has queens.
    holes = ["JdJc", "6c9d", "QsQh", "6d9h", "6h9s"]
    g = Game(nlhe(500, 500, 100, 500, 500, holes=holes, board="2c3d4h5sKc", sb=5, bb=10))
    g.act(3, ALL_IN)
    for seat in (4, 5, 1, 2):
        g.act(seat, CALL)
    g.act(1, BET, 20)
    for seat in (2, 4, 5):
        g.act(seat, CALL)
    g.act(1, CHECK)
    g.act(2, BET, 30)
    g.act(4, CALL)
    g.act(5, CALL)
    g.act(1, FOLD)
    g.act(2, CHECK)
    g.act(4, BET, 10)
    g.act(5, CALL)
    events = g.act(2, CALL)
    straight = describe(value("6c2c3d4h5s"))
    assert pots(events) == [
        # 5 x 100 = 500 for three winners: 166 each and two odd chips, one each to the
        # first two winners clockwise from the button (seats 2 and 4), not to seat 4
        # first although seat 4, the river aggressor, showed first.
        PotAwarded(0, 500, (2, 3, 4, 5), ((2, 167), (4, 167), (5, 166)), straight),
        # Seat 1's folded 20 + 3 x 60 = 200: 66 each and two odd chips likewise.
        PotAwarded(1, 200, (2, 4, 5), ((2, 67), (4, 67), (5, 66)), straight),
    ]
    assert shown(events) == [4, 5, 2, 3]
    assert g.stacks() == {1: 380, 2: 574, 3: 0, 4: 574, 5: 572}
    g.conserved()


def test_all_in_run_out_turns_hands_up_then_deals_the_board_without_betting() -> None:
    holes = ["AcAd", "KcKd"]
    g = Game(nlhe(1000, 600, holes=holes, board="2h7s9dTh3c"))
    assert g.act(2, ALL_IN) == [BetPlaced(2, 600, 550, True, True)]
    legal = g.legal
    assert legal.call_amount == 500 and not legal.can_raise  # nobody left to raise
    assert g.act(1, CALL) == [
        PlayerCalled(1, 500, False),
        CardsShown(2, cards("KcKd")),
        CardsShown(1, cards("AcAd")),
        StreetStarted(Street.FLOP, cards("2h7s9d"), (4, 5, 6)),
        StreetStarted(Street.TURN, cards("Th"), (7,)),
        StreetStarted(Street.RIVER, cards("3c"), (8,)),
        StreetStarted(Street.SHOWDOWN),
        PotAwarded(0, 1200, (1, 2), ((1, 1200),), describe(value("AcAdTh9d7s"))),
        HandEnded(((1, 1600), (2, 0))),
    ]


def test_run_out_on_the_turn_after_a_called_all_in() -> None:
    g = _three_way_flop((1000, 2000, 400))
    g.act(1, CHECK)
    g.act(2, CHECK)
    g.act(3, ALL_IN)  # 300 behind
    g.act(1, CALL)
    events = g.act(2, CALL)
    # Two seats still have chips: no run-out, the turn is bet normally.
    assert not shown(events)
    assert events[-1] == StreetStarted(Street.TURN, cards("Th"), (9,))
    assert g.to_act == 1
    g.act(1, ALL_IN)  # 600
    events = g.act(2, CALL)
    # Now only one seat could bet: all-in hands up, river dealt, showdown.
    assert shown(events) == [1, 2, 3]
    i_shown = max(i for i, e in enumerate(events) if isinstance(e, CardsShown))
    i_river = events.index(StreetStarted(Street.RIVER, cards("3c"), (10,)))
    assert i_shown < i_river
    assert g.state.ended


# ---------------------------------------------------------------------------
# Showdown


def _river_showdown(river_bettor: int | None) -> Game:
    # Seat 1: jacks, seat 2: nines, seat 3: kings (the best hand).
    holes = ["JdTd", "9d4s", "KdQh"]
    g = Game(nlhe(1000, 1000, 1000, holes=holes, board="2c7d9hJsKc"))
    g.act(3, CALL)
    g.act(1, CALL)
    g.act(2, CHECK)
    for _ in range(2):
        check_down(g, 1, 2, 3)
    assert g.street() == Street.RIVER
    if river_bettor is None:
        check_down(g, 1, 2, 3)
    else:
        order = [1, 2, 3]
        k = order.index(river_bettor)
        for seat in order[:k]:
            g.act(seat, CHECK)
        g.act(river_bettor, BET, 100)
        for seat in order[k + 1 :] + order[:k]:
            g.act(seat, CALL)
    assert g.state.ended
    return g


def test_showdown_river_aggressor_shows_first_and_losing_hands_are_mucked() -> None:
    g = _river_showdown(river_bettor=2)
    tail = g.log[g.log.index(StreetStarted(Street.SHOWDOWN)) :]
    assert tail == [
        StreetStarted(Street.SHOWDOWN),
        CardsShown(2, cards("9d4s")),  # the river bettor first
        CardsShown(3, cards("KdQh")),  # then clockwise; kings beat nines
        CardsMucked(1),  # jacks cannot win any more
        PotAwarded(0, 600, (1, 2, 3), ((3, 600),), describe(value("KdKcQhJs9h"))),
        HandEnded(((1, 800), (2, 800), (3, 1400))),
    ]
    # The mucked hand never shows up after it was dealt.
    hole1 = set(cards("JdTd"))
    assert all(not hole1 & set(e.cards) for e in g.log if isinstance(e, CardsShown))
    seat1 = g.state.seat_state(1)
    assert seat1 is not None and seat1.mucked and not seat1.shown
    # ... not even voluntarily: mucked cards stay hidden forever.
    g.refused(ShowCards(1), "ALREADY_MUCKED", "mucked")


def test_showdown_without_river_bet_starts_left_of_button() -> None:
    g = _river_showdown(river_bettor=None)
    tail = g.log[g.log.index(StreetStarted(Street.SHOWDOWN)) :]
    assert tail[1:4] == [
        CardsShown(1, cards("JdTd")),  # first active seat left of the button
        CardsMucked(2),  # nines cannot beat jacks
        CardsShown(3, cards("KdQh")),
    ]


def test_voluntary_show_after_the_hand_only_once() -> None:
    g = Game(nlhe(1000, 1000, 1000, holes=["AcAd", "KcKd", "7c2d"], board="2h7s9dTh3c"))
    g.refused(ShowCards(3), "HAND_RUNNING", "over")
    g.act(3, RAISE, 300)
    g.act(1, FOLD)
    g.act(2, FOLD)
    assert g.state.ended
    assert not shown(g.log)
    assert g.do(ShowCards(3)) == [CardsShown(3, cards("7c2d"), voluntary=True)]
    g.refused(ShowCards(3), "ALREADY_SHOWN", "already shown")
    g.refused(ShowCards(7), "UNKNOWN_SEAT", "seat 7")
    # A seat that folded may show too, once the hand is over.
    assert g.do(ShowCards(1)) == [CardsShown(1, cards("AcAd"), voluntary=True)]


# ---------------------------------------------------------------------------
# Hand values: exactly five cards, kickers, no suits


def _heads_up_check_down(holes: Sequence[str], board: str) -> list[PotAwarded]:
    g = Game(nlhe(1000, 1000, holes=holes, board=board))
    g.act(2, CALL)
    g.act(1, CHECK)
    for _ in range(3):
        g.act(1, CHECK)
        g.act(2, CHECK)
    assert g.state.ended
    g.conserved()
    return pots(g.log)


def test_board_plays_for_both_and_the_pot_is_split() -> None:
    (award,) = _heads_up_check_down(["2c3d", "4h2s"], "AcKdQhJsTc")
    assert award.shares == ((1, 100), (2, 100))
    assert award.hand == "Straight, ace high"


def test_only_five_cards_count_sixth_card_does_not_break_tie() -> None:
    # Both play A A K K Q; seat 1's jack (the sixth card) does not count.
    (award,) = _heads_up_check_down(["Jh2d", "3h4d"], "AcAdKhKsQc")
    assert award.shares == ((1, 100), (2, 100))


def test_kicker_decides() -> None:
    (award,) = _heads_up_check_down(["Ah3d", "QhJd"], "KcKd7h4s2c")
    assert award.shares == ((1, 200),)
    assert award.hand == describe(value("KcKdAh7h4s"))


def test_suits_never_break_ties() -> None:
    (award,) = _heads_up_check_down(["AhKh", "AsKs"], "Qd7c5h4s2d")
    assert award.shares == ((1, 100), (2, 100))


# ---------------------------------------------------------------------------
# Refused commands: the right code, a message naming the problem, nothing changed


def test_refusals_name_the_problem_and_change_nothing() -> None:
    g = Game(nlhe(1000, 1000, 1000, holes=["AcAd", "KcKd", "QcQd"], board="2h7s9dTh3c"))
    g.refused(Act(1, CALL), "NOT_YOUR_TURN", "seat 1", "seat 3 is to act")
    g.refused(Act(9, CALL), "UNKNOWN_SEAT", "seat 9")
    g.refused(Act(3, CHECK), "CANNOT_CHECK", "100 to call")
    g.refused(Act(3, RAISE, 150), "BELOW_MIN_RAISE", "200", "150")
    g.refused(Act(3, RAISE, 1001), "OVER_STACK", "1001", "1000")
    g.refused(Act(3, BET, 300), "RAISE_NOT_ALLOWED")
    g.refused(StartHand(g.setup), "HAND_RUNNING")
    g.act(3, CALL)
    g.act(1, CALL)
    g.act(2, CHECK)
    g.refused(Act(1, FOLD), "CANNOT_FOLD", "check")
    g.refused(Act(1, CALL), "NOTHING_TO_CALL", "check")
    g.act(1, BET, 200)
    g.act(2, FOLD)
    g.refused(Act(2, CALL), "NOT_YOUR_TURN")  # folded seats never act again
    g.act(3, FOLD)
    assert g.state.ended
    g.refused(Act(1, CHECK), "HAND_NOT_RUNNING", "no hand")
    g.refused(Act(3, CALL), "HAND_NOT_RUNNING")


def test_bad_setups_are_refused() -> None:
    setup = nlhe(1000, 1000, holes=["AcAd", "KcKd"])

    def refused(bad: HandSetup, *words: str) -> None:
        with pytest.raises(IllegalAction) as info:
            execute(None, StartHand(bad))
        assert info.value.code == "BAD_SETUP"
        for word in words:
            assert word in info.value.message

    refused(replace(setup, seats=setup.seats[:1]), "2 to 9")
    ten = tuple(SeatSetup(seat=i, stack=100) for i in range(10))
    refused(replace(setup, seats=ten), "2 to 9")
    refused(replace(setup, deck=setup.deck[:51] + setup.deck[:1]), "deck")
    refused(replace(setup, min_bet=0), "big blind")
    refused(replace(setup, seats=(setup.seats[0], replace(setup.seats[1], seat=1))), "twice")
    refused(replace(setup, seats=(setup.seats[0], replace(setup.seats[1], stack=0))), "chips")


def test_replay_rebuilds_the_live_state() -> None:
    g = _river_showdown(river_bettor=3)
    assert replay(g.log) == g.state
    assert shown(g.log)[0] == 3  # the river bettor shows first


def test_a_views_pots_are_those_collected_from_earlier_rounds() -> None:
    # HandView.pots (poker.v1.HandView.pots): what lies in the middle, main pot first;
    # this round's bets stay in front of the seats and are not a pot yet, and the unmatched
    # part of a bet is never a pot of its own.
    holes = ["5c5d", "KcKd", "AcAd", "QcQd"]
    g = Game(nlhe(1000, 1000, 200, 500, holes=holes, board="2h7s9dTh3c"))

    def pots() -> list[tuple[int, tuple[int, ...]]]:
        return [(p.amount, p.eligible) for p in view_for(g.state, None).pots]

    assert pots() == []  # only the blinds, in front of seats 1 and 2
    g.act(3, ALL_IN)
    g.act(4, ALL_IN)
    assert pots() == []  # 500 from seat 4 faces 200 from seat 3: still bets, not pots
    g.act(1, CALL)
    g.act(2, CALL)
    # The flop: the round's bets are gathered into a main pot (seats 1-4) and a side pot.
    assert g.street() == Street.FLOP
    assert pots() == [(800, (1, 2, 3, 4)), (900, (1, 2, 4))]
    g.act(1, BET, 300)
    assert pots() == [(800, (1, 2, 3, 4)), (900, (1, 2, 4))]  # seat 1's bet is in front
    assert view_for(g.state, None).pot == 2000  # the total still counts every chip in
