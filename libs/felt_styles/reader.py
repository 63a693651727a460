"""The reader: a tight-aggressive player whose opponents' ranges come from their public record.

Where most players put "a raise" on a fixed range, the reader looks up how often that
seat has raised first in from where it sat (``SeatStats.open_rate``), how often it
enters and raises pots at all (VPIP, PFR), and makes the range exactly that wide; it
then narrows the range street by street by what the seat did, as loosely as that seat
bets and calls, and plays its equity against the result. A player who opens 70% of
its hands is 3-bet and defended against far more than one who opens 15%, because
the reader's equity against the top 70% is far higher than against the top 15%.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

from felt.core.cards import Card
from felt.core.evaluator import HandCategory, evaluate_many
from felt.core.rules.config import Variant
from felt.core.rules.events import Event, Street
from felt.core.rules.legal import LegalActions
from felt.core.rules.views import HandView
from felt.players.bots.base import Decision
from felt.players.bots.opponents import TableStats
from felt.players.equity import DrawOpponent, Range, draw_equity, top_percent
from felt_styles.reading import Spot, draw_rank, first_round_order, keep_for, read
from felt_styles.style import Style

H = HandCategory
SAMPLES = 500
_BOARDS = ((Street.FLOP, 3), (Street.TURN, 4), (Street.RIVER, 5))

# Five-card hands from the top, as (share of all deals, how such a hand plays the draw):
# pat straights or better, trips, two pair, one pair, then draws and high cards.
_DRAW_LADDER: tuple[tuple[float, DrawOpponent], ...] = (
    (0.008, DrawOpponent(0, H.STRAIGHT)),
    (0.021, DrawOpponent(2, H.THREE_OF_A_KIND)),
    (0.0475, DrawOpponent(1, H.TWO_PAIR)),
    (0.423, DrawOpponent(3, H.PAIR)),
    (1.0, DrawOpponent(3)),
)


@dataclass(frozen=True, slots=True)
class Spec:
    """A first-round range read: the top ``width`` of hands, its best ``top`` share
    weighted down to ``top_weight`` (a player who only calls rarely holds the hands it
    would have raised)."""

    width: float
    top: float = 0.0
    top_weight: float = 1.0


@dataclass(frozen=True, slots=True)
class Looseness:
    """How loosely a seat bets, calls and checks after the first round, from its record:
    the weight a bet/call/check leaves on its weakest holdings."""

    bet_floor: float
    call_floor: float
    check_trim: float
    cbet_floor: float


class Reader(Style):
    """Tight-aggressive, with every opponent's range read from its observed frequencies.

    Hold'em preflop. First in it opens 15% of hands with a full table behind up to 45%
    with one player behind (65% on the heads-up button), 3 big blinds (2.5 heads-up)
    plus one per limper; it isolates limpers with the top 30% when they limp more
    than half their hands, else the top 18%. Facing a raise it reads each player in
    the pot: an open raise as the top ``open_rate`` of hands for that seat from that
    position (late: at most two seats behind it; priors 17% early, 35% late), a raise
    over limpers as 80% of its PFR, a 3-bet as 40% of its PFR (3% to 35%), a 4-bet as
    15% (1.5% to 15%), a call of a raise as its VPIP with the top 60% of its PFR share
    at 0.3 weight (it would have re-raised those), a limp as its VPIP with the top half
    of its PFR share at 0.5 weight. It re-raises with equity against those ranges over
    0.54 (a 3-bet; 0.60 a 4-bet, 0.66 beyond, plus 0.04 per extra player and 0.025 per
    player still to act), calls when the equity beats the pot odds by 4 points in position or in
    the big blind and 8 points otherwise, and folds the rest; facing a raise of 30%
    of its stack it calls the all-in price plus 3 points.

    After the flop each range is narrowed by the seat's actions on every street,
    combo by combo by its strength on that board (draws count as 0.6): a bet keeps
    ``bet_floor + (1 - bet_floor) s^2``, a call ``call_floor + (1 - call_floor) s``, a
    check ``1 - check_trim s^3``, with the floors read off the seat's record: its
    shown bets' bluff rate and aggression widen its bets, a low fold rate widens its
    calls; the preflop raiser's flop continuation bet is read with a floor 0.3 higher
    (it is made with much of the range). It bets two thirds of the pot with equity
    over 0.58 (plus 0.06 per extra opponent), c-bets heads-up flops as the preflop
    raiser 35% of the time plus half the opponent's fold rate, semi-bluffs strong
    draws half the time, raises equity over 0.78 (all-in at low stack-to-pot), and
    calls by pot odds plus 2 points (minus 5 with a strong draw).

    Draw: opens two pair or jacks or better with three or more behind, nines or better
    with two behind, any pair with one, and draws and ace high too when last. Facing a
    bet it reads each player in the pot as in Hold'em (an open as its observed opening
    rate, a re-raise as 40% of its PFR, a call as its VPIP) over five-card hands,
    mapped onto pat hands, trips, two pair, one pair and the rest, and plays its
    equity: a raise over a fair share plus 0.17, a call over the price plus 3 points
    (2 more per player still to act). After the draw each opponent is read from its
    draw count, how wide it came in, and how often its shown draws did not fit them
    (``odd_draw_rate``); a bet after the draw adds made hands of two pair or better in
    proportion to how rarely its shown bets were weak (``bluff_rate``). It bets equity
    over 0.58 heads-up (0.08 more per extra opponent), raises over 0.78 and calls by
    the price.
    """

    name = "reader"
    # Equity to bet, to raise, and the margin a call needs after the flop.
    VALUE = 0.58
    RAISE = 0.78
    CALL = 0.02
    # Heads-up flop c-bets: this share plus half the opponent's fold rate.
    CBET = 0.35
    # Equity to re-raise a raise, a re-raise, and beyond (before extra players).
    RERAISE = (0.54, 0.60, 0.66)
    # Margins a preflop call needs: in position or in the big blind / otherwise.
    DEFEND = (0.04, 0.08)
    # How much weaker a continuation bet may be than another bet (its floor's rise).
    CBET_FLOOR = 0.3

    def decide(
        self,
        view: HandView,
        history: Sequence[Event],
        legal: LegalActions,
        rng: random.Random,
        table: TableStats | None = None,
    ) -> Decision:
        spot = read(view, history, legal, rng, table)
        order = tuple(first_round_order(view))
        if legal.max_discard is not None:
            return self.discard(spot)
        if view.variant == Variant.DRAW5:
            if spot.first_round:
                return self._draw_first(spot, order)
            return self._draw_second(spot, order)
        if spot.street == Street.PREFLOP:
            return self._preflop(spot, order)
        return self._postflop(spot, order)

    # ------------------------------------------------------------------ reading ranges

    def spec(self, spot: Spot, order: tuple[int, ...], seat: int) -> Spec:
        """A seat's first-round range from its action there and its record."""
        stats = spot.stats(seat)
        level = 0
        entered = False
        mine: tuple[str, int, bool] | None = None  # (kind, level, entered before it)
        for a in spot.sit.on(spot.sit.street if spot.first_round else _first(spot)):
            if a.kind == "bet":
                level += 1
                if a.seat == seat:
                    mine = ("bet", level, entered)
            elif a.kind == "call" and a.seat == seat:
                mine = ("call", level, entered)
            if a.kind in ("bet", "call"):
                entered = True
        vpip = _clamp(stats.vpip_rate(0.35, 10), 0.05, 1.0)
        pfr = _clamp(stats.pfr_rate(0.18, 10), 0.02, 1.0)
        if mine is None:
            return Spec(1.0)
        kind, lvl, before = mine
        if kind == "bet":
            if lvl == 1 and not before:
                behind = len(order) - order.index(seat) - 1 if seat in order else 1
                late = behind <= 2
                width = stats.open_rate(late, 0.35 if late else 0.17)
                return Spec(_clamp(width, 0.04, 1.0))
            if lvl == 1:
                return Spec(_clamp(0.8 * pfr, 0.04, 1.0))
            if lvl == 2:
                return Spec(_clamp(0.4 * pfr, 0.03, 0.35))
            return Spec(_clamp(0.15 * pfr, 0.015, 0.15))
        if lvl == 0:
            return Spec(vpip, _clamp(pfr, 0.0, vpip) * 0.5, 0.5)
        return Spec(vpip, min(pfr, vpip) * 0.6, 0.3)

    def line_style(self, spot: Spot, seat: int) -> Looseness:
        stats = spot.stats(seat)
        bluffs = stats.bluff_rate(0.25, 6)
        aggression = stats.aggression(0.3, 15)
        folds = stats.fold_rate(0.4, 10)
        bet_floor = _clamp(0.04 + 0.5 * (bluffs - 0.15) + 0.3 * (aggression - 0.3), 0.03, 0.5)
        call_floor = _clamp(0.15 + 0.9 * (0.4 - folds), 0.05, 0.7)
        check_trim = _clamp(0.3 + aggression, 0.3, 0.9)
        cbet_floor = _clamp(bet_floor + self.CBET_FLOOR, 0.03, 0.8)
        return Looseness(_step(bet_floor), _step(call_floor), _step(check_trim), _step(cbet_floor))

    def holdem_range(self, spot: Spot, order: tuple[int, ...], seat: int) -> Range:
        spec = self.spec(spot, order, seat)
        steps: list[tuple[tuple[Card, ...], str]] = []
        sit = spot.sit
        for street, count in _BOARDS:
            if len(sit.board) < count:
                break
            acts = sit.on(street)
            moves = [a.kind for a in acts if a.seat == seat]
            if moves:
                kind = "bet" if "bet" in moves else "call" if "call" in moves else "check"
                first_bet = next((a.seat for a in acts if a.kind == "bet"), None)
                if (
                    kind == "bet"
                    and street == Street.FLOP
                    and first_bet == seat
                    and moves.count("bet") == 1
                    and sit.last_aggressor(Street.PREFLOP) == seat
                ):
                    kind = "cbet"  # the preflop raiser's continuation bet: weak evidence
                steps.append((sit.board[:count], kind))
        return _line_range(spec, self.line_style(spot, seat), tuple(steps))

    # ------------------------------------------------------------------ hold'em

    def _preflop(self, spot: Spot, order: tuple[int, ...]) -> Decision:
        sit = spot.sit
        pct = spot.percentile()
        bb = sit.unit
        heads_up_table = sit.dealt <= 2
        acts = sit.on(Street.PREFLOP)
        if spot.raises == 0:
            limpers = [a.seat for a in acts if a.kind == "call"]
            if sit.to_call == 0:  # the big blind's option
                return spot.to((4 + len(limpers)) * bb) if pct <= 0.12 else spot.fold()
            share = 0.65 if heads_up_table else _opens(spot.behind, 0.15, 0.45)
            if limpers:
                loose = sum(spot.stats(s).vpip_rate(0.35, 10) for s in limpers) / len(limpers)
                share = min(share, 0.30 if loose > 0.5 else 0.18)
            if pct <= share:
                size = 2.5 if heads_up_table else 3.0
                return spot.to((size + len(limpers)) * bb)
            if limpers and spot.pot_odds <= 0.2 and pct <= 0.3:
                return spot.call()
            return spot.fold()
        voluntary = {a.seat for a in acts if a.kind in ("bet", "call") and a.seat != sit.seat}
        live = [o.seat for o in sit.opponents if not o.all_in or o.seat in voluntary]
        in_pot = [s for s in live if s in voluntary] or [o.seat for o in sit.opponents][:1]
        pending = sum(1 for s in live if s not in voluntary)
        ranges = [_range(self.spec(spot, order, s)) for s in in_pot]
        eq = spot.equity(ranges)
        level = spot.raises
        penalty = 0.025 * min(pending, 4)
        extra = 0.04 * (len(in_pot) - 1)
        raise_at = self.RERAISE[min(level, 3) - 1]
        if eq >= raise_at + extra + penalty and spot.legal.min_raise_to is not None:
            target = (3.0 if sit.in_position else 3.5) * spot.current + sit.to_call * (
                len(in_pot) - 1
            )
            if level >= 3 or target >= 0.33 * (sit.stack + sit.bet):
                return spot.shove()
            return spot.to(target)
        if sit.to_call >= 0.3 * sit.stack:
            eff = sit.effective_stack
            need = min(eff, sit.to_call) / (sit.pot + min(eff, sit.to_call))
            return spot.call() if eq >= need + 0.03 + penalty else spot.fold()
        big_blind = bool(order) and order[-1] == sit.seat
        margin = self.DEFEND[0] if (sit.in_position or big_blind) else self.DEFEND[1]
        return spot.call() if eq >= spot.pot_odds + margin + penalty else spot.fold()

    def _postflop(self, spot: Spot, order: tuple[int, ...]) -> Decision:
        sit, rng = spot.sit, spot.rng
        ranges = [self.holdem_range(spot, order, o.seat) for o in sit.opponents]
        eq = spot.equity(ranges)
        extra = 0.06 * (sit.opponent_count - 1)
        drawing = sit.street != Street.RIVER and spot.draws().strong
        if not spot.facing:
            if eq >= self.VALUE + extra:
                if eq >= 0.85 and sit.spr <= 1.5:
                    return spot.shove()
                return spot.sized(0.75 if eq > 0.75 and sit.street != Street.FLOP else 0.66)
            aggressor = sit.last_aggressor(Street.PREFLOP) == sit.seat
            opened = not any(a.kind == "bet" for a in sit.on(sit.street))
            if sit.street == Street.FLOP and aggressor and opened and spot.heads_up:
                folds = spot.stats(sit.opponents[0].seat).hu_fold_rate(0.4, 10)
                if rng.random() < self.CBET + 0.5 * folds:
                    return spot.sized(0.5)
            if drawing and sit.opponent_count <= 2 and rng.random() < 0.5:
                return spot.sized(0.6)
            return spot.fold()
        if eq >= self.RAISE + extra and spot.legal.min_raise_to is not None:
            if sit.spr <= 2 or sit.to_call >= 0.35 * sit.stack:
                return spot.shove()
            return spot.sized(0.75)
        implied = 0.05 if drawing else 0.0
        return spot.call() if eq + implied >= spot.pot_odds + self.CALL else spot.fold()

    # ------------------------------------------------------------------ draw

    def _draw_models(self, spot: Spot, order: tuple[int, ...], seat: int) -> _Mix:
        """Before the draw: the seat's range as a mixture of how its hands play the draw."""
        return _ladder(_step(self.spec(spot, order, seat).width, 0.01))

    def _draw_first(self, spot: Spot, order: tuple[int, ...]) -> Decision:
        sit = spot.sit
        hand = spot.hand()
        rank = draw_rank(hand)
        if not spot.facing:
            behind = spot.behind
            if rank >= 4 or (rank >= 3 and behind >= 1):
                return spot.raise_()
            if rank >= 2 and (behind <= 1 or (behind <= 2 and hand.pair_rank >= 7)):
                return spot.raise_()
            if behind == 0 and (rank == 1 or max(c >> 2 for c in sit.hole) == 12):
                return spot.raise_()
            return spot.fold()
        acts = sit.on(Street.FIRST_BET)
        voluntary = {a.seat for a in acts if a.kind in ("bet", "call") and a.seat != sit.seat}
        in_pot = [o.seat for o in sit.opponents if o.seat in voluntary]
        pending = sum(1 for o in sit.opponents if o.seat not in voluntary)
        if not in_pot:
            in_pot = [o.seat for o in sit.opponents][:1]
        mixes = [self._draw_models(spot, order, s) for s in in_pot]
        eq = _draw_eq(spot, keep_for(sit.hole), mixes)
        fair = 1.0 / (len(in_pot) + 1)
        if eq >= fair + 0.17:
            return spot.raise_()
        return spot.call() if eq >= spot.pot_odds + 0.03 + 0.02 * pending else spot.fold()

    def _draw_second(self, spot: Spot, order: tuple[int, ...]) -> Decision:
        sit = spot.sit
        mixes = [self._after_draw(spot, order, o.seat) for o in sit.opponents]
        eq = _draw_eq(spot, sit.hole, mixes)
        extra = 0.08 * (sit.opponent_count - 1)
        if not spot.facing:
            return spot.raise_() if eq >= 0.58 + extra else spot.fold()
        if eq >= 0.78 + extra:
            return spot.raise_()
        return spot.call() if eq >= spot.pot_odds else spot.fold()

    def _after_draw(self, spot: Spot, order: tuple[int, ...], seat: int) -> _Mix:
        stats = spot.stats(seat)
        drew = min(3, spot.sit.draws.get(seat, 3))
        odd = _clamp(stats.odd_draw_rate(0.1, 5), 0.0, 0.9)
        width = self.spec(spot, order, seat).width
        mix: list[tuple[float, DrawOpponent]]
        if drew == 0:
            mix = [(1 - odd, DrawOpponent(0, H.STRAIGHT)), (odd, DrawOpponent(0))]
        elif drew == 1:
            pairs = 0.55 if width < 0.25 else 0.35
            mix = [(pairs, DrawOpponent(1, H.TWO_PAIR)), (1 - pairs, DrawOpponent(1))]
        elif drew == 2:
            mix = [(1 - odd, DrawOpponent(2, H.THREE_OF_A_KIND)), (odd, DrawOpponent(2, H.PAIR))]
        else:
            mix = [(1 - odd, DrawOpponent(3, H.PAIR)), (odd, DrawOpponent(3))]
        bet = any(a.kind == "bet" and a.seat == seat for a in spot.sit.on(Street.SECOND_BET))
        if bet:
            strong = 0.6 * (1 - stats.bluff_rate(0.3, 5))
            mix = [(strong, DrawOpponent(0, H.TWO_PAIR)), *((w * (1 - strong), m) for w, m in mix)]
        return tuple((w, m) for w, m in mix if w > 0.001)


