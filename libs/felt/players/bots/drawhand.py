"""Five-Card Draw hand reading shared by the bots: made hands, draws, and which cards
to keep.

The standard keeps are the textbook ones (keep a pair and draw three, two pair
draw one, trips draw two, a four-flush or open-ended straight draw draws one,
a made straight or better stands pat): the normal bot plays them, the easy bot
a simpler subset, and the hard bot uses them as candidates it then compares by
simulation.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from felt.core.cards import Card
from felt.core.evaluator import HandCategory, category_of, evaluate

ACE = 12


@dataclass(frozen=True, slots=True)
class DrawHand:
    """Facts about five cards: their value and category, and what they draw to."""

    value: int
    category: HandCategory
    flush_draw: tuple[Card, ...]  # the four suited cards, or ()
    straight_draw: tuple[Card, ...]  # four cards of an open-ended draw, or ()
    pair_rank: int  # rank of the (highest) pair, -1 if none


def analyse(hand: Sequence[Card]) -> DrawHand:
    value = evaluate(hand)
    cat = category_of(value)
    suits = Counter(c & 3 for c in hand)
    suit, n = suits.most_common(1)[0]
    flush_draw = tuple(c for c in hand if c & 3 == suit) if n == 4 else ()
    straight_draw: tuple[Card, ...] = ()
    if cat < HandCategory.STRAIGHT:
        by_rank = {c >> 2: c for c in hand}
        for low in range(1, 9):  # open-ended: low-1 and low+4 both exist as ranks
            if all(low + k in by_rank for k in range(4)):
                straight_draw = tuple(by_rank[low + k] for k in range(4))
                break
    counts = Counter(c >> 2 for c in hand)
    pairs = [r for r, k in counts.items() if k >= 2]
    return DrawHand(value, cat, flush_draw, straight_draw, max(pairs, default=-1))


def made_keep(hand: Sequence[Card]) -> tuple[Card, ...]:
    """Keep what makes a pair, two pair, trips or quads; everything for a pat hand."""
    cat = category_of(evaluate(hand))
    if cat in (HandCategory.STRAIGHT, HandCategory.FLUSH, HandCategory.FULL_HOUSE):
        return tuple(hand)
    if cat == HandCategory.STRAIGHT_FLUSH or cat == HandCategory.FOUR_OF_A_KIND:
        return tuple(hand)
    counts = Counter(c >> 2 for c in hand)
    kept = tuple(c for c in hand if counts[c >> 2] >= 2)
    return kept


def high_cards(hand: Sequence[Card], n: int) -> tuple[Card, ...]:
    return tuple(sorted(hand, key=lambda c: c >> 2, reverse=True)[:n])


def simple_keep(hand: Sequence[Card]) -> tuple[Card, ...]:
    """Easy: keep made pairs/trips (or a pat hand); with nothing keep the two highest cards."""
    kept = made_keep(hand)
    return kept if kept else high_cards(hand, 2)


def standard_keep(hand: Sequence[Card]) -> tuple[Card, ...]:
    """Normal: the textbook draw, with one-card draws to four-flushes and open-enders."""
    info = analyse(hand)
    if info.category >= HandCategory.STRAIGHT:
        return tuple(hand)
    if info.category >= HandCategory.PAIR:
        kept = made_keep(hand)
        if info.category == HandCategory.PAIR and info.flush_draw and info.pair_rank < 9:
            return info.flush_draw  # a four-flush beats a small pair drawing three
        return kept
    if info.flush_draw:
        return info.flush_draw
    if info.straight_draw:
        return info.straight_draw
    # Nothing: keep the two highest (a lone high card would draw four, and the
    # rules allow at most three).
    return high_cards(hand, 2)


def candidate_keeps(hand: Sequence[Card]) -> list[tuple[Card, ...]]:
    """Sensible keeps to compare by simulation (the hard bot), each leaving <= 3 to draw."""
    info = analyse(hand)
    out: list[tuple[Card, ...]] = [tuple(hand)]
    kept = made_keep(hand)
    if kept and len(kept) < 5:
        out.append(kept)
        if len(kept) <= 3:
            rest = [c for c in hand if c not in kept]
            out.append(kept + high_cards(rest, 1))
    if info.flush_draw:
        out.append(info.flush_draw)
    if info.straight_draw:
        out.append(info.straight_draw)
    out.append(high_cards(hand, 2))
    unique: list[tuple[Card, ...]] = []
    for keep in out:
        if len(keep) >= 2 and set(keep) not in [set(u) for u in unique]:
            unique.append(keep)
    return unique
