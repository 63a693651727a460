"""The tight-aggressive reference bot: textbook strategy, written apart from the levels.

It is a yardstick, not a product level: issue #14 judges the hard bot
against strong independent bots, so the ladder carries one written from the
textbook and sharing none of the hard bot's code (only the rules library:
equity sampling, the evaluator, legal-command helpers and the textbook
discards). It ignores the table's opponent model on purpose: a fixed,
sound strategy is what an exploiting player must still beat.

Hold'em:

- **Preflop** opens a position-wide range first in (15% under the gun up to
  45% on the button, 70% on the heads-up button), 3 big blinds plus one per
  limper. Facing a raise it computes its equity against the raiser's range
  (top 20% for an open, 7% for a 3-bet, 3% beyond, wider heads-up), re-raises
  with clear equity, calls when equity beats the pot odds by a margin that is
  larger out of position, and folds the rest.
- **After the flop** each opponent's range starts from its preflop action and
  is re-weighted by every later action: a bet or raise keeps its strong
  combos and few weak ones (draws count as medium strength), a call its
  medium and strong ones, a check trims the strongest. Hero's Monte Carlo
  equity against those ranges drives everything: value bets of two thirds of
  the pot, raises with very strong equity, calls priced by pot odds (plus a
  little implied odds for draws), continuation bets as the preflop raiser
  heads-up, semi-bluffs with strong draws.

Draw (fixed limit): the textbook opening requirements (jacks or better with
several players behind, any pair late or heads-up, two pair or better to
raise), the textbook discards (``standard_keep``), and after the draw its
equity against each opponent modelled from its draw count (pat: a made hand,
one card: two pair or a draw, two: trips, three: a pair) and from whether it
bet, against the pot odds.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import cache, lru_cache

from felt.core.cards import Card
from felt.core.evaluator import HandCategory, evaluate_many
from felt.core.rules.config import Variant
from felt.core.rules.events import CardsDrawn, Event, Street
from felt.core.rules.legal import LegalActions
from felt.core.rules.views import HandView
from felt.players.bots.base import (
    Decision,
    Situation,
    all_in,
    bet_to,
    check_or_call,
    check_or_fold,
    discard,
    pot_bet_to,
    situation,
)
from felt.players.bots.drawhand import analyse, standard_keep
from felt.players.bots.holdem import draws, preflop_percentile
from felt.players.bots.opponents import TableStats
from felt.players.equity import DrawOpponent, Range, draw_equity, holdem_equity, top_percent

H = HandCategory
JACKS = 9
NINES = 7
QUEENS = 10
# First-in open shares by seats still to act behind (the blinds included).
_OPEN_BY_BEHIND = {0: 0.36, 1: 0.45, 2: 0.28, 3: 0.20, 4: 0.16}
_OPEN_EARLY = 0.14
_OPEN_HEADS_UP = 0.70
_BOARD = ((Street.FLOP, 3), (Street.TURN, 4), (Street.RIVER, 5))


class TightAggressive:
    """Textbook tight-aggressive play in both games; see the module docstring."""

    name = "tag"

    def __init__(self, samples: int = 700) -> None:
        self.samples = samples

    def decide(
        self,
        view: HandView,
        history: Sequence[Event],
        legal: LegalActions,
        rng: random.Random,
        table: TableStats | None = None,
    ) -> Decision:
        sit = situation(view, history, legal)
        if sit.variant == Variant.DRAW5:
            return self._draw(sit, history, legal, rng)
        if sit.street == Street.PREFLOP:
            return self._preflop(view, sit, legal, rng)
        return self._postflop(view, sit, legal, rng)

    # ------------------------------------------------------------------ hold'em preflop

    def _preflop(
        self, view: HandView, sit: Situation, legal: LegalActions, rng: random.Random
    ) -> Decision:
        n = len(view.seats)
        acts = sit.on(Street.PREFLOP)
        raisers = [a.seat for a in acts if a.kind == "bet"]
        limpers = sum(1 for a in acts if a.kind == "call")
        pct = preflop_percentile(sit.hole)
        if not raisers:
            if sit.to_call == 0:  # the big blind's option after limps
                return pot_bet_to(sit, legal, 1.0) if pct <= 0.12 else check_or_call(legal)
            share = (
                _OPEN_HEADS_UP if n == 2 else _OPEN_BY_BEHIND.get(_behind(view, sit), _OPEN_EARLY)
            )
            if limpers:
                share = min(share, 0.18)
            if pct > share:
                return check_or_fold(legal)
            return bet_to(legal, (2.5 if n == 2 else 3.0 + limpers) * sit.unit)
        ranges = [self._preflop_range(view, sit, o.seat) for o in sit.opponents]
        equity = self._equity(sit, ranges, rng)
        level = len(raisers)
        current = sit.bet + sit.to_call
        reraise_at = (0.56 if level == 1 else 0.60) + 0.04 * (sit.opponent_count - 1)
        if equity >= reraise_at and legal.can_raise:
            if sit.spr <= 3 or level >= 3 or sit.to_call >= 0.3 * sit.stack:
                return all_in(legal)
            return bet_to(legal, 3 * current + (0 if sit.in_position else current))
        if sit.to_call >= 0.3 * sit.stack:
            need = sit.effective_stack / (sit.pot + sit.effective_stack)
            return check_or_call(legal) if equity >= need + 0.03 else check_or_fold(legal)
        margin = 0.04 if sit.in_position else 0.09
        if equity >= sit.pot_odds + margin:
            return check_or_call(legal)
        return check_or_fold(legal)

    def _preflop_range(self, view: HandView, sit: Situation, seat: int) -> Range:
        return _top(*self._preflop_spec(view, sit, seat))

    def _preflop_spec(self, view: HandView, sit: Situation, seat: int) -> tuple[float, float]:
        """An opponent's preflop range (top share, discounted top) from its actions."""
        heads_up = len(view.seats) == 2
        acts = sit.on(Street.PREFLOP)
        level = 0
        my_level = 0
        called_raise = False
        for a in acts:
            if a.kind == "bet":
                level += 1
                if a.seat == seat:
                    my_level = level
            elif a.kind == "call" and a.seat == seat and level > 0:
                called_raise = True
        if my_level:
            widths = {1: 0.45 if heads_up else 0.20, 2: 0.12 if heads_up else 0.07}
            width = widths.get(my_level, 0.03)
            return (width, 0.0)
        if called_raise:
            return (0.55 if heads_up else 0.30, 0.05)
        if any(a.seat == seat and a.kind == "call" for a in acts):
            return (0.70, 0.05)  # limped: no premium hand (it would have raised)
        return (1.0, 0.0)

    # ------------------------------------------------------------------ hold'em postflop

    def _postflop(
        self, view: HandView, sit: Situation, legal: LegalActions, rng: random.Random
    ) -> Decision:
        ranges = [self._postflop_range(view, sit, o.seat) for o in sit.opponents]
        equity = self._equity(sit, ranges, rng)
        extra = 0.06 * (sit.opponent_count - 1)
        dr = draws(sit.hole, sit.board)
        drawing = dr.strong and sit.street != Street.RIVER
        if sit.to_call == 0:
            if equity >= (0.60 if sit.in_position else 0.63) + extra:
                if equity >= 0.85 and sit.spr <= 2:
                    return all_in(legal)
                return pot_bet_to(sit, legal, 0.66)
            aggressor = sit.last_aggressor(Street.PREFLOP) == sit.seat
            first_to_bet = not any(a.kind == "bet" for a in sit.on(sit.street))
            if (
                sit.street == Street.FLOP
                and aggressor
                and first_to_bet
                and sit.opponent_count == 1
                and rng.random() < 0.6
            ):
                return pot_bet_to(sit, legal, 0.5)  # the continuation bet
            if drawing and sit.opponent_count <= 2 and rng.random() < 0.5:
                return pot_bet_to(sit, legal, 0.6)  # the semi-bluff
            return check_or_fold(legal)
        if equity >= 0.80 + extra and legal.can_raise:
            if sit.spr <= 2 or sit.to_call >= 0.35 * sit.stack:
                return all_in(legal)
            return pot_bet_to(sit, legal, 0.75)
        implied = 0.05 if drawing else 0.0
        if equity + implied >= sit.pot_odds + 0.03:
            return check_or_call(legal)
        return check_or_fold(legal)

    def _postflop_range(self, view: HandView, sit: Situation, seat: int) -> Range:
        """The preflop range, re-weighted street by street by the seat's actions."""
        steps: list[tuple[tuple[Card, ...], str]] = []
        for street, count in _BOARD:
            if len(sit.board) < count:
                break
            moves = [a.kind for a in sit.on(street) if a.seat == seat]
            if moves:
                kind = "bet" if "bet" in moves else "call" if "call" in moves else "check"
                steps.append((sit.board[:count], kind))
        return _line_range(self._preflop_spec(view, sit, seat), tuple(steps))

    def _equity(self, sit: Situation, ranges: list[Range], rng: random.Random) -> float:
        seed = rng.getrandbits(32)
        return holdem_equity(sit.hole, sit.board, (), ranges, self.samples, seed).equity

    # ------------------------------------------------------------------ draw

    def _draw(
        self, sit: Situation, history: Sequence[Event], legal: LegalActions, rng: random.Random
    ) -> Decision:
        if legal.max_discard is not None:
            return discard(legal, sit.hole, standard_keep(sit.hole))
        if sit.street == Street.FIRST_BET:
            return self._draw_first(sit, legal)
        dead: tuple[Card, ...] = ()
        for e in history:
            if isinstance(e, CardsDrawn) and e.seat == sit.seat:
                dead = tuple(c for c in e.discarded if c is not None)
        models = [self._draw_model(sit, o.seat) for o in sit.opponents]
        seed = rng.getrandbits(32)
        equity = total = 0.0
        for weight, opponents in _combinations(models):
            n = max(150, int(self.samples * weight))
            equity += weight * draw_equity(sit.hole, sit.hole, dead, opponents, n, seed).equity
            total += weight
        equity /= total
        fair = 1.0 / (sit.opponent_count + 1)
        if sit.to_call == 0:
            return bet_to(legal, sit.unit) if equity >= fair + 0.12 else check_or_fold(legal)
        if equity >= fair + 0.25:
            return bet_to(legal, sit.bet + sit.to_call + sit.unit)
        return check_or_call(legal) if equity >= sit.pot_odds else check_or_fold(legal)

    def _draw_first(self, sit: Situation, legal: LegalActions) -> Decision:
        """Textbook opening requirements, raises with two pair, draws by the pot's price."""
        info = analyse(sit.hole)
        cat, pair = info.category, info.pair_rank
        bets = sum(1 for a in sit.on(Street.FIRST_BET) if a.kind == "bet")
        behind = len(sit.order) - 1 - sit.order.index(sit.seat) if sit.seat in sit.order else 0
        late = behind <= 1 or sit.opponent_count == 1
        if bets == 0:
            if cat >= H.TWO_PAIR:
                return bet_to(legal, sit.unit)
            if cat == H.PAIR and (pair >= JACKS or (late and pair >= NINES)):
                return bet_to(legal, sit.unit)
            if cat == H.PAIR and behind <= 1:
                return bet_to(legal, sit.unit)
            return check_or_fold(legal)
        if cat >= H.THREE_OF_A_KIND or (cat == H.TWO_PAIR and bets == 1):
            return bet_to(legal, sit.bet + sit.to_call + sit.unit)
        if cat == H.TWO_PAIR:
            return check_or_call(legal)
        if cat == H.PAIR and pair >= (QUEENS if bets == 1 else 12):
            return check_or_call(legal)
        draws_ = bool(info.flush_draw or info.straight_draw)
        if draws_ and (sit.opponent_count >= 2 or sit.pot_odds <= 0.25) and bets == 1:
            return check_or_call(legal)
        return check_or_fold(legal)

    def _draw_model(self, sit: Situation, seat: int) -> list[tuple[float, DrawOpponent]]:
        """What an opponent holds after the draw, from its draw count and its bets."""
        drew = sit.draws.get(seat, 3)
        bet_after = any(a.kind == "bet" and a.seat == seat for a in sit.on(Street.SECOND_BET))
        if drew == 0:
            mix = [(0.7, DrawOpponent(0, H.STRAIGHT)), (0.3, DrawOpponent(0, H.PAIR))]
        elif drew == 1:
            mix = [(0.5, DrawOpponent(1, H.TWO_PAIR)), (0.5, DrawOpponent(1))]
        elif drew == 2:
            mix = [(1.0, DrawOpponent(2, H.THREE_OF_A_KIND))]
        elif drew == 3:
            mix = [(1.0, DrawOpponent(3, H.PAIR))]
        else:
            mix = [(1.0, DrawOpponent(drew))]
        if bet_after:
            floor = H.TWO_PAIR if drew >= 2 else H.THREE_OF_A_KIND
            mix = [(0.5, DrawOpponent(0, floor)), *[(0.5 * w, m) for w, m in mix]]
        return mix


