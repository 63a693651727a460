"""Hand events: the facts a hand is made of, named in the past tense.

Events are the only way hand state changes (``apply``), and a hand is rebuilt
by folding its events. They are immutable and never change meaning once
stored; a new fact gets a new event type. Amounts are integer chips.

Card fields may hold ``None`` entries only in *redacted* copies (see
``felt.core.rules.views``): a hidden card is ``None``; the live event log always
holds real cards.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from felt.core.cards import Card
from felt.core.record import Record
from felt.core.rules.config import HandSetup

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


@dataclass(frozen=True, slots=True, init=False)
class HandStarted(Record):
    """A hand began with this setup (including the deck; views drop it)."""

    setup: HandSetup

    def __init__(self, setup: HandSetup) -> None:
        object.__setattr__(self, "setup", setup)


@dataclass(frozen=True, slots=True, init=False)
class AntePosted(Record):
    seat: int
    amount: int
    all_in: bool

    def __init__(self, seat: int, amount: int, all_in: bool) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "amount", amount)
        object.__setattr__(self, "all_in", all_in)


@dataclass(frozen=True, slots=True, init=False)
class BlindPosted(Record):
    seat: int
    amount: int
    all_in: bool

    def __init__(self, seat: int, amount: int, all_in: bool) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "amount", amount)
        object.__setattr__(self, "all_in", all_in)


@dataclass(frozen=True, slots=True, init=False)
class HoleCardsDealt(Record):
    """Private cards dealt to ``seat`` from these deck positions (for deal proofs)."""

    seat: int
    cards: tuple[MaybeCard, ...]
    deck_positions: tuple[int, ...]

    def __init__(
        self, seat: int, cards: tuple[MaybeCard, ...], deck_positions: tuple[int, ...]
    ) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "cards", cards)
        object.__setattr__(self, "deck_positions", deck_positions)


@dataclass(frozen=True, slots=True, init=False)
class PlayerFolded(Record):
    seat: int

    def __init__(self, seat: int) -> None:
        object.__setattr__(self, "seat", seat)


@dataclass(frozen=True, slots=True, init=False)
class PlayerChecked(Record):
    seat: int

    def __init__(self, seat: int) -> None:
        object.__setattr__(self, "seat", seat)


@dataclass(frozen=True, slots=True, init=False)
class PlayerCalled(Record):
    """``seat`` matched the bet by adding ``amount`` chips (all of them if all-in)."""

    seat: int
    amount: int
    all_in: bool

    def __init__(self, seat: int, amount: int, all_in: bool) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "amount", amount)
        object.__setattr__(self, "all_in", all_in)


@dataclass(frozen=True, slots=True, init=False)
class BetPlaced(Record):
    """``seat`` bet or raised to ``to`` chips this round, adding ``amount``.

    ``full`` is False for an all-in that is less than a full bet or raise,
    which does not reopen the betting for players who already acted.
    """

    seat: int
    to: int
    amount: int
    all_in: bool
    full: bool

    def __init__(self, seat: int, to: int, amount: int, all_in: bool, full: bool) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "to", to)
        object.__setattr__(self, "amount", amount)
        object.__setattr__(self, "all_in", all_in)
        object.__setattr__(self, "full", full)


@dataclass(frozen=True, slots=True, init=False)
class CardsDrawn(Record):
    """Draw: ``seat`` discarded ``discarded`` and received ``drawn`` (same count)."""

    seat: int
    discarded: tuple[MaybeCard, ...]
    drawn: tuple[MaybeCard, ...]
    deck_positions: tuple[int, ...]

    def __init__(
        self,
        seat: int,
        discarded: tuple[MaybeCard, ...],
        drawn: tuple[MaybeCard, ...],
        deck_positions: tuple[int, ...],
    ) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "discarded", discarded)
        object.__setattr__(self, "drawn", drawn)
        object.__setattr__(self, "deck_positions", deck_positions)


@dataclass(frozen=True, slots=True, init=False)
class StreetStarted(Record):
    """A new round began; for Hold'em ``cards`` are the board cards it dealt."""

    street: Street
    cards: tuple[Card, ...] = ()
    deck_positions: tuple[int, ...] = ()

    def __init__(
        self, street: Street, cards: tuple[Card, ...] = (), deck_positions: tuple[int, ...] = ()
    ) -> None:
        object.__setattr__(self, "street", street)
        object.__setattr__(self, "cards", cards)
        object.__setattr__(self, "deck_positions", deck_positions)


@dataclass(frozen=True, slots=True, init=False)
class UncalledBetReturned(Record):
    seat: int
    amount: int

    def __init__(self, seat: int, amount: int) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "amount", amount)


@dataclass(frozen=True, slots=True, init=False)
class CardsShown(Record):
    """``seat`` showed its hand (at showdown, all-in, or voluntarily)."""

    seat: int
    cards: tuple[Card, ...]
    voluntary: bool = False

    def __init__(self, seat: int, cards: tuple[Card, ...], voluntary: bool = False) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "cards", cards)
        object.__setattr__(self, "voluntary", voluntary)


@dataclass(frozen=True, slots=True, init=False)
class CardsMucked(Record):
    """``seat`` gave up its hand unseen at showdown."""

    seat: int

    def __init__(self, seat: int) -> None:
        object.__setattr__(self, "seat", seat)


@dataclass(frozen=True, slots=True, init=False)
class PotAwarded(Record):
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

    def __init__(
        self,
        index: int,
        amount: int,
        eligible: tuple[int, ...],
        shares: tuple[tuple[int, int], ...],
        hand: str = "",
    ) -> None:
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "amount", amount)
        object.__setattr__(self, "eligible", eligible)
        object.__setattr__(self, "shares", shares)
        object.__setattr__(self, "hand", hand)


@dataclass(frozen=True, slots=True, init=False)
class HandEnded(Record):
    """The hand is over; ``stacks`` are every dealt-in seat's final stack."""

    stacks: tuple[tuple[int, int], ...]

    def __init__(self, stacks: tuple[tuple[int, int], ...]) -> None:
        object.__setattr__(self, "stacks", stacks)


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