_Mix = tuple[tuple[float, DrawOpponent], ...]


def _first(spot: Spot) -> Street:
    return Street.PREFLOP if spot.variant == Variant.NLHE else Street.FIRST_BET


def _clamp(x: float, lo: float, hi: float) -> float:
    return max(lo, min(hi, x))


def _step(x: float, unit: float = 0.05) -> float:
    """Round to ``unit`` so the cached ranges are shared between nearby reads."""
    return round(round(x / unit) * unit, 4)


def _opens(behind: int, tight: float, loose: float) -> float:
    return loose + (tight - loose) * min(1.0, (max(1, behind) - 1) / 4)


@cache
def _range(spec: Spec) -> Range:
    width = _step(spec.width, 0.01) or 0.01
    base = top_percent(min(100.0, width * 100))
    top = _step(spec.top, 0.01)
    if top <= 0 or spec.top_weight >= 1:
        return base
    best = set(top_percent(top * 100).combos)
    return Range((c, spec.top_weight if c in best else 1.0) for c in base.combos)


@lru_cache(maxsize=4096)
def _line_range(
    spec: Spec, style: Looseness, steps: tuple[tuple[tuple[Card, ...], str], ...]
) -> Range:
    if not steps:
        return _range(spec)
    board, kind = steps[-1]
    prior = dict(_line_range(spec, style, steps[:-1]).items())
    blocked = set(board)
    combos = [c for c in prior if c[0] not in blocked and c[1] not in blocked]
    if not combos:
        return _range(spec)
    values = evaluate_many([(a, b, *board) for a, b in combos])
    ranked = sorted(range(len(combos)), key=lambda i: values[i])
    strength = [0.0] * len(combos)
    for r, i in enumerate(ranked):
        strength[i] = r / max(1, len(combos) - 1)
    suits = [0, 0, 0, 0]
    mask = 0
    for c in board:
        suits[c & 3] += 1
        mask |= 1 << (c >> 2)
    out: dict[tuple[Card, Card], float] = {}
    for i, combo in enumerate(combos):
        s = strength[i]
        if len(board) < 5 and _drawing(combo, suits, mask):
            s = max(s, 0.6)
        if kind == "bet":
            f = style.bet_floor + (1 - style.bet_floor) * s * s
        elif kind == "cbet":
            f = style.cbet_floor + (1 - style.cbet_floor) * s * s
        elif kind == "call":
            f = style.call_floor + (1 - style.call_floor) * s
        else:
            f = 1.0 - style.check_trim * s**3
        w = prior[combo] * f
        if w > 1e-4:
            out[combo] = w
    return Range(out) if out else _range(spec)


