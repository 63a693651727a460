"""The table service's reads, without gRPC: a table, a view, the watch stream, hand histories.

A seat's read checks its token the way a seat's call does (the table first,
then the token's table and seat, then that it is the seat's current
occupant); without a seat the reader is a spectator and sees no hidden cards.
A seat sees its own cards only in events after its occupant sat down (an
earlier hand, or a watch resumed from before, shows the earlier occupant's
hand as a spectator would see it).

A private lounge's table (``TableConfig.private``) has no anonymous
spectators: its spectator reads need a watch grant, a seat token of the table's
current occupant, the AI workers' token or the service credential
(``Caller.check_spectator``); anyone else is told NOT_FOUND, as for a table that does not
exist, and the token of a seat its holder has left PERMISSION_DENIED ``NOT_OCCUPANT``.

Results are the domain's (states, events, proofs); ``services.table.service``
turns them into the API's messages.
"""

from __future__ import annotations

import contextlib
import hmac
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from datetime import datetime

import structlog

from felt.core.table.aggregate import TableState
from felt.core.table.commitment import CardOpening
from felt.core.table.deals import ProofTracker
from felt.core.table.events import AnyEvent, PlayerLeft, SeatTokenReissued
from felt.messages.events import EventMeta
from felt.storage.eventstore import EventsTrimmed
from felt.storage.eventstore.codec import decode_event
from felt.storage.redis_client import REDIS_ERRORS
from felt.wire import limits
from poker.v1.reason_pb2 import Reason
from services.table.application import TableApp
from services.table.auth import Caller, check_occupant
from services.table.refusals import TOKEN_EXPIRED, TOKEN_REISSUED, TOO_SLOW, Code, Refused
from services.table.runtime import TableRuntime
from services.table.watch import EndCall, FellBehind, Folded, WatchHub

log = structlog.get_logger("felt.table")


@dataclass(frozen=True, slots=True)
class TableAt:
    """A table's state at ``version``."""

    state: TableState
    version: int


@dataclass(frozen=True, slots=True)
class View:
    """The table as ``viewer`` may see it (None: a spectator), with the action deadline."""

    state: TableState
    viewer: int | None
    version: int
    deadline: datetime | None


@dataclass(frozen=True, slots=True)
class Seen:
    """One event as ``viewer`` may see it (redact with it), and the proofs it opens for it."""

    sequence: int
    event: AnyEvent
    meta: EventMeta
    viewer: int | None
    proofs: list[CardOpening]
    # The table's state after the event, when the watch feed held it (its ViewChange).
    after: Folded | None = None
    # Whether ``event`` is the live feed's decoding, handed to every watcher of the table
    # (``services.table.watch``); a replay's or a history's is its stream's own.
    live: bool = False


@dataclass(frozen=True, slots=True)
class History:
    """One hand's events, as the viewer may see them."""

    hand_id: str
    events: list[Seen]