def _behind(view: HandView, sit: Situation) -> int:
    """Seats still to act after this one preflop, the blinds included."""
    seats = [s.seat for s in view.seats]
    button = seats.index(view.button) if view.button in seats else len(seats) - 1
    order = seats[button + 1 :] + seats[: button + 1]  # small blind first, button last
    preflop = order[2:] + order[:2]  # under the gun first, big blind last
    return len(preflop) - 1 - preflop.index(sit.seat)


@lru_cache(maxsize=2048)
def _line_range(
    spec: tuple[float, float], steps: tuple[tuple[tuple[Card, ...], str], ...]
) -> Range:
    """The range of a preflop spec after ``(board, action)`` steps (memoised per public line)."""
    if not steps:
        return _top(*spec)
    board, kind = steps[-1]
    weights = _reweight(dict(_line_range(spec, steps[:-1]).items()), board, kind)
    live = {c: w for c, w in weights.items() if w > 1e-4}
    return Range(live) if live else top_percent(100)


@cache
def _top(width: float, discount_top: float) -> Range:
    """The top ``width`` of starting hands, its best ``discount_top`` share at 0.4 weight."""
    base = top_percent(width * 100)
    if discount_top <= 0:
        return base
    best = set(top_percent(discount_top * 100).combos)
    return Range((c, 0.4 if c in best else 1.0) for c in base.combos)


