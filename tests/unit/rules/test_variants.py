"""Each variant is described once (``felt.core.rules.variants``) and everything else follows it.

These check that every ``Variant`` has a definition, that an unknown variant
is refused loudly everywhere it could enter (a hand, a table, a fold, the
button rule), never played by another game's rules; that the definitions are
playable (the deck covers the worst case, the last round bets); and that the
hand and the table enforce the same seat range, the one in the definition.
"""

from __future__ import annotations

from enum import StrEnum

import pytest

import felt.core.rules.variants as variants_module
from felt.core.cards import DECK_SIZE
from felt.core.rules.commands import IllegalAction, StartHand
from felt.core.rules.config import HandSetup, SeatSetup, Variant
from felt.core.rules.engine import apply, execute
from felt.core.rules.events import HandStarted, HoleCardsDealt, Street
from felt.core.rules.legal import legal_actions
from felt.core.rules.variants import (
    VARIANTS,
    Betting,
    FirstToAct,
    UnknownVariant,
    VariantRules,
    rules_for,
)
from felt.core.table.aggregate import CreateTable, decide_table
from felt.core.table.events import AI_LEVELS, TableConfig
from felt.core.table.positions import next_positions
from felt.messages.values import ai_level_from_proto, ai_level_to_proto
from felt.players.bots import LEVELS, get_bot

ALL = list(Variant)


class Unplayed(StrEnum):
    """A game Felt has no definition for (as a new ``Variant`` member would be)."""

    PLO = "PLO"


def _setup(variant: Variant | Unplayed, seats: int) -> HandSetup:
    game = VARIANTS.get(variant)  # type: ignore[arg-type]
    blinds = game is None or game.blinds
    return HandSetup(
        "h",
        variant,  # type: ignore[arg-type]
        seats,
        tuple(
            SeatSetup(
                s,
                1000,
                ante=0 if blinds else 5,
                blind=(10 if s == 2 else 5 if s == 1 else 0) if blinds else 0,
            )
            for s in range(1, seats + 1)
        ),
        tuple(range(DECK_SIZE)),
        min_bet=10,
        small_bet=10,
        big_bet=20,
    )


def _config(variant: Variant | Unplayed, seats: int) -> TableConfig:
    return TableConfig(
        "t",
        variant,  # type: ignore[arg-type]
        seats,
        small_blind=5,
        big_blind=10,
        ante=5,
        small_bet=10,
        big_bet=20,
    )


@pytest.mark.parametrize("variant", ALL)
def test_every_variant_has_its_definition(variant: Variant) -> None:
    game = rules_for(variant)
    assert isinstance(game, VariantRules)
    assert game.variant == variant
    assert set(VARIANTS) == set(Variant)


def test_an_unknown_variant_is_refused_loudly_everywhere() -> None:
    if variants_module.__file__ and not variants_module.__file__.endswith(".py"):
        # Compiled (mypyc), the core checks argument types at its boundary: a value that is
        # no ``Variant`` cannot even be passed. The pure-Python run checks the rest below.
        with pytest.raises(TypeError):
            rules_for(Unplayed.PLO)  # type: ignore[arg-type]
        return
    with pytest.raises(UnknownVariant, match="PLO"):
        rules_for(Unplayed.PLO)  # type: ignore[arg-type]
    with pytest.raises(IllegalAction) as refused:
        execute(None, StartHand(_setup(Unplayed.PLO, 2)))
    assert refused.value.code == "BAD_SETUP"
    with pytest.raises(IllegalAction) as refused:
        decide_table(None, CreateTable(_config(Unplayed.PLO, 6)))
    assert refused.value.code == "BAD_CONFIG"
    # Events are trusted, but a stream naming an undefined game is not folded as another.
    with pytest.raises(UnknownVariant):
        apply(None, HandStarted(_setup(Unplayed.PLO, 2)))
    with pytest.raises(UnknownVariant):
        next_positions(Unplayed.PLO, [0, 1], 6, None)  # type: ignore[arg-type]


@pytest.mark.parametrize("variant", ALL)
def test_a_definition_is_playable(variant: Variant) -> None:
    game = rules_for(variant)
    streets = [r.street for r in game.rounds]
    assert len(set(streets)) == len(streets)
    assert Street.SHOWDOWN not in streets and Street.COMPLETE not in streets
    assert game.rounds[0].board_cards == 0 and not game.rounds[0].max_discard
    assert not game.rounds[-1].max_discard, "the last round bets; the showdown follows it"
    assert 2 <= game.min_seats <= game.max_seats
    # The deck covers the most cards a hand can use: every seat dealt in and drawing the most.
    most = game.max_seats * (game.hole_cards + sum(r.max_discard for r in game.rounds))
    assert most + sum(r.board_cards for r in game.rounds) <= DECK_SIZE
    if game.betting == Betting.FIXED_LIMIT:
        assert game.fixed_limit
    assert game.first_street == streets[0]
    assert game.after(streets[-1]) is None
    assert [game.after(s) for s in streets[:-1]] == list(game.rounds[1:])


@pytest.mark.parametrize("variant", ALL)
def test_the_hand_and_the_table_take_the_seat_range_of_the_definition(variant: Variant) -> None:
    game = rules_for(variant)
    for seats in (game.min_seats - 1, game.min_seats, game.max_seats, game.max_seats + 1):
        allowed = game.seats_allowed(seats)
        try:
            decide_table(None, CreateTable(_config(variant, seats)))
            table_took = True
        except IllegalAction as refused:
            assert refused.code == "BAD_CONFIG"
            table_took = False
        assert table_took == allowed, seats
        if seats < 2:
            continue  # a hand of one is not a hand
        try:
            execute(None, StartHand(_setup(variant, seats)))
            hand_took = True
        except IllegalAction as refused:
            assert refused.code == "BAD_SETUP"
            hand_took = False
        assert hand_took == allowed, seats


@pytest.mark.parametrize("variant", ALL)
def test_the_deal_and_the_first_round_follow_the_definition(variant: Variant) -> None:
    game = rules_for(variant)
    seats = game.max_seats
    state, events = execute(None, StartHand(_setup(variant, seats)))
    dealt = [e for e in events if isinstance(e, HoleCardsDealt)]
    assert len(dealt) == seats
    assert all(len(e.cards) == game.hole_cards for e in dealt)
    assert state.street == game.first_street
    legal = legal_actions(state)
    assert legal is not None
    if game.rounds[0].first_to_act == FirstToAct.LEFT_OF_BLINDS:
        # Seats 1 and 2 post the blinds: seat 3 acts first.
        assert legal.seat == 3
    else:
        assert legal.seat == 1
    if game.fixed_limit:
        assert legal.min_raise_to == legal.max_raise_to
    else:
        assert legal.max_raise_to == 1000 - next(
            s.blind for s in _setup(variant, seats).seats if s.seat == legal.seat
        )


def test_the_ai_levels_are_listed_once_and_each_has_a_bot_and_a_wire_value() -> None:
    assert LEVELS == AI_LEVELS
    for level in ("", *AI_LEVELS):
        assert ai_level_from_proto(ai_level_to_proto(level)) == level
    for level in AI_LEVELS:
        assert get_bot(level).name == level
