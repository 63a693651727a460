"""The native evaluator against phevaluator (an independent C evaluator) and poker rules.

phevaluator's ranks are LOWER = better and equal = tie; Felt's values are
HIGHER = better. Two evaluators agree on every pairwise comparison of a set of
hands exactly when the map Felt value -> phevaluator rank over that set is a
strictly decreasing bijection, which is what ``_assert_same_order`` checks (it
covers all ~2e10 pairs of 200k hands, not just 200k pairs).
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Callable, Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from phevaluator import _pheval  # type: ignore[import-untyped]

from felt.core import _native
from felt.core.cards import Card, cards
from felt.core.evaluator import (
    HandCategory,
    best_hand,
    category_of,
    describe,
    evaluate,
    evaluate_many,
    ranks_of,
)

EXPECTED_FIVE_CARD_COUNTS = {
    HandCategory.STRAIGHT_FLUSH: 40,
    HandCategory.FOUR_OF_A_KIND: 624,
    HandCategory.FULL_HOUSE: 3744,
    HandCategory.FLUSH: 5108,
    HandCategory.STRAIGHT: 10200,
    HandCategory.THREE_OF_A_KIND: 54912,
    HandCategory.TWO_PAIR: 123552,
    HandCategory.PAIR: 1098240,
    HandCategory.HIGH_CARD: 1302540,
}


def _assert_same_order(felt_values: Iterable[int], ph_ranks: Iterable[int]) -> None:
    pairs = set(zip(felt_values, ph_ranks, strict=True))
    felt_to_ph = dict(pairs)
    assert len(felt_to_ph) == len(pairs), "one Felt value, two phevaluator ranks"
    assert len(set(felt_to_ph.values())) == len(pairs), "Felt splits a phevaluator tie"
    ordered = sorted(felt_to_ph)
    for lo, hi in itertools.pairwise(ordered):
        assert felt_to_ph[lo] > felt_to_ph[hi], "Felt and phevaluator order hands differently"


@pytest.fixture(scope="module")
def all_five_card_values() -> list[int]:
    """Felt's values of all 2,598,960 five-card hands, in combinations order."""
    buf = bytes(itertools.chain.from_iterable(itertools.combinations(range(52), 5)))
    return list(_native.evaluate_many(buf, 5))


def test_five_card_category_counts(all_five_card_values: list[int]) -> None:
    values = all_five_card_values
    assert len(values) == 2_598_960
    per_value = Counter(values)
    assert len(per_value) == 7462  # the number of distinct five-card hand classes
    by_category: Counter[HandCategory] = Counter()
    for value, n in per_value.items():
        by_category[category_of(value)] += n
    assert by_category == EXPECTED_FIVE_CARD_COUNTS
    assert per_value[evaluate(cards("AsKsQsJsTs"))] == 4  # the royal flushes


def test_all_five_card_hands_match_phevaluator(all_five_card_values: list[int]) -> None:
    hands = itertools.combinations(range(52), 5)
    _assert_same_order(all_five_card_values, itertools.starmap(_pheval.evaluate_5cards, hands))


@pytest.mark.parametrize(
    ("k", "oracle", "count"),
    [(6, _pheval.evaluate_6cards, 100_000), (7, _pheval.evaluate_7cards, 200_000)],
)
def test_random_hands_match_phevaluator(k: int, oracle: Callable[..., int], count: int) -> None:
    rng = random.Random(20240601 + k)
    deck = list(range(52))
    hands: list[tuple[int, ...]] = []
    while len(hands) < count:  # disjoint hands from each shuffled deck, for speed
        rng.shuffle(deck)
        hands.extend(tuple(deck[i : i + k]) for i in range(0, 52 - k + 1, k))
    felt_values = list(itertools.starmap(_native.evaluate, hands))
    assert list(evaluate_many(hands)) == felt_values
    _assert_same_order(felt_values, itertools.starmap(oracle, hands))


@settings(max_examples=200, deadline=None)
@given(st.permutations(range(52)).map(lambda deck: deck[:7]))
def test_seven_cards_is_best_five_of_them(hand: list[Card]) -> None:
    best = max(evaluate(five) for five in itertools.combinations(hand, 5))
    assert evaluate(hand) == best
    assert evaluate(list(reversed(hand))) == best
    assert evaluate(best_hand(hand)) == best


def v(text: str) -> int:
    return evaluate(cards(text))


def test_category_order() -> None:
    ladder = [
        "Ah Kd 9c 7s 3h",  # high card
        "2h 2d 3c 4s 6h",  # pair
        "2h 2d 3c 3s 4h",  # two pair
        "2h 2d 2c 3s 4h",  # trips
        "Ah 2d 3c 4s 5h",  # wheel
        "2h 4h 6h 8h Th",  # flush
        "2h 2d 2c 3s 3h",  # full house
        "2h 2d 2c 2s 3h",  # quads
        "Ah 2h 3h 4h 5h",  # steel wheel
    ]
    values = [v(h) for h in ladder]
    assert values == sorted(values)
    assert [category_of(x) for x in values] == list(HandCategory)


