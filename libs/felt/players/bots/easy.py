"""The easy bot: plays the immediate strength of its own cards and little else.

Hold'em: preflop it sorts its two cards into four buckets (premium, good,
playable, trash); after the flop it looks only at the category of its best
hand (a pair is a pair, even when the pair is on the board). Draw: it bets and
raises with a pair or better, checks or folds the rest, bluffs about 5% of the
time, and discards simply (keeps pairs, trips and so on). It ignores position,
stack depth, pot odds and the opponents' actions, which is what makes it
beatable.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from felt.core.evaluator import HandCategory, category_of, evaluate
from felt.core.rules.config import Variant
from felt.core.rules.events import Event, Street
from felt.core.rules.legal import LegalActions
from felt.core.rules.views import HandView
from felt.players.bots.base import (
    Decision,
    Situation,
    bet_to,
    check_or_call,
    check_or_fold,
    discard,
    pot_bet_to,
    situation,
)
from felt.players.bots.drawhand import simple_keep
from felt.players.bots.holdem import preflop_percentile
from felt.players.bots.opponents import TableStats

BLUFF = 0.05


class EasyBot:
    """Immediate hand strength only; see the module docstring."""

    name = "easy"

    def decide(
        self,
        view: HandView,
        history: Sequence[Event],
        legal: LegalActions,
        rng: random.Random,
        table: TableStats | None = None,
    ) -> Decision:
        sit = situation(view, history, legal)
        if legal.max_discard is not None:
            return discard(legal, sit.hole, simple_keep(sit.hole))
        if sit.variant == Variant.DRAW5:
            return self._draw(sit, legal, rng)
        if sit.street == Street.PREFLOP:
            return self._preflop(sit, legal, rng)
        return self._postflop(sit, legal, rng)

    def _preflop(self, sit: Situation, legal: LegalActions, rng: random.Random) -> Decision:
        pct = preflop_percentile(sit.hole)
        bb = sit.unit
        raised = sit.to_call + sit.bet > bb  # someone raised above the big blind
        if pct <= 0.06:
            return bet_to(legal, 3 * (sit.bet + sit.to_call))
        if pct <= 0.2:
            if not raised:
                return bet_to(legal, 3 * bb)
            return check_or_call(legal) if sit.to_call <= 8 * bb else check_or_fold(legal)
        if pct <= 0.5:
            return check_or_call(legal) if sit.to_call <= 2 * bb else check_or_fold(legal)
        if legal.can_check and rng.random() < BLUFF:
            return bet_to(legal, 3 * bb)
        return check_or_fold(legal)

    def _postflop(self, sit: Situation, legal: LegalActions, rng: random.Random) -> Decision:
        cat = category_of(evaluate([*sit.hole, *sit.board]))
        if cat >= HandCategory.STRAIGHT:
            return pot_bet_to(sit, legal, 1.0)
        if cat >= HandCategory.TWO_PAIR:
            return pot_bet_to(sit, legal, 0.75) if sit.to_call == 0 else check_or_call(legal)
        if cat == HandCategory.PAIR:
            if sit.to_call == 0:
                return pot_bet_to(sit, legal, 0.5)
            return check_or_call(legal) if sit.to_call <= sit.pot * 0.6 else check_or_fold(legal)
        if sit.to_call == 0 and rng.random() < BLUFF:
            return pot_bet_to(sit, legal, 0.5)
        return check_or_fold(legal)

    def _draw(self, sit: Situation, legal: LegalActions, rng: random.Random) -> Decision:
        cat = category_of(evaluate(sit.hole))
        if cat >= HandCategory.TWO_PAIR:
            return bet_to(legal, sit.bet + sit.to_call + sit.unit)
        if cat == HandCategory.PAIR:
            if sit.to_call == 0:
                return bet_to(legal, sit.unit)
            return check_or_call(legal)
        if sit.to_call == 0 and rng.random() < BLUFF:
            return bet_to(legal, sit.unit)
        return check_or_fold(legal)
