"""The calling station that bets its good hands: sticky, passive, but never gives value away."""

from __future__ import annotations

from felt.players.bots.base import Decision
from felt.players.bots.holdem import Made, made_hand
from felt_styles.reading import Spot, draw_rank
from felt_styles.style import Style


class ValueStation(Style):
    """Calls far too much and never bluffs, but bets and raises its strong hands.

    Hold'em preflop: limps or calls with the top ``LOOSE`` (85%) of hands while the
    price is at most 15 big blinds (above that, the top 12%), raises the top 4% to three
    times the bet. After the flop it bets half to two thirds of the pot with equity
    over ``VALUE`` (0.68, two thirds of the pot over 0.8), raises equity over 0.85,
    and calls any pair, any draw, or any price its equity covers at half weight (a bet
    bigger than the pot needs four fifths of the price).

    Draw: calls the first round with any pair, a four-card draw or ace high; bets two
    pair or better and raises trips or better; after the draw it bets equity over 0.65,
    raises over 0.85 and calls down with any pair.
    """

    name = "value_station"
    LOOSE = 0.85
    VALUE = 0.68

    def preflop(self, spot: Spot) -> Decision:
        sit = spot.sit
        pct = spot.percentile()
        if pct <= 0.04:
            return spot.to(3 * max(spot.current, sit.unit))
        if sit.to_call <= 15 * sit.unit:
            return spot.call() if pct <= self.LOOSE else spot.fold()
        return spot.call() if pct <= 0.12 else spot.fold()

    def postflop(self, spot: Spot) -> Decision:
        sit = spot.sit
        eq = spot.equity()
        if not spot.facing:
            if eq > self.VALUE:
                return spot.sized(0.66 if eq > 0.8 else 0.5)
            return spot.fold()
        if eq > 0.85:
            return spot.sized(0.8)
        big = sit.to_call > sit.pot - sit.to_call
        needed = spot.pot_odds * (0.8 if big else 0.5)
        paired = made_hand(sit.hole, sit.board) >= Made.WEAK_PAIR
        drawing = len(sit.board) < 5 and spot.draws().outs >= 8
        if eq > needed or ((paired or drawing) and not big):
            return spot.call()
        return spot.fold()

    def draw(self, spot: Spot) -> Decision:
        if spot.first_round:
            hand = spot.hand()
            rank = draw_rank(hand)
            if rank >= 5 or (rank >= 4 and not spot.facing):
                return spot.raise_()
            ace = max(c >> 2 for c in spot.sit.hole) == 12
            return spot.call() if rank >= 1 or ace else spot.fold()
        eq = spot.equity()
        if not spot.facing:
            return spot.raise_() if eq > 0.65 else spot.fold()
        if eq > 0.85:
            return spot.raise_()
        paired = spot.hand().category >= 1
        return spot.call() if paired or eq > spot.pot_odds else spot.fold()