def _reweight(
    weights: dict[tuple[Card, Card], float], board: Sequence[Card], kind: str
) -> dict[tuple[Card, Card], float]:
    """Weight each combo by how likely the action is with it, from its strength on ``board``.

    Strength is the combo's percentile within the range (0 weakest, 1 strongest);
    a flush draw or open-ended straight draw before the river counts as at
    least 0.6 (draws bet and call). A bet keeps strong hands (0.1 + 0.9 s^2), a
    call medium ones (0.25 + 0.75 s), a check the weaker ones (1 - 0.6 s^3).
    """
    blocked = set(board)
    combos = [c for c in weights if c[0] not in blocked and c[1] not in blocked]
    if not combos:
        return weights
    values = evaluate_many([(a, b, *board) for a, b in combos])
    order = sorted(range(len(combos)), key=lambda i: values[i])
    strength = [0.0] * len(combos)
    for rank, i in enumerate(order):
        strength[i] = rank / max(1, len(combos) - 1)
    out: dict[tuple[Card, Card], float] = {}
    suits, board_mask = _suit_counts(board), _rank_mask(board)
    for i, combo in enumerate(combos):
        s = strength[i]
        if len(board) < 5 and _drawing(combo[0], combo[1], suits, board_mask):
            s = max(s, 0.6)
        if kind == "bet":
            factor = 0.1 + 0.9 * s * s
        elif kind == "call":
            factor = 0.25 + 0.75 * s
        else:
            factor = 1.0 - 0.6 * s**3
        out[combo] = weights[combo] * factor
    return out


