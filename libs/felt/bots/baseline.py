"""Baseline opponents for the ladder: the calling station and the random bot.

They are not meant to play well; they are fixed reference points. A level that
cannot beat a player who never folds (the station) or one who acts at random
is not playing poker, so the ladder reports every level against both.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from felt.bots.base import Decision, check_or_call
from felt.rules.commands import Act, ActionKind, Discard
from felt.rules.events import Event
from felt.rules.legal import LegalActions
from felt.rules.views import HandView


class CallingStation:
    """Checks or calls every bet and never raises; in Draw it stands pat."""

    name = "calling_station"

    def decide(
        self, view: HandView, history: Sequence[Event], legal: LegalActions, rng: random.Random
    ) -> Decision:
        if legal.max_discard is not None:
            return Discard(legal.seat, ())
        return check_or_call(legal)


class RandomBot:
    """Picks a legal action kind uniformly at random, then a uniform legal amount.

    Draw: discards a uniformly random number (0..max) of random cards.
    """

    name = "random"

    def decide(
        self, view: HandView, history: Sequence[Event], legal: LegalActions, rng: random.Random
    ) -> Decision:
        if legal.max_discard is not None:
            own = [c for c in view.seat(legal.seat).cards if c is not None]
            k = rng.randint(0, min(legal.max_discard, len(own)))
            return Discard(legal.seat, tuple(rng.sample(own, k)))
        kinds: list[ActionKind] = []
        if legal.can_fold:
            kinds.append(ActionKind.FOLD)
        if legal.can_check:
            kinds.append(ActionKind.CHECK)
        if legal.call_amount is not None:
            kinds.append(ActionKind.CALL)
        if legal.min_raise_to is not None:
            kinds.append(ActionKind.BET if legal.bet else ActionKind.RAISE)
        kind = rng.choice(kinds)
        if kind in (ActionKind.BET, ActionKind.RAISE):
            assert legal.min_raise_to is not None and legal.max_raise_to is not None
            return Act(legal.seat, kind, rng.randint(legal.min_raise_to, legal.max_raise_to))
        return Act(legal.seat, kind)
