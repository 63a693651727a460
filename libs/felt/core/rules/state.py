"""Hand state: what a fold of hand events yields.

``HandState``/``SeatState`` are the immutable snapshots every caller sees.
The engine folds a command's events into a private working copy (see
``felt.core.rules.engine.HandMachine``) and freezes it once, instead of copying
the whole state for every event; both forms share the read-only queries of
:class:`HandQueries`/:class:`SeatQueries`, so the rules that read state
(legal actions, pots, views) accept either.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from felt.core.cards import Card
from felt.core.rules.config import HandSetup, Variant
from felt.core.rules.events import Street
from felt.core.rules.variants import VariantRules, rules_for


class SeatQueries(Protocol):
    """Read-only questions about a seat, common to snapshots and working copies.

    A protocol, so that the engine's working copies (``felt.core.rules.fold``) can be
    compiled classes of their own rather than subclasses of this one.
    """

    __slots__ = ()
    seat: int
    player_id: str
    stack: int
    bet: int
    committed: int
    ante: int
    hole: tuple[Card, ...]
    folded: bool
    acted: bool
    matched: int
    drawn: int | None
    shown: bool
    mucked: bool

    @property
    def all_in(self) -> bool:
        """Still in the hand with no chips behind."""
        return self.stack == 0 and not self.folded

    @property
    def in_hand(self) -> bool:
        return not self.folded


@dataclass(frozen=True, slots=True)
class SeatState(SeatQueries):
    """One dealt-in seat during a hand.

    ``bet`` is what the seat has put in during the current round; ``committed``
    is everything it has put into the pot this hand, antes included; ``ante``
    is the dead part of it (antes go to the main pot, so side pots are cut
    from ``committed - ante``). ``acted`` is True once the seat has acted
    this betting round, and ``matched`` is the bet it faced when it last
    acted: together they decide, for this seat alone, whether the bet has
    grown enough since then to reopen its option (``legal.may_raise``).
    """

    seat: int
    player_id: str
    stack: int
    bet: int = 0
    committed: int = 0
    ante: int = 0
    hole: tuple[Card, ...] = ()
    folded: bool = False
    acted: bool = False
    matched: int = 0
    drawn: int | None = None
    shown: bool = False
    mucked: bool = False


SEAT_FIELDS = tuple(SeatState.__dataclass_fields__)


class HandQueries(Protocol):
    """Read-only questions about a hand, common to snapshots and working copies (a protocol)."""

    __slots__ = ()
    setup: HandSetup
    street: Street
    actor: int | None
    current_bet: int
    last_raise: int
    full_level: int
    raises: int
    aggressor: int | None
    board: tuple[Card, ...]
    deck_pos: int
    awarded: int
    ended: bool

    @property
    def seats(self) -> Sequence[SeatQueries]:
        """Dealt-in seats in dealing order."""
        ...

    @property
    def variant(self) -> Variant:
        return self.setup.variant

    @property
    def game(self) -> VariantRules:
        """The definition of the hand's variant (the working copy keeps it in a field)."""
        return rules_for(self.setup.variant)

    @property
    def pot(self) -> int:
        """Chips in the middle (all rounds, current bets included) not yet awarded."""
        return sum(s.committed for s in self.seats) - self.awarded

    def index_of(self, seat: int) -> int | None:
        """Position in ``seats`` of a table seat number, or None if not dealt in."""
        for i, s in enumerate(self.seats):
            if s.seat == seat:
                return i
        return None

    def seat_state(self, seat: int) -> SeatQueries | None:
        i = self.index_of(seat)
        return None if i is None else self.seats[i]

    @property
    def actor_seat(self) -> int | None:
        """Table seat number of the seat to act, if any."""
        return None if self.actor is None else self.seats[self.actor].seat


@dataclass(frozen=True, slots=True)
class HandState(HandQueries):
    """The state of one hand (an immutable snapshot).

    ``seats`` are in dealing order (clockwise from the left of the button);
    ``actor`` indexes into it. ``current_bet`` is the amount to match this
    round; ``last_raise`` the size of the last full bet or raise (NLHE
    min-raise); ``full_level`` the last bet level that counted as a full bet
    (Draw: the next raise goes one fixed bet above it); ``raises`` counts full
    bets and raises this round (Draw's cap); ``aggressor`` is the index of the
    last seat to bet or raise this round (showdown order).
    """

    setup: HandSetup
    street: Street
    seats: tuple[SeatState, ...]
    actor: int | None = None
    current_bet: int = 0
    last_raise: int = 0
    full_level: int = 0
    raises: int = 0
    aggressor: int | None = None
    board: tuple[Card, ...] = ()
    deck_pos: int = 0
    awarded: int = 0
    ended: bool = False

    def seat_state(self, seat: int) -> SeatState | None:
        i = self.index_of(seat)
        return None if i is None else self.seats[i]


HAND_FIELDS = tuple(HandState.__dataclass_fields__)
