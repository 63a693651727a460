"""Hard's floor: equilibrium strategy tables solved offline, loaded once, read in O(1).

The tables are written by ``felt solve`` (``felt_dev.solve``: CFR+ over a card-bucket
abstraction of heads-up Draw and a preflop abstraction of heads-up Hold'em) and shipped
as JSON in ``felt/players/bots/data``. Each node of a table is a public betting line
(``k`` check, ``b`` bet, ``r`` raise, ``a`` all-in, ``c`` call, ``f`` fold) and holds,
per information set (a card bucket), the probability of each action, quantised to
1/255 and packed as base64 bytes: the Draw table is about 200 KB and loads in
milliseconds, once per process (``functools.cache``), far inside the 50 ms a decision
may take.

Why a floor: a strategy close to an equilibrium of the abstract game cannot be beaten
by much by any opponent, so hard plays it until the public record shows, with 95%
confidence (a Wilson interval), that an opponent folds or calls more than the floor
itself would; only then do hard's exploits (``felt.players.bots.hard``) take over.

Only public facts and the seat's own cards are read, like every bot.
"""

from __future__ import annotations

import base64
import json
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from felt.core.cards import Card
from felt.core.evaluator import HandCategory, category_of, evaluate
from felt.players.bots.drawhand import analyse, standard_keep
from felt.players.bots.holdem import class_name
from felt.players.equity import starting_hand_order

H = HandCategory

# ---------------------------------------------------------------------- Draw buckets

# Dealt buckets: what the hand is before the draw; each draws a fixed number of cards
# (the textbook keep, ``drawhand.standard_keep``), so the public draw count says which
# buckets a seat can hold.
DRAW_DEALT = (
    "nothing, queen high or less",
    "nothing, king or ace high",
    "four to a flush or open straight",
    "pair 2-6",
    "pair 7-10",
    "pair J-Q",
    "pair K-A",
    "two pair, nines up or less",
    "two pair, tens up or better",
    "three of a kind",
    "straight or better",
)
DRAWN_BY_BUCKET = (3, 3, 1, 3, 3, 3, 3, 1, 1, 2, 0)
# Final buckets: the hand after the draw.
DRAW_FINAL = (
    "nothing, king high or less",
    "nothing, ace high",
    "pair 2-6",
    "pair 7-10",
    "pair J-Q",
    "pair K-A",
    "two pair, nines up or less",
    "two pair, tens up or better",
    "three of a kind",
    "straight",
    "flush or better",
)
DRAW_STATES = len(DRAW_DEALT) * len(DRAW_FINAL)
# Buckets read by name, so that a change to the tuples above cannot silently move them.
# The first dealt bucket holding a pair: below it, nothing or a four-card draw.
DEALT_PAIR = DRAW_DEALT.index("pair 2-6")
# The first final bucket holding a pair: the buckets below it hold nothing.
FINAL_PAIR = DRAW_FINAL.index("pair 2-6")
# The first final bucket of two pair: the buckets below it hold at most one pair.
FINAL_TWO_PAIR = DRAW_FINAL.index("two pair, nines up or less")
_TEN = 8  # rank index of a ten (deuce is 0)


def _pair_bucket(rank: int) -> int:
    return 0 if rank <= 4 else 1 if rank <= _TEN else 2 if rank <= 10 else 3


def draw_dealt_bucket(hand: Sequence[Card]) -> int:
    """The dealt bucket of five cards (``DRAW_DEALT``); it fixes how many the textbook draws."""
    info = analyse(hand)
    keep = standard_keep(hand)
    if len(keep) == 5:
        return 10
    if info.category == H.THREE_OF_A_KIND:
        return 9
    if info.category == H.TWO_PAIR:
        return 7 if info.pair_rank <= 7 else 8
    if len(keep) == 4:
        return 2
    if info.category == H.PAIR:
        return 3 + _pair_bucket(info.pair_rank)
    top = max(c >> 2 for c in hand)
    return 1 if top >= 11 else 0


def draw_final_bucket(hand: Sequence[Card]) -> int:
    """The final bucket of five cards (``DRAW_FINAL``)."""
    value = evaluate(hand)
    cat = category_of(value)
    if cat >= H.FLUSH:
        return 10
    if cat == H.STRAIGHT:
        return 9
    if cat == H.THREE_OF_A_KIND:
        return 8
    info = analyse(hand)
    if cat == H.TWO_PAIR:
        return 6 if info.pair_rank <= 7 else 7
    if cat == H.PAIR:
        return 2 + _pair_bucket(info.pair_rank)
    top = max(c >> 2 for c in hand)
    return 1 if top == 12 else 0


