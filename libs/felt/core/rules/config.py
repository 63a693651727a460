"""What a hand is played with: variant, seats, forced bets, limits and the deck.

The table (not the hand) decides who is dealt in, where the button is and who
posts what (dead-button rule, heads-up adjustment); a hand only receives the
result as a :class:`HandSetup`, which is recorded in ``HandStarted`` so the
hand can be rebuilt from its events alone.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum

from felt.core.cards import Card
from felt.core.record import Record


class Variant(StrEnum):
    """The games Felt plays."""

    NLHE = "NLHE"
    DRAW5 = "DRAW5"


@dataclass(frozen=True, slots=True, init=False)
class SeatSetup(Record):
    """One seat dealt into a hand.

    ``ante`` and ``blind`` are what the seat is obliged to post; it posts less
    (and is all-in) when its stack is smaller. ``blind`` is a live bet (big and
    small blind, straddle); ``ante`` is dead money that goes straight to the pot.
    """

    seat: int
    stack: int
    player_id: str = ""
    ante: int = 0
    blind: int = 0

    def __init__(
        self, seat: int, stack: int, player_id: str = "", ante: int = 0, blind: int = 0
    ) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "stack", stack)
        object.__setattr__(self, "player_id", player_id)
        object.__setattr__(self, "ante", ante)
        object.__setattr__(self, "blind", blind)


@dataclass(frozen=True, slots=True, init=False)
class HandSetup(Record):
    """Everything a hand needs before the first card.

    ``seats`` are in dealing order: clockwise starting with the first seat left
    of the button (so the button, when dealt in, is last). The button itself
    may be dead (a seat number no one dealt in sits at).

    NLHE: ``min_bet`` is the big blind (minimum bet and minimum raise).
    DRAW5: ``small_bet``/``big_bet`` are the fixed bet sizes of the first and
    second round, ``raise_cap`` counts full bets and raises per round, and
    ``allow_all_in`` enables virtual all-in (short calls and side pots).
    """

    hand_id: str
    variant: Variant
    button: int
    seats: tuple[SeatSetup, ...]
    deck: tuple[Card, ...]
    min_bet: int = 0
    small_bet: int = 0
    big_bet: int = 0
    raise_cap: int = 4
    allow_all_in: bool = True
    public_id: str = ""

    def __init__(
        self,
        hand_id: str,
        variant: Variant,
        button: int,
        seats: tuple[SeatSetup, ...],
        deck: tuple[Card, ...],
        min_bet: int = 0,
        small_bet: int = 0,
        big_bet: int = 0,
        raise_cap: int = 4,
        allow_all_in: bool = True,
        public_id: str = "",
    ) -> None:
        object.__setattr__(self, "hand_id", hand_id)
        object.__setattr__(self, "variant", variant)
        object.__setattr__(self, "button", button)
        object.__setattr__(self, "seats", seats)
        object.__setattr__(self, "deck", deck)
        object.__setattr__(self, "min_bet", min_bet)
        object.__setattr__(self, "small_bet", small_bet)
        object.__setattr__(self, "big_bet", big_bet)
        object.__setattr__(self, "raise_cap", raise_cap)
        object.__setattr__(self, "allow_all_in", allow_all_in)
        object.__setattr__(self, "public_id", public_id)


PUBLIC_ID_BYTES = 16
"""Random bytes in a hand's public id (128 bits, written as 32 lowercase hex digits)."""


def public_id_from(random_bytes: bytes) -> str:
    """The public id a hand gets from the table service's random bytes."""
    if len(random_bytes) != PUBLIC_ID_BYTES:
        raise ValueError(f"a hand's public id takes {PUBLIC_ID_BYTES} random bytes")
    return random_bytes.hex()


def public_hand_id(setup: HandSetup) -> str:
    """The hand's unguessable public id, the name clients and the archive know it by.

    Hands dealt since the id existed carry it (``setup.public_id``, drawn by the
    table service). A hand recorded before has none; its id is derived from
    what only the server ever held for it, its shuffled deck (52 cards in
    secret order, ~225 bits), with its internal id so two tables dealt the same
    deck (fixed test seeds) still differ. The derivation reads nothing but the
    stored event, so every rebuild, the archive and replays agree on it, and a
    stored event keeps its meaning.
    """
    if setup.public_id or not setup.deck:
        return setup.public_id  # a redacted copy of an old hand: its id is not knowable
    digest = hashlib.sha256(b"felt/public-hand-id/v1\0")
    digest.update(setup.hand_id.encode())
    digest.update(b"\0")
    digest.update(bytes(setup.deck))
    return digest.hexdigest()[: 2 * PUBLIC_ID_BYTES]
