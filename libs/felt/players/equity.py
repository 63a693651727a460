"""Monte Carlo equity for No-Limit Hold'em and Five-Card Draw.

The AI bots decide with equity (the share of the pot a hand wins on average
against what the opponents may hold), so it must be fast enough to call on
every decision: the sampling loops run in the ``felt.core._native`` C extension with
its own seeded PRNG, and this module validates inputs and gives them types.
Results are deterministic for a given ``seed``, which keeps bot decisions and
tests reproducible.

Opponents' holdings in Hold'em are weighted :class:`Range` objects, written in
the usual PokerStove-style notation (``Range.parse("TT+, AQs+, KQo")``) or taken
from :func:`top_percent`.

Why one module of this size: it is the typed face of the C extension's equity
loops for both games, with the range notation they take; each function is a
thin, validated wrapper over one native loop.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import combinations

from felt.core import _native
from felt.core.cards import RANKS, Card, card_str, cards
from felt.core.evaluator import HandCategory

__all__ = [
    "Combo",
    "DrawOpponent",
    "Equity",
    "Range",
    "RangeError",
    "draw_equity",
    "holdem_equity",
    "starting_hand_order",
    "top_percent",
]

Combo = tuple[Card, Card]
"""Two hole cards, higher card number first (so each combo has one spelling)."""

CardsLike = Sequence[Card] | str
"""Cards as ints, or as text such as ``"AhKd"`` (see :func:`felt.core.cards.cards`)."""

_ALL_COMBOS = 1326


@dataclass(frozen=True, slots=True)
class Equity:
    """Result of an equity simulation, as fractions of ``samples``.

    ``win`` counts samples hero wins outright; ``tie`` is hero's share of tied
    pots (a k-way tie counts 1/k); ``equity = win + tie`` is hero's expected
    share of the pot.
    """

    win: float
    tie: float
    equity: float
    samples: int

    @property
    def stderr(self) -> float:
        """Standard error of ``equity`` (at most 0.5 / sqrt(samples))."""
        e = min(max(self.equity, 0.0), 1.0)
        return math.sqrt(e * (1.0 - e) / self.samples)


# --------------------------------------------------------------------------- ranges


class RangeError(ValueError):
    """Raised for range text or combos that do not describe a range."""


def _combo(a: Card, b: Card) -> Combo:
    if not (0 <= a < 52 and 0 <= b < 52) or a == b:
        raise RangeError(f"({a}, {b}) is not two distinct cards")
    return (a, b) if a > b else (b, a)


def _class_combos(hi: int, lo: int, kind: str) -> list[Combo]:
    """Combos of a starting-hand class: ranks hi >= lo, kind "s", "o" or "" (both)."""
    out: list[Combo] = []
    for s1 in range(4):
        for s2 in range(4):
            a, b = hi * 4 + s1, lo * 4 + s2
            if a == b or (hi == lo and s1 <= s2):
                continue
            if (kind == "s" and s1 != s2) or (kind == "o" and s1 == s2):
                continue
            out.append(_combo(a, b))
    return out


_R = "[2-9TJQKAtjqka]"
_SPECIFIC = re.compile(rf"^({_R}[cdhsCDHS])({_R}[cdhsCDHS])$")
_CLASS = re.compile(rf"^({_R})({_R})([sSoO]?)(\+?)$")
_SPAN = re.compile(rf"^({_R})({_R})([sSoO]?)-({_R})({_R})([sSoO]?)$")
_GROUP = re.compile(r"^([0-9]*\.?[0-9]+)(%?)\s*\((.*)\)$", re.DOTALL)
_WEIGHT = re.compile(r"^(.*?):\s*([0-9]*\.?[0-9]+)(%?)$", re.DOTALL)


def _rank(ch: str) -> int:
    return RANKS.index(ch.upper())


def _weight(number: str, percent: str, token: str) -> float:
    w = float(number) / (100.0 if percent else 1.0)
    if not math.isfinite(w) or w < 0:
        raise RangeError(f"bad weight in {token!r}")
    return w


def _token_combos(token: str) -> list[Combo]:
    """Combos named by one token: ``AhKh``, ``AA``, ``AKs``, ``AK``, ``TT+``,
    ``ATs+``, ``JJ-88``, ``A5s-A2s``, or ``any``/``random`` for all 1326."""
    if token.lower() in ("any", "random"):
        return [_combo(a, b) for a, b in combinations(range(52), 2)]
    if m := _SPECIFIC.match(token):
        a, b = cards(m.group(1) + m.group(2))
        if a == b:
            raise RangeError(f"{token!r} names the same card twice")
        return [_combo(a, b)]
    if m := _CLASS.match(token):
        r1, r2, kind, plus = _rank(m.group(1)), _rank(m.group(2)), m.group(3).lower(), m.group(4)
        hi, lo = max(r1, r2), min(r1, r2)
        if hi == lo:
            if kind:
                raise RangeError(f"{token!r}: a pair is neither suited nor offsuit")
            return [c for r in range(lo, 13 if plus else lo + 1) for c in _class_combos(r, r, "")]
        # "ATs+" raises the kicker up to just below the top card: ATs, AJs, AQs, AKs.
        top = hi if plus else lo + 1
        return [c for k in range(lo, top) for c in _class_combos(hi, k, kind)]
    if m := _SPAN.match(token):
        a1, a2, k1 = _rank(m.group(1)), _rank(m.group(2)), m.group(3).lower()
        b1, b2, k2 = _rank(m.group(4)), _rank(m.group(5)), m.group(6).lower()
        if k1 != k2:
            raise RangeError(f"{token!r}: both ends must have the same suitedness")
        if a1 == a2 and b1 == b2:
            if k1:
                raise RangeError(f"{token!r}: a pair is neither suited nor offsuit")
            lo, hi = sorted((a1, b1))
            return [c for r in range(lo, hi + 1) for c in _class_combos(r, r, "")]
        top1, top2 = max(a1, a2), max(b1, b2)
        kick1, kick2 = min(a1, a2), min(b1, b2)
        if a1 == a2 or b1 == b2 or top1 != top2:
            raise RangeError(f"{token!r}: a span keeps the top card, like A5s-A2s or JJ-88")
        lo, hi = sorted((kick1, kick2))
        return [c for k in range(lo, hi + 1) for c in _class_combos(top1, k, k1)]
    raise RangeError(f"{token!r} is not a hand, class or span (try 'AKs', 'TT+', 'AhKh')")


def _split_top_level(text: str) -> list[str]:
    """Split on commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise RangeError(f"unbalanced ')' in {text!r}")
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth:
        raise RangeError(f"unbalanced '(' in {text!r}")
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