_OPEN_ENDED = tuple(0xF << low for low in range(1, 9))


def _drawing(combo: tuple[Card, Card], suits: list[int], board_mask: int) -> bool:
    """A flush draw or an open-ended straight draw using a hole card."""
    a, b = combo
    same = (a & 3) == (b & 3)
    if suits[a & 3] + 1 + same == 4 or suits[b & 3] + 1 + same == 4:
        return True
    hole = 1 << (a >> 2) | 1 << (b >> 2)
    full = board_mask | hole
    return any(full & m == m and m & hole for m in _OPEN_ENDED)


@cache
def _ladder(width: float) -> _Mix:
    """The top ``width`` of five-card hands as a mixture of draw models."""
    out: list[tuple[float, DrawOpponent]] = []
    left = max(0.01, min(1.0, width))
    for share, model in _DRAW_LADDER:
        take = min(left, share)
        if take > 0:
            out.append((take, model))
        left -= take
        if left <= 1e-9:
            break
    total = sum(w for w, _ in out)
    return tuple((w / total, m) for w, m in out)


def _draw_eq(spot: Spot, keep: Sequence[Card], mixes: Sequence[_Mix]) -> float:
    """Equity against one mixture per opponent: the likeliest joint reads, weighted."""
    joint: list[tuple[float, list[DrawOpponent]]] = [(1.0, [])]
    for mix in mixes[:5]:
        joint = [(w * mw, [*ms, m]) for w, ms in joint for mw, m in mix]
        joint.sort(key=lambda x: -x[0])
        joint = joint[:6]
    seed = spot.seed()
    total = value = 0.0
    for w, opps in joint:
        n = max(100, int(SAMPLES * w))
        value += w * draw_equity(spot.sit.hole, keep, (), opps, n, seed).equity
        total += w
    return value / total if total else 0.0