def test_wheel_is_the_lowest_straight() -> None:
    wheel, six_high = v("Ah 2d 3c 4s 5h"), v("2d 3c 4s 5h 6d")
    assert category_of(wheel) is HandCategory.STRAIGHT
    assert v("As Ad Ac Kd Qs") < wheel < six_high < v("Ts Jd Qc Kd Ah")
    assert describe(wheel) == "Straight, five high"
    steel = v("Ah 2h 3h 4h 5h")
    assert category_of(steel) is HandCategory.STRAIGHT_FLUSH
    assert v("As Ad Ac Ah Ks") < steel < v("2h 3h 4h 5h 6h")
    # No wrap-around straights.
    assert category_of(v("Qh Kd Ac 2s 3h")) is HandCategory.HIGH_CARD


def test_suits_never_break_ties() -> None:
    assert v("Ah Kd 9c 7s 3h") == v("As Kc 9d 7h 3c")
    assert v("2h 4h 6h 8h Th") == v("2s 4s 6s 8s Ts")
    assert v("Ah 2h 3h 4h 5h") == v("Ac 2c 3c 4c 5c")


def test_kickers_and_best_five_of_seven() -> None:
    # Two pair out of three pairs: the third pair's rank plays as the kicker.
    three_pairs = v("Kh Kd 9c 9s 4h 4d 2c")
    assert three_pairs == v("Kh Kd 9c 9s 4h 2c 3d")
    assert describe(three_pairs) == "Two pair, kings and nines (four)"
    # Two trips make a full house with the higher trips.
    assert describe(v("9h 9d 9c 5s 5h 5d Ac")) == "Full house, nines full of fives"
    # Six of a suit: the best five make the flush; a flush beats a straight.
    assert describe(v("2h 4h 6h 8h Th Qh 9d")) == "Flush, queen high (ten, eight, six, four)"
    assert category_of(v("2h 4h 6h 8h Th 7d 9c")) is HandCategory.FLUSH
    # Quads with three more cards: the best kicker plays.
    assert v("7h 7d 7c 7s Ah 2d 3c") == v("7h 7d 7c 7s Ad")
    # The highest straight in a long run.
    assert describe(v("4h 5d 6c 7s 8h 9d Tc")) == "Straight, ten high"
    # Kickers decide within a category, ranks beyond the fifth card do not.
    assert v("Ah Ad Kc 9s 4h") > v("As Ac Qc Js Th")
    assert v("Ah Kd 9c 7s 5h 3c 2d") == v("Ah Kd 9c 7s 5h 4c 2d")


@pytest.mark.parametrize(
    ("hand", "text"),
    [
        ("Ah Kh Qh Jh Th", "Royal flush"),
        ("9s 8s 7s 6s 5s", "Straight flush, nine high"),
        ("Ac Ad Ah As Kd", "Four of a kind, aces (king)"),
        ("Ks Kd Kc 5h 5d", "Full house, kings full of fives"),
        ("Ac 9c 7c 5c 3c", "Flush, ace high (nine, seven, five, three)"),
        ("Ts Jd Qc Kd Ah", "Straight, ace high"),
        ("7c 7d 7h 2s 3s", "Three of a kind, sevens (three, two)"),
        ("Ac Ad Kc Kd 7s", "Two pair, aces and kings (seven)"),
        ("Jc Jd 9h 4s Ac", "Pair, jacks (ace, nine, four)"),
        ("2h 3c 4d 5s 7h", "High card, seven high (five, four, three, two)"),
    ],
)
def test_describe(hand: str, text: str) -> None:
    assert describe(v(hand)) == text


def test_ranks_of_orders_tie_breakers() -> None:
    assert ranks_of(v("Ks Kd Kc 5h 5d")) == (11, 3)
    assert ranks_of(v("Ah 2d 3c 4s 5h")) == (3,)
    assert ranks_of(v("Jc Jd 9h 4s Ac")) == (9, 12, 7, 2)


def test_best_hand_picks_the_winning_five() -> None:
    hand = cards("AhKhQhJhTh2c3d")
    assert sorted(best_hand(hand)) == sorted(cards("AhKhQhJhTh"))
    with pytest.raises(ValueError, match="duplicate"):
        best_hand(cards("AhAhQhJhTh"))


def test_input_validation() -> None:
    with pytest.raises(ValueError, match="5 to 7 cards, got 4"):
        evaluate(cards("AhKhQhJh"))
    with pytest.raises(ValueError, match="5 to 7 cards, got 8"):
        evaluate(cards("AhKhQhJhTh9h8h7h"))
    with pytest.raises(ValueError, match="same card twice"):
        evaluate(cards("AhAhQhJhTh"))
    with pytest.raises(ValueError, match="not a card"):
        evaluate([0, 1, 2, 3, 52])
    with pytest.raises(ValueError, match="not a card"):
        evaluate([0, 1, 2, 3, -1])
    with pytest.raises(TypeError):
        _native.evaluate(0, 1, 2, 3)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="hand 1"):
        _native.evaluate_many(bytes([0, 1, 2, 3, 4, 0, 0, 2, 3, 4]), 5)
    with pytest.raises(ValueError, match="multiple"):
        _native.evaluate_many(bytes(range(6)), 5)
    with pytest.raises(ValueError, match="k must be"):
        _native.evaluate_many(bytes(range(8)), 8)
    with pytest.raises(ValueError, match="all hands must have 5"):
        evaluate_many([cards("AhKhQhJhTh"), cards("AhKhQhJhTh9h")])
    assert list(evaluate_many([])) == []
