"""Hard reads a raise after the flop heads-up as a bet into a bet (``HardBot._range``).

A heads-up raise after the flop (a bet over another player's bet on the same street)
narrows the raiser's range twice by the bet rule. The tests play a real spot through
``HardBot.decide``: hard in the big blind leads the flop and the button moves all-in over
it; they compare with the same bot reading the raise once, as before.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from felt.core.rules.commands import Act, ActionKind, StartHand
from felt.core.rules.config import Variant
from felt.core.rules.engine import execute
from felt.core.rules.legal import legal_actions
from felt.core.rules.views import redact_all, view_for
from felt.players.bots import hard as hard_module
from felt.players.bots.base import situation
from felt.players.bots.hard import HardBot, TableRead, _raised
from felt.players.equity import holdem_equity
from felt_dev.ladder import deck_for, hand_setup, master_key
from tests.unit.bots.test_hard_defence import Spot, holding, range_hands


def lead_then_shove() -> Spot:
    """The button opens to 2.5 big blinds, the big blind (seat 1, hard) calls, leads the
    flop for about half the pot, and the button moves all-in over it."""
    setup = hand_setup(Variant.NLHE, "h-raise", deck_for(Variant.NLHE, master_key(9), 0), 0)
    state, events = execute(None, StartHand(setup))
    history = list(events)
    for kind, to in ((ActionKind.RAISE, 250), (ActionKind.CALL, 0), (ActionKind.BET, 250)):
        legal = legal_actions(state)
        assert legal is not None
        state, events = execute(state, Act(legal.seat, kind, to))
        history.extend(events)
    legal = legal_actions(state)
    assert legal is not None and legal.seat == 0 and legal.max_raise_to is not None
    state, events = execute(state, Act(0, ActionKind.RAISE, legal.max_raise_to))
    history.extend(events)
    legal = legal_actions(state)
    assert legal is not None and legal.seat == 1
    return view_for(state, 1), redact_all(history, 1), legal


@contextmanager
def raise_read_once() -> Iterator[None]:
    """Hard as before: a raise narrows like a bet."""
    mp = pytest.MonkeyPatch()
    mp.setattr(hard_module, "_raised", lambda acts, seat: False)
    try:
        yield
    finally:
        mp.undo()


def continuing(spot: Spot) -> float:
    kept = total = 0.0
    for combo, w, _ in range_hands(spot)[::3]:
        view, history, legal = holding(spot, combo)
        move = HardBot().decide(view, history, legal, random.Random(7), None)
        assert isinstance(move, Act)
        total += w
        kept += w * (move.kind != ActionKind.FOLD)
    return kept / total


def test_a_bet_over_a_bet_is_a_raise() -> None:
    sit = situation(*lead_then_shove())
    flop = [a for a in sit.actions if a.street == sit.street]
    assert _raised(flop, 0)
    assert not _raised(flop, 1)  # hard's lead was the street's first bet


def test_a_raise_is_read_stronger_than_a_bet() -> None:
    spot = lead_then_shove()
    hard = HardBot()
    lower = 0
    hands = range_hands(spot)[::40]
    for combo, _, _ in hands:
        sit = situation(*holding(spot, combo))
        read = TableRead.of(None, sit, hard.bluff_frequency)
        twice = hard._range(sit, 0, True, read.style(0))
        with raise_read_once():
            once = hard._range(sit, 0, True, read.style(0))
        eq_twice = holdem_equity(sit.hole, sit.board, (), [twice], 3000, 5).equity
        eq_once = holdem_equity(sit.hole, sit.board, (), [once], 3000, 5).equity
        lower += eq_twice < eq_once
        # Only heads-up: a full table's read is unchanged.
        full = dict(hard._range(sit, 0, False, read.style(0)).items())
        with raise_read_once():
            assert dict(hard._range(sit, 0, False, read.style(0)).items()) == full
        assert dict(twice.items()) != dict(once.items())
    assert lower >= 0.8 * len(hands)


def test_hard_calls_fewer_shoves_over_its_lead_but_keeps_minimum_defence() -> None:
    spot = lead_then_shove()
    sit = situation(*spot)
    size = sit.to_call / (sit.pot - sit.to_call)
    now = continuing(spot)
    with raise_read_once():
        before = continuing(spot)
    assert now < before - 0.05
    # Minimum defence still continues with the top 1 / (1 + b) of hard's range.
    assert now >= 1 / (1 + size) - 0.03