class Range:
    """A weighted set of two-card combos an opponent may hold.

    Weights are relative (a combo with weight 0.5 is dealt half as often as one
    with weight 1); combos of weight 0 are left out. Ranges are immutable.
    """

    __slots__ = ("_native_spec", "_weights")

    def __init__(self, weights: Mapping[Combo, float] | Iterable[tuple[Combo, float]] = ()):
        items = weights.items() if isinstance(weights, Mapping) else weights
        table: dict[Combo, float] = {}
        for (a, b), w in items:
            w = float(w)
            if not math.isfinite(w) or w < 0:
                raise RangeError(f"weight {w} of {card_str(a)}{card_str(b)} must be >= 0")
            combo = _combo(a, b)
            if w > 0:
                table[combo] = w
            else:
                table.pop(combo, None)
        self._weights = table
        self._native_spec: tuple[bytes, tuple[float, ...]] | None = None

    @classmethod
    def parse(cls, text: str) -> Range:
        """A range from PokerStove-style text, comma separated.

        Tokens: ``AhKh`` (one combo), ``AA``, ``AKs`` (suited), ``AKo``
        (offsuit), ``AK`` (both), ``TT+`` (TT..AA), ``ATs+`` (ATs, AJs, AQs,
        AKs: the kicker rises to just below the top card, so ``T9s+`` is only
        T9s), ``JJ-88``, ``A5s-A2s``, ``any``. Weights: ``AKs:0.5`` or
        ``AKs:50%`` for one token, ``0.5(AQs, AJs)`` or ``40%(ATs+)`` for a
        group. A combo named twice takes the later weight.
        """
        if not text.strip():
            raise RangeError("empty range text")
        table: dict[Combo, float] = {}
        for part in _split_top_level(text):
            if m := _GROUP.match(part):
                w = _weight(m.group(1), m.group(2), part)
                tokens = _split_top_level(m.group(3))
                if not tokens:
                    raise RangeError(f"empty group in {part!r}")
                weighted = [(t, w) for t in tokens]
            elif m := _WEIGHT.match(part):
                weighted = [(m.group(1).strip(), _weight(m.group(2), m.group(3), part))]
            else:
                weighted = [(part, 1.0)]
            for token, w in weighted:
                if "(" in token or ":" in token:
                    raise RangeError(f"{token!r}: malformed weight or nested group")
                for combo in _token_combos(token):
                    table[combo] = w
        return cls(table)

    @classmethod
    def of(cls, combos: Iterable[Combo], weight: float = 1.0) -> Range:
        """A range holding the given combos, all with the same weight."""
        return cls((c, weight) for c in combos)

    @classmethod
    def any_two(cls) -> Range:
        """All 1326 combos, equally weighted (what ``None`` means to the equity functions)."""
        return cls.parse("any")

    @property
    def combos(self) -> tuple[Combo, ...]:
        """The combos, strongest card numbers first."""
        return tuple(sorted(self._weights, reverse=True))

    def weight(self, combo: Combo) -> float:
        """Weight of a combo (either card order), 0.0 if absent."""
        a, b = combo
        return self._weights.get((a, b) if a > b else (b, a), 0.0)

    def items(self) -> Iterator[tuple[Combo, float]]:
        """(combo, weight) pairs."""
        return iter(self._weights.items())

    @property
    def share(self) -> float:
        """Weighted size as a fraction of all 1326 combos (1.0 for ``any``)."""
        return sum(self._weights.values()) / _ALL_COMBOS

    def without(self, dead: Iterable[Card]) -> Range:
        """This range minus the combos that use any of ``dead`` (card removal)."""
        blocked = set(dead)
        return Range(
            (c, w) for c, w in self._weights.items() if c[0] not in blocked and c[1] not in blocked
        )

    def __len__(self) -> int:
        return len(self._weights)

    def __iter__(self) -> Iterator[Combo]:
        return iter(self._weights)

    def __contains__(self, combo: object) -> bool:
        if not (isinstance(combo, tuple) and len(combo) == 2):
            return False
        a, b = combo
        return ((a, b) if a > b else (b, a)) in self._weights

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Range) and self._weights == other._weights

    def __hash__(self) -> int:
        return hash(frozenset(self._weights.items()))

    def __repr__(self) -> str:
        return f"<Range {len(self)} combos, {self.share:.1%} of hands>"

    def native(self) -> tuple[bytes, tuple[float, ...]]:
        """The (combo bytes, weights) pair ``felt.core._native`` takes; cached."""
        if self._native_spec is None:
            self._native_spec = (
                bytes(c for combo in self._weights for c in combo),
                tuple(self._weights.values()),
            )
        return self._native_spec


