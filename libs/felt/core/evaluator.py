"""Poker hand values: evaluation, categories and plain-English descriptions.

Evaluation runs in the ``felt.core._native`` C extension because showdowns, the AI
bots and Monte Carlo equity all evaluate hands in hot loops; this module is the
typed face of it.

A hand value is an ``int`` where a higher value is a strictly better hand and
equal values are exact ties (suits never break ties), so showdown logic only
compares integers. Its layout, which :func:`category_of`, :func:`ranks_of` and
:func:`describe` decode, is::

    bits 26..29  HandCategory
    bits 13..25  13-bit mask of the ranks that make the combination
    bits  0..12  13-bit mask of the kickers (or the pair of a full house)

The same layout is used for any 5, 6 or 7 cards: the value is that of the best
five-card hand they contain.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from enum import IntEnum
from itertools import combinations

from felt.core import _native
from felt.core.cards import Card, card_str

__all__ = [
    "HandCategory",
    "best_hand",
    "category_of",
    "describe",
    "evaluate",
    "evaluate_many",
    "ranks_of",
]

_CATEGORY_SHIFT = _native.CATEGORY_SHIFT
_MAJOR_SHIFT = _native.MAJOR_SHIFT
_MASK13 = 0x1FFF

_RANK_NAMES = (
    "two", "three", "four", "five", "six", "seven", "eight",
    "nine", "ten", "jack", "queen", "king", "ace",
)  # fmt: skip
_RANK_PLURALS = (
    "twos", "threes", "fours", "fives", "sixes", "sevens", "eights",
    "nines", "tens", "jacks", "queens", "kings", "aces",
)  # fmt: skip
_ACE = 12


class HandCategory(IntEnum):
    """Hand categories, weakest first; the integer order is the poker order."""

    HIGH_CARD = 0
    PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8

    @property
    def label(self) -> str:
        """Human-readable name, e.g. ``"Full house"``."""
        return _LABELS[self]


_LABELS = {
    HandCategory.HIGH_CARD: "High card",
    HandCategory.PAIR: "Pair",
    HandCategory.TWO_PAIR: "Two pair",
    HandCategory.THREE_OF_A_KIND: "Three of a kind",
    HandCategory.STRAIGHT: "Straight",
    HandCategory.FLUSH: "Flush",
    HandCategory.FULL_HOUSE: "Full house",
    HandCategory.FOUR_OF_A_KIND: "Four of a kind",
    HandCategory.STRAIGHT_FLUSH: "Straight flush",
}


def evaluate(cards: Sequence[Card]) -> int:
    """Value of the best five-card hand among 5 to 7 distinct cards.

    Raises ``ValueError`` for a wrong count, a card outside 0..51 or a repeated
    card, because a silently wrong showdown is worse than a loud failure.
    """
    if not 5 <= len(cards) <= 7:
        raise ValueError(f"a hand to evaluate has 5 to 7 cards, got {len(cards)}")
    return _native.evaluate(*cards)


def evaluate_many(hands: Sequence[Sequence[Card]]) -> array[int]:
    """Values of many hands of one size (5, 6 or 7 cards) in a single native call.

    Batching skips the per-call interpreter overhead, which dominates the cost
    of a single evaluation; use it for simulations and bulk analysis.
    """
    if not hands:
        return array("I")
    k = len(hands[0])
    if not 5 <= k <= 7:
        raise ValueError(f"a hand to evaluate has 5 to 7 cards, got {k}")
    buf = bytearray()
    for i, hand in enumerate(hands):
        if len(hand) != k:
            raise ValueError(f"all hands must have {k} cards; hand {i} has {len(hand)}")
        buf.extend(hand)
    return _native.evaluate_many(buf, k)


def category_of(value: int) -> HandCategory:
    """The category of a hand value."""
    return HandCategory(value >> _CATEGORY_SHIFT)


def _ranks_desc(mask: int) -> list[int]:
    return [r for r in range(12, -1, -1) if mask >> r & 1]


def ranks_of(value: int) -> tuple[int, ...]:
    """Ranks (0..12 = 2..A) in the order they decide ties.

    First the ranks that make the combination (e.g. trips then pair for a full
    house, the top card for a straight, where the wheel's top card is the five),
    then the kickers, highest first.
    """
    major = value >> _MAJOR_SHIFT & _MASK13
    minor = value & _MASK13
    return tuple(_ranks_desc(major) + _ranks_desc(minor))


def describe(value: int) -> str:
    """Plain-English description of a hand value, for logs, replays and the UI.

    Examples: ``"Full house, kings full of fives"``, ``"Straight, five high"``
    (the wheel), ``"Pair, jacks (ace, nine, four)"`` where the parenthesised
    ranks are the kickers.
    """
    category = category_of(value)
    major = _ranks_desc(value >> _MAJOR_SHIFT & _MASK13)
    minor = _ranks_desc(value & _MASK13)
    if not major:
        raise ValueError(f"{value} is not a hand value")

    def kickers(ranks: list[int]) -> str:
        return f" ({', '.join(_RANK_NAMES[r] for r in ranks)})" if ranks else ""

    label = category.label
    if category is HandCategory.STRAIGHT_FLUSH:
        if major[0] == _ACE:
            return "Royal flush"
        return f"{label}, {_RANK_NAMES[major[0]]} high"
    if category is HandCategory.STRAIGHT:
        return f"{label}, {_RANK_NAMES[major[0]]} high"
    if category is HandCategory.FULL_HOUSE:
        return f"{label}, {_RANK_PLURALS[major[0]]} full of {_RANK_PLURALS[minor[0]]}"
    if category in (HandCategory.FLUSH, HandCategory.HIGH_CARD):
        return f"{label}, {_RANK_NAMES[major[0]]} high{kickers(major[1:])}"
    if category is HandCategory.TWO_PAIR:
        high, low = major
        return f"{label}, {_RANK_PLURALS[high]} and {_RANK_PLURALS[low]}{kickers(minor)}"
    # Pair, three of a kind, four of a kind.
    return f"{label}, {_RANK_PLURALS[major[0]]}{kickers(minor)}"


def best_hand(cards: Sequence[Card]) -> tuple[Card, ...]:
    """The five cards (in the given order) that make the best hand of 5 to 7 cards.

    For showing the winning hand at showdown. When several five-card subsets
    tie, the first in combination order is returned; they are all equivalent.
    """
    if not 5 <= len(cards) <= 7:
        raise ValueError(f"best_hand needs 5 to 7 cards, got {len(cards)}")
    if len(set(cards)) != len(cards):
        raise ValueError(f"duplicate card in {' '.join(card_str(c) for c in cards)}")
    return max(combinations(cards, 5), key=lambda five: _native.evaluate(*five))
