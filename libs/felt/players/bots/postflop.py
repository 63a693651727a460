"""Hard's heads-up Hold'em floor after the flop: ranges, buckets and pot-odds balance.

Why: the preflop floor (``holdem.json``) is solved, but after the flop hard played its
own equity-versus-read exploits, which steady aggression pushes around: it folded too
much to bets and bluffed at a rate unrelated to its bet size. This module is a default
it can play instead (``HardBot(postflop_floor=True)``), until the opponent's record shows
a leak at 95% (``floor_play``); it is off by default because it measured worse than
hard's own postflop play against the development opponent styles (docs/ai.md). It is
the textbook construction, not a solve:

- **Ranges from the floor.** Both players start the flop with the ranges the preflop
  floor implies for the line played (``"rc"``: the button opened and the big blind
  called; ``"rrc"``: a 3-bet called): each of the 1326 combos weighted by the floor's
  probability of each action its player took. Every later action narrows the actor's
  range by the rules below, as if both played this floor (the equilibrium assumption);
  hands outside the range an action implies keep ``TREMBLE`` of their weight, so a
  player who leaves the floor never empties its range.
- **Strength: equity against the other range.** At the start of each street every
  combo's equity against the other player's range is computed over ``RUNOUTS``
  seeded completions of the board (exact on the river), with one native evaluation
  of all combos per completion and a sort; card removal between the two ranges is
  ignored; the rules that narrow the ranges read these. A decision reads each hand's
  equity against the other range as it stands after the street's actions so far
  (``node_state``: against a check, a weaker range). A hand's *bucket* is its percentile
  within its own player's range by that equity (1 = the top).
- **Betting, checked to or first in:** one size a street (``SIZES``: half the pot on
  the flop, three quarters on turn and river; all-in when the stack is about that
  size). Value: the hands whose equity beats ``1 - c / 2``, with ``c = 1 / (1 + b)``
  the share of its range a defender continues with against a bet of ``b`` pots, i.e.
  the hands ahead of half of a minimum-defence calling range. Bluffs: the bottom of
  the range, as many as make the caller indifferent: bluffs are ``b / (1 + 2b)`` of
  the betting range (``bluffs / value = b / (1 + b)``).
- **Facing a bet of ``b`` pots: minimum defence.** Continue with the top
  ``1 / (1 + b)`` of the range (the share that leaves a bluff with any two cards no
  profit); raise the top ``RAISE_SHARE`` of the continuing range for value, and as
  many of the best folding hands as bluffs as the raise's own pot odds balance
  (``RAISE_SIZE`` pots after the call); facing a raise, re-raise only for value and
  never bluff; past ``MAX_RAISES`` bets on a street, call or fold.

Cost: per street, ``RUNOUTS`` batched evaluations of about 1,100 combos and a sort
(about 10 ms of CPU on the flop or turn), cached by public line (``functools.lru_cache``)
so a hand's later decisions reuse its earlier streets; a cold river decision evaluates
three streets and its decision point, about 25 ms. Pure Python over the native
evaluator, no numpy, deterministic: the runouts are seeded by the board, the decision
reads no RNG.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import combinations

from felt.core import _native
from felt.core.cards import Card
from felt.core.rules.events import Street
from felt.players.bots.base import PublicAction
from felt.players.bots.floor import Table, holdem_class, load

# Bet size (a fraction of the pot) the floor bets with on each street.
SIZES = {Street.FLOP: 0.5, Street.TURN: 0.75, Street.RIVER: 0.75}
# A raise adds this fraction of the pot after calling (``pot_bet_to``).
RAISE_SIZE = 0.6
# Share of the continuing range that raises (a bet) or re-raises (a raise) for value.
RAISE_SHARE = 0.25
RERAISE_SHARE = 0.3
# Bets and raises on a street after which the floor only calls or folds.
MAX_RAISES = 3
# Weight kept by hands outside the range an action implies (no range ever empties).
TREMBLE = 0.03
# Completions of the board sampled for equity on the flop and the turn.
RUNOUTS = 10
# The share of the pot the floor folds to a bet on average over its sizes (MDF):
# what an opponent's fold rate to later-street bets is compared against.
FOLD_REFERENCE = round(sum(b / (1 + b) for b in SIZES.values()) / len(SIZES), 4)
# The share of the floor's own later-street actions (bets, calls, checks) that are bets
# or raises, measured by playing it against itself (``tests/unit/bots/test_postflop.py``
# checks it; 0.40 over 1,200 hands, seed 77): an opponent far from it, at 95%, plays a
# game the floor's balance is not for (a player who never bets bluffs nothing it bets).
AGGRESSION_REFERENCE = 0.4

# The preflop "line" of a pot the floor has no ranges for (``read_line`` with ``unit``):
# both players start the flop with every combo.
ANY_LINE = "*"

# A player: 0 out of position (the big blind), 1 in position (the button).
OOP, IP = 0, 1


@dataclass(frozen=True, slots=True)
class Move:
    """A public postflop action for the range model: ``kind`` in ``kbcrf``, ``size`` in pots."""

    player: int
    kind: str
    size: float = 0.0


@dataclass(frozen=True, slots=True)
class StreetState:
    """Both ranges at the start of a street and each combo's equity against the other."""

    ranges: tuple[tuple[float, ...], tuple[float, ...]]
    strength: tuple[tuple[float, ...], tuple[float, ...]]
    # Combos by strength, weakest first; equal strengths in a fixed shuffle of the board.
    order: tuple[tuple[int, ...], tuple[int, ...]]


