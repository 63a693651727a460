"""One table's stream folded into archive rows: where hands begin and end, and what they were.

Pure (no I/O): the projector feeds it the table's records in order and
takes batches to write. A hand runs from its ``DeckCommitted`` to its
``HandEnded``, every event in between whose envelope names the hand (table
events during a hand do: a seat timing out or sitting out); a hand event
recorded after the end (a voluntary show) is a :class:`LateEvent` of that
hand; every other event (of no hand: the table created, seats taken and left
with their stacks, chips added, snapshots) is a table event, archived too, since
the stream is trimmed below the cursor. The batch's cursor position is the last
sequence fed with no hand open, so a hand half read when the projector stops is
read again from its start.
The cursor also holds a fingerprint of the event at its position, which the
projector compares with the stream's before resuming (a Redis that lost a tail
and was written again holds another event there).
The players the cursor remembers are those seated at that position, which is
all the projector needs of the stream before it (the stream may be trimmed
there once archived).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime

from felt.core.cards import Card
from felt.core.rules.config import public_hand_id
from felt.core.rules.events import (
    CardsShown,
    Event,
    HandEnded,
    HandStarted,
    PotAwarded,
    StreetStarted,
)
from felt.core.table.events import DeckCommitted, PlayerLeft, PlayerSeated, is_hand_event
from felt.storage.archive.summary import seat_summaries
from felt.storage.archive.values import (
    ArchivedEvent,
    ArchivedHand,
    ArchivedPot,
    ArchivedSeat,
    Cursor,
    LateEvent,
)
from felt.storage.eventstore.base import StoredRecord
from felt.storage.eventstore.codec import decode_event

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

Players = dict[int, tuple[str, str, str]]


def fingerprint_of(payload: bytes) -> str:
    """A digest of one stored event (its payload holds its time and hand id: two histories
    that reach the same sequence hold different payloads there)."""
    return hashlib.blake2b(payload, digest_size=12).hexdigest()


@dataclass
class _OpenHand:
    commitment: DeckCommitted
    table_hand_id: str
    events: list[ArchivedEvent] = field(default_factory=list)
    hand_events: list[Event] = field(default_factory=list)
    players: Players = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Batch:
    """What to write for a table: the cursor after it, and what was finished since the last one."""

    cursor: Cursor
    hands: tuple[ArchivedHand, ...]
    late: tuple[LateEvent, ...]
    table_events: tuple[ArchivedEvent, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.hands or self.late or self.table_events)


class TableProjection:
    """Follows one table's records from a stored :class:`Cursor` (see the module docstring)."""

    def __init__(self, table_id: str, cursor: Cursor) -> None:
        self.table_id = table_id
        self.read_to = cursor.position
        self._position = cursor.position
        self._players: Players = {seat: (p, n, a) for seat, p, n, a in cursor.players}
        self._safe_players = dict(self._players)
        self._last_hand = cursor.last_hand
        self._last_table_hand = cursor.last_table_hand
        self._fingerprint = cursor.fingerprint
        self._open: _OpenHand | None = None
        self._hands: list[ArchivedHand] = []
        self._late: list[LateEvent] = []
        # Events of no hand, oldest first: taken once the position passes them (one fed
        # while a hand is open is read again from the cursor after a restart).
        self._table_events: list[ArchivedEvent] = []

    @property
    def position(self) -> int:
        """The last sequence whose consequences are all in the pending batch or earlier ones."""
        return self._position

    @property
    def hand_open(self) -> bool:
        return self._open is not None

    @property
    def has_pending(self) -> bool:
        """Whether finished hands, late events or table events up to the position wait."""
        ripe = bool(self._table_events) and self._table_events[0].sequence <= self._position
        return bool(self._hands or self._late) or ripe

    def feed(self, record: StoredRecord) -> None:
        """Fold the next record (sequences must follow on from ``read_to``)."""
        if record.sequence != self.read_to + 1:
            raise ValueError(f"{self.table_id}: expected {self.read_to + 1}, got {record.sequence}")
        event, meta = decode_event(record.payload)
        self.read_to = record.sequence
        stored = ArchivedEvent(record.sequence, meta.recorded_at or _EPOCH, record.payload)
        if isinstance(event, PlayerSeated):
            self._players[event.seat] = (event.player_id, event.name, event.ai_level)
        elif isinstance(event, PlayerLeft):
            self._players.pop(event.seat, None)
        hand = self._open
        if isinstance(event, DeckCommitted):
            hand = self._open = _OpenHand(event, event.hand_id, [stored])
        elif hand is not None and (
            meta.hand_id == hand.table_hand_id or (not meta.hand_id and is_hand_event(event))
        ):
            hand.events.append(stored)
            if is_hand_event(event):
                if isinstance(event, HandStarted):
                    hand.players = dict(self._players)
                hand.hand_events.append(event)
                if isinstance(event, HandEnded):
                    self._finish(hand)
        elif self._last_table_hand and (
            meta.hand_id == self._last_table_hand
            or (not meta.hand_id and isinstance(event, CardsShown))
        ):
            self._late_event(stored, event)
        else:
            self._table_events.append(stored)
        if self._open is None:
            self._position = record.sequence
            self._fingerprint = fingerprint_of(record.payload)
            self._safe_players = dict(self._players)

    def take(self) -> Batch:
        """The pending batch (hands finished, late events) with its cursor; starts a new one."""
        ripe = [e for e in self._table_events if e.sequence <= self._position]
        self._table_events = self._table_events[len(ripe) :]
        batch = Batch(self.cursor(), tuple(self._hands), tuple(self._late), tuple(ripe))
        self._hands, self._late = [], []
        return batch

    def cursor(self) -> Cursor:
        players = tuple((s, *self._safe_players[s]) for s in sorted(self._safe_players))
        return Cursor(
            self._position, players, self._last_hand, self._last_table_hand, self._fingerprint
        )

    def _late_event(self, stored: ArchivedEvent, event: object) -> None:
        seat, shown = -1, tuple[Card, ...]()
        if isinstance(event, CardsShown):
            seat, shown = event.seat, event.cards
        self._late.append(LateEvent(self._last_hand, stored, seat, shown))

    def _finish(self, hand: _OpenHand) -> None:
        self._open = None
        archived = build_hand(
            self.table_id, hand.commitment, hand.events, hand.hand_events, hand.players
        )
        self._hands.append(archived)
        self._last_hand, self._last_table_hand = archived.hand_id, hand.table_hand_id


