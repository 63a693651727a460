"""What the hand archive holds: finished hands, their seats, pots and events, and statistics.

A hand is named by its public id (``HandSetup.public_id``, unguessable); its
table's own count (``<table_id>:<n>``, ``table_hand_id``) is kept for
operators and to relate it to the live stream. Every event is kept as the
exact ``poker.events.v1.StoredEvent`` bytes the stream held, with its
sequence and time, so a hand can be folded again and redacted for any viewer
later: the archive decides nothing about who may see what.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from felt.core.cards import Card


@dataclass(frozen=True, slots=True)
class ArchivedEvent:
    """One stored event of a hand: the stream's bytes, unchanged."""

    sequence: int
    recorded_at: datetime
    payload: bytes


@dataclass(frozen=True, slots=True)
class SeatSummary:
    """One dealt-in seat's result and the flags its player's statistics add up.

    ``net`` is the stack at the end less the stack at the start. ``vpip``: put
    chips in the pot voluntarily in the first betting round (a call or a bet;
    blinds and antes are not voluntary); ``pfr``: bet or raised in it;
    ``went_to_showdown``: still in the hand when two or more seats were left at
    its end; ``won_at_showdown``: went to showdown and won chips from a pot.
    """

    seat: int
    player_id: str
    stack_start: int
    stack_end: int
    net: int
    vpip: bool
    pfr: bool
    went_to_showdown: bool
    won_at_showdown: bool


@dataclass(frozen=True, slots=True)
class ArchivedSeat:
    """Who sat at a seat in the hand (as the table recorded them), and how it went."""

    summary: SeatSummary
    display_name: str
    ai_level: str
    shown: tuple[Card, ...] = ()

    @property
    def seat(self) -> int:
        return self.summary.seat

    @property
    def player_id(self) -> str:
        return self.summary.player_id


@dataclass(frozen=True, slots=True)
class ArchivedPot:
    """A pot as awarded: ``shares`` are ``(seat, chips)``; ``hand`` names the winning hand."""

    index: int
    amount: int
    eligible: tuple[int, ...]
    shares: tuple[tuple[int, int], ...]
    hand: str = ""


@dataclass(frozen=True, slots=True)
class ArchivedHand:
    """One finished hand, everything needed to show, replay or verify it.

    ``deck_root``/``deck_leaf_count`` are the deck commitment published before
    the first card (the seed that opens it is in the ``DeckCommitted`` event's
    bytes, secret like everything a redaction removes). ``events`` run from
    the hand's ``DeckCommitted`` to its ``HandEnded`` and then any event of the
    hand recorded later (a voluntary show), in sequence order.
    """

    hand_id: str
    table_id: str
    table_hand_id: str
    number: int
    variant: str
    button: int
    started_at: datetime
    ended_at: datetime
    deck_root: str
    deck_leaf_count: int
    board: tuple[Card, ...]
    seats: tuple[ArchivedSeat, ...]
    pots: tuple[ArchivedPot, ...]
    events: tuple[ArchivedEvent, ...]

    @property
    def first_sequence(self) -> int:
        return self.events[0].sequence

    @property
    def last_sequence(self) -> int:
        return self.events[-1].sequence

    def with_late(self, item: LateEvent) -> ArchivedHand:
        """The hand with a late event added (and the cards it shows on its seat)."""
        seats = tuple(
            replace(s, shown=item.shown) if s.seat == item.seat and item.shown else s
            for s in self.seats
        )
        return replace(self, seats=seats, events=(*self.events, item.event))


@dataclass(frozen=True, slots=True)
class LateEvent:
    """An event of an archived hand recorded after its end: a seat showing its cards."""

    hand_id: str
    event: ArchivedEvent
    seat: int
    shown: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class HandHeader:
    """A hand in a listing of a table's hands."""

    hand_id: str
    table_id: str
    number: int
    variant: str
    started_at: datetime
    ended_at: datetime


@dataclass(frozen=True, slots=True)
class PlayerHand:
    """A hand in a player's history: where it was played and how it went for them."""

    hand_id: str
    table_id: str
    number: int
    variant: str
    ended_at: datetime
    summary: SeatSummary


@dataclass(frozen=True, slots=True)
class PlayerPageKey:
    """Where a page of a player's hands ends (keyset paging, newest first)."""

    ended_at: datetime
    hand_id: str


@dataclass(frozen=True, slots=True)
class PlayerStats:
    """A player's statistics over every archived hand they were dealt into (counts of hands)."""

    player_id: str
    hands: int = 0
    net: int = 0
    vpip: int = 0
    pfr: int = 0
    went_to_showdown: int = 0
    won_at_showdown: int = 0


@dataclass(frozen=True, slots=True)
class Cursor:
    """How far the projector has read a table's stream, and what it must remember from it.

    ``position`` is the last sequence whose consequences are all in the archive
    (every hand up to it written); reading resumes after it. ``players`` maps
    each occupied seat to ``(player_id, display_name, ai_level)``, as seated by
    events the stream may no longer hold; ``last_hand`` is the public id of
    the last hand archived and ``last_table_hand`` its ``<table>:<n>``, so a
    show recorded after its end joins it. ``fingerprint`` is a digest of the
    event at ``position`` (``projection.fingerprint_of``; "" for a cursor
    stored before there was one): after a Redis restart the projector checks
    the stream still holds that very event there, not another history's.
    """

    position: int = 0
    players: tuple[tuple[int, str, str, str], ...] = ()
    last_hand: str = ""
    last_table_hand: str = ""
    fingerprint: str = ""


@dataclass(frozen=True, slots=True)
class TableWrite:
    """One table's part of a write: its hands, late events and table events, its cursor moving on.

    ``table_events`` are the stream's events of no hand (the table created,
    players seated, chips added, players leaving with their stacks, snapshots,
    the table closed): the archived mark lets the stream be trimmed below the
    cursor, so everything below it must be in the archive.

    Applied only if the table's stored position is still ``expected``.
    """

    table_id: str
    expected: int
    cursor: Cursor
    hands: tuple[ArchivedHand, ...] = ()
    late: tuple[LateEvent, ...] = ()
    table_events: tuple[ArchivedEvent, ...] = ()