@lru_cache(maxsize=256)
def _parse_cached(text: str) -> Range:
    """Range text seen by the equity functions, parsed once (ranges are immutable)."""
    return Range.parse(text)


# The 169 starting-hand classes, best first, ordered by all-in preflop equity
# against one random hand (Felt's own Monte Carlo, 3,000,000 samples per class;
# e.g. AA 0.852, 72o 0.345, 32o 0.323). Equity against a random hand overrates
# big offsuit cards somewhat compared with multiway play, which is acceptable
# for a simple "top p%" range.
_ORDER_TEXT = """
    AA KK QQ JJ TT 99 88 AKs AQs 77 AJs AKo ATs AQo AJo KQs 66 A9s ATo KJs A8s KTs KQo A7s
    A9o KJo 55 QJs K9s A5s A6s A8o KTo QTs A4s A7o K8s A3s QJo K9o A5o Q9s A6o JTs K7s A2s
    QTo 44 A4o K6s K8o Q8s A3o K5s J9s Q9o JTo K7o A2o K4s Q7s K6o K3s T9s J8s 33 Q8o Q6s
    K5o J9o K2s Q5s T8s J7s K4o Q4s Q7o T9o J8o K3o Q6o Q3s 98s T7s J6s K2o 22 Q2s Q5o J5s
    T8o J7o Q4o 97s J4s T6s J3s Q3o 98o 87s T7o J6o 96s J2s Q2o T5s J5o T4s 97o 86s J4o T6o
    T3s 95s 76s J3o 87o T2s 85s 96o J2o T5o 94s 75s T4o 93s 86o 65s 84s 95o T3o 92s 76o 74s
    T2o 54s 85o 64s 83s 94o 75o 82s 73s 93o 65o 53s 63s 84o 92o 43s 74o 54o 72s 64o 52s 62s
    83o 42s 82o 73o 53o 63o 32s 43o 72o 52o 62o 42o 32o
"""
_STARTING_HAND_ORDER = tuple(_ORDER_TEXT.split())


def starting_hand_order() -> tuple[str, ...]:
    """The 169 starting-hand classes (``"AA"``, ``"AKs"``, ``"AKo"``...), best first."""
    return _STARTING_HAND_ORDER


