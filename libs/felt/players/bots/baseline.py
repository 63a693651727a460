"""Baseline opponents for the ladder: fixed styles that do not adapt.

They are not meant to play well; they are fixed reference points, each a
classic leak a strong player must exploit:

- the **calling station** checks or calls everything (never fold to it, never
  bluff it, bet big for value);
- the **random** bot acts at random (its bets mean nothing);
- the **maniac** bets or raises whenever it may (call it down lighter);
- the **rock** plays only premium hands and bets only strong ones (fold to
  its bets, steal its blinds);
- the **loose-passive** player calls with most hands and rarely bets (value
  bet it relentlessly, its bets are strong).

A level that cannot beat each of them is not playing poker, so the ladder
reports every level against all of them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from felt.core.evaluator import HandCategory, category_of, evaluate
from felt.core.rules.commands import Act, ActionKind, Discard
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
from felt.players.bots.drawhand import analyse, simple_keep, standard_keep
from felt.players.bots.holdem import draws, preflop_percentile
from felt.players.bots.opponents import TableStats

H = HandCategory
JACKS = 9  # rank index of a jack (2 = 0 .. A = 12)


class CallingStation:
    """Checks or calls every bet and never raises; in Draw it stands pat."""

    name = "calling_station"

    def decide(
        self,
        view: HandView,
        history: Sequence[Event],
        legal: LegalActions,
        rng: random.Random,
        table: TableStats | None = None,
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
        self,
        view: HandView,
        history: Sequence[Event],
        legal: LegalActions,
        rng: random.Random,
        table: TableStats | None = None,
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


class Maniac:
    """Bets or raises whenever it may (about the pot in Hold'em), otherwise calls.

    It never folds; in Draw it keeps its made hand (``simple_keep``) and raises
    to the cap every round.
    """

    name = "maniac"

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
            return bet_to(legal, sit.bet + sit.to_call + sit.unit)
        return pot_bet_to(sit, legal, 1.0)


class Rock:
    """Plays only premium hands and bets only strong ones; folds everything else.

    Hold'em: raises the top 8% of starting hands (re-raises the top 3%), then
    bets two pair or better, calls a bet with a pair of at most half the pot,
    and folds the rest. Draw: opens or calls with jacks or better, raises
    with two pair or better, draws the textbook way, then bets two pair or
    better and calls with a pair of jacks or better.
    """

    name = "rock"

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
            return discard(legal, sit.hole, standard_keep(sit.hole))
        if sit.variant == Variant.DRAW5:
            return self._draw(sit, legal)
        if sit.street == Street.PREFLOP:
            pct = preflop_percentile(sit.hole)
            current = sit.bet + sit.to_call
            if pct <= 0.03:
                return bet_to(legal, 3 * current)
            if pct <= 0.08:
                if current <= sit.unit:
                    return bet_to(legal, 3 * sit.unit)
                return (
                    check_or_call(legal) if sit.to_call <= 10 * sit.unit else check_or_fold(legal)
                )
            return check_or_fold(legal)
        cat = category_of(evaluate([*sit.hole, *sit.board]))
        if cat >= H.TWO_PAIR:
            return pot_bet_to(sit, legal, 0.75)
        if cat == H.PAIR and sit.to_call <= 0.5 * sit.pot:
            return check_or_call(legal)
        return check_or_fold(legal)

    def _draw(self, sit: Situation, legal: LegalActions) -> Decision:
        hand = analyse(sit.hole)
        strong = hand.category >= H.TWO_PAIR
        playable = strong or (hand.category == H.PAIR and hand.pair_rank >= JACKS)
        if strong:
            return bet_to(legal, sit.bet + sit.to_call + sit.unit)
        if playable:
            return check_or_call(legal)
        return check_or_fold(legal)


class LoosePassive:
    """Calls with most hands and rarely bets: the loose-passive regular.

    Hold'em: calls (or checks) with the top 70% of starting hands, never
    raises preflop; after the flop calls with any pair or draw (and any bet
    up to a third of the pot), bets half the pot only with trips or better.
    Draw: calls the first round with anything but the worst high cards,
    draws the simple way, then bets trips or better and calls with a pair.
    """

    name = "loose_passive"

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
            cat = category_of(evaluate(sit.hole))
            if cat >= H.THREE_OF_A_KIND and sit.street == Street.SECOND_BET and sit.to_call == 0:
                return bet_to(legal, sit.unit)
            if sit.street == Street.FIRST_BET:
                high = max(c >> 2 for c in sit.hole)
                return (
                    check_or_call(legal) if cat >= H.PAIR or high >= JACKS else check_or_fold(legal)
                )
            return check_or_call(legal) if cat >= H.PAIR else check_or_fold(legal)
        if sit.street == Street.PREFLOP:
            if preflop_percentile(sit.hole) <= 0.7 and sit.to_call <= 6 * sit.unit:
                return check_or_call(legal)
            return check_or_fold(legal)
        cat = category_of(evaluate([*sit.hole, *sit.board]))
        if cat >= H.THREE_OF_A_KIND and sit.to_call == 0:
            return pot_bet_to(sit, legal, 0.5)
        dr = draws(sit.hole, sit.board)
        if cat >= H.PAIR or dr.strong or sit.to_call <= sit.pot / 3:
            return check_or_call(legal)
        return check_or_fold(legal)