class TableQueries:
    """Reads of the tables this instance runs (see the module docstring)."""

    def __init__(self, app: TableApp, watches: WatchHub) -> None:
        self.app = app
        self.watches = watches

    async def _viewer(
        self, caller: Caller, table_id: str, seat: int | None
    ) -> tuple[TableRuntime, int | None]:
        """The runtime (:meth:`_settled`), and the seat to view as (None: a spectator), its
        token checked."""
        runtime = await self._settled(table_id)
        if seat is None:
            caller.check_spectator(table_id, runtime.state)
            return runtime, None
        check_occupant(runtime.state, caller.for_seat(table_id, seat))
        return runtime, seat

    async def _settled(self, table_id: str) -> TableRuntime:
        """The table's runtime once the append in flight, if any, is in its state: a read is
        never behind an event the caller's stream already brought (the stream tails Redis).
        A runtime with no state is a table whose stream is gone (Redis lost it: a restart
        without persistence, a flush): NOT_FOUND, as for a table never created."""
        runtime = await self.app.runtime(table_id)
        await runtime.settled()
        if runtime.stale:  # the append it waited for failed, maybe after the store took it
            runtime = await self.app.runtime(table_id)  # reread
        if runtime.state is None:
            raise Refused(Code.NOT_FOUND, "no table has this table_id", Reason.NO_TABLE)
        return runtime

    async def table(self, caller: Caller, table_id: str) -> TableAt:
        runtime = await self._settled(table_id)
        assert runtime.state is not None
        caller.check_spectator(table_id, runtime.state)
        return TableAt(runtime.state, runtime.version)

    async def view(self, caller: Caller, table_id: str, seat: int | None) -> View:
        runtime, viewer = await self._viewer(caller, table_id, seat)
        assert runtime.state is not None
        return View(runtime.state, viewer, runtime.version, runtime.action_deadline())

    async def watch(
        self,
        caller: Caller,
        peer: str,
        table_id: str,
        seat: int | None,
        from_sequence: int,
        end_call: EndCall | None = None,
    ) -> AsyncGenerator[View | Seen]:
        """The table's events as the viewer may see them; from 0: a snapshot first.

        A seat's stream ends after its occupant's ``PlayerLeft`` (the token is
        void from then on), and at a ``SeatTokenReissued`` of its seat for another
        token than the one it was opened with (PERMISSION_DENIED
        ``SEAT_TOKEN_REISSUED``): that token is void from then on too, and a stream
        it opened must not go on showing the seat's cards to whoever holds it (a
        leaked token is what a reissue shuts out). Likewise at the first event after
        the token expired (UNAUTHENTICATED ``SEAT_TOKEN_EXPIRED``): a client renews it
        (the lobby's RefreshSeatToken) and watches on from the last event. Streams
        are capped per client address (``peer``) and per service, share one tail of
        the table's stream, and are dropped if they fall too far behind (``services.table.watch``):
        then TOO_SLOW is raised, or, if the call was stuck writing, ``end_call``
        has ended it already.
        """
        with (
            self.watches.admission(peer, seat is not None) as refusal,
            contextlib.ExitStack() as presence,
        ):
            if refusal:
                log.info("watch_refused", detail=refusal)
                raise Refused(Code.RESOURCE_EXHAUSTED, refusal)
            runtime, viewer = await self._viewer(caller, table_id, seat)
            if not (caller.admin or caller.ai):
                # Somebody watches (a person, or the gateway for its spectators): the table
                # deals on, or wakes from resting; the services' own reads do not count.
                presence.enter_context(runtime.watched())
            # The token this stream was opened with ("" for the AI workers' token, which no
            # reissue voids): a reissue for any other one ends it.
            opened_with = caller.for_seat(table_id, seat).token_hash if seat is not None else ""
            start = from_sequence
            if start > runtime.version:
                raise Refused(
                    Code.OUT_OF_RANGE,
                    f"from_sequence is ahead of the table (at {runtime.version})",
                )
            seated_since = runtime.seated_at.get(viewer, 0) if viewer is not None else 0
            if start == 0:
                assert runtime.state is not None
                start = runtime.version
                yield View(runtime.state, viewer, start, runtime.action_deadline())
            tracker = ProofTracker(viewer)
            # Prime the proof tracker with the commitment and deck of the hand `start` is in.
            deck_at = runtime.deck_sequence_before(start)
            if deck_at:
                try:
                    for record in await runtime.store.read(
                        runtime.table_id, deck_at - 1, start - deck_at + 1
                    ):
                        tracker.viewer = viewer if record.sequence > seated_since else None
                        tracker.openings(decode_event(record.payload)[0])
                except EventsTrimmed:
                    pass  # an archived hand: its cards come without proofs
            try:
                async for sequence, event, meta, after, live in self.watches.events(
                    runtime.table_id,
                    start,
                    runtime.version,
                    end_call,
                    lambda: (runtime.version, runtime.state, runtime.turn_started_at),
                ):
                    as_seat = viewer if sequence > seated_since else None
                    if (
                        isinstance(event, SeatTokenReissued)
                        and event.seat == as_seat
                        and opened_with
                        and not hmac.compare_digest(event.token_hash, opened_with)
                    ):
                        raise TOKEN_REISSUED
                    if as_seat is not None and caller.expired_since_opened():
                        raise TOKEN_EXPIRED  # nothing more of the seat's to a stale token
                    tracker.viewer = as_seat
                    yield Seen(sequence, event, meta, as_seat, tracker.openings(event), after, live)
                    if isinstance(event, PlayerLeft) and event.seat == as_seat:
                        return  # the seat's token is void now
            except FellBehind as exc:
                log.info("watcher_fell_behind", last_sent=exc.last_sent)
                raise TOO_SLOW from None
            except EventsTrimmed:
                raise Refused(
                    Code.OUT_OF_RANGE,
                    "those events are archived; watch again with from_sequence 0",
                ) from None
            except REDIS_ERRORS as exc:
                log.warning("watch_storage_unavailable", error=repr(exc))
                raise Refused(
                    Code.UNAVAILABLE,
                    "the table's storage is unreachable; watch again from the last event",
                ) from None

    async def hand_history(
        self, caller: Caller, table_id: str, seat: int | None, hand_id: str
    ) -> History:
        """One hand's events (``hand_id`` "": the last hand dealt), as the viewer may see them."""
        limits.check_hand_id(hand_id)
        runtime, viewer = await self._viewer(caller, table_id, seat)
        hands = runtime.hand_decks
        hand_id = hand_id or next(reversed(hands), "")
        if not hand_id:
            raise Refused(Code.NOT_FOUND, "no hand has been dealt at this table")
        first = hands.get(hand_id)
        if first is None:
            if runtime.loaded_from > 1:  # rebuilt from a snapshot: older hands are archived
                raise Refused(
                    Code.NOT_FOUND,
                    "that hand_id is not among this table's recent hands; ask the hand archive",
                )
            raise Refused(Code.NOT_FOUND, "no hand at this table has that hand_id")
        if viewer is not None and runtime.seated_at.get(viewer, 0) > first:
            viewer = None  # the seat's occupant sat down after this hand: not theirs
        later = [s for s in runtime.deck_sequences if s > first]
        count = later[0] - first if later else None
        try:
            records = await runtime.store.read(runtime.table_id, first - 1, count)
        except EventsTrimmed:
            raise Refused(Code.NOT_FOUND, "that hand is archived; ask the hand archive") from None
        tracker = ProofTracker(viewer)
        items = []
        for record in records:
            event, meta = decode_event(record.payload)
            proofs = tracker.openings(event)
            if meta.hand_id == hand_id:
                items.append(Seen(record.sequence, event, meta, viewer, proofs))
        return History(hand_id, items)