@cache
def top_percent(percent: float) -> Range:
    """The top ``percent`` of starting hands (by combos), best classes first.

    Whole classes are added in :func:`starting_hand_order` until the range
    holds at least ``percent`` of the 1326 combos, so ``top_percent(10)`` is
    the 10.4% from AA down to A9s (plus ATo).
    """
    if not 0 < percent <= 100:
        raise ValueError(f"percent must be in (0, 100], got {percent}")
    target = percent / 100.0 * _ALL_COMBOS
    picked: list[Combo] = []
    for name in _STARTING_HAND_ORDER:
        if len(picked) >= target - 1e-9:
            break
        picked.extend(_token_combos(name))
    return Range.of(picked)


# --------------------------------------------------------------------------- inputs


def _card_tuple(value: CardsLike, what: str) -> tuple[Card, ...]:
    if isinstance(value, str):
        return cards(value)
    out = tuple(value)
    for c in out:
        if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < 52:
            raise ValueError(f"{what}: {c!r} is not a card number (0..51)")
    return out


def _check_distinct(groups: Sequence[tuple[str, tuple[Card, ...]]]) -> None:
    seen: dict[Card, str] = {}
    for what, group in groups:
        for c in group:
            if c in seen:
                where = what if seen[c] == what else f"{seen[c]} and {what}"
                raise ValueError(f"duplicate card {card_str(c)} in {where}")
            seen[c] = what


def _check_run(samples: int, seed: int) -> None:
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise ValueError(f"samples must be a positive int, got {samples!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an int, got {seed!r}")


# --------------------------------------------------------------------------- hold'em


def holdem_equity(
    hero: CardsLike,
    board: CardsLike = (),
    dead: CardsLike = (),
    opponents: int | Sequence[Range | str | None] = 1,
    samples: int = 10_000,
    seed: int = 0,
) -> Equity:
    """Hero's all-in equity in Hold'em by Monte Carlo over the unknown cards.

    ``hero`` is two hole cards, ``board`` 0 to 5 community cards, ``dead``
    cards known to be out of play (folded or exposed). ``opponents`` is a
    count of opponents holding any two cards, or one entry per opponent: a
    :class:`Range`, range text, or ``None`` for any two cards. Each sample
    deals the opponents' hands from their weighted ranges (combos that use a
    known card are dropped; a deal where two opponents would share a card is
    redrawn whole, so the ranges are respected), completes the board from the
    rest, and scores hero against the best opponent.
    """
    hero_t = _card_tuple(hero, "hero")
    board_t = _card_tuple(board, "board")
    dead_t = _card_tuple(dead, "dead")
    if len(hero_t) != 2:
        raise ValueError(f"hero needs exactly 2 hole cards, got {len(hero_t)}")
    if len(board_t) > 5:
        raise ValueError(f"the board has at most 5 cards, got {len(board_t)}")
    _check_distinct([("hero", hero_t), ("board", board_t), ("dead", dead_t)])
    _check_run(samples, seed)
    if isinstance(opponents, int):
        if opponents < 1:
            raise ValueError(f"need at least one opponent, got {opponents}")
        specs: list[tuple[bytes, tuple[float, ...]] | None] = [None] * opponents
    else:
        if not opponents:
            raise ValueError("need at least one opponent")
        specs = []
        for i, r in enumerate(opponents):
            if r is None:
                specs.append(None)
            elif isinstance(r, str):
                specs.append(_parse_cached(r).native())
            elif isinstance(r, Range):
                if not r:
                    raise ValueError(f"opponent {i}'s range is empty")
                specs.append(r.native())
            else:
                raise ValueError(f"opponent {i}: expected a Range, range text or None")
    needed = len(hero_t) + 5 + len(dead_t) + 2 * len(specs)
    if needed > 52:
        raise ValueError(f"{len(specs)} opponents and {len(dead_t)} dead cards need {needed} cards")
    win, tie, equity = _native.holdem_equity(
        bytes(hero_t), bytes(board_t), bytes(dead_t), specs, samples, seed
    )
    return Equity(win, tie, equity, samples)


# --------------------------------------------------------------------------- draw


_TYPICAL_KEPT = {
    0: HandCategory.STRAIGHT,
    1: HandCategory.TWO_PAIR,
    2: HandCategory.THREE_OF_A_KIND,
    3: HandCategory.PAIR,
    4: HandCategory.HIGH_CARD,
    5: HandCategory.HIGH_CARD,
}

