"""The overbettor: polarised, huge bets with its best hands and its bluffs, checks the middle."""

from __future__ import annotations

from typing import ClassVar

from felt.core.rules.events import Street
from felt.players.bots.base import Decision
from felt_styles.reading import Spot, draw_rank
from felt_styles.style import Chart, Style


class Overbettor(Style):
    """Bets ``SIZE`` (1.6) pots or nothing after the flop: with equity over ``VALUE``
    (0.7) every time, and as a bluff with equity under 0.25 at ``BLUFF`` (35% on the
    flop, 30% on the turn, 25% on the river); hands in the middle check and call when
    the price is right. Facing a bet it shoves equity over 0.85 and calls by pot odds.

    Preflop: opens 15% of hands with a full table behind up to 40% on the button, 3 big
    blinds; calls raises with 30%, 3-bets 5% (and some bluffs) to 4 times the raise.

    Draw is fixed limit, so there is no overbet: the same polarisation becomes capping
    the betting (raising every time it can) with two pair or better and with a quarter
    of its worst hands, and only calling with pairs and draws; after the draw it caps
    with equity over 0.7 and bluffs the same share of its misses.
    """

    name = "overbettor"
    SIZE = 1.6
    VALUE = 0.7
    BLUFF: ClassVar[dict[Street, float]] = {
        Street.FLOP: 0.35,
        Street.TURN: 0.30,
        Street.RIVER: 0.25,
    }
    CHART: ClassVar[Chart | None] = Chart(
        open_tight=0.15,
        open_loose=0.40,
        open_size=3.0,
        call=0.30,
        three_bet=0.05,
        bluff_3bet=0.2,
        four_bet=0.02,
        call_3bet=0.06,
        three_bet_size=4.0,
    )

    def postflop(self, spot: Spot) -> Decision:
        eq = spot.equity()
        if not spot.facing:
            bluff = eq < 0.25 and spot.rng.random() < self.BLUFF[spot.street]
            return spot.sized(self.SIZE, commit=0.6) if eq > self.VALUE or bluff else spot.fold()
        if eq > 0.85:
            return spot.shove()
        return spot.call() if eq > spot.pot_odds else spot.fold()

    def draw(self, spot: Spot) -> Decision:
        rng = spot.rng
        if spot.first_round:
            rank = draw_rank(spot.hand())
            if rank >= 4 or (rank == 0 and rng.random() < 0.25):
                return spot.raise_()
            if rank >= 1:
                return spot.call()
            return spot.fold()
        eq = spot.equity()
        if eq > self.VALUE or (eq < 0.25 and not spot.facing and rng.random() < 0.25):
            return spot.raise_()
        if spot.facing:
            return spot.call() if eq > spot.pot_odds else spot.fold()
        return spot.fold()
