"""Commands: what a seat (or the table) asks a hand to do, in the imperative.

``decide(state, command)`` turns a command into events or refuses it with an
:class:`IllegalAction` that says precisely why; a refused command changes
nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from felt.core.cards import Card
from felt.core.record import Record
from felt.core.rules.config import HandSetup


class ActionKind(StrEnum):
    """Betting actions. ``BET`` and ``RAISE`` take the amount to bet or raise *to*."""

    FOLD = "FOLD"
    CHECK = "CHECK"
    CALL = "CALL"
    BET = "BET"
    RAISE = "RAISE"
    ALL_IN = "ALL_IN"


@dataclass(frozen=True, slots=True, init=False)
class StartHand(Record):
    setup: HandSetup

    def __init__(self, setup: HandSetup) -> None:
        object.__setattr__(self, "setup", setup)


@dataclass(frozen=True, slots=True, init=False)
class Act(Record):
    """A betting action by ``seat``; ``amount`` is the raise-to total for BET/RAISE."""

    seat: int
    kind: ActionKind
    amount: int = 0

    def __init__(self, seat: int, kind: ActionKind, amount: int = 0) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "amount", amount)


@dataclass(frozen=True, slots=True, init=False)
class Discard(Record):
    """Draw: ``seat`` throws away ``cards`` (0 to 3 of its own) and draws as many."""

    seat: int
    cards: tuple[Card, ...]

    def __init__(self, seat: int, cards: tuple[Card, ...]) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "cards", cards)


@dataclass(frozen=True, slots=True)
class ShowCards(Record):
    """After the hand, ``seat`` (dealt in, cards not yet shown) shows its hand."""

    seat: int


@dataclass(frozen=True, slots=True, init=False)
class Forfeit(Record):
    """``seat``'s player left the table: its cards are folded at its turn, bet or no bet.

    Not a player's action (a player who may check cannot fold, ``CANNOT_FOLD``):
    the table plays it for a seat whose occupant has gone, so that nobody wins
    a pot by checking it down while away.
    """

    seat: int

    def __init__(self, seat: int) -> None:
        object.__setattr__(self, "seat", seat)


Command = StartHand | Act | Discard | ShowCards | Forfeit


class IllegalAction(Exception):
    """A command the rules refuse. ``code`` is stable for clients; the message is for people.

    Codes: ``NOT_YOUR_TURN``, ``HAND_NOT_RUNNING``, ``UNKNOWN_SEAT``,
    ``CANNOT_CHECK``, ``CANNOT_FOLD``, ``NOTHING_TO_CALL``, ``BELOW_MIN_RAISE``,
    ``ABOVE_MAX_RAISE``, ``OVER_STACK``, ``RAISE_NOT_ALLOWED``, ``WRONG_PHASE``,
    ``BAD_DISCARD``, ``BAD_SETUP``, ``ALREADY_SHOWN``, ``ALREADY_MUCKED``, ``HAND_RUNNING``.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
