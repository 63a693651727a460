"""The frame every style shares: one decision split by game and round, and a preflop chart.

A style is a :class:`felt.players.bots.base.Bot` (``decide(view, history, legal, rng, table)``)
that keeps no state between calls. :class:`Style` reads the decision into a
:class:`~felt_styles.reading.Spot` and hands it to the style's own Hold'em preflop,
Hold'em postflop, Draw betting and Draw discard methods, so each style file holds
only its strategy.

:class:`Chart` is a preflop plan by hand percentile (0.005 = aces, 1.0 = the worst
hand), because that is how players describe a preflop style ("opens 45%, 3-bets
12%"): the styles differ in the numbers and in what they do after the flop.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from felt.core.rules.config import Variant
from felt.core.rules.events import Event, Street
from felt.core.rules.legal import LegalActions
from felt.core.rules.views import HandView
from felt.players.bots.base import Decision
from felt.players.bots.opponents import TableStats
from felt_styles.reading import Spot, keep_for, opens, read


@dataclass(frozen=True, slots=True)
class Chart:
    """A preflop plan by starting-hand percentile.

    - ``open_tight``/``open_loose``: share of hands opened when first in, with a full
      table behind / one player behind (``reading.opens``); ``open_size`` in big blinds.
    - ``call``: share that calls a single raise (when the raise is at most
      ``call_cap`` big blinds); ``three_bet``: share re-raised for value, plus
      ``bluff_3bet`` of the hands just outside ``call`` re-raised as bluffs.
    - ``four_bet``: share that re-raises a re-raise (all-in once the raise is a third
      of the stack); ``call_3bet``: share that calls one.
    - ``limp_raise``: whether a limped pot or a free big blind is raised with the
      opening range (else checked).
    """

    open_tight: float
    open_loose: float
    open_size: float
    call: float
    three_bet: float
    bluff_3bet: float
    four_bet: float
    call_3bet: float
    call_cap: float = 12.0
    three_bet_size: float = 3.0

    def play(self, spot: Spot) -> Decision:
        sit = spot.sit
        pct = spot.percentile()
        bb = sit.unit
        if spot.raises == 0:
            if spot.first_in or sit.to_call == 0:
                share = opens(spot, self.open_tight, self.open_loose)
                if spot.limpers:
                    share *= 0.6
                if pct <= share:
                    return spot.to((self.open_size + spot.limpers) * bb)
                return spot.fold()
            return spot.call() if pct <= self.call else spot.fold()
        if spot.raises == 1:
            if pct <= self.three_bet or (
                self.call < pct <= self.call + 0.15 and spot.rng.random() < self.bluff_3bet
            ):
                return self._reraise(spot)
            if pct <= self.call and sit.to_call <= self.call_cap * bb:
                return spot.call()
            return spot.fold()
        if pct <= self.four_bet:
            return self._reraise(spot)
        if pct <= self.call_3bet and sit.to_call <= 0.35 * (sit.stack + sit.bet):
            return spot.call()
        return spot.fold()

    def _reraise(self, spot: Spot) -> Decision:
        sit = spot.sit
        target = self.three_bet_size * spot.current
        if target >= 0.33 * (sit.stack + sit.bet):
            return spot.shove()
        return spot.to(target)


class Style:
    """Base of the opponent styles: dispatch by game and round; subclasses play."""

    name: str = "style"
    # The preflop plan of a style that plays Hold'em preflop by a chart.
    CHART: ClassVar[Chart | None] = None

    def decide(
        self,
        view: HandView,
        history: Sequence[Event],
        legal: LegalActions,
        rng: random.Random,
        table: TableStats | None = None,
    ) -> Decision:
        spot = read(view, history, legal, rng, table)
        if legal.max_discard is not None:
            return self.discard(spot)
        if view.variant == Variant.DRAW5:
            return self.draw(spot)
        if spot.street == Street.PREFLOP:
            return self.preflop(spot)
        return self.postflop(spot)

    def preflop(self, spot: Spot) -> Decision:
        """Hold'em before the flop: the style's :class:`Chart` (or its own override)."""
        if self.CHART is None:  # pragma: no cover - a style without a chart overrides this
            raise NotImplementedError
        return self.CHART.play(spot)

    def postflop(self, spot: Spot) -> Decision:  # pragma: no cover
        raise NotImplementedError

    def draw(self, spot: Spot) -> Decision:  # pragma: no cover
        raise NotImplementedError

    def discard(self, spot: Spot) -> Decision:
        """The textbook draw unless a style bluffs with its discards."""
        return spot.keep(keep_for(spot.sit.hole))