def draw_state(dealt: Sequence[Card], final: Sequence[Card]) -> int:
    """A Draw private state after the draw: dealt bucket and final bucket together."""
    return draw_dealt_bucket(dealt) * len(DRAW_FINAL) + draw_final_bucket(final)


# ---------------------------------------------------------------------- Hold'em classes


def holdem_class(hole: Sequence[Card]) -> int:
    """Index of two hole cards' class in ``starting_hand_order()`` (0 = aces)."""
    return _class_index()[class_name(hole[0], hole[1])]


@cache
def _class_index() -> dict[str, int]:
    return {name: i for i, name in enumerate(starting_hand_order())}


# ---------------------------------------------------------------------- tables


@dataclass(frozen=True, slots=True)
class Node:
    """One public line's strategy: ``actions`` and packed probabilities per information set."""

    actions: str
    probs: bytes

    def strategy(self, info_set: int) -> tuple[float, ...]:
        k = len(self.actions)
        row = self.probs[info_set * k : (info_set + 1) * k]
        if len(row) != k:
            raise IndexError(f"information set {info_set} outside the table")
        total = sum(row)
        if total == 0:
            return tuple(1.0 / k for _ in row)
        return tuple(p / total for p in row)


@dataclass(frozen=True, slots=True)
class Table:
    """A solved game's strategy: nodes by public line, plus what the solve recorded."""

    nodes: dict[str, Node]
    meta: dict[str, object]

    def strategy(self, line: str, info_set: int) -> tuple[str, tuple[float, ...]] | None:
        """The actions and their probabilities at ``line`` for ``info_set``, or None off-table."""
        node = self.nodes.get(line)
        if node is None:
            return None
        return node.actions, node.strategy(info_set)

    def reference(self, name: str) -> float | None:
        """A frequency the floor itself plays (e.g. ``fold_first``), from the solve."""
        refs = self.meta.get("reference")
        if isinstance(refs, dict):
            value = refs.get(name)
            if isinstance(value, int | float):
                return float(value)
        return None


def parse_table(text: str) -> Table:
    """Read a table file's JSON; raises ``ValueError`` on a malformed one."""
    raw = json.loads(text)
    if not isinstance(raw, dict) or not isinstance(raw.get("nodes"), dict):
        raise ValueError("a strategy table is an object with 'nodes'")
    nodes: dict[str, Node] = {}
    for line, node in raw["nodes"].items():
        actions = node["actions"]
        probs = base64.b64decode(node["p"])
        if not actions or len(probs) % len(actions):
            raise ValueError(f"node {line!r}: {len(probs)} bytes for actions {actions!r}")
        nodes[line] = Node(actions, probs)
    meta = raw.get("meta", {})
    return Table(nodes, meta if isinstance(meta, dict) else {})


@cache
def load(name: str) -> Table | None:
    """The shipped table ``name`` (``draw`` or ``holdem``), parsed once; None if not shipped."""
    path = resources.files("felt.players.bots") / "data" / f"{name}.json"
    if not path.is_file():
        return None
    return parse_table(path.read_text(encoding="utf-8"))


def pick(actions: str, probs: Sequence[float], rng: random.Random) -> str:
    """Sample one action by its probability (one draw of the seeded RNG)."""
    u = rng.random()
    acc = 0.0
    for a, p in zip(actions, probs, strict=True):
        acc += p
        if u < acc:
            return a
    return actions[max(range(len(actions)), key=lambda i: probs[i])]


# ---------------------------------------------------------------------- evidence


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a rate seen ``k`` times in ``n``: (0, 1) when n is 0."""
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def deviates(k: int, n: int, reference: float, tolerance: float, least: int = 30) -> int:
    """+1 if the rate is above ``reference + tolerance`` at 95%, -1 if below, else 0.

    Fewer than ``least`` observations never count: with few hands, the floor plays.
    """
    if n < least:
        return 0
    low, high = wilson(k, n)
    if low > reference + tolerance:
        return 1
    if high < reference - tolerance:
        return -1
    return 0
