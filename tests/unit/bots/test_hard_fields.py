"""Hard at full tables of loose players: it reads the field and plays its cards' strength.

Against players who never fold, bluffs earn nothing and thin value bets get
paid, so the hard bot bets more hands for value and never bluffs there; against
maniacs every entry ends all-in, so it shoves hands worth more than their share
of the pot and folds the rest.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import replace

from felt.core.evaluator import HandCategory, category_of, evaluate
from felt.core.rules.commands import ActionKind, StartHand
from felt.core.rules.config import Variant
from felt.core.rules.engine import execute
from felt.core.rules.events import Event, Street
from felt.core.rules.legal import LegalActions, legal_actions
from felt.core.rules.views import HandView, view_for
from felt.core.table.stats import SeatStats
from felt.players.bots import get_bot
from felt.players.bots.base import Bot, Decision, situation
from felt.players.bots.hard import HardBot, TableRead
from felt.players.bots.opponents import ModelBuilder, TableStats
from felt_dev.ladder import deck_for, hand_id_for, hand_setup, master_key, play_hand

STATION = SeatStats(hands=60, vpip=60, faced=80, folded=0, calls=120)
MANIAC = SeatStats(hands=60, vpip=60, pfr=60, first_faced=40, bets=150, calls=10, checks=0)
TIGHT = SeatStats(hands=60, vpip=12, pfr=10, first_faced=30, first_folded=25, faced=40, folded=25)


def six_max_start(seed: int = 3) -> tuple[HandView, LegalActions]:
    """The first decision of a fresh 6-max Hold'em hand (under the gun)."""
    setup = hand_setup(Variant.NLHE, "h-t", deck_for(Variant.NLHE, master_key(seed), 0, 6), 0, 6)
    state, _ = execute(None, StartHand(setup))
    legal = legal_actions(state)
    assert legal is not None
    return view_for(state, legal.seat), legal


def field(stats: SeatStats, hero: int, seats: int = 6) -> dict[int, SeatStats]:
    return {s: stats for s in range(seats) if s != hero}


def test_table_read_of_loose_and_wild_fields() -> None:
    view, legal = six_max_start()
    sit = situation(view, [], legal)
    stations = TableRead.of(field(STATION, legal.seat), sit, 0.1)
    assert stations.loose and not stations.wild and stations.bluff == 0.0
    maniacs = TableRead.of(field(MANIAC, legal.seat), sit, 0.1)
    assert maniacs.loose and maniacs.wild and maniacs.bluff == 0.0
    tight = TableRead.of(field(TIGHT, legal.seat), sit, 0.1)
    assert not tight.loose and not tight.wild
    # A check from a player that bets what it keeps means a hand it gives up.
    assert tight.check_fold[0] > tight.fold


def checked_to_after_the_flop(view: HandView, legal: LegalActions) -> bool:
    return view.street != Street.PREFLOP and legal.can_check


class Recorder:
    """A hard bot that keeps the decision points (view, history, legal) that ``keep`` selects:
    by default its Hold'em decisions after the flop with nothing to call."""

    name = "hard"

    def __init__(
        self, keep: Callable[[HandView, LegalActions], bool] = checked_to_after_the_flop
    ) -> None:
        self.bot = HardBot()
        self.keep = keep
        self.points: list[tuple[HandView, tuple[Event, ...], LegalActions]] = []

    def decide(
        self,
        view: HandView,
        history: Sequence[Event],
        legal: LegalActions,
        rng: random.Random,
        table: TableStats | None = None,
    ) -> Decision:
        if self.keep(view, legal):
            self.points.append((view, tuple(history), legal))
        return self.bot.decide(view, history, legal, rng, table)


def test_value_bets_more_and_never_bluffs_when_the_field_never_folds() -> None:
    """The same checked-to spots at a table of stations: read as stations, hard bets more
    hands (thin value) and never bets a hand that is only high card on the river (a bluff)."""
    recorder = Recorder()
    key = master_key(11)
    bots: dict[int, Bot] = {0: recorder, **{s: get_bot("calling_station") for s in range(1, 6)}}
    model = ModelBuilder()
    for deal in range(60):
        rngs = {s: random.Random(deal * 10 + s) for s in range(6)}
        setup = hand_setup(
            Variant.NLHE,
            hand_id_for(key, str(deal)),
            deck_for(Variant.NLHE, key, deal, 6),
            deal % 6,
            6,
        )
        play_hand(setup, bots, rngs, model)
    assert len(recorder.points) >= 30
    stations = field(STATION, 0)
    bets = {"read": 0, "blind": 0}
    for i, (view, history, legal) in enumerate(recorder.points):
        for label, table in (("read", stations), ("blind", None)):
            d = HardBot().decide(view, history, legal, random.Random(i), table)
            bet = getattr(d, "kind", None) in (ActionKind.BET, ActionKind.RAISE)
            bets[label] += bet
            sit = situation(view, history, legal)
            river_air = (
                sit.street == Street.RIVER
                and category_of(evaluate([*sit.hole, *sit.board])) == HandCategory.HIGH_CARD
            )
            if label == "read" and river_air:
                assert not bet, "bluffed into players who never fold"
    assert bets["read"] > bets["blind"]


def test_against_maniacs_strong_hands_shove_and_weak_ones_fold() -> None:
    """Every entry against maniacs ends all-in: aces shove, seven-deuce folds."""
    view, legal = six_max_start()
    maniacs = field(MANIAC, legal.seat)
    hard = HardBot(samples=800)
    # The hero's cards in the view: aces (A♠ A♥), then 7♣ 2♦ (cards: rank * 4 + suit).
    for cards, shove in (((51, 50), True), ((20, 1), False)):
        seats = tuple(replace(s, cards=cards) if s.seat == legal.seat else s for s in view.seats)
        v = replace(view, seats=seats)
        d = hard.decide(v, [], legal, random.Random(1), maniacs)
        kind = getattr(d, "kind", None)
        if shove:
            assert kind in (ActionKind.BET, ActionKind.RAISE)
            assert getattr(d, "amount", None) == legal.max_raise_to
        else:
            assert kind == ActionKind.FOLD
