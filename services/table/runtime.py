"""One table in memory: a cache of its event stream, the only writer while it holds the lease.

Every change goes the same way: ``decide_table`` on the cached state, the
resulting events appended to the stream in one atomic, version-checked,
request-id-deduplicated call, and only then folded into the cache. A failed
append (another writer moved the stream on) leaves the cache untouched and
marks it stale. Timers (the action clock, the pause between hands, passive
play for seats that sat out) are derived from the state and the time of the
last event, so a restarted service resumes them where they were.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import structlog

from felt.eventstore import AppendResult, EventStore, VersionConflict
from felt.eventstore.codec import EventMeta, decode_event, encode_event
from felt.rules.events import HandStarted
from felt.table.aggregate import (
    PlayHand,
    StartNextHand,
    TableCommand,
    TableState,
    TimeOut,
    apply_event,
    decide_table,
    passive_action,
)
from felt.table.events import AnyEvent

log = structlog.get_logger("felt.table")

Clock = Callable[[], datetime]
ResponseBuilder = Callable[[TableState, int], bytes]


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a command did: its events (empty for a retried request), the new version, the answer."""

    events: tuple[AnyEvent, ...]
    sequence: int
    response: bytes
    duplicate: bool = False


@dataclass(slots=True)
class Timing:
    """Service-level pacing that is not part of a table's rules."""

    between_hands: timedelta = timedelta(seconds=2)
    passive_delay: timedelta = timedelta(milliseconds=50)


@dataclass
class TableRuntime:
    """The cached state of one table and the timers that drive it."""

    table_id: str
    store: EventStore
    clock: Clock = utc_now
    timing: Timing = field(default_factory=Timing)
    on_ai_turn: Callable[[TableRuntime], Awaitable[None]] | None = None
    state: TableState | None = None
    version: int = 0
    last_event_at: datetime | None = None
    hand_first_sequence: int = 0
    stale: bool = False
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _timer: asyncio.Task[None] | None = None
    _closed: bool = False

    # ------------------------------------------------------------------ loading

    async def load(self) -> None:
        """Rebuild the table from its whole stream."""
        records = await self.store.read(self.table_id)
        state: TableState | None = None
        version = 0
        last_at: datetime | None = None
        hand_first = 0
        for record in records:
            event, meta = decode_event(record.payload)
            state = apply_event(state, event)
            version = record.sequence
            last_at = meta.recorded_at or last_at
            if isinstance(event, HandStarted):
                hand_first = record.sequence
        self.state, self.version, self.last_event_at = state, version, last_at
        self.hand_first_sequence = hand_first
        self.stale = False
        log.info("table_loaded", table_id=self.table_id, events=len(records), version=version)

    # ------------------------------------------------------------------ commands

    async def run(
        self,
        command: TableCommand,
        request_id: str,
        respond: ResponseBuilder,
        expected_version: int | None = None,
    ) -> Outcome:
        """Decide, append atomically, then fold. Raises ``IllegalAction`` or ``VersionConflict``.

        ``expected_version`` (the client's ``expected_sequence``) is checked
        against the cache before deciding and, through the append, against
        the stream itself.
        """
        async with self._lock:
            if self.stale:
                await self.load()
            if expected_version is not None and expected_version != self.version:
                raise VersionConflict(expected_version, self.version)
            events = decide_table(self.state, command)
            now = self.clock()
            state = self.state
            first_hand = self.hand_first_sequence
            for offset, event in enumerate(events, start=1):
                state = apply_event(state, event)
                if isinstance(event, HandStarted):
                    first_hand = self.version + offset
            assert state is not None
            last = self.version + len(events)
            response = respond(state, last)
            hand_id = state.hand.setup.hand_id if state.hand is not None else ""
            payloads = [
                encode_event(
                    event,
                    EventMeta(self.table_id, self.version + i, now, request_id, hand_id),
                )
                for i, event in enumerate(events, start=1)
            ]
            try:
                result: AppendResult = await self.store.append(
                    self.table_id, payloads, self.version, request_id, response
                )
            except VersionConflict:
                self.stale = True
                raise
            if result.duplicate:
                return Outcome((), result.last_sequence, result.response, duplicate=True)
            self.state, self.version, self.last_event_at = state, last, now
            self.hand_first_sequence = first_hand
            self._schedule()
            return Outcome(tuple(events), last, response)

    # ------------------------------------------------------------------ timers

    def start(self) -> None:
        """Begin driving the table (after ``load``)."""
        self._closed = False
        self._schedule()

    async def stop(self) -> None:
        """Stop the timers (on shutdown or when the lease is lost)."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            try:
                await self._timer
            except (asyncio.CancelledError, Exception):
                pass
            self._timer = None

    def action_deadline(self) -> datetime | None:
        """When the seat to act will be timed out (None without a clock or an actor)."""
        state = self.state
        if state is None or state.hand is None or state.hand.actor is None:
            return None
        clock_ms = state.config.action_timeout_ms
        if not clock_ms or self.last_event_at is None:
            return None
        return self.last_event_at + timedelta(milliseconds=clock_ms)

    def _schedule(self) -> None:
        if self._timer is not None and self._timer is not asyncio.current_task():
            self._timer.cancel()
        self._timer = None
        if self._closed or self.state is None or self.state.closed:
            return
        state = self.state
        version = self.version
        hand = state.hand
        if hand is not None and not hand.ended and hand.actor_seat is not None:
            seat = hand.actor_seat
            player = state.player(seat)
            if player is not None and (player.sitting_out or player.leaving):
                self._after(
                    self.timing.passive_delay, version, PlayHand(passive_action(hand)), "auto"
                )
                return
            if player is not None and player.ai_level and self.on_ai_turn is not None:
                asyncio.get_running_loop().create_task(self.on_ai_turn(self))
            deadline = self.action_deadline()
            if deadline is not None:
                self._after(deadline - self.clock(), version, TimeOut(seat), "timeout")
            return
        if state.can_start_hand():
            wait = self.timing.between_hands
            if self.last_event_at is not None:
                wait = self.last_event_at + wait - self.clock()
            self._after(wait, version, StartNextHand(secrets.token_bytes(32)), "deal")

    def _after(self, delay: timedelta, version: int, command: TableCommand, kind: str) -> None:
        async def fire() -> None:
            await asyncio.sleep(max(0.0, delay.total_seconds()))
            request_id = f"{kind}:{self.table_id}:{version}"
            try:
                await self.run(command, request_id, _no_response, expected_version=version)
            except VersionConflict:
                pass  # the table moved on (someone acted in time); its own schedule runs
            except Exception as exc:  # a timer must never die silently
                if type(exc).__name__ != "IllegalAction":
                    log.exception("timer_failed", table_id=self.table_id, kind=kind)

        self._timer = asyncio.get_running_loop().create_task(fire())


def _no_response(state: TableState, sequence: int) -> bytes:
    return b""
