"""Local best response (``felt_dev.lbr``): it plays legal hands, reads no hidden card, and
wins against a bot that never folds."""

from __future__ import annotations

from felt.core.rules.commands import StartHand
from felt.core.rules.config import Variant
from felt.core.rules.engine import execute
from felt.core.rules.events import HoleCardsDealt
from felt.core.rules.views import redact_all, view_for
from felt_dev.ladder import deck_for, hand_setup, master_key
from felt_dev.lbr import Particle, _hypothetical, play


def test_the_bot_is_asked_with_the_particle_s_cards_never_its_own() -> None:
    deck = deck_for(Variant.NLHE, master_key(1), 0)
    state, events = execute(None, StartHand(hand_setup(Variant.NLHE, "h", deck, 0)))
    real = tuple(c for c in view_for(state, 1).seat(1).cards if c is not None)
    guess = Particle(tuple(c for c in range(52) if c not in deck[:4])[:2])
    view, history = _hypothetical(view_for(state, 1), redact_all(events, 1), 1, guess)
    assert view.seat(1).cards == guess.dealt
    dealt = [e for e in history if isinstance(e, HoleCardsDealt) and e.seat == 1]
    assert dealt and all(e.cards == guess.dealt for e in dealt)
    assert not set(real) & set(guess.dealt)


def test_lbr_beats_a_calling_station_and_reports_an_interval() -> None:
    est = play(Variant.NLHE, "calling_station", 30, seed=5, particles=8, rollouts=6)
    assert est.hands == 60
    assert est.mean - est.half_width > 0  # value bets into a player who never folds
    est = play(Variant.DRAW5, "easy", 4, seed=5, particles=8, rollouts=4)
    assert est.hands == 8 and est.half_width >= 0