# The best category that 0..5 kept cards can show (fewer than five cards only
# form pairs, two pair, trips and quads).
_BEST_FOR_KEPT = {
    0: HandCategory.HIGH_CARD,
    1: HandCategory.HIGH_CARD,
    2: HandCategory.PAIR,
    3: HandCategory.THREE_OF_A_KIND,
    4: HandCategory.FOUR_OF_A_KIND,
    5: HandCategory.STRAIGHT_FLUSH,
}


@dataclass(frozen=True, slots=True)
class DrawOpponent:
    """How one Five-Card Draw opponent is modelled.

    The opponent kept ``5 - draws`` unknown cards, uniformly chosen among the
    sets whose own category is at least ``kept_min`` (for fewer than five cards
    only pairs, two pair, trips and quads count), then drew ``draws`` fresh
    cards from the unseen deck. ``kept_min=HIGH_CARD`` means no constraint.
    """

    draws: int
    kept_min: HandCategory = HandCategory.HIGH_CARD

    def __post_init__(self) -> None:
        if isinstance(self.draws, bool) or not isinstance(self.draws, int):
            raise ValueError(f"draws must be an int, got {self.draws!r}")
        if not 0 <= self.draws <= 5:
            raise ValueError(f"an opponent draws 0 to 5 cards, got {self.draws}")
        kept = 5 - self.draws
        if self.kept_min > _BEST_FOR_KEPT[kept]:
            raise ValueError(
                f"{kept} kept cards cannot make {HandCategory(self.kept_min).label.lower()}"
            )

    @classmethod
    def typical(cls, draws: int) -> DrawOpponent:
        """The usual reading of a draw count: standing pat shows a straight or
        better, drawing 1 two pair, drawing 2 trips, drawing 3 a pair, drawing 4
        or 5 anything. It ignores flush and straight draws and bluffs, so it
        leans towards crediting the opponent with more than they have."""
        if isinstance(draws, bool) or not isinstance(draws, int) or not 0 <= draws <= 5:
            raise ValueError(f"an opponent draws 0 to 5 cards, got {draws!r}")
        return cls(draws, _TYPICAL_KEPT[draws])


def draw_equity(
    hero: CardsLike,
    keep: CardsLike,
    dead: CardsLike = (),
    opponent_draws: Sequence[int | DrawOpponent] = (3,),
    samples: int = 10_000,
    seed: int = 0,
) -> Equity:
    """Hero's showdown equity in Five-Card Draw after the draw, by Monte Carlo.

    ``hero`` is hero's five cards before drawing and ``keep`` the ones hero
    keeps; hero draws ``5 - len(keep)`` cards from the unseen deck, and the
    discards are out of play. ``dead`` is any other card known to be out of
    play. Each entry of ``opponent_draws`` is an opponent: an int ``k`` means
    :meth:`DrawOpponent.typical(k) <DrawOpponent.typical>` (e.g. drawing 3
    means they kept a pair), and a :class:`DrawOpponent` sets the model
    explicitly (``DrawOpponent(3)`` is unconstrained: five random cards).
    Opponents' discards are not modelled (they stay in the unseen deck).
    """
    hero_t = _card_tuple(hero, "hero")
    keep_t = _card_tuple(keep, "keep")
    dead_t = _card_tuple(dead, "dead")
    if len(hero_t) != 5:
        raise ValueError(f"hero needs exactly 5 cards, got {len(hero_t)}")
    _check_distinct([("hero", hero_t), ("dead", dead_t)])
    _check_distinct([("keep", keep_t)])
    if not set(keep_t) <= set(hero_t):
        extra = " ".join(card_str(c) for c in keep_t if c not in hero_t)
        raise ValueError(f"keep must be some of hero's cards; {extra} is not")
    _check_run(samples, seed)
    if not opponent_draws:
        raise ValueError("need at least one opponent")
    opps = [o if isinstance(o, DrawOpponent) else DrawOpponent.typical(o) for o in opponent_draws]
    needed = 5 + len(dead_t) + (5 - len(keep_t)) + 5 * len(opps)
    if needed > 52 or len(opps) > 32:
        raise ValueError(f"{len(opps)} opponents and {len(dead_t)} dead cards need {needed} cards")
    win, tie, equity = _native.draw_equity(
        bytes(hero_t),
        bytes(keep_t),
        bytes(dead_t),
        [(o.draws, int(o.kept_min)) for o in opps],
        samples,
        seed,
    )
    return Equity(win, tie, equity, samples)