def build_hand(
    table_id: str,
    commitment: DeckCommitted,
    events: list[ArchivedEvent],
    hand_events: list[Event],
    players: Players,
) -> ArchivedHand:
    """The archive's record of a finished hand from its stored and decoded events."""
    started = hand_events[0]
    if not isinstance(started, HandStarted):
        raise ValueError(f"hand {commitment.hand_id} does not begin with HandStarted")
    setup = started.setup
    board: list[Card] = []
    pots: list[ArchivedPot] = []
    shown: dict[int, tuple[Card, ...]] = {}
    for e in hand_events:
        if isinstance(e, StreetStarted):
            board.extend(e.cards)
        elif isinstance(e, PotAwarded):
            pots.append(ArchivedPot(e.index, e.amount, e.eligible, e.shares, e.hand))
        elif isinstance(e, CardsShown):
            shown[e.seat] = e.cards
    seats = []
    for summary in seat_summaries(hand_events):
        _, name, ai_level = players.get(summary.seat, (summary.player_id, "", ""))
        seats.append(ArchivedSeat(summary, name, ai_level, shown.get(summary.seat, ())))
    number = setup.hand_id.rsplit(":", 1)[-1]
    return ArchivedHand(
        hand_id=public_hand_id(setup),
        table_id=table_id,
        table_hand_id=setup.hand_id,
        number=int(number) if number.isdigit() else 0,
        variant=setup.variant.value,
        button=setup.button,
        started_at=events[0].recorded_at,
        ended_at=events[-1].recorded_at,
        deck_root=commitment.root,
        deck_leaf_count=commitment.leaf_count,
        board=tuple(board),
        seats=tuple(seats),
        pots=tuple(pots),
        events=tuple(events),
    )
