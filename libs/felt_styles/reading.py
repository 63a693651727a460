"""What a style reads off its seat's view and the public record: one :class:`Spot` per decision.

Every style decides from the same public facts (``felt.players.bots.base.situation``: its own
cards, the board, the pot, the betting so far, how many cards each opponent drew) and
differs only in what it does with them. The helpers here turn those facts into the
numbers a player thinks in (where it sits, who raised, what its hand is worth against
a guessed range) and turn an intention ("bet three quarters of the pot", "raise")
into a legal command, so no style can play an illegal move.

Nothing here sees a hidden card: equities are Monte Carlo runs of ``felt.players.equity``
against ranges guessed from public actions, seeded from the style's injected RNG, so
a decision is a pure function of its inputs and that RNG.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from felt.core.rules.commands import Act
from felt.core.rules.config import Variant
from felt.core.rules.events import Event, Street
from felt.core.rules.legal import LegalActions
from felt.core.rules.views import HandView
from felt.core.table.stats import SeatStats
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
from felt.players.bots.drawhand import DrawHand, analyse, standard_keep
from felt.players.bots.holdem import Draws, draws, preflop_percentile
from felt.players.bots.opponents import EMPTY, TableStats
from felt.players.equity import DrawOpponent, Range, draw_equity, holdem_equity, top_percent

# Monte Carlo samples per equity estimate: enough to tell 55% from 65% (standard error
# about 2.5 points), cheap enough for thousands of hands a minute.
SAMPLES = 400
FIRST_ROUNDS = (Street.PREFLOP, Street.FIRST_BET)
POSTFLOP = (Street.FLOP, Street.TURN, Street.RIVER)


@dataclass(slots=True)
class Spot:
    """One decision: the public situation, the legal moves, the RNG and the table's record.

    ``behind`` is how many live players still act after this seat in the current
    round before the betting comes back (the first round's order: Hold'em starts
    left of the big blind, heads-up with the button; Draw left of the button).
    """

    sit: Situation
    legal: LegalActions
    rng: random.Random
    table: TableStats | None
    behind: int
    _equity: float | None = field(default=None, repr=False)

    # ----------------------------------------------------------------- facts

    @property
    def variant(self) -> Variant:
        return self.sit.variant

    @property
    def street(self) -> Street:
        return self.sit.street

    @property
    def first_round(self) -> bool:
        return self.sit.street in FIRST_ROUNDS

    @property
    def facing(self) -> bool:
        """Someone bet or raised and this seat owes chips."""
        return self.sit.to_call > 0

    @property
    def raises(self) -> int:
        """Bets and raises made in the current round (blinds are not bets)."""
        return self.sit.bets_on(self.sit.street)

    @property
    def heads_up(self) -> bool:
        return self.sit.opponent_count == 1

    @property
    def first_in(self) -> bool:
        """Nobody before this seat entered the first round (everyone folded or none acted)."""
        return all(a.kind == "fold" for a in self.sit.on(self.sit.street))

    @property
    def limpers(self) -> int:
        return sum(1 for a in self.sit.on(self.sit.street) if a.kind == "call")

    @property
    def current(self) -> int:
        """The round total this seat must match."""
        return self.sit.bet + self.sit.to_call

    def previous_street(self) -> Street | None:
        order = (
            (Street.PREFLOP, Street.FLOP, Street.TURN, Street.RIVER)
            if self.variant == Variant.NLHE
            else (Street.FIRST_BET, Street.SECOND_BET)
        )
        i = order.index(self.sit.street) if self.sit.street in order else 0
        return order[i - 1] if i > 0 else None

    def was_aggressor(self) -> bool:
        """This seat made the last bet or raise of the previous round (it has the initiative)."""
        prev = self.previous_street()
        return prev is not None and self.sit.last_aggressor(prev) == self.sit.seat

    def barrels(self) -> int:
        """Rounds after the first on which this seat already bet or raised."""
        return sum(
            1
            for street in POSTFLOP
            if street != self.sit.street and self.sit.bets_on(street, self.sit.seat)
        )

    def i_checked(self) -> bool:
        """This seat checked earlier in the current round (a check-raise is possible)."""
        return any(
            a.kind == "check" and a.seat == self.sit.seat for a in self.sit.on(self.sit.street)
        )

    def stats(self, seat: int) -> SeatStats:
        if self.table is None:
            return EMPTY
        return self.table.get(seat, EMPTY)

    @property
    def pot_odds(self) -> float:
        return self.sit.pot_odds

    # ----------------------------------------------------------------- hand values

    def percentile(self) -> float:
        """Hold'em starting hand: 0.005 for aces, 1.0 for the worst."""
        return preflop_percentile(self.sit.hole)

    def draws(self) -> Draws:
        return draws(self.sit.hole, self.sit.board)

    def hand(self) -> DrawHand:
        """Draw: what the five cards are and draw to."""
        return analyse(self.sit.hole)

    def seed(self) -> int:
        return self.rng.getrandbits(31)

    def equity(self, ranges: Sequence[Range | None] | None = None) -> float:
        """Showdown equity against every live opponent (cached per decision).

        Hold'em: against ``ranges`` (one per live opponent; default: the rough
        ranges of :func:`rough_range`). Draw before the draw: the textbook keep
        against opponents holding random hands who draw three; after it, against
        each opponent's draw count read the textbook way.
        """
        if self._equity is not None and ranges is None:
            return self._equity
        sit = self.sit
        if not sit.opponents:
            return 1.0
        if sit.variant == Variant.NLHE:
            opp = (
                list(ranges)
                if ranges is not None
                else [rough_range(self, o.seat) for o in sit.opponents]
            )
            value = holdem_equity(
                sit.hole, sit.board, opponents=opp[:8], samples=SAMPLES, seed=self.seed()
            ).equity
        elif sit.street == Street.FIRST_BET:
            value = draw_equity(
                sit.hole,
                standard_keep(sit.hole),
                opponent_draws=[DrawOpponent(3)] * min(len(sit.opponents), 5),
                samples=SAMPLES,
                seed=self.seed(),
            ).equity
        else:
            opps = [draw_read(self, o.seat) for o in sit.opponents]
            value = draw_equity(
                sit.hole, sit.hole, opponent_draws=opps[:5], samples=SAMPLES, seed=self.seed()
            ).equity
        if ranges is None:
            self._equity = value
        return value

    # ----------------------------------------------------------------- moves

    def fold(self) -> Act:
        """Check when free, fold otherwise."""
        return check_or_fold(self.legal)

    def call(self) -> Act:
        """Check or call."""
        return check_or_call(self.legal)

    def pot(self, fraction: float) -> Act:
        """Bet or raise ``fraction`` of the pot (Draw: the fixed bet or raise)."""
        if self.variant == Variant.DRAW5:
            return self.raise_()
        return pot_bet_to(self.sit, self.legal, fraction)

    def sized(self, fraction: float, commit: float = 0.45) -> Act:
        """Bet ``fraction`` of the pot, or all-in when that would put in more than
        ``commit`` of the chips behind (a bet that leaves a crumb is a shove)."""
        if self.variant == Variant.NLHE:
            sit = self.sit
            target = sit.bet + sit.to_call + fraction * (sit.pot + sit.to_call)
            if target - sit.bet >= commit * sit.stack:
                return self.shove()
        return self.pot(fraction)

    def to(self, total: float) -> Act:
        """Bet or raise to ``total`` chips this round (clamped to what is legal)."""
        return bet_to(self.legal, total)

    def raise_(self) -> Act:
        """The smallest legal bet or raise (Draw's fixed amount)."""
        if self.legal.min_raise_to is None:
            return check_or_call(self.legal)
        return bet_to(self.legal, self.legal.min_raise_to)

    def shove(self) -> Act:
        return all_in(self.legal)

    def defend(self, eq: float, raise_above: float, margin: float = 0.0, size: float = 0.9) -> Act:
        """Facing a bet: raise with equity over ``raise_above``, call when the equity beats
        the price by ``margin`` (negative: calls lighter), fold otherwise."""
        if eq > raise_above:
            return self.sized(size)
        if eq > self.pot_odds + margin:
            return self.call()
        return self.fold()

    def keep(self, cards: Sequence[int]) -> Decision:
        return discard(self.legal, self.sit.hole, cards)


