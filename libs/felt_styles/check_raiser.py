"""The check-raiser: checks its strong hands and its bluffs out of position, then raises."""

from __future__ import annotations

from typing import ClassVar

from felt.core.rules.events import Street
from felt.players.bots.base import Decision
from felt_styles.reading import Spot, draw_rank
from felt_styles.style import Chart, Style


class CheckRaiser(Style):
    """Out of position it checks nearly everything (it leads only ``LEAD`` = 10% of its
    hands with equity over 0.6) and check-raises three times the bet with equity over
    ``TRAP`` (0.7), with strong draws before the river, and with ``BLUFF_RAISE`` (15%)
    of its weakest hands on the flop and turn; it calls the rest by pot odds. In
    position it plays straightforwardly: bets two thirds of the pot with equity over
    0.6, c-bets half its flops with the initiative, raises equity over 0.82.

    Preflop: opens 12% of hands with a full table behind up to 40% on the button, 2.5
    big blinds; calls raises with 35% (to play the flop out of position), 3-bets 6%.

    Draw: before the draw, with players still to act, it checks two pair or better and
    jacks or better to raise a bet (half the time with jacks); it bets any pair when
    last to act; after the draw it checks equity over 0.7 to raise, and check-raises a
    tenth of its misses as bluffs.
    """

    name = "check_raiser"
    LEAD = 0.10
    TRAP = 0.7
    BLUFF_RAISE = 0.15
    CHART: ClassVar[Chart | None] = Chart(
        open_tight=0.12,
        open_loose=0.40,
        open_size=2.5,
        call=0.35,
        three_bet=0.06,
        bluff_3bet=0.1,
        four_bet=0.025,
        call_3bet=0.08,
    )

    def postflop(self, spot: Spot) -> Decision:
        sit, rng = spot.sit, spot.rng
        eq = spot.equity()
        strong_draw = sit.street != Street.RIVER and spot.draws().strong
        if sit.in_position:
            if spot.facing:
                return spot.defend(eq, 0.82)
            if eq > 0.6 or (
                spot.was_aggressor() and sit.street == Street.FLOP and rng.random() < 0.5
            ):
                return spot.sized(0.66)
            return spot.fold()
        if not spot.facing:
            if eq > 0.6 and rng.random() < self.LEAD:
                return spot.sized(0.6)
            return spot.fold()
        if spot.i_checked():
            bluff = sit.street != Street.RIVER and eq < 0.3 and rng.random() < self.BLUFF_RAISE
            if eq > self.TRAP or strong_draw or bluff:
                return spot.sized(1.0)
        if eq > 0.9:
            return spot.sized(0.9)
        return self._call(spot, eq)

    @staticmethod
    def _call(spot: Spot, eq: float) -> Decision:
        return spot.call() if eq > spot.pot_odds else spot.fold()

    def draw(self, spot: Spot) -> Decision:
        rng = spot.rng
        if spot.first_round:
            rank = draw_rank(spot.hand())
            if not spot.facing:
                if spot.behind > 0 and (rank >= 4 or (rank == 3 and rng.random() < 0.5)):
                    return spot.fold()  # check, to raise a bet
                if rank >= 3 or (spot.behind == 0 and rank >= 2):
                    return spot.raise_()
                return spot.fold()
            if rank >= 4 or (rank == 3 and spot.i_checked()):
                return spot.raise_()
            return spot.call() if rank >= 2 or (rank == 1 and spot.pot_odds < 0.25) else spot.fold()
        eq = spot.equity()
        if not spot.facing:
            if spot.behind > 0 and eq > self.TRAP:
                return spot.fold()  # check, to raise
            return spot.raise_() if eq > 0.6 else spot.fold()
        if spot.i_checked() and (eq > self.TRAP or (eq < 0.25 and rng.random() < 0.1)):
            return spot.raise_()
        return self._call(spot, eq)
