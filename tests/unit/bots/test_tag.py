"""The tight-aggressive reference bot plays the textbook: tight opens, ranges read from bets."""

from __future__ import annotations

import random
from dataclasses import replace

from felt.core.cards import cards
from felt.core.rules.commands import ActionKind, StartHand
from felt.core.rules.config import Variant
from felt.core.rules.engine import execute
from felt.core.rules.legal import LegalActions, legal_actions
from felt.core.rules.views import HandView, view_for
from felt.core.table.stats import SeatStats
from felt.players.bots.tag import TightAggressive, _reweight, _strong_draw, _top
from felt_dev.ladder import deck_for, hand_setup, master_key


def first_decision(variant: Variant, seats: int, hole_text: str) -> tuple[HandView, LegalActions]:
    """The first decision of a fresh hand, the actor holding ``hole_text``."""
    deck = deck_for(variant, master_key(4), 0, seats)
    state, _ = execute(None, StartHand(hand_setup(variant, "h-tag", deck, 0, seats)))
    legal = legal_actions(state)
    assert legal is not None
    view = view_for(state, legal.seat)
    hole = cards(hole_text)
    seats_ = tuple(replace(s, cards=hole) if s.seat == legal.seat else s for s in view.seats)
    return replace(view, seats=seats_), legal


def kind(view: HandView, legal: LegalActions, table: object = None) -> ActionKind:
    d = TightAggressive().decide(view, [], legal, random.Random(1), table)  # type: ignore[arg-type]
    return d.kind  # type: ignore[union-attr]


def test_under_the_gun_opens_aces_and_folds_seven_deuce() -> None:
    assert kind(*first_decision(Variant.NLHE, 6, "AsAh")) == ActionKind.RAISE
    assert kind(*first_decision(Variant.NLHE, 6, "7c2d")) == ActionKind.FOLD


def test_it_ignores_the_table_model() -> None:
    view, legal = first_decision(Variant.NLHE, 6, "KcQd")
    fish = {s: SeatStats(hands=60, vpip=60, faced=80, calls=120) for s in range(6)}
    assert kind(view, legal, fish) == kind(view, legal)


def test_draw_opens_jacks_or_better_and_checks_junk() -> None:
    # Five-handed, the first to act has four players behind: jacks open, nothing checks.
    assert kind(*first_decision(Variant.DRAW5, 5, "JsJd8c5h2c")) == ActionKind.BET
    assert kind(*first_decision(Variant.DRAW5, 5, "Ks9d7c5h2c")) == ActionKind.CHECK


def test_a_bet_keeps_strong_hands_and_a_check_trims_them() -> None:
    board = cards("Kh7d2c")
    weights = dict(_top(1.0, 0.0).items())
    bet = _reweight(weights, board, "bet")
    check = _reweight(weights, board, "check")
    kings = combo("KsKd")  # a set
    air = combo("5s4d")
    assert bet[kings] > 5 * bet[air]
    assert check[kings] < check[air]


def combo(text: str) -> tuple[int, int]:
    a, b = cards(text)
    return (a, b) if a > b else (b, a)


def test_strong_draws() -> None:
    assert _strong_draw(combo("AhKh"), cards("7h2h9c"))  # flush draw
    assert _strong_draw(combo("9h8d"), cards("7c6s2d"))  # open-ended
    assert not _strong_draw(combo("AhKd"), cards("7c6s2d"))