def first_round_order(view: HandView) -> list[int]:
    """Seats in the order they act in the first betting round."""
    seats = [s.seat for s in view.seats]
    if view.variant == Variant.NLHE:
        if len(seats) == 2:
            return [seats[1], seats[0]]  # the button posts the small blind and acts first
        return seats[2:] + seats[:2]
    return seats


def read(
    view: HandView,
    history: Sequence[Event],
    legal: LegalActions,
    rng: random.Random,
    table: TableStats | None,
) -> Spot:
    """The :class:`Spot` of a decision (public facts only)."""
    sit = situation(view, history, legal)
    live = {s.seat for s in view.seats if not s.folded and not s.all_in}
    first = sit.street in FIRST_ROUNDS
    order = first_round_order(view) if first else [s.seat for s in view.seats]
    after = order[order.index(sit.seat) + 1 :] if sit.seat in order else []
    behind = sum(1 for s in after if s in live)
    return Spot(sit, legal, rng, table, behind)


def rough_range(spot: Spot, seat: int) -> Range | None:
    """A seat's Hold'em range from its first-round action alone (None: any two cards).

    A player who raised before the flop holds the top quarter of hands heads-up and the
    top sixth at a fuller table; one who called a raise, the top half; one who only
    checked or limped, anything.
    """
    preflop = spot.sit.on(Street.PREFLOP)
    raised = sum(1 for a in preflop if a.kind == "bet" and a.seat == seat)
    called = any(a.kind == "call" and a.seat == seat for a in preflop)
    wide = spot.sit.dealt <= 2
    if raised >= 2:
        return top_percent(8 if wide else 5)
    if raised == 1:
        return top_percent(30 if wide else 17)
    if called and any(a.kind == "bet" for a in preflop):
        return top_percent(50 if wide else 35)
    return None


