"""Helpers for writing hands out card by card in the rules tests (both variants).

Seats are numbered 1..n in dealing order (clockwise from the left of the
button) and the button is seat n. Card ``r`` of the seat at dealing index
``i`` sits at deck position ``r * n + i``; whatever else is dealt (the board,
Draw's replacements) follows, in order.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import pytest

from felt.core.cards import Card, cards
from felt.core.evaluator import evaluate
from felt.core.rules.commands import Act, ActionKind, Command, Discard, IllegalAction, StartHand
from felt.core.rules.config import HandSetup
from felt.core.rules.engine import execute, replay
from felt.core.rules.events import CardsShown, Event, HandEnded, PotAwarded, Street
from felt.core.rules.legal import LegalActions, legal_actions

# Short names for the action kinds the hands are written with.
FOLD, CHECK, CALL = ActionKind.FOLD, ActionKind.CHECK, ActionKind.CALL
BET, RAISE, ALL_IN = ActionKind.BET, ActionKind.RAISE, ActionKind.ALL_IN


def deck_for(holes: Sequence[str], *after: str) -> tuple[Card, ...]:
    """A deck dealing ``holes[i]`` to dealing index ``i``, then the cards of ``after`` in order.

    The cards nobody names fill the rest of the deck.
    """
    hands = [cards(h) for h in holes]
    n, per = len(hands), len(hands[0])
    deck: list[Card] = [-1] * (n * per)
    for i, hand in enumerate(hands):
        assert len(hand) == per, f"hand {i} has {len(hand)} cards, not {per}"
        for r, c in enumerate(hand):
            deck[r * n + i] = c
    for text in after:
        deck += cards(text)
    assert len(set(deck)) == len(deck), "a card is used twice"
    deck += [c for c in range(52) if c not in deck]
    return tuple(deck)


class Game:
    """A hand being played: the live state plus every event so far."""

    def __init__(self, setup: HandSetup) -> None:
        self.setup = setup
        self.state, events = execute(None, StartHand(setup))
        self.log: list[Event] = list(events)
        self.started = events

    def do(self, command: Command) -> list[Event]:
        self.state, events = execute(self.state, command)
        self.log.extend(events)
        # The live state is always the fold of the events.
        assert replay(self.log) == self.state
        return events

    def act(self, seat: int, kind: ActionKind, amount: int = 0) -> list[Event]:
        return self.do(Act(seat, kind, amount))

    def discard(self, seat: int, text: str = "") -> list[Event]:
        return self.do(Discard(seat, cards(text)))

    @property
    def legal(self) -> LegalActions:
        legal = legal_actions(self.state)
        assert legal is not None
        return legal

    def street(self) -> Street:
        return self.state.street

    @property
    def to_act(self) -> int | None:
        return self.state.actor_seat

    def hole(self, seat: int) -> tuple[Card, ...]:
        s = self.state.seat_state(seat)
        assert s is not None
        return s.hole

    def refused(self, command: Command, code: str, *words: str) -> IllegalAction:
        """``command`` raises IllegalAction(code) naming ``words`` and changes nothing."""
        before = self.state
        snapshot = copy.deepcopy(before)
        with pytest.raises(IllegalAction) as info:
            execute(before, command)
        error = info.value
        assert error.code == code, error.message
        for word in words:
            assert word in error.message, f"{word!r} not in {error.message!r}"
        assert self.state is before
        assert before == snapshot
        assert replay(self.log) == before
        return error

    def stacks(self) -> dict[int, int]:
        return {x.seat: x.stack for x in self.state.seats}

    def conserved(self) -> None:
        """No chip was made or lost; at the end the pot is empty and HandEnded agrees."""
        total = sum(s.stack for s in self.setup.seats)
        assert sum(self.stacks().values()) + self.state.pot == total
        if self.state.ended:
            assert self.state.pot == 0
            end = self.log[-1]
            assert isinstance(end, HandEnded)
            assert dict(end.stacks) == self.stacks()


def shown(events: Sequence[Event]) -> list[int]:
    return [e.seat for e in events if isinstance(e, CardsShown)]


def pots(events: Sequence[Event]) -> list[PotAwarded]:
    return [e for e in events if isinstance(e, PotAwarded)]


def value(text: str) -> int:
    return evaluate(cards(text))
