"""The differential test against PokerKit: a short seeded run of each variant.

The harness is tests/differential.py.

The long run is a command: ``python -m tests.differential --hands 100000 --variant holdem``.
"""

from __future__ import annotations

import warnings

import pytest

from felt.core.rules.commands import StartHand
from felt.core.rules.engine import HandMachine
from felt.core.rules.legal import legal_actions
from tests.differential import DRAW, HOLDEM, Table, felt_setup, pokerkit_state, run


@pytest.mark.parametrize("variant", [HOLDEM, DRAW])
def test_felt_agrees_with_pokerkit_and_rules_md_at_every_decision(variant: str) -> None:
    stats = run(variant, 150, seed=15)
    assert stats.disagreements == []
    assert stats.hands == 150 and stats.decisions > 800
    # The run reaches the corners where RULES.md and PokerKit part.
    assert stats.short_rounds > 10
    if variant == DRAW:
        assert stats.draws > 300


def test_short_big_blind_keeps_the_full_call_where_pokerkit_lowers_it() -> None:
    # RULES.md vs PokerKit (short blinds): the big blind is all-in for 1 of 2;
    # the others still call the full big blind in Felt, PokerKit asks for 1.
    table = Table(HOLDEM, [100, 1, 100], 0, small_blind=1, big_blind=2, deck=tuple(range(52)))
    machine = HandMachine()
    machine.execute(StartHand(felt_setup(table)))
    assert machine.state is not None
    legal = legal_actions(machine.state)
    assert legal is not None and legal.seat == 2 and legal.call_amount == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pk = pokerkit_state(table)
        for cards in ("AcAd", "KcKd", "QcQd"):
            pk.deal_hole(cards)
    assert pk.actor_index == 2 and pk.checking_or_calling_amount == 1
