"""The prober: prices every bet by how often the players facing it have folded before.

Where a fixed player bets a hand because the hand is good, the prober bets when the
bet is worth more than the check, and works that out from the public record: the
chance everyone folds (each seat's fold rate to first-round raises, to later bets,
to bets heads-up), its share of the pot when it is called (its equity with the
folding hands, the weakest, taken out), and the size. So it bluffs and steals more
against players who fold too much, bets thinner for value against players who call
too much, and calls lighter against players whose shown bets were often weak. With
no record every rate sits at an ordinary player's prior and it plays a solid,
fairly tight game.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from math import prod
from typing import ClassVar

from felt.core.cards import Card
from felt.core.evaluator import evaluate_many
from felt.core.rules.config import Variant
from felt.core.rules.events import Street
from felt.players.bots.base import Decision
from felt.players.bots.holdem import draws
from felt.players.equity import Range
from felt_styles.reading import Spot, draw_rank, keep_for, opens, rough_range
from felt_styles.style import Style

# Bet sizes (fractions of the pot) the prober compares after the flop.
SIZES = (0.33, 0.66, 1.0)
# How much of its equity a hand keeps when it checks (position realises more).
REALISE_IP = 0.95
REALISE_OOP = 0.85
# How surely a folded hand was beaten: its cards to come make a fold cost less earlier.
SHARP = {Street.FLOP: 0.6, Street.TURN: 0.75, Street.RIVER: 1.0}
# Street margins a call needs over the price against a bettor with an ordinary record.
CALL_MARGIN = {Street.FLOP: 0.04, Street.TURN: 0.06, Street.RIVER: 0.08}


@lru_cache(maxsize=4096)
def _tiered(
    base: Range | None, board: tuple[Card, ...], dead: tuple[Card, ...], weak: float
) -> Range:
    """``base`` with its weakest 60% on ``board`` (by hand value; before the river a flush
    or open-ended draw counts with the strong) carrying ``weak`` of the weight and its
    strongest 40% the rest: a bettor whose bets are weak that often."""
    blocked = set(board) | set(dead)
    items = [
        (c, w)
        for c, w in (base.items() if base is not None else _ANY.items())
        if c[0] not in blocked and c[1] not in blocked
    ]
    if len(items) < 4:
        return base if base is not None else _ANY
    values = evaluate_many([(a, b, *board) for (a, b), _ in items])
    order = sorted(range(len(items)), key=lambda i: values[i])
    cut = int(0.6 * len(items))
    strong = set(order[cut:])
    if len(board) < 5:
        strong |= {i for i, (c, _) in enumerate(items) if draws(c, board).strong}
    mass_strong = sum(items[i][1] for i in strong) or 1.0
    mass_weak = sum(w for i, (_, w) in enumerate(items) if i not in strong) or 1.0
    return Range(
        (c, w * ((1 - weak) / mass_strong if i in strong else weak / mass_weak))
        for i, (c, w) in enumerate(items)
    )


_ANY = Range.any_two()


class Prober(Style):
    """An exploiter of fold, bet and bluff frequencies, derived from a bet's value.

    Fold rates (``SeatStats``): first round ``steal_fold_rate`` (prior 0.5), later
    rounds ``fold_rate`` multiway and ``hu_fold_rate`` heads-up (prior 0.4); bluffs:
    ``bluff_rate`` of shown bets (prior 0.3); aggression (how often it bets when it
    can) ``aggression`` (prior 0.3).

    Hold'em preflop: opens 16% of hands with a full table behind up to 45% with one
    behind (62% on the heads-up button), 2.5 to 3 big blinds, widened or narrowed by
    0.8 (late) or 0.5 (early) times how far the players still to act fold to raises
    above or below half the time (6% to 90%). It isolates limpers with 70% of that
    range, 3-bets the top 4% (8% heads-up) and bluff-3-bets the 15% of hands just
    outside its calls with probability 1.6 x (opener's fold rate - 0.4), calls a raise
    with the top 10% to 22% by position (60% in the heads-up big blind; at most 12 big
    blinds to call). Facing a 3-bet it 4-bets
    the top 2.5% (5% heads-up) and calls with the top 7% (22% heads-up) plus 0.3 x
    the 3-bettor's PFR over 25% (at most 35%), 4-bet bluffing the next 12% with
    probability 0.8 x (its fold rate - 0.55); it calls all-ins with the top 4% (8%
    heads-up) or a quarter of the shover's PFR.

    After the flop, with ``eq`` its equity against preflop ranges and ``f`` the chance
    all opponents fold (their fold rates multiplied, scaled by size by 0.75 + 0.35 x
    size; a player with aggression ``a`` over 0.3 who checked this round folds
    ``1 + (a - 0.3)`` times as often, at most 1.5), a bet of ``s`` pots is worth
    ``f + (1 - f) (e (1 + 2s) - s)``, where ``e``, its equity when called, is what
    remains of ``eq`` once the folding hands (the weakest of the range) are taken out;
    those hands had equity ``eq + k (1 - eq)`` against it, with ``k`` 0.6 on the flop,
    0.75 on the turn and 1 on the river (a folded river hand was simply beaten: so a
    river value bet needs callers, and against players who call everything it bets
    far thinner). Checking is worth ``eq`` times 0.95 in position (1 on the river) and
    0.85 out of it. It bets the best of a third, two thirds and a pot when that beats
    the check by 2% of the pot, except that out of position it checks strong hands
    (equity over 0.75) on the flop and turn to check-raise, as often as the opponent
    bets. Facing a bet it reads the bettor's range as its preflop range with the
    bettor's shown-bet bluff rate (``bluff_rate``) of the weight on the weakest 60% of
    those holdings on this board and the rest on the strongest 40% (and strong draws
    before the river), so it calls down far lighter against players whose bets were
    often weak; it calls when its equity against that beats the price by a street
    margin (4, 6, 8 points) minus 0.15 x (the bettor's aggression - 0.3), plus 3
    points per extra opponent (4 more points of equity with a strong draw); raises
    equity over 0.8 (check-raises over 0.72); and bluff-raises heads-up flops and turns
    against a bettor who folds to bets over half the time, with strong draws and
    1.2 x (fold rate - 0.45) of the rest.

    Draw: opens two pair or jacks or better with three or more behind, nines or better
    with one or two, any pair last; with one or two behind (or last) it also opens
    draws and king high when those behind fold to raises over 55% of the time
    together, and some of its air above that. It raises two pair or better, calls
    with jacks or better (any pair against an opener who opens over 35%), calls draws
    at a price under a quarter, re-steals draws from openers who fold. Having raised
    with nothing heads-up against a player who folds to bets, it stands pat as a
    bluff. After the draw it bets by the same bet-versus-check value (the fixed bet)
    and calls by the same margins, less 3 points and less 0.4 x (the bettor's bluff
    rate - 0.3).
    """

    name = "prober"
    # Facing a re-raise: (4-bet share, call share) at a full table and heads-up.
    VS_3BET = (0.025, 0.07)
    VS_3BET_HU = (0.05, 0.22)
    SHARP: ClassVar[dict[Street, float]] = SHARP
    CALL_MARGIN: ClassVar[dict[Street, float]] = CALL_MARGIN
    BET_TIERS = True
    # Calling a single raise heads-up, in the big blind, in position, out of position.
    CALLS = (0.60, 0.22, 0.16, 0.10)

    # ------------------------------------------------------------------ the record

    @staticmethod
    def first_fold(spot: Spot, seat: int) -> float:
        return spot.stats(seat).steal_fold_rate(0.5, 8)

    @staticmethod
    def later_fold(spot: Spot, seat: int, heads_up: bool) -> float:
        s = spot.stats(seat)
        return s.hu_fold_rate(0.4, 10) if heads_up else s.fold_rate(0.4, 10)

    def all_fold(self, spot: Spot, seats: Iterable[int]) -> float:
        """The chance every one of ``seats`` folds to a bet now.

        A check from a player who bets most of the times it can (high aggression) is
        read as weakness: its fold rate rises by up to half as much again. A passive
        player's check says little."""
        checked = {a.seat for a in spot.sit.on(spot.street) if a.kind == "check"}
        chances = []
        for s in seats:
            f = self.later_fold(spot, s, spot.heads_up)
            if s in checked:
                bets = spot.stats(s).aggression(0.3, 15)
                f *= 1 + max(0.0, min(0.5, bets - 0.3))
            chances.append(min(0.95, f))
        return prod(chances)

    def bettor_range(self, spot: Spot, seat: int) -> Range:
        """A Hold'em bettor's range: its preflop range, split so that its shown bets'
        weak share (``bluff_rate``) of the weight sits on its weakest 60% of holdings."""
        weak = max(0.05, min(0.8, spot.stats(seat).bluff_rate(0.3, 5)))
        return _tiered(rough_range(spot, seat), spot.sit.board, spot.sit.hole, round(weak, 2))

    @classmethod
    def call_margin(cls, spot: Spot, bettor: int | None) -> float:
        margin = cls.CALL_MARGIN.get(spot.street, 0.04)
        if bettor is not None:
            stats = spot.stats(bettor)
            if not cls.BET_TIERS or spot.variant != Variant.NLHE:
                margin -= 0.4 * (stats.bluff_rate(0.3, 5) - 0.3)
            margin -= 0.15 * (stats.aggression(0.3, 15) - 0.3)
        margin += 0.03 * (spot.sit.opponent_count - 1)
        return max(-0.1, min(0.2, margin))

    @staticmethod
    def bet_value(eq: float, folds: float, size: float, sharp: float = 1.0) -> float:
        """A bet of ``size`` pots into a pot of one: what it wins on average.

        ``folds`` is the chance everyone folds to a two-thirds-pot bet (scaled by size).
        The folding hands are the weakest: the equity they had against this hand is
        ``eq + sharp (1 - eq)``, capped at what the whole range allows, with ``sharp`` 1
        on the last round (a folded hand was simply beaten) and lower before it (a
        folded hand still had cards to come); what is left is the equity when called.
        """
        f = min(0.95, folds * (0.75 + 0.35 * size))
        e_fold = min(1.0, eq + sharp * (1 - eq), eq / f if f > 0 else 1.0)
        e_call = max(0.0, min(1.0, (eq - f * e_fold) / (1 - f)))
        return f + (1 - f) * (e_call * (1 + 2 * size) - size)

    # ------------------------------------------------------------------ hold'em

    def preflop(self, spot: Spot) -> Decision:
        sit, rng = spot.sit, spot.rng
        pct = spot.percentile()
        bb = sit.unit
        hu_table = sit.dealt <= 2
        acts = sit.on(Street.PREFLOP)
        acted = {a.seat for a in acts}
        waiting = [o.seat for o in sit.opponents if o.seat not in acted and not o.all_in]
        if spot.raises == 0:
            limpers = [a.seat for a in acts if a.kind == "call"]
            if sit.to_call == 0:
                return spot.to((4 + len(limpers)) * bb) if pct <= 0.10 else spot.fold()
            share = 0.62 if hu_table else opens(spot, 0.16, 0.45)
            field = waiting + limpers
            if field:
                mean = sum(self.first_fold(spot, s) for s in field) / len(field)
                weight = 0.8 if len(field) <= 2 else 0.5
                share += weight * (mean - 0.5)
            if limpers:
                share *= 0.7
            share = max(0.06, min(0.9, share))
            if pct <= share:
                return spot.to(((2.5 if hu_table else 3.0) + 1.5 * len(limpers)) * bb)
            return spot.fold()
        raiser = sit.last_aggressor(Street.PREFLOP)
        r_stats = spot.stats(raiser) if raiser is not None else None
        if sit.to_call >= 0.3 * sit.stack:
            pfr = r_stats.pfr_rate(0.2, 10) if r_stats else 0.2
            top = max(0.04 if not hu_table else 0.08, 0.25 * pfr)
            return spot.call() if pct <= top else spot.fold()
        opener_folds = self.first_fold(spot, raiser) if raiser is not None else 0.5
        if spot.raises == 1:
            limped = any(a.seat == sit.seat for a in acts)
            big_blind = not waiting and not limped and sit.bet == bb
            if hu_table:
                call = self.CALLS[0]
            elif big_blind:
                call = self.CALLS[1]
            elif sit.in_position:
                call = self.CALLS[2]
            else:
                call = self.CALLS[3]
            value = 0.08 if hu_table else 0.04
            bluff = max(0.0, min(0.6, 1.6 * (opener_folds - 0.4)))
            if pct <= value or (call < pct <= call + 0.15 and rng.random() < bluff):
                return self._reraise(spot, 3.0 if sit.in_position else 3.6)
            if pct <= call and sit.to_call <= 12 * bb:
                return spot.call()
            return spot.fold()
        # Facing a re-raise: continue wider against players who raise often (and far
        # wider heads-up, where re-raises are light), so it cannot be pushed off its opens.
        pfr = r_stats.pfr_rate(0.2, 10) if r_stats else 0.2
        four_bet, call = self.VS_3BET_HU if hu_table else self.VS_3BET
        call = min(0.35, call + 0.3 * max(0.0, pfr - 0.25))
        if pct <= four_bet:
            return self._reraise(spot, 2.4)
        if call < pct <= call + 0.12 and rng.random() < max(0.0, 0.8 * (opener_folds - 0.55)):
            return self._reraise(spot, 2.4)
        if pct <= call and sit.to_call <= 0.35 * (sit.stack + sit.bet):
            return spot.call()
        return spot.fold()

    @staticmethod
    def _reraise(spot: Spot, times: float) -> Decision:
        sit = spot.sit
        target = times * spot.current
        if target >= 0.33 * (sit.stack + sit.bet):
            return spot.shove()
        return spot.to(target)

    def postflop(self, spot: Spot) -> Decision:
        sit, rng = spot.sit, spot.rng
        eq = spot.equity()
        seats = [o.seat for o in sit.opponents]
        drawing = sit.street != Street.RIVER and spot.draws().strong
        if not spot.facing:
            if not sit.in_position and eq > 0.75 and spot.heads_up:
                bets = spot.stats(seats[0]).aggression(0.3, 15)
                if sit.street != Street.RIVER and rng.random() < bets:
                    return spot.fold()  # check, to raise the bet it expects
            return self._bet_or_check(spot, eq, self.all_fold(spot, seats))
        bettor = sit.last_aggressor(sit.street)
        if self.BET_TIERS and bettor is not None:
            ranges = [
                self.bettor_range(spot, o.seat) if o.seat == bettor else rough_range(spot, o.seat)
                for o in sit.opponents
            ]
            eq = spot.equity(ranges)
        margin = self.call_margin(spot, bettor)
        extra = 0.05 * (sit.opponent_count - 1)
        can_raise = spot.legal.min_raise_to is not None
        if can_raise and (eq > 0.8 + extra or (spot.i_checked() and eq > 0.72 + extra)):
            return spot.sized(0.9 if not spot.i_checked() else 1.0)
        implied = 0.04 if drawing else 0.0
        if eq + implied >= spot.pot_odds + margin:
            return spot.call()
        if (
            can_raise
            and spot.heads_up
            and bettor is not None
            and sit.street != Street.RIVER
            and spot.raises == 1
        ):
            folds = self.later_fold(spot, bettor, True)
            bluff = rng.random() < max(0.0, min(0.5, 1.2 * (folds - 0.45)))
            if folds > 0.5 and (drawing or bluff):
                return spot.sized(1.0)
        return spot.fold()

    def _bet_or_check(self, spot: Spot, eq: float, folds: float) -> Decision:
        sit = spot.sit
        last = sit.street == Street.RIVER
        check = eq * (REALISE_IP if sit.in_position else REALISE_OOP)
        if last and sit.in_position:
            check = eq  # checking behind on the river is a showdown
        sharp = self.SHARP.get(sit.street, 1.0)
        best, size = max((self.bet_value(eq, folds, s, sharp), s) for s in SIZES)
        if best > check + 0.02:
            return spot.sized(size)
        return spot.fold()

    # ------------------------------------------------------------------ draw

    def draw(self, spot: Spot) -> Decision:
        if spot.first_round:
            return self._draw_first(spot)
        sit = spot.sit
        eq = spot.equity()
        seats = [o.seat for o in sit.opponents]
        if not spot.facing:
            folds = self.all_fold(spot, seats)
            size = sit.unit / max(1, sit.pot)
            check = eq * (1.0 if sit.in_position else 0.9)
            value = self.bet_value(eq, folds, size, 1.0)
            return spot.raise_() if value > check + 0.01 else spot.fold()
        bettor = sit.last_aggressor(sit.street)
        margin = self.call_margin(spot, bettor) - 0.03
        if eq > 0.78 + 0.05 * (sit.opponent_count - 1):
            return spot.raise_()
        return spot.call() if eq >= spot.pot_odds + margin else spot.fold()

    def _draw_first(self, spot: Spot) -> Decision:
        sit, rng = spot.sit, spot.rng
        hand = spot.hand()
        rank = draw_rank(hand)
        high = max(c >> 2 for c in sit.hole)
        acts = sit.on(Street.FIRST_BET)
        acted = {a.seat for a in acts}
        if not spot.facing:
            behind = spot.behind
            if rank >= 4 or (rank >= 3 and behind >= 1):
                return spot.raise_()
            if rank >= 2 and (behind == 0 or (behind <= 2 and hand.pair_rank >= 7)):
                return spot.raise_()
            if behind <= 2:
                field = [o.seat for o in sit.opponents if o.seat not in acted] or [
                    o.seat for o in sit.opponents
                ]
                folds = prod(self.first_fold(spot, s) for s in field)
                if (rank >= 1 or high >= 11) and folds >= 0.55:
                    return spot.raise_()
                if rng.random() < max(0.0, min(0.7, 2 * (folds - 0.55))):
                    return spot.raise_()
            return spot.fold()
        raiser = sit.last_aggressor(Street.FIRST_BET)
        if rank >= 5 or (rank >= 4 and spot.raises == 1):
            return spot.raise_()
        if rank == 4:
            return spot.call()
        wide = False
        opener_folds = 0.5
        if raiser is not None:
            stats = spot.stats(raiser)
            wide = stats.open_rate(True, 0.3) > 0.35 or stats.pfr_rate(0.2, 10) > 0.35
            opener_folds = self.first_fold(spot, raiser)
        if rank >= 3 or (rank == 2 and (wide or (spot.heads_up and hand.pair_rank >= 5))):
            return spot.call()
        if rank == 1 and spot.raises == 1:
            if spot.heads_up and rng.random() < max(0.0, min(0.5, 1.5 * (opener_folds - 0.5))):
                return spot.raise_()
            if spot.pot_odds <= 0.25 or sit.opponent_count >= 2:
                return spot.call()
        return spot.fold()

    def discard(self, spot: Spot) -> Decision:
        sit = spot.sit
        raised = sit.bets_on(Street.FIRST_BET, sit.seat) > 0
        if raised and spot.heads_up and draw_rank(spot.hand()) == 0:
            folds = self.later_fold(spot, sit.opponents[0].seat, True)
            if spot.rng.random() < max(0.0, min(0.6, 1.5 * (folds - 0.45))):
                return spot.keep(sit.hole)
        return spot.keep(keep_for(sit.hole))
