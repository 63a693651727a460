"""Hold'em hand reading shared by the bots: starting-hand percentiles, made hands
relative to the board, draws and board texture.

These are the cheap, deterministic facts a human reads off the cards; the
easy and normal bots decide on them directly, the hard bot uses them to
narrow opponents' ranges and to spot semi-bluffs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from functools import cache

from felt.core.cards import RANKS, Card
from felt.core.evaluator import HandCategory, category_of, evaluate
from felt.players.equity import starting_hand_order

ACE = 12


def class_name(a: Card, b: Card) -> str:
    """The starting-hand class of two hole cards: ``"AKs"``, ``"72o"``, ``"TT"``."""
    ra, rb = a >> 2, b >> 2
    hi, lo = max(ra, rb), min(ra, rb)
    if hi == lo:
        return RANKS[hi] * 2
    return RANKS[hi] + RANKS[lo] + ("s" if (a & 3) == (b & 3) else "o")


@cache
def _percentiles() -> dict[str, float]:
    """Class -> share of all combos at least as good (best class ~0.5%, worst 100%)."""
    out: dict[str, float] = {}
    total = 0
    for name in starting_hand_order():
        total += 6 if len(name) == 2 else (4 if name[2] == "s" else 12)
        out[name] = total / 1326
    return out


def preflop_percentile(hole: Sequence[Card]) -> float:
    """How high two hole cards rank: 0.005 for aces, 1.0 for the worst hand."""
    return _percentiles()[class_name(hole[0], hole[1])]


@dataclass(frozen=True, slots=True)
class Texture:
    """Board features that change how much a made hand is worth."""

    paired: bool
    monotone: bool
    two_tone: bool
    connected: bool

    @property
    def wet(self) -> bool:
        """Many draws or made straights/flushes possible: one pair is worth less."""
        return self.monotone or self.connected or (self.two_tone and self.paired)


def texture(board: Sequence[Card]) -> Texture:
    ranks = [c >> 2 for c in board]
    suits = Counter(c & 3 for c in board)
    top_suit = max(suits.values(), default=0)
    distinct = sorted(set(ranks))
    if ACE in distinct:
        distinct = [-1, *distinct]
    connected = any(sum(1 for r in distinct if lo <= r <= lo + 4) >= 3 for lo in range(-1, 9))
    return Texture(
        paired=len(set(ranks)) < len(ranks),
        monotone=top_suit >= 3,
        two_tone=top_suit == 2,
        connected=connected,
    )


class Made(IntEnum):
    """How good a made hand is relative to the board, weakest first."""

    NOTHING = 0
    WEAK_PAIR = 1  # bottom/middle pair, underpair, pair on the board only
    TOP_PAIR_WEAK = 2  # top pair with a weak kicker
    TOP_PAIR_GOOD = 3  # top pair, good kicker
    OVERPAIR = 4
    TWO_PAIR = 5  # two pair using both hole cards, or top two
    TRIPS = 6  # trips/set
    STRAIGHT_PLUS = 7  # straight or better that uses a hole card
    NUTTED = 8  # full house or better that uses a hole card


def made_hand(hole: Sequence[Card], board: Sequence[Card]) -> Made:
    """Classify hole + board; hands made by the board alone do not count."""
    value = evaluate([*hole, *board])
    cat = category_of(value)
    board_cat = category_of(evaluate(board)) if len(board) >= 5 else _board_category(board)
    hr = sorted((c >> 2 for c in hole), reverse=True)
    br = sorted((c >> 2 for c in board), reverse=True)
    if cat >= HandCategory.FULL_HOUSE and (len(board) < 5 or value > evaluate(board)):
        return Made.NUTTED
    if cat >= HandCategory.STRAIGHT and (len(board) < 5 or value > evaluate(board)):
        return Made.STRAIGHT_PLUS if cat > board_cat else Made.TWO_PAIR
    if cat == HandCategory.THREE_OF_A_KIND:
        if hr[0] == hr[1] or any(r in br for r in hr):
            return Made.TRIPS if hr[0] == hr[1] or br.count(hr[0]) == 2 else Made.TWO_PAIR
        return Made.NOTHING
    if cat == HandCategory.TWO_PAIR:
        if hr[0] != hr[1] and hr[0] in br and hr[1] in br:
            return Made.TWO_PAIR
        # One pair of the two is on the board: it plays like the other pair.
        return _one_pair(hr, br)
    if cat == HandCategory.PAIR:
        return _one_pair(hr, br)
    return Made.NOTHING


def _board_category(board: Sequence[Card]) -> HandCategory:
    counts = sorted(Counter(c >> 2 for c in board).values(), reverse=True)
    if not counts:
        return HandCategory.HIGH_CARD
    if counts[0] >= 3:
        return HandCategory.THREE_OF_A_KIND
    if counts[0] == 2:
        return HandCategory.TWO_PAIR if len(counts) > 1 and counts[1] == 2 else HandCategory.PAIR
    return HandCategory.HIGH_CARD


def _one_pair(hr: list[int], br: list[int]) -> Made:
    """Grade the pair that the hole cards make (a pair only on the board is nothing)."""
    top = br[0]
    if hr[0] == hr[1]:
        if hr[0] > top:
            return Made.OVERPAIR
        return Made.WEAK_PAIR
    if hr[0] == top or hr[1] == top:
        kicker = hr[1] if hr[0] == top else hr[0]
        good_kicker = kicker >= 9 or (top == ACE and kicker >= 8)
        return Made.TOP_PAIR_GOOD if good_kicker else Made.TOP_PAIR_WEAK
    if hr[0] in br or hr[1] in br:
        return Made.WEAK_PAIR
    return Made.NOTHING


@dataclass(frozen=True, slots=True)
class Draws:
    """Drawing hands (only meaningful before the river)."""

    flush_draw: bool
    straight_outs: int  # 8 open-ended, 4 gutshot, 0 none

    @property
    def outs(self) -> int:
        return (
            (9 if self.flush_draw else 0)
            + self.straight_outs
            - (2 if self.flush_draw and self.straight_outs else 0)
        )

    @property
    def strong(self) -> bool:
        return self.flush_draw or self.straight_outs >= 8


def draws(hole: Sequence[Card], board: Sequence[Card]) -> Draws:
    """Flush and straight draws that use at least one hole card."""
    if len(board) >= 5 or not board:
        return Draws(False, 0)
    suits = Counter(c & 3 for c in [*hole, *board])
    flush = any(n == 4 and any((h & 3) == s for h in hole) for s, n in suits.items())
    have = {c >> 2 for c in [*hole, *board]}
    board_ranks = {c >> 2 for c in board}
    completing = 0
    for r in range(13):
        if r in have:
            continue
        if _straight(have | {r}) and not _straight(board_ranks | {r}):
            completing += 1
    already = _straight(have)
    return Draws(flush and not already, 0 if already else min(completing, 2) * 4)


def _straight(ranks: set[int]) -> bool:
    rs = set(ranks)
    if ACE in rs:
        rs.add(-1)
    return any(all(r + k in rs for k in range(5)) for r in range(-1, 9))
