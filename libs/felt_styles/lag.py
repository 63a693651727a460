"""The loose-aggressive regular: plays many hands and makes the others decide for their stack."""

from __future__ import annotations

from typing import ClassVar

from felt.core.rules.events import Street
from felt.players.bots.base import Decision
from felt_styles.reading import Spot, draw_rank, keep_for
from felt_styles.style import Chart, Style


class LooseAggressive(Style):
    """Wide opens, frequent 3-bets, c-bets about 75%, double and triple barrels, overbets
    and check-raises; in Draw it raises with draws and stands pat as a bluff.

    Hold'em preflop (:class:`Chart`): opens 30% of hands with a full table behind up to
    70% on the button, 2.5 big blinds; 3-bets the top 10% plus 35% of the next 15% as
    bluffs; calls a raise with the top 50%; 4-bets the top 4%.

    After the flop, with ``equity`` its Monte Carlo equity against the opponents'
    preflop ranges:

    - with the initiative it c-bets ``CBET`` (75%) of flops (always with equity over
      0.55), two thirds of the pot; barrels the turn with equity over 0.6, a strong
      draw, or 55% of the rest; fires the river with equity over 0.65 or, as a bluff,
      40% of its weakest hands (equity under 0.35); a third of its turn and river
      value bets, and a tenth of its bluffs, are overbets of 1.3 to 1.5 pots;
    - without it, it stabs 45% of checked-to pots in position and checks its strong
      hands and draws out of position to check-raise them (plus 10% bluff raises);
    - facing a bet it raises equity over 0.8, calls whenever its equity is within 3
      points of the price (or with a strong draw at a price under 35%), and floats a
      half-pot bet in position a quarter of the time.

    Draw: opens any pair, any four-card draw, ace or king high in late position, and a
    fifth of the rest; re-raises jacks or better and half its draws; calls with any
    pair or draw. Having raised the first round with nothing heads-up, it stands pat a
    third of the time and bets after the draw as if it held a made hand.
    """

    name = "lag"
    CBET = 0.75
    CHART: ClassVar[Chart | None] = Chart(
        open_tight=0.30,
        open_loose=0.70,
        open_size=2.5,
        call=0.50,
        three_bet=0.10,
        bluff_3bet=0.35,
        four_bet=0.04,
        call_3bet=0.18,
    )

    def postflop(self, spot: Spot) -> Decision:
        sit, rng = spot.sit, spot.rng
        eq = spot.equity()
        strong_draw = sit.street != Street.RIVER and spot.draws().strong
        if not spot.facing:
            if spot.was_aggressor() or (sit.street != Street.FLOP and spot.barrels()):
                return self._barrel(spot, eq, strong_draw)
            if sit.in_position:
                return spot.sized(0.6) if eq > 0.5 or rng.random() < 0.45 else spot.fold()
            if eq > 0.75 or strong_draw:
                return spot.fold()  # check, to raise a bet
            return spot.sized(0.6) if eq > 0.62 else spot.fold()
        if spot.i_checked() and (eq > 0.72 or strong_draw or rng.random() < 0.10):
            return spot.sized(1.0)
        if eq > 0.8:
            return spot.sized(0.9)
        if eq > spot.pot_odds - 0.03 or (strong_draw and spot.pot_odds < 0.35):
            return spot.call()
        if (
            sit.in_position
            and sit.street != Street.RIVER
            and sit.to_call <= 0.5 * sit.pot
            and rng.random() < 0.25
        ):
            return spot.call()
        return spot.fold()

    def _barrel(self, spot: Spot, eq: float, strong_draw: bool) -> Decision:
        street, rng = spot.street, spot.rng
        if street == Street.FLOP:
            fire = eq > 0.55 or rng.random() < self.CBET
            return spot.sized(0.66) if fire else spot.fold()
        if street == Street.TURN:
            value = eq > 0.6
            if value or strong_draw or rng.random() < 0.55:
                big = rng.random() < (0.33 if value else 0.10)
                return spot.sized(1.3 if big else 0.75)
            return spot.fold()
        if eq > 0.65:
            return spot.sized(1.5 if rng.random() < 0.33 else 0.8)
        if eq < 0.35 and rng.random() < 0.40:
            return spot.sized(1.5 if rng.random() < 0.10 else 0.8)
        return spot.fold()

    def draw(self, spot: Spot) -> Decision:
        sit, rng = spot.sit, spot.rng
        if spot.first_round:
            rank = draw_rank(spot.hand())
            high = max(c >> 2 for c in sit.hole)
            if not spot.facing:
                late = spot.behind <= 1 and high >= 11
                return spot.raise_() if rank >= 1 or late or rng.random() < 0.2 else spot.fold()
            if rank >= 4 or (rank >= 3 and spot.raises == 1):
                return spot.raise_()
            if rank == 1 and spot.raises == 1 and rng.random() < 0.5:
                return spot.raise_()
            if rank >= 1 or (spot.heads_up and high == 12 and spot.raises == 1):
                return spot.call()
            return spot.fold()
        eq = spot.equity()
        pat_bluff = sit.draws.get(sit.seat) == 0 and spot.hand().category < 4
        if not spot.facing:
            if eq > 0.55 or pat_bluff or (spot.was_aggressor() and rng.random() < 0.45):
                return spot.raise_()
            return spot.fold()
        if eq > 0.75 or (pat_bluff and rng.random() < 0.3):
            return spot.raise_()
        return spot.call() if eq > spot.pot_odds else spot.fold()

    def discard(self, spot: Spot) -> Decision:
        sit = spot.sit
        raised = sit.bets_on(Street.FIRST_BET, sit.seat) > 0
        if raised and spot.heads_up and draw_rank(spot.hand()) == 0 and spot.rng.random() < 0.33:
            return spot.keep(sit.hole)
        return spot.keep(keep_for(sit.hole))
