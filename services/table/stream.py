"""A table's stream as its runtime reads it: rebuilding, hand ids, turns, times (no I/O).

``services.table.runtime`` caches one table and drives it; what it derives
from the events themselves is here, pure: the fold of a whole stream on
load (:func:`rebuild`: ``felt.core.table.aggregate.fold`` of the decoded stream,
skimming hands that are over), which hand each new
event belongs to (:func:`hand_ids`), whether an event starts a fresh action
clock (:func:`starts_turn`), where decks and seats' occupants are
(:func:`track`), and the times derived from a state.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from google.protobuf.message import DecodeError
from google.protobuf.timestamp_pb2 import Timestamp

from felt.core.rules.events import HandEnded, HandStarted
from felt.core.table.aggregate import Skim, SkimmedAction, SkimmedDeal, TableState, fold
from felt.core.table.events import (
    ActionTimedOut,
    AnyEvent,
    DeckCommitted,
    PlayerLeft,
    PlayerSeated,
    TableEvent,
    TableSnapshotTaken,
)
from felt.messages.events import EVENT_KINDS, from_stored_event, skim_from_stored
from felt.messages.upcast import upcast
from felt.messages.values import CodecError
from felt.storage.eventstore import StoredRecord
from poker.events.v1 import events_pb2 as epb

_TABLE_EVENTS: tuple[type, ...] = TableEvent.__args__


# The StoredEvent fields a skim needs nothing of (no skim column in EVENT_KINDS): in the
# hands a rebuild skims, these are not even decoded.
_IGNORED_BY_SKIM = frozenset(k.field for k in EVENT_KINDS if k.skim is None)
# The table events' fields: the only events :func:`track` notes.
_TRACKED = frozenset(k.field for k in EVENT_KINDS if k.event in _TABLE_EVENTS)


@dataclass(frozen=True, slots=True)
class Rebuilt:
    """What a runtime caches of a table, folded from its whole stream."""

    state: TableState | None
    version: int
    last_event_at: datetime | None
    turn_started_at: datetime | None  # when the seat to act got its turn
    deck_sequences: list[int]  # sequences of the DeckCommitted events
    hand_decks: dict[str, int]  # the same by hand id
    seated_at: dict[int, int]  # seat -> sequence of its current occupant's PlayerSeated
    snapshot: int = 0  # sequence of the last snapshot folded (0: none)
    snapshot_at: datetime | None = None  # when it was written


def rebuild(records: Sequence[StoredRecord]) -> Rebuilt:
    """Fold a table's stream: the whole of it, or from a snapshot on (``read_tail``).

    The one fold (``felt.core.table.aggregate.fold``) of the decoded events: hands
    before the last one skimmed (``skim=True``: only what outlives them), each
    event read through its skim column (``felt.messages.events.skim_from_stored``:
    a deal's variant and seats and an action's seat only, and the events a skim
    needs nothing of not decoded at all), folded as they are read; the rest
    applied. A snapshot first is the table as it was then (the fold starts
    from it), with its seats' occupants' sequences.
    """
    try:
        # Upcast first (idempotent; the decoders do it again for nothing): the kinds below
        # must be today's, or an upcaster that moves an event to another field would see it
        # skipped or misplaced here while every other reader sees the new shape.
        stored = [upcast(epb.StoredEvent.FromString(r.payload)) for r in records]
    except DecodeError as exc:
        raise CodecError(f"not a poker.events.v1.StoredEvent: {exc}") from exc
    kinds = [m.WhichOneof("event") for m in stored]
    last_hand = _last_index(kinds, "hand_started", 0)
    applied: list[AnyEvent] = []
    last_at: datetime | None = None
    turn_at: datetime | None = None
    decks: list[int] = []
    hands: dict[str, int] = {}
    seated: dict[int, int] = {}
    snapshot, snapshot_at = 0, None
    last_snapshot = _last_index(kinds, "table_snapshot_taken", -1)
    if last_snapshot >= 0:
        snapshot, message = records[last_snapshot].sequence, stored[last_snapshot]
        if message.HasField("recorded_at"):
            snapshot_at = message.recorded_at.ToDatetime(tzinfo=UTC)
    # The hands that are over: only what outlives them is folded (as it is read: no list
    # of them is kept), and times do not matter.
    skims = _skims(records[:last_hand], stored, kinds, decks, hands, seated)
    state = fold(None, skims, skim=True) if last_hand else None
    for i in range(last_hand, len(stored)):
        event, meta = from_stored_event(stored[i])
        applied.append(event)
        if meta.recorded_at is not None:
            last_at = meta.recorded_at
            if starts_turn(event):
                turn_at = last_at
        track(event, records[i].sequence, decks, hands, seated)
    if applied:
        state = fold(state, applied)
    version = records[-1].sequence if records else 0
    return Rebuilt(state, version, last_at, turn_at, decks, hands, seated, snapshot, snapshot_at)


# The events a fold can start from: the table's first, or a snapshot of it.
_FOLD_STARTS = frozenset({"table_created", "table_snapshot_taken"})


def fold_start(records: Sequence[StoredRecord]) -> int | None:
    """Index of the last record a fold can start from (a snapshot, or the table's creation).

    A trimmed stream's first kept event need not be one: the archiver trims only up to what
    is archived (a leave between hands can be archived alone), in pages. None: no record in
    ``records`` is one, so no state after them can be folded from them alone. Scans from the
    end, decoding one record at a time (most readers find a snapshot a hand back).
    """
    for index in range(len(records) - 1, -1, -1):
        try:
            kind = epb.StoredEvent.FromString(records[index].payload).WhichOneof("event")
        except DecodeError as exc:
            raise CodecError(f"not a poker.events.v1.StoredEvent: {exc}") from exc
        if kind in _FOLD_STARTS:
            return index
    return None


def _skims(
    records: Sequence[StoredRecord],
    stored: list[epb.StoredEvent],
    kinds: Sequence[str | None],
    decks: list[int],
    hands: dict[str, int],
    seated: dict[int, int],
) -> Iterator[AnyEvent | Skim]:
    """What a skim folds of ``records`` (their messages ``stored``, of ``kinds``), tracked."""
    for record, message, kind in zip(records, stored, kinds, strict=False):
        if kind in _IGNORED_BY_SKIM:
            continue
        skim = skim_from_stored(message)
        assert skim is not None
        if kind in _TRACKED:
            assert not isinstance(skim, (SkimmedAction, SkimmedDeal))
            track(skim, record.sequence, decks, hands, seated)
        yield skim


def _last_index(kinds: Sequence[str | None], kind: str, default: int) -> int:
    """Where the last event of ``kind`` is in ``kinds`` (``default``: none there)."""
    try:
        return len(kinds) - 1 - list(reversed(kinds)).index(kind)
    except ValueError:
        return default


def track(
    event: AnyEvent,
    sequence: int,
    decks: list[int],
    hands: dict[str, int],
    seated: dict[int, int],
) -> None:
    """Note where ``event`` (at ``sequence``) puts a deck, a hand or a seat's occupant."""
    if isinstance(event, DeckCommitted):
        decks.append(sequence)
        hands[event.hand_id] = sequence
    elif isinstance(event, PlayerSeated):
        seated[event.seat] = sequence
    elif isinstance(event, PlayerLeft):
        seated.pop(event.seat, None)
    elif isinstance(event, TableSnapshotTaken):
        # What the stream before it said (the same, unless it was trimmed away).
        seated.clear()
        seated.update(event.seated_at)


def hand_ids(before: TableState | None, events: list[AnyEvent]) -> list[str]:
    """The hand each event of a batch belongs to (``StoredEvent.hand_id``).

    Hand events belong to their hand (a voluntary show after its end too), and
    so does whatever happens while a hand runs; table events between hands
    belong to none ("").
    """
    hand = before.hand if before is not None else None
    current = hand.setup.hand_id if hand is not None else ""
    running = before is not None and before.hand_running
    out = []
    for event in events:
        if isinstance(event, DeckCommitted):
            out.append(event.hand_id)
            continue
        if isinstance(event, HandStarted):
            current, running = event.setup.hand_id, True
        if isinstance(event, _TABLE_EVENTS):
            out.append(current if running else "")
        else:
            out.append(current)
        if isinstance(event, HandEnded):
            running = False
    return out


def starts_turn(event: AnyEvent) -> bool:
    """Whether the seat to act after ``event`` starts a fresh action clock.

    Any hand event or time-out does; table events (seating, chips, sitting in
    or out) do not, so they cannot extend the clock of the seat to act.
    """
    return not isinstance(event, _TABLE_EVENTS) or isinstance(event, ActionTimedOut)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def timestamp(moment: datetime) -> Timestamp:
    """``Timestamp.FromDatetime`` (a naive datetime is UTC), without its detour through timegm."""
    since = moment - (_EPOCH if moment.tzinfo is not None else _EPOCH.replace(tzinfo=None))
    return Timestamp(seconds=since.days * 86_400 + since.seconds, nanos=since.microseconds * 1000)


def close_time(state: TableState) -> datetime | None:
    """When the table closes (``TableConfig.close_at_ms``), if ever."""
    ms = state.config.close_at_ms
    return datetime.fromtimestamp(ms / 1000, UTC) if ms else None


def deadline_of(state: TableState, turn_started_at: datetime | None) -> datetime | None:
    """When the seat to act is timed out (None without an action clock or an actor)."""
    hand = state.hand
    if hand is None or hand.ended or hand.actor is None:
        return None
    clock_ms = state.config.action_timeout_ms
    if not clock_ms or turn_started_at is None:
        return None
    return turn_started_at + timedelta(milliseconds=clock_ms)
