"""The adapter: a sound player that moves its bluffs, value bets and calls by what the
public record shows of the players it faces."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from felt.core.rules.events import Street
from felt.players.bots.base import Decision
from felt_styles.reading import Spot, draw_rank
from felt_styles.style import Chart, Style


@dataclass(frozen=True, slots=True)
class Read:
    """The live opponents' observed frequencies, shrunk to ordinary priors while few hands
    are seen (``SeatStats.rate``): later-round folds to a bet (heads-up pots counted on
    their own), aggression (share of later actions that bet or raise), how often they
    fold to a first-round raise, raise first in, and how often their shown bets were weak."""

    fold: float
    aggression: float
    steal_fold: float
    pfr: float
    bluffs: float


def read_opponents(spot: Spot) -> Read:
    seats = [o.seat for o in spot.sit.opponents] or [spot.sit.seat]
    stats = [spot.stats(s) for s in seats]
    n = len(stats)
    fold = [s.hu_fold_rate() if spot.heads_up else s.fold_rate() for s in stats]
    return Read(
        fold=min(fold) if n > 1 else fold[0],
        aggression=max(s.aggression() for s in stats),
        steal_fold=min(s.steal_fold_rate() for s in stats),
        pfr=max(s.pfr_rate() for s in stats),
        bluffs=max(s.bluff_rate() for s in stats),
    )


class Adapter(Style):
    """Starts as a solid tight-aggressive player and shifts with what it sees.

    - **Bluffs** where they pay: a bet of ``b`` into pot ``p`` breaks even when the
      opponents fold ``b / (p + b)``; it bluffs its hands under 0.3 equity with
      probability ``2.5 x (fold - break-even)`` (none against players who fold less than
      that, up to 90% against folders).
    - **Value bets** thinner against callers: it bets equity over ``0.5 + 0.25 x fold``
      (0.55 against a station, 0.7 against a rock).
    - **Calls** lighter against aggression: it calls when its equity beats the price less
      ``0.2 x (aggression - 0.3)`` and less ``0.15 x (shown weak bets - 0.3)``, so a
      maniac's bets are called down and a passive player's respected.
    - **Steals** the blinds more from players who fold to raises: its opening range is
      the chart's plus ``0.4 x (fold to raises - 0.5)``; it defends a raise with more
      hands against players who raise often (``pfr``).

    Draw: the same reads on the fixed-limit rounds (pairs and draws open more against
    folders, bluffs after the draw by the same break-even rule, calls by adjusted price).
    """

    name = "adapter"
    BASE: ClassVar[Chart] = Chart(
        open_tight=0.15,
        open_loose=0.45,
        open_size=2.5,
        call=0.25,
        three_bet=0.06,
        bluff_3bet=0.15,
        four_bet=0.025,
        call_3bet=0.08,
    )
    CHART: ClassVar[Chart | None] = BASE

    def preflop(self, spot: Spot) -> Decision:
        r = read_opponents(spot)
        steal = 0.4 * (r.steal_fold - 0.5)
        defend = 0.5 * (r.pfr - 0.2)
        base = self.BASE
        chart = replace(
            base,
            open_tight=min(0.9, max(0.05, base.open_tight + steal)),
            open_loose=min(0.95, max(0.1, base.open_loose + steal)),
            call=min(0.7, max(0.08, base.call + defend)),
            three_bet=min(0.2, max(0.03, base.three_bet + defend / 3)),
            call_3bet=min(0.3, max(0.04, base.call_3bet + defend / 2)),
        )
        return chart.play(spot)

    def _margin(self, r: Read) -> float:
        return -0.2 * (r.aggression - 0.3) - 0.15 * (r.bluffs - 0.3)

    def _bluff(self, spot: Spot, r: Read, size: float) -> bool:
        breakeven = size / (1 + size)
        return spot.rng.random() < 2.5 * (r.fold - breakeven)

    def postflop(self, spot: Spot) -> Decision:
        r = read_opponents(spot)
        eq = spot.equity()
        if spot.facing:
            return spot.defend(eq, 0.8, self._margin(r))
        if eq > 0.5 + 0.25 * r.fold:
            return spot.sized(0.66)
        strong_draw = spot.street != Street.RIVER and spot.draws().strong
        if (eq < 0.3 or strong_draw) and self._bluff(spot, r, 0.6):
            return spot.sized(0.6)
        return spot.fold()

    def draw(self, spot: Spot) -> Decision:
        r = read_opponents(spot)
        if spot.first_round:
            rank = draw_rank(spot.hand())
            if rank >= 4:
                return spot.raise_()
            if not spot.facing:
                loose = r.steal_fold > 0.55 and spot.behind <= 2
                return spot.raise_() if rank >= 3 or (loose and rank >= 1) else spot.fold()
            needed = 3 if r.aggression < 0.35 else 2
            if rank >= needed or (rank == 1 and spot.pot_odds < 0.25):
                return spot.call()
            return spot.fold()
        eq = spot.equity()
        if spot.facing:
            return spot.defend(eq, 0.8, self._margin(r))
        pot_units = spot.sit.pot / spot.sit.unit
        if eq > 0.5 + 0.25 * r.fold:
            return spot.raise_()
        if eq < 0.3 and self._bluff(spot, r, 1 / max(pot_units, 1)):
            return spot.raise_()
        return spot.fold()
