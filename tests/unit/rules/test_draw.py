"""Five-Card Draw rules (RULES.md, Variant 2), one hand written out card by card per rule.

Seats are numbered 1..n in dealing order (clockwise from the left of the
button) and the button is seat n. Card ``r`` of the seat at dealing index
``i`` is at deck position ``r * n + i``; replacements come from the positions
after the ``5 * n`` dealt cards, in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from felt.core.cards import Card, cards
from felt.core.evaluator import describe
from felt.core.rules.commands import Act, Discard, IllegalAction, StartHand
from felt.core.rules.config import HandSetup, SeatSetup, Variant
from felt.core.rules.engine import execute
from felt.core.rules.events import (
    AntePosted,
    BetPlaced,
    CardsDrawn,
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
)
from felt.core.rules.legal import LegalActions
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
    value,
)

# ---------------------------------------------------------------------------
# helpers


def draw5(
    *stack_list: int,
    hands: Sequence[str],
    draws: str = "",
    ante: int = 10,
    small: int = 20,
    big: int = 40,
    cap: int = 4,
    allow_all_in: bool = True,
) -> HandSetup:
    """A Draw hand: seats 1..n in dealing order, the button at seat n."""
    n = len(stack_list)
    seats = tuple(
        SeatSetup(seat=i + 1, stack=s, player_id=f"p{i + 1}", ante=ante)
        for i, s in enumerate(stack_list)
    )
    return HandSetup(
        hand_id="d1",
        variant=Variant.DRAW5,
        button=n,
        seats=seats,
        deck=deck_for(hands, draws),
        small_bet=small,
        big_bet=big,
        raise_cap=cap,
        allow_all_in=allow_all_in,
    )


def checked_round(g: Game, *seats: int) -> None:
    for seat in seats:
        g.act(seat, CHECK)


THREE = ["Ac2d3h4s5c", "KcKdKh9s2h", "7c7d8h8s9c"]


# ---------------------------------------------------------------------------
# Setup, antes, order of play


def test_antes_are_posted_by_all_and_the_first_round_starts_left_of_button() -> None:
    setup = draw5(500, 500, 500, hands=THREE)
    g = Game(setup)
    assert g.started == [
        HandStarted(setup),
        AntePosted(1, 10, False),
        AntePosted(2, 10, False),
        AntePosted(3, 10, False),
        HoleCardsDealt(1, cards(THREE[0]), (0, 3, 6, 9, 12)),
        HoleCardsDealt(2, cards(THREE[1]), (1, 4, 7, 10, 13)),
        HoleCardsDealt(3, cards(THREE[2]), (2, 5, 8, 11, 14)),
    ]
    assert g.state.pot == 30
    assert g.to_act == 1
    assert g.legal == LegalActions(
        seat=1,
        street=Street.FIRST_BET,
        can_check=True,
        min_raise_to=20,
        max_raise_to=20,
        bet=True,
    )


def test_an_ante_bigger_than_the_stack_puts_the_seat_all_in() -> None:
    g = Game(draw5(500, 6, 500, hands=THREE))
    assert AntePosted(2, 6, True) in g.started
    assert g.state.pot == 26
    checked_round(g, 1, 3)  # seat 2 is all-in and is skipped
    assert g.street() == Street.DRAW


def test_a_seat_all_in_for_part_of_the_ante_wins_only_the_matched_antes() -> None:
    hands = ["7c7d8h8s9c", "AcAdAhKsQs", "KcKd2h5s9d"]  # seat 2's aces are best
    g = Game(draw5(500, 4, 500, hands=hands))
    assert AntePosted(2, 4, True) in g.started
    checked_round(g, 1, 3)
    for seat in (1, 2, 3):
        g.discard(seat)
    checked_round(g, 1, 3)
    assert [(p.amount, p.eligible, p.shares) for p in pots(g.log)] == [
        (12, (1, 2, 3), ((2, 12),)),  # 4 from each ante
        (12, (1, 3), ((1, 12),)),  # the other 6 + 6: sevens and eights beat kings
    ]


def test_fixed_bet_sizes_small_bet_then_big_bet() -> None:
    g = Game(draw5(500, 500, 500, hands=THREE, draws="2s3s"))
    g.refused(Act(1, BET, 40), "ABOVE_MAX_RAISE", "fixed at 20", "40")
    g.refused(Act(1, BET, 10), "BELOW_MIN_RAISE", "20", "10")
    assert g.act(1, BET, 20) == [BetPlaced(1, 20, 20, False, True)]
    legal = g.legal
    assert legal.call_amount == 20 and legal.min_raise_to == legal.max_raise_to == 40
    g.refused(Act(2, RAISE, 60), "ABOVE_MAX_RAISE", "fixed at 40")
    g.refused(Act(2, RAISE, 30), "BELOW_MIN_RAISE", "40")
    assert g.act(2, RAISE, 40) == [BetPlaced(2, 40, 40, False, True)]
    g.act(3, CALL)
    assert g.act(1, CALL) == [PlayerCalled(1, 20, False), StreetStarted(Street.DRAW)]
    g.discard(1)
    g.discard(2, "2h")
    g.discard(3, "9c")
    assert g.street() == Street.SECOND_BET
    assert g.legal.min_raise_to == g.legal.max_raise_to == 40  # the big bet
    g.refused(Act(1, BET, 20), "BELOW_MIN_RAISE", "40")
    g.act(1, BET, 40)
    assert g.legal.min_raise_to == g.legal.max_raise_to == 80
    g.refused(Act(2, RAISE, 100), "ABOVE_MAX_RAISE", "80")
    g.act(2, RAISE, 80)
    g.act(3, FOLD)
    g.act(1, CALL)
    assert g.state.ended
    g.conserved()


def test_raise_cap_of_a_bet_and_three_raises() -> None:
    g = Game(draw5(500, 500, 500, hands=THREE))
    g.act(1, BET, 20)
    g.act(2, RAISE, 40)
    g.act(3, RAISE, 60)
    g.act(1, RAISE, 80)
    assert g.state.raises == 4
    legal = g.legal
    assert legal.seat == 2 and legal.call_amount == 40 and not legal.can_raise
    g.refused(Act(2, RAISE, 100), "RAISE_NOT_ALLOWED", "capped at 4")
    g.refused(Act(2, ALL_IN), "RAISE_NOT_ALLOWED", "capped")
    g.act(2, CALL)
    assert not g.legal.can_raise
    assert g.act(3, CALL) == [PlayerCalled(3, 20, False), StreetStarted(Street.DRAW)]
    assert g.state.pot == 30 + 3 * 80


def test_configured_raise_cap() -> None:
    g = Game(draw5(500, 500, 500, hands=THREE, cap=2))
    g.act(1, BET, 20)
    g.act(2, RAISE, 40)
    assert not g.legal.can_raise
    g.refused(Act(3, RAISE, 60), "RAISE_NOT_ALLOWED", "capped at 2")


# ---------------------------------------------------------------------------
# The draw


def test_players_draw_zero_to_three_cards_in_turn_from_left_of_button() -> None:
    g = Game(draw5(500, 500, 500, hands=THREE, draws="6d7h8c2c3c"))
    checked_round(g, 1, 2)
    assert g.act(3, CHECK) == [PlayerChecked(3), StreetStarted(Street.DRAW)]
    assert g.to_act == 1
    assert g.legal == LegalActions(seat=1, street=Street.DRAW, max_discard=3)
    g.refused(Act(1, CHECK), "WRONG_PHASE", "discard")
    g.refused(Discard(2, cards("9s")), "NOT_YOUR_TURN", "seat 1 draws now")
    # Seat 1 throws three cards and gets deck positions 15, 16, 17.
    assert g.discard(1, "3h4s5c") == [CardsDrawn(1, cards("3h4s5c"), cards("6d7h8c"), (15, 16, 17))]
    assert g.hole(1) == cards("Ac2d6d7h8c")
    assert g.to_act == 2
    assert g.discard(2) == [CardsDrawn(2, (), (), ())]  # stands pat
    assert g.hole(2) == cards(THREE[1])
    assert g.discard(3, "9c7c") == [
        CardsDrawn(3, cards("9c7c"), cards("2c3c"), (18, 19)),
        StreetStarted(Street.SECOND_BET),
    ]
    assert sorted(g.hole(3)) == sorted(cards("7d8h8s2c3c"))
    # The second round starts left of the button too; no more discarding.
    assert g.to_act == 1
    g.refused(Discard(1, cards("Ac")), "WRONG_PHASE", "draw")


def test_folded_seats_do_not_draw_and_second_round_starts_with_first_active() -> None:
    g = Game(draw5(500, 500, 500, hands=THREE))
    g.act(1, CHECK)
    g.act(2, BET, 20)
    g.act(3, CALL)
    g.act(1, FOLD)
    assert g.street() == Street.DRAW and g.to_act == 2
    g.refused(Discard(1, ()), "NOT_YOUR_TURN")
    g.discard(2)
    g.discard(3)
    assert g.street() == Street.SECOND_BET and g.to_act == 2


def test_discarding_four_cards_is_refused_and_changes_nothing() -> None:
    g = Game(draw5(500, 500, hands=THREE[:2]))
    checked_round(g, 1, 2)
    g.refused(Discard(1, cards("Ac2d3h4s")), "BAD_DISCARD", "at most 3", "not 4")
    g.refused(Discard(1, cards("Ac2d3h4s5c")), "BAD_DISCARD", "at most 3")


def test_discarding_a_card_not_in_hand_is_refused() -> None:
    g = Game(draw5(500, 500, hands=THREE[:2]))
    checked_round(g, 1, 2)
    g.refused(Discard(1, cards("Kc")), "BAD_DISCARD", "Kc", "not in your hand")
    g.refused(Discard(1, cards("AcAc")), "BAD_DISCARD", "twice")
    g.refused(Discard(1, (52,)), "BAD_DISCARD", "not a card")
    g.refused(Discard(9, cards("Ac")), "UNKNOWN_SEAT", "seat 9")


def test_discarded_cards_never_come_back() -> None:
    # Six seats each throw three: 30 dealt + 18 replacements, all from the deck in order.
    hands = [
        "AcAdAhAs2c",
        "KcKdKhKs2d",
        "QcQdQhQs2h",
        "JcJdJhJs2s",
        "TcTdThTs3c",
        "9c9d9h9s3d",
    ]
    g = Game(draw5(*(500,) * 6, hands=hands))
    checked_round(g, 1, 2, 3, 4, 5, 6)
    discarded: set[Card] = set()
    drawn: list[Card] = []
    for seat, hand in enumerate(hands, start=1):
        thrown = cards(hand)[:3]
        (event, *_) = g.discard(seat, hand[:6])
        assert isinstance(event, CardsDrawn)
        assert event.deck_positions == tuple(range(30 + 3 * (seat - 1), 33 + 3 * (seat - 1)))
        assert event.drawn == tuple(g.setup.deck[p] for p in event.deck_positions)
        assert not set(event.drawn) & discarded
        discarded |= set(thrown)
        drawn += [c for c in event.drawn if c is not None]
    assert not set(drawn) & discarded
    in_hands = [c for x in g.state.seats for c in x.hole]
    assert len(set(in_hands)) == 30 and not set(in_hands) & discarded
    assert g.state.deck_pos == 48


# ---------------------------------------------------------------------------
# Hand ranking at showdown


def _heads_up_showdown(hand1: str, hand2: str) -> Game:
    g = Game(draw5(500, 500, hands=[hand1, hand2]))
    checked_round(g, 1, 2)
    g.discard(1)
    g.discard(2)
    checked_round(g, 1, 2)
    assert g.state.ended
    g.conserved()
    return g


LADDER = [  # low to high; the nine hands share no card
    "AsQs9d7d3s",  # high card
    "4d4sTs3h2d",  # pair
    "AcAd5d5hTd",  # two pair
    "JcJdJs5c4c",  # three of a kind
    "Tc9c8c7c6d",  # straight
    "AhJh8h6h4h",  # flush
    "QcQdQh3c3d",  # full house
    "KcKdKhKs2c",  # four of a kind
    "9s8s7s6s5s",  # straight flush
]


def test_ladder_hands_are_distinct_cards() -> None:
    everything = [c for hand in LADDER for c in cards(hand)]
    assert len(set(everything)) == len(everything) == 45


@pytest.mark.parametrize("k", range(len(LADDER) - 1))
def test_ranking_order_high_card_to_straight_flush(k: int) -> None:
    low, high = LADDER[k], LADDER[k + 1]
    g = _heads_up_showdown(low, high)
    assert pots(g.log) == [PotAwarded(0, 20, (1, 2), ((2, 20),), describe(value(high)))]
    # "The remaining players show" (RULES.md, Draw): the losing hand is shown
    # too, never mucked, whichever order they show in.
    g = _heads_up_showdown(high, low)
    assert not [e for e in g.log if isinstance(e, CardsMucked)]
    assert {e.seat for e in g.log if isinstance(e, CardsShown)} == {1, 2}
    assert pots(g.log)[0].shares == ((1, 20),)


def test_wheel_is_a_straight_and_beats_three_of_a_kind() -> None:
    g = _heads_up_showdown("Ac2d3h4s5c", "KcKdKh9s2h")
    assert pots(g.log)[0].shares == ((1, 20),)
    assert pots(g.log)[0].hand == "Straight, five high"


def test_wheel_is_the_lowest_straight() -> None:
    g = _heads_up_showdown("Ac2d3h4s5c", "2s3s4d5h6c")
    assert pots(g.log)[0].shares == ((2, 20),)
    assert pots(g.log)[0].hand == "Straight, six high"
    # Ace-high straight beats it too: the ace is low only in the wheel.
    g = _heads_up_showdown("Ac2d3h4s5c", "AsKdQhJcTc")
    assert pots(g.log)[0].shares == ((2, 20),)


def test_wheel_is_the_lowest_straight_flush() -> None:
    g = _heads_up_showdown("Ah2h3h4h5h", "2s3s4s5s6s")
    assert pots(g.log)[0].shares == ((2, 20),)
    g = _heads_up_showdown("Ah2h3h4h5h", "KcKdKsKh9c")
    assert pots(g.log)[0].shares == ((1, 20),)
    assert pots(g.log)[0].hand == "Straight flush, five high"


def test_kickers_break_ties_suits_do_not() -> None:
    g = _heads_up_showdown("9c9dAh7s4c", "9h9sKh7c4d")  # pair of nines, ace kicker wins
    assert pots(g.log)[0].shares == ((1, 20),)
    g = _heads_up_showdown("AhKhQh9h7h", "AsKsQs9s7s")  # same flush in another suit
    assert pots(g.log)[0].shares == ((1, 10), (2, 10))


def test_perfect_tie_splits_with_the_odd_chip_left_of_the_button() -> None:
    hands = ["AcKd9h7s5c", "QcJd8h6s4c", "AdKh9s7c5d"]
    g = Game(draw5(500, 500, 500, hands=hands, ante=5))
    checked_round(g, 1, 2, 3)
    for seat in (1, 2, 3):
        g.discard(seat)
    checked_round(g, 1, 2)
    g.act(3, BET, 40)
    g.act(1, CALL)
    events = g.act(2, FOLD)
    assert events[1:] == [
        StreetStarted(Street.SHOWDOWN),
        CardsShown(3, cards(hands[2])),  # the aggressor shows first
        CardsShown(1, cards(hands[0])),  # a tie may still win: shown
        # 15 in antes + 2 x 40 = 95: 47 each and the odd chip to seat 1, the first
        # winner clockwise from the button.
        PotAwarded(0, 95, (1, 3), ((1, 48), (3, 47)), describe(value(hands[0]))),
        HandEnded(((1, 503), (2, 495), (3, 502))),
    ]


# ---------------------------------------------------------------------------
# Virtual all-in


def test_virtual_all_in_makes_side_pots() -> None:
    hands = ["7c7d8h8s9c", "AcAdAhKsQs", "KcKd2h5s9d"]  # aces > sevens-eights > kings
    g = Game(draw5(500, 25, 500, hands=hands, draws="3c4d6h"))
    g.act(1, BET, 20)
    assert g.legal.call_amount == 15 and g.legal.call_is_all_in and not g.legal.can_raise
    assert g.act(2, CALL) == [PlayerCalled(2, 15, True)]
    g.act(3, CALL)
    # The all-in seat still draws.
    assert [g.to_act] == [1]
    g.discard(1)
    assert g.to_act == 2
    g.discard(2)
    g.discard(3, "2h5s9d")
    g.act(1, BET, 40)
    events = g.act(3, CALL)
    assert pots(events) == [
        PotAwarded(0, 75, (1, 2, 3), ((2, 75),), describe(value(hands[1]))),
        PotAwarded(1, 90, (1, 3), ((1, 90),), describe(value(hands[0]))),
    ]
    assert g.stacks() == {1: 520, 2: 75, 3: 430}
    g.conserved()


def test_short_all_in_of_at_least_half_a_bet_is_a_full_raise() -> None:
    # Seat 2 has 30 behind after the ante: all-in to 30 over a bet of 20 is a
    # raise of 10, half the small bet: a full raise that reopens the betting.
    g = Game(draw5(500, 40, 500, hands=THREE))
    g.act(1, BET, 20)
    assert g.legal.min_raise_to == g.legal.max_raise_to == 30  # all-in for less
    assert g.act(2, ALL_IN) == [BetPlaced(2, 30, 30, True, True)]
    assert g.state.raises == 2
    # The next raise is one small bet above the all-in.
    assert g.legal.seat == 3 and g.legal.min_raise_to == g.legal.max_raise_to == 50
    g.act(3, CALL)
    legal = g.legal
    assert legal.seat == 1 and legal.call_amount == 10 and legal.min_raise_to == 50
    g.act(1, RAISE, 50)  # the third full bet or raise
    g.act(3, RAISE, 70)  # the fourth: capped
    assert g.state.raises == 4 and g.legal.seat == 1 and not g.legal.can_raise


def test_short_all_in_counts_toward_the_cap() -> None:
    g = Game(draw5(500, 40, 500, hands=THREE, cap=2))
    g.act(1, BET, 20)
    g.act(2, ALL_IN)  # to 30: counts as the second full bet or raise
    legal = g.legal
    assert legal.seat == 3 and legal.call_amount == 30 and not legal.can_raise
    g.refused(Act(3, RAISE, 50), "RAISE_NOT_ALLOWED", "capped")


def test_short_all_in_of_less_than_half_a_bet_does_not_reopen() -> None:
    # 29 behind: all-in to 29 raises the 20 bet by 9, less than half of 20.
    g = Game(draw5(500, 39, 500, hands=THREE))
    g.act(1, BET, 20)
    assert g.act(2, ALL_IN) == [BetPlaced(2, 29, 29, True, False)]
    assert g.state.raises == 1
    # Seat 3 has not acted: it may call 29 or complete the raise to 40.
    assert g.legal.seat == 3 and g.legal.min_raise_to == g.legal.max_raise_to == 40
    g.act(3, CALL)
    legal = g.legal
    assert legal.seat == 1 and legal.call_amount == 9 and not legal.can_raise
    g.refused(Act(1, RAISE, 49), "RAISE_NOT_ALLOWED", "not reopened")
    assert g.act(1, CALL) == [PlayerCalled(1, 9, False), StreetStarted(Street.DRAW)]


def test_without_all_in_every_stack_must_cover_a_capped_hand() -> None:
    # ante 10 + 4 x 20 + 4 x 40 = 250 chips for a hand capped in both rounds.
    with pytest.raises(IllegalAction) as info:
        execute(None, StartHand(draw5(500, 249, 500, hands=THREE, allow_all_in=False)))
    assert info.value.code == "BAD_SETUP"
    assert "250" in info.value.message and "[2]" in info.value.message
    g = Game(draw5(250, 250, 250, hands=THREE, allow_all_in=False))
    # Cap both rounds: everyone puts in exactly 250, nobody is ever short.
    g.act(1, BET, 20)
    g.act(2, RAISE, 40)
    g.act(3, RAISE, 60)
    g.act(1, RAISE, 80)
    g.act(2, CALL)
    g.act(3, CALL)
    for seat in (1, 2, 3):
        g.discard(seat)
    g.act(1, BET, 40)
    g.act(2, RAISE, 80)
    g.act(3, RAISE, 120)
    g.act(1, RAISE, 160)
    g.act(2, CALL)
    g.act(3, CALL)
    assert g.state.ended
    assert sum(p.amount for p in pots(g.log)) == 750
    g.conserved()


def test_bad_draw_setups_are_refused() -> None:
    setup = draw5(500, 500, hands=THREE[:2])

    def refused(bad: HandSetup, *words: str) -> None:
        with pytest.raises(IllegalAction) as info:
            execute(None, StartHand(bad))
        assert info.value.code == "BAD_SETUP"
        for word in words:
            assert word in info.value.message

    seven = tuple(SeatSetup(seat=i, stack=100) for i in range(7))
    refused(replace(setup, seats=seven), "2 to 6")
    refused(replace(setup, small_bet=0), "small and big")
    refused(replace(setup, raise_cap=0), "cap")
    refused(replace(setup, seats=(setup.seats[0], replace(setup.seats[1], blind=5))), "antes")


# ---------------------------------------------------------------------------
# Refused commands


def test_draw_refusals_name_the_problem_and_change_nothing() -> None:
    g = Game(draw5(500, 500, 500, hands=THREE))
    g.refused(Act(2, CHECK), "NOT_YOUR_TURN", "seat 1 is to act")
    g.refused(Act(8, CHECK), "UNKNOWN_SEAT", "seat 8")
    g.refused(Discard(1, ()), "WRONG_PHASE", "draw")
    g.act(1, BET, 20)
    g.refused(Act(2, CHECK), "CANNOT_CHECK", "20 to call")
    g.refused(Act(2, BET, 40), "RAISE_NOT_ALLOWED", "raise")
    g.act(2, FOLD)
    g.act(3, FOLD)
    assert g.state.ended
    assert [e for e in g.log if isinstance(e, PlayerFolded)] == [PlayerFolded(2), PlayerFolded(3)]
    g.refused(Act(1, CHECK), "HAND_NOT_RUNNING")
    g.refused(Discard(1, ()), "HAND_NOT_RUNNING")
    g.conserved()
