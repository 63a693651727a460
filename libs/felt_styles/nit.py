"""The nit: plays a handful of hands, bets only what it is sure of, folds the rest."""

from __future__ import annotations

from typing import ClassVar

from felt.players.bots.base import Decision
from felt_styles.reading import Spot, draw_rank
from felt_styles.style import Chart, Style


class Nit(Style):
    """Opens 8% of hands with a full table behind and 30% on the button, 3 big blinds;
    calls a raise of any size with the top 8%, 3-bets 3%, 4-bets only aces and kings.
    After the flop it bets (two thirds of the pot) with equity over ``VALUE`` (0.65), never bluffs,
    raises equity over 0.85 and calls only when its equity beats the price by
    ``MARGIN`` (5 points).

    Draw: opens jacks or better, raises with two pair or better, calls with queens or
    better or two pair, never plays a draw; after the draw the same value, raise and
    margin rules as in Hold'em.
    """

    name = "nit"
    VALUE = 0.65
    MARGIN = 0.05
    CHART: ClassVar[Chart | None] = Chart(
        open_tight=0.08,
        open_loose=0.30,
        open_size=3.0,
        call=0.08,
        three_bet=0.03,
        bluff_3bet=0.0,
        four_bet=0.01,
        call_3bet=0.03,
        call_cap=100.0,
    )

    def postflop(self, spot: Spot) -> Decision:
        eq = spot.equity()
        if not spot.facing:
            return spot.sized(0.66) if eq > self.VALUE else spot.fold()
        return spot.defend(eq, 0.85, self.MARGIN)

    def draw(self, spot: Spot) -> Decision:
        if spot.first_round:
            hand = spot.hand()
            rank = draw_rank(hand)
            if rank >= 4:
                return spot.raise_()
            if not spot.facing:
                return spot.raise_() if rank >= 3 else spot.fold()
            return spot.call() if hand.pair_rank >= 10 else spot.fold()
        eq = spot.equity()
        if not spot.facing:
            return spot.raise_() if eq > self.VALUE else spot.fold()
        return spot.defend(eq, 0.85, self.MARGIN)