def draw_read(spot: Spot, seat: int) -> DrawOpponent:
    """How a Draw opponent's draw is read: the textbook way (pat = a straight or better,
    three = a pair), unless the public record shows its shown hands often did not fit its
    draws (a player who stands pat or draws at random), then as any cards kept."""
    drawn = min(3, spot.sit.draws.get(seat, 3))
    if spot.stats(seat).odd_draw_rate(prior=0.1, weight=5) > 0.35:
        return DrawOpponent(drawn)
    return DrawOpponent.typical(drawn)


def opens(spot: Spot, tight: float, loose: float) -> float:
    """The share of hands to open-raise with: ``tight`` with a full table behind, ``loose``
    with one player behind (the button heads-up, or the small blind), linear between."""
    behind = max(1, spot.behind)
    return loose + (tight - loose) * min(1.0, (behind - 1) / 4)


def draw_rank(hand: DrawHand) -> int:
    """Draw hands on one scale: 0 nothing, 1 a four-card draw, 2 a pair below jacks,
    3 jacks to aces, 4 two pair, 5 trips, 6 a straight or better."""
    cat = int(hand.category)
    if cat >= 4:
        return 6
    if cat == 3:
        return 5
    if cat == 2:
        return 4
    if cat == 1:
        return 3 if hand.pair_rank >= 9 else 2
    return 1 if hand.flush_draw or hand.straight_draw else 0


def keep_for(hand: Sequence[int]) -> tuple[int, ...]:
    """The textbook keep (a pair draws three, two pair one, a four-flush one)."""
    return standard_keep(hand)