# ---------------------------------------------------------------------- combos


@cache
def combos() -> tuple[tuple[Card, Card], ...]:
    """The 1326 two-card combos, higher card first, in a fixed order."""
    return tuple((b, a) for a, b in combinations(range(52), 2))


@cache
def _combo_index() -> dict[tuple[Card, Card], int]:
    return {c: i for i, c in enumerate(combos())}


def combo_index(hole: Sequence[Card]) -> int:
    """Index of two hole cards in ``combos()``."""
    a, b = hole
    return _combo_index()[(a, b) if a > b else (b, a)]


@cache
def _combo_bytes() -> tuple[bytes, ...]:
    return tuple(bytes(c) for c in combos())


@cache
def _combo_classes() -> tuple[int, ...]:
    return tuple(holdem_class(c) for c in combos())


def warm_up() -> None:
    """Build the combo tables once (a few ms), so no live decision pays for them."""
    combos()
    _combo_index()
    _combo_bytes()
    _combo_classes()


# ---------------------------------------------------------------------- ranges


def preflop_ranges(table: Table, line: str) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """(OOP, IP) combo weights after the preflop ``line`` (``"rc"``, ``"rrc"``), or None.

    Each letter was played at node ``p:`` + the letters before it, the button
    (preflop player 0, in position after the flop) first; a combo's weight is the
    product of its class's probabilities of its player's letters.
    """
    if line not in ("rc", "rrc"):
        return None
    cls_weight = [[1.0] * 169, [1.0] * 169]  # preflop players: 0 button, 1 big blind
    for i, letter in enumerate(line):
        node = table.nodes.get(f"p:{line[:i]}")
        if node is None or letter not in node.actions:
            return None
        a = node.actions.index(letter)
        w = cls_weight[i % 2]
        for k in range(169):
            w[k] *= node.strategy(k)[a]
    classes = _combo_classes()
    button = tuple(cls_weight[0][c] for c in classes)
    blind = tuple(cls_weight[1][c] for c in classes)
    return blind, button


def _dead(weights: Sequence[float], board: Sequence[Card]) -> tuple[float, ...]:
    used = set(board)
    return tuple(
        0.0 if a in used or b in used else w for (a, b), w in zip(combos(), weights, strict=True)
    )


def _seed(board: Sequence[Card]) -> int:
    out = 0
    for c in board:
        out = out * 53 + c + 1
    return out


def _runouts(board: tuple[Card, ...], runouts: int = RUNOUTS) -> list[tuple[Card, ...]]:
    if len(board) == 5:
        return [board]
    rng = random.Random(_seed(board))
    rest = [c for c in range(52) if c not in board]
    return [board + tuple(rng.sample(rest, 5 - len(board))) for _ in range(runouts)]