_OPEN_ENDED = tuple(0xF << low for low in range(1, 9))  # four ranks open at both ends


def _strong_draw(combo: tuple[Card, Card], board: Sequence[Card]) -> bool:
    """A flush draw or an open-ended straight draw that uses a hole card."""
    return _drawing(combo[0], combo[1], _suit_counts(board), _rank_mask(board))


def _suit_counts(board: Sequence[Card]) -> list[int]:
    counts = [0, 0, 0, 0]
    for c in board:
        counts[c & 3] += 1
    return counts


def _rank_mask(board: Sequence[Card]) -> int:
    mask = 0
    for c in board:
        mask |= 1 << (c >> 2)
    return mask


def _drawing(a: Card, b: Card, suits: list[int], board_mask: int) -> bool:
    """``_strong_draw`` from the board's suit counts and rank mask (computed once per board)."""
    sa, sb = a & 3, b & 3
    same = sa == sb
    if suits[sa] + 1 + same == 4 or suits[sb] + 1 + same == 4:
        return True
    hole = 1 << (a >> 2) | 1 << (b >> 2)
    mask = board_mask | hole
    return any(mask & m == m and m & hole for m in _OPEN_ENDED)


def _combinations(
    models: list[list[tuple[float, DrawOpponent]]],
) -> list[tuple[float, list[DrawOpponent]]]:
    """Every choice of one model per opponent with its joint weight (kept small: <= 2 each)."""
    out: list[tuple[float, list[DrawOpponent]]] = [(1.0, [])]
    for mix in models:
        out = [(w * mw, [*ms, m]) for w, ms in out for mw, m in mix]
    out.sort(key=lambda x: -x[0])
    return out[:6]
