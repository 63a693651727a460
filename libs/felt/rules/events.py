"""Hand events: the facts a hand is made of, named in the past tense.

Events are the only way hand state changes (``apply``), and a hand is rebuilt
by folding its events. They are immutable and never change meaning once
stored; a new fact gets a new event type. Amounts are integer chips.

Card fields may hold ``None`` entries only in *redacted* copies (see
``felt.rules.views``): a hidden card is ``None``; the live event log always
holds real cards.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from felt.cards import Card
from felt.rules.config import HandSetup

MaybeCard = Card | None


class Street(StrEnum):
    """Betting rounds and phases. Draw uses FIRST_BET, DRAW, SECOND_BET."""

    PREFLOP = "PREFLOP"
    FLOP = "FLOP"
    TURN = "TURN"
    RIVER = "RIVER"
    FIRST_BET = "FIRST_BET"
    DRAW = "DRAW"
    SECOND_BET = "SECOND_BET"
    SHOWDOWN = "SHOWDOWN"
    COMPLETE = "COMPLETE"


@dataclass(frozen=True, slots=True)
class HandStarted:
    """A hand began with this setup (including the deck; views drop it)."""

    setup: HandSetup


@dataclass(frozen=True, slots=True)
class AntePosted:
    seat: int
    amount: int
    all_in: bool


@dataclass(frozen=True, slots=True)
class BlindPosted:
    seat: int
    amount: int
    all_in: bool


@dataclass(frozen=True, slots=True)
class HoleCardsDealt:
    """Private cards dealt to ``seat`` from these deck positions (for deal proofs)."""

    seat: int
    cards: tuple[MaybeCard, ...]
    deck_positions: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PlayerFolded:
    seat: int


@dataclass(frozen=True, slots=True)
class PlayerChecked:
    seat: int


@dataclass(frozen=True, slots=True)
class PlayerCalled:
    """``seat`` matched the bet by adding ``amount`` chips (all of them if all-in)."""

    seat: int
    amount: int
    all_in: bool


@dataclass(frozen=True, slots=True)
class BetPlaced:
    """``seat`` bet or raised to ``to`` chips this round, adding ``amount``.

    ``full`` is False for an all-in that is less than a full bet or raise,
    which does not reopen the betting for players who already acted.
    """

    seat: int
    to: int
    amount: int
    all_in: bool
    full: bool


@dataclass(frozen=True, slots=True)
class CardsDrawn:
    """Draw: ``seat`` discarded ``discarded`` and received ``drawn`` (same count)."""

    seat: int
    discarded: tuple[MaybeCard, ...]
    drawn: tuple[MaybeCard, ...]
    deck_positions: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class StreetStarted:
    """A new round began; for Hold'em ``cards`` are the board cards it dealt."""

    street: Street
    cards: tuple[Card, ...] = ()
    deck_positions: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class UncalledBetReturned:
    seat: int
    amount: int


@dataclass(frozen=True, slots=True)
class CardsShown:
    """``seat`` showed its hand (at showdown, all-in, or voluntarily)."""

    seat: int
    cards: tuple[Card, ...]
    voluntary: bool = False


@dataclass(frozen=True, slots=True)
class CardsMucked:
    """``seat`` gave up its hand unseen at showdown."""

    seat: int


@dataclass(frozen=True, slots=True)
class PotAwarded:
    """Pot ``index`` (0 = main pot) of ``amount`` chips went to ``shares``.

    ``shares`` are ``(seat, chips)`` pairs; odd chips are already placed one
    at a time clockwise from the left of the button. ``hand`` names the
    winning hand (empty when everyone else folded).
    """

    index: int
    amount: int
    eligible: tuple[int, ...]
    shares: tuple[tuple[int, int], ...]
    hand: str = ""


@dataclass(frozen=True, slots=True)
class HandEnded:
    """The hand is over; ``stacks`` are every dealt-in seat's final stack."""

    stacks: tuple[tuple[int, int], ...]


Event = (
    HandStarted
    | AntePosted
    | BlindPosted
    | HoleCardsDealt
    | PlayerFolded
    | PlayerChecked
    | PlayerCalled
    | BetPlaced
    | CardsDrawn
    | StreetStarted
    | UncalledBetReturned
    | CardsShown
    | CardsMucked
    | PotAwarded
    | HandEnded
)