def strengths(
    board: tuple[Card, ...],
    ranges: tuple[Sequence[float], Sequence[float]],
    runouts: int = RUNOUTS,
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Each combo's equity against the other player's range, for both players.

    Averaged over the board's seeded completions; combos touching the board get 0.
    """
    n = len(combos())
    total = ([0.0] * n, [0.0] * n)
    count = [0] * n
    cb = _combo_bytes()
    all_combos = combos()
    for full in _runouts(board, runouts):
        used = set(full)
        valid = [i for i, (a, b) in enumerate(all_combos) if a not in used and b not in used]
        tail = bytes(full)
        values = _native.evaluate_many(b"".join(cb[i] + tail for i in valid), 7)
        idx = sorted(range(len(valid)), key=values.__getitem__)
        w = [ranges[0], ranges[1]]
        mass = [sum(w[p][valid[j]] for j in idx) for p in (0, 1)]
        below = [0.0, 0.0]
        j = 0
        m = len(idx)
        while j < m:
            v = values[idx[j]]
            k = j
            tie = [0.0, 0.0]
            while k < m and values[idx[k]] == v:
                c = valid[idx[k]]
                tie[0] += w[0][c]
                tie[1] += w[1][c]
                k += 1
            for p in (0, 1):
                o = 1 - p
                eq = (below[o] + 0.5 * tie[o]) / mass[o] if mass[o] > 0 else 0.5
                for t in range(j, k):
                    total[p][valid[idx[t]]] += eq
            for t in range(j, k):
                count[valid[idx[t]]] += 1
            below[0] += tie[0]
            below[1] += tie[1]
            j = k
    return (
        tuple(s / c if c else 0.0 for s, c in zip(total[0], count, strict=True)),
        tuple(s / c if c else 0.0 for s, c in zip(total[1], count, strict=True)),
    )


def _street(
    board: tuple[Card, ...],
    ranges: tuple[tuple[float, ...], tuple[float, ...]],
    runouts: int = RUNOUTS,
) -> StreetState:
    ranges = (_dead(ranges[0], board), _dead(ranges[1], board))
    s = strengths(board, ranges, runouts)
    shuffle = list(range(len(s[0])))
    random.Random(_seed(board)).shuffle(shuffle)
    order = (_ordered(s[0], shuffle), _ordered(s[1], shuffle))
    return StreetState(ranges, s, order)


def _ordered(strength: Sequence[float], shuffle: Sequence[int]) -> tuple[int, ...]:
    """Combos weakest first, equal strengths in ``shuffle`` order."""
    return tuple(sorted(range(len(strength)), key=lambda c: (strength[c], shuffle[c])))


@lru_cache(maxsize=64)
def street_start(
    pre: str, board: tuple[Card, ...], past: tuple[tuple[Move, ...], ...], runouts: int = RUNOUTS
) -> StreetState | None:
    """Ranges and strengths at the start of the street whose board is ``board``.

    ``past`` holds the moves of the earlier postflop streets (one tuple a street);
    cached by public line, so a hand's later decisions reuse its earlier streets.
    ``pre`` is ``"rc"``, ``"rrc"`` or ``ANY_LINE`` (every combo for both players).
    ``runouts``: completions of the flop and turn boards sampled for the equities (hard's
    defence reads fewer than the floor, to stay within its decision-time budget).
    """
    if len(past) != len(board) - 3:
        raise ValueError(f"{len(past)} earlier streets for a board of {len(board)} cards")
    if len(board) == 3:
        if pre == ANY_LINE:
            uniform = (1.0,) * len(combos())
            return _street(board, (uniform, uniform), runouts)
        table = load("holdem")
        start = None if table is None else preflop_ranges(table, pre)
        if start is None:
            return None
        return _street(board, start, runouts)
    prev = street_start(pre, board[:-1], past[:-1], runouts)
    if prev is None:
        return None
    ranges = narrow(prev, board[:-1], past[-1])
    return _street(board, ranges, runouts)


@lru_cache(maxsize=64)
def node_state(
    pre: str, board: tuple[Card, ...], past: tuple[tuple[Move, ...], ...], moves: tuple[Move, ...]
) -> StreetState | None:
    """The state at a decision: both ranges after ``moves``, equities against those ranges.

    The rules narrow by the street's starting equities; the decision itself reads each
    hand's equity against the other range as it stands now (a checked range is weaker,
    so value bets get thinner against it). Cached by public line like ``street_start``.
    """
    st = street_start(pre, board, past)
    if st is None or not moves:
        return st
    return _street(board, narrow(st, board, moves))


# ---------------------------------------------------------------------- the rules


def percentile(st: StreetState, weights: Sequence[float], player: int, combo: int) -> float:
    """Share of ``weights`` (``player``'s range) below ``combo`` in strength order.

    Combos of equal strength are ordered by a fixed shuffle of the board
    (``StreetState.order``), so cut-offs split a group of equal hands exactly
    and the same hand always lands on the same side of them. The combo counts
    half of its own weight: the middle of its bucket.
    """
    total = below = 0.0
    mine = 0.0
    seen = False
    for c in st.order[player]:
        w = weights[c]
        if c == combo:
            seen = True
            mine = w
        elif w and not seen:
            below += w
        total += w
    if total <= 0:
        return 0.5
    return (below + 0.5 * mine) / total


def value_threshold(size: float) -> float:
    """Equity a bet of ``size`` pots needs for value: ahead of half a minimum-defence range."""
    return 1.0 - 0.5 / (1.0 + size)


def bluff_share(size: float) -> float:
    """The bluffs' share of a betting range of ``size`` pots that leaves a caller indifferent."""
    return size / (1.0 + 2.0 * size)


def bet_plan(
    st: StreetState, weights: Sequence[float], player: int, size: float
) -> tuple[float, float]:
    """(equity threshold of the value bets, percentile below which a hand bluffs)."""
    threshold = value_threshold(size)
    s = st.strength[player]
    total = value = 0.0
    for c, w in enumerate(weights):
        if w:
            total += w
            if s[c] >= threshold:
                value += w
    if total <= 0:
        return threshold, 0.0
    v = value / total
    bluffs = v * size / (1.0 + size)  # bluffs / value = b / (1 + b)
    return threshold, min(bluffs, max(0.0, 1.0 - v))


@dataclass(frozen=True, slots=True)
class Defence:
    """Percentile cut-offs facing a bet: continue above ``call``; raise above ``value`` or in
    ``[bluff, call)``."""

    call: float
    value: float
    bluff: float


def defence(size: float, facing_raise: bool, can_raise: bool) -> Defence:
    """The minimum-defence plan against a bet of ``size`` pots."""
    cont = 1.0 / (1.0 + size)
    call = 1.0 - cont
    if not can_raise:
        return Defence(call, 2.0, call)
    share = RERAISE_SHARE if facing_raise else RAISE_SHARE
    value = 1.0 - cont * share
    if facing_raise:
        return Defence(call, value, call)
    bluffs = cont * share * RAISE_SIZE / (1.0 + RAISE_SIZE)
    return Defence(call, value, max(0.0, call - bluffs))


def decide(
    st: StreetState,
    weights: Sequence[float],
    player: int,
    combo: int,
    facing: float | None,
    raises: int,
    size: float,
) -> str:
    """The floor's letter for ``combo`` in ``player``'s range: ``k`` ``b`` ``c`` ``r`` or ``f``.

    ``facing`` is the bet faced in pots (None when nothing is owed), ``raises`` the
    bets and raises made on this street so far, ``size`` the bet the floor would make.
    """
    pct = percentile(st, weights, player, combo)
    value = st.strength[player][combo]
    if facing is None:
        threshold, bluff = bet_plan(st, weights, player, size)
        return "b" if value >= threshold or pct < bluff else "k"
    plan = defence(facing, raises >= 2, raises < MAX_RAISES)
    if pct >= plan.value or plan.bluff <= pct < plan.call:
        return "r"
    return "c" if pct >= plan.call else "f"


def narrow(
    st: StreetState, board: tuple[Card, ...], moves: Sequence[Move]
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Both ranges after a street's ``moves``: each action keeps the hands the rules give it."""
    ranges = [list(st.ranges[0]), list(st.ranges[1])]
    raises = 0
    facing: float | None = None
    for mv in moves:
        p = mv.player
        w = ranges[p]
        s = st.strength[p]
        if mv.kind in "kb" and facing is None:
            size = mv.size if mv.kind == "b" else SIZES[_street_of(board)]
            threshold, bluff = bet_plan(st, w, p, size)
            pcts = _percentiles(st, w, p)
            for c in range(len(w)):
                if w[c]:
                    bets = s[c] >= threshold or pcts[c] < bluff
                    if bets != (mv.kind == "b"):
                        w[c] *= TREMBLE
        elif mv.kind in "cr" and facing is not None:
            plan = defence(facing, raises >= 2, raises < MAX_RAISES)
            pcts = _percentiles(st, w, p)
            for c in range(len(w)):
                if w[c]:
                    q = pcts[c]
                    raised = q >= plan.value or plan.bluff <= q < plan.call
                    called = q >= plan.call and not raised
                    if not (raised if mv.kind == "r" else called):
                        w[c] *= TREMBLE
        if mv.kind in "br":
            raises += 1
            facing = mv.size
        elif mv.kind == "c":
            facing = None
    return tuple(ranges[0]), tuple(ranges[1])


def _percentiles(st: StreetState, weights: Sequence[float], player: int) -> list[float]:
    """Every combo's percentile within ``weights`` (as ``percentile``, all at once)."""
    out = [0.0] * len(weights)
    order = st.order[player]
    total = sum(weights[c] for c in order)
    if total <= 0:
        return [0.5] * len(weights)
    below = 0.0
    for c in order:
        w = weights[c]
        out[c] = (below + 0.5 * w) / total
        below += w
    return out


def _street_of(board: Sequence[Card]) -> Street:
    return {3: Street.FLOP, 4: Street.TURN, 5: Street.RIVER}[len(board)]


# ---------------------------------------------------------------------- public lines


@dataclass(frozen=True, slots=True)
class Line:
    """A heads-up hand's public line as the range model reads it."""

    pre: str
    streets: tuple[tuple[Move, ...], ...]  # moves per postflop street so far, current last
    pot: int  # the pot at the start of the current street


def read_line(
    actions: Sequence[PublicAction], ip_seat: int, street: Street, unit: int = 0
) -> Line | None:
    """The preflop letters and postflop moves (sizes in pots), or None off the abstraction.

    With ``unit`` (the big blind) a preflop line the floor does not know (a limp, a
    check, a 4-bet called) is read as ``ANY_LINE`` instead of None, its pot at least
    two big blinds: hard's heads-up defence (``HardBot._defends``) needs a range in
    every pot, the postflop floor only in its own lines.
    """
    pre = ""
    level = 0
    for a in actions:
        if a.street != Street.PREFLOP:
            continue
        if a.kind == "bet":
            pre += "r"
            level = a.to
        elif a.kind == "call":
            pre += "c"
        elif a.kind == "check" and unit:
            pre += "k"
        else:
            return None
    if pre not in ("rc", "rrc"):
        if not unit:
            return None
        pre = ANY_LINE
        level = max(level, unit)
    pot = 2 * level
    streets: list[tuple[Move, ...]] = []
    for st in (Street.FLOP, Street.TURN, Street.RIVER):
        paid = {0: 0, 1: 0}
        moves: list[Move] = []
        for a in actions:
            if a.street != st:
                continue
            p = IP if a.seat == ip_seat else OOP
            if a.kind == "bet":
                owed = a.to - paid[1 - p]
                before = pot + paid[0] + paid[1] + (a.to - paid[p]) - owed
                kind = "r" if paid[1 - p] > paid[p] else "b"
                moves.append(Move(p, kind, owed / max(before, 1)))
                paid[p] = a.to
            elif a.kind == "call":
                moves.append(Move(p, "c"))
                paid[p] = paid[1 - p]
            elif a.kind == "check":
                moves.append(Move(p, "k"))
            else:
                return None
        streets.append(tuple(moves))
        if st == street:
            return Line(pre, tuple(streets), pot)
        pot += paid[0] + paid[1]
    return None
