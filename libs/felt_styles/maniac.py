"""The maniac: raises almost every hand and bets almost every street, sized like a bully."""

from __future__ import annotations

from typing import ClassVar

from felt.core.rules.events import Street
from felt.players.bots.base import Decision
from felt_styles.reading import Spot, draw_rank
from felt_styles.style import Chart, Style


class Maniac(Style):
    """Raises 85% of hands to 4 big blinds, re-raises any raise with 40% of hands, bets
    the pot on most streets and raises bets on a whim; it slows down only with its
    worst hands on the river and against a raise it cannot stand.

    Unlike the ladder's baseline maniac (``felt.players.bots.baseline.Maniac``, which never
    folds and always raises) this one weighs its cards: ``BET_FREQ`` (85%) of flop and
    turn bets regardless of equity, every bet with equity over 0.5, pot-sized (1.2 pots
    with equity over 0.75); river bluffs with only ``RIVER_BLUFF`` (45%) of its
    hands under 0.35 equity. Facing a bet it raises equity over 0.6 and 30% of hands
    over 0.3, calls when its equity is within a fifth of the price, and folds the rest.

    Draw: bets or raises to the cap with any pair, any draw or ace high, and half of
    everything else; after the draw it bets 80% of the time and calls with any pair,
    raising equity over 0.55.
    """

    name = "maniac_plus"
    BET_FREQ = 0.85
    RIVER_BLUFF = 0.45
    CHART: ClassVar[Chart | None] = Chart(
        open_tight=0.85,
        open_loose=0.85,
        open_size=4.0,
        call=0.75,
        three_bet=0.40,
        bluff_3bet=0.5,
        four_bet=0.20,
        call_3bet=0.55,
        call_cap=25.0,
    )

    def postflop(self, spot: Spot) -> Decision:
        rng = spot.rng
        eq = spot.equity()
        size = 1.2 if eq > 0.75 else 1.0
        if not spot.facing:
            if eq > 0.5:
                return spot.sized(size)
            chance = self.BET_FREQ
            if spot.street == Street.RIVER:  # hands with showdown value check it down
                chance = self.RIVER_BLUFF if eq < 0.35 else 0.0
            return spot.sized(1.0) if rng.random() < chance else spot.fold()
        if eq > 0.6 or (eq > 0.3 and rng.random() < 0.3):
            return spot.sized(size)
        return spot.call() if eq > 0.8 * spot.pot_odds else spot.fold()

    def draw(self, spot: Spot) -> Decision:
        rng = spot.rng
        if spot.first_round:
            rank = draw_rank(spot.hand())
            ace = max(c >> 2 for c in spot.sit.hole) == 12
            if rank >= 1 or ace or rng.random() < 0.5:
                return spot.raise_()
            return spot.fold()
        eq = spot.equity()
        if not spot.facing:
            return spot.raise_() if eq > 0.45 or rng.random() < 0.8 else spot.fold()
        if eq > 0.55:
            return spot.raise_()
        pair = spot.hand().category >= 1
        return spot.call() if pair or eq > spot.pot_odds else spot.fold()
