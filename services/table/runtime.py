"""One table in memory: a cache of its event stream, the only writer while it holds the lease.

Every change goes the same way: ``execute_table`` on the cached state, the
resulting events appended to the stream in one atomic, version-checked,
request-id-deduplicated call, and only then folded into the cache. A failed
append (another writer moved the stream on, or an outcome we cannot know,
such as a cancelled call) leaves the cache untouched and marks it stale, so
the next command rebuilds it from the stream first. Timers (the action clock,
the pause between hands, passive play for seats that are away) are derived
from the state and the time of the events, so a restarted service resumes
them where they were.

What the runtime derives from the events themselves (the fold on load, hand
ids, turn starts, times) is in ``services.table.stream``, pure. This module
is still over 400 lines, on purpose: the cache, the lock and the timers are
one object because one invariant spans them (only ``run`` changes the cache,
under the lock, after the append; every timer goes through ``run``), and
splitting the timers out would spread that invariant over modules.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import contextvars
import math
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog
from google.protobuf.message import Message

from felt.core.rules.commands import IllegalAction
from felt.core.rules.config import PUBLIC_ID_BYTES
from felt.core.table.aggregate import (
    CloseTable,
    PlayHand,
    StartNextHand,
    TableCommand,
    TableState,
    TimeOut,
    execute_table,
    passive_action,
    snapshot_of,
)
from felt.core.table.events import (
    AnyEvent,
)
from felt.core.table.stats import SeatStats
from felt.service.tasks import drop_outcome
from felt.service.tracing import TraceContext, attached, current_context
from felt.storage.eventstore import AppendResult, EventStore, EventsTrimmed, VersionConflict
from felt.storage.eventstore.codec import (
    encode_stored,
)
from felt.storage.idempotency import RequestKey, server_key
from felt.storage.redis_client import REDIS_ERRORS, REDIS_OUTAGE_ERRORS
from services.table.opponents import OpponentModel, read_model
from services.table.rest import RestPolicy
from services.table.snapshots import SnapshotPolicy, TrimPoints
from services.table.stream import (
    close_time,
    deadline_of,
    fold_start,
    hand_ids,
    rebuild,
    starts_turn,
    timestamp,
    track,
)
from services.table.stream import timestamp as _timestamp  # noqa: F401 - tests import it here

log = structlog.get_logger("felt.table")
# The longest wait between two attempts to publish an AI decision request while Redis is away.
AI_REQUEST_RETRY_MAX_S = 5.0
AI_RETRY_LOG_EVERY = 10
# The watchdog's pause before asking a stalled AI seat again doubles at each re-ask of the same
# turn, up to ``2 ** AI_REASK_MAX_DOUBLINGS`` times ``Timing.ai_reask``: a request stuck behind
# a backlog of the AI workers must not add one more copy to that backlog every 10 s.
AI_REASK_MAX_DOUBLINGS = 4
"""``ai_request_retried`` is logged at a seat's first failed attempt, then every tenth."""
# The most events ``state_at`` folds to make a retried request's answer again: a retry is
# answered on the event loop, and a client resending old request ids must not make each one
# cost a fold of the whole stream. Older answers are refused (``RequestTooOld``). Snapshots
# (one per deal by default) keep an answer within a hand of one; only a table without them
# (FELT_SNAPSHOT_EVERY=0) or a very long hand reaches the limit.
REBUILD_LIMIT = 1_000
# How many states ``state_at`` made keeps (by sequence): a client retrying the same request
# again and again is answered from here after the first fold.
REBUILT_KEPT = 16
# How long a read waits for an append in flight (``TableRuntime.settled``) before it answers
# from the cache anyway: an append takes milliseconds; a stalled Redis must not hang reads.
SETTLE_S = 2.0

Clock = Callable[[], datetime]
# Builds the answer to a command from the states before and after it, its sequence
# and the action deadline of the seat to act then (None without a clock or an actor).
ResponseBuilder = Callable[[TableState | None, TableState, int, datetime | None], Message]
# A command, or a function that makes it from the current state (under the table's lock).
CommandSource = TableCommand | Callable[[TableState | None], TableCommand]
# Publishes an AI decision request: (runtime, state, version, action deadline).
AiHook = Callable[["TableRuntime", TableState, int, datetime | None], Awaitable[None]]
# Told when the table's state cannot be driven (the runtime has stopped itself): (runtime, why).
FaultHook = Callable[["TableRuntime", str], None]
# Renews the runtime's lease now (the manager's ``_renew``): True if it is still ours.
LeaseHook = Callable[["TableRuntime"], Awaitable[bool]]


def utc_now() -> datetime:
    return datetime.now(UTC)


class LeaseLost(Exception):
    """This instance's lease on the table may have run out: it must not write."""


class RequestTooOld(Exception):
    """The table's state at a retried request's sequence cannot be made again cheaply.

    Its events were trimmed, no snapshot at or before it is kept, or it lies more than
    ``REBUILD_LIMIT`` events past the nearest one. The retry is refused; nothing changes.
    """

    def __init__(self, table_id: str, sequence: int) -> None:
        super().__init__(f"table {table_id}: the state at event {sequence} is no longer kept")
        self.table_id, self.sequence = table_id, sequence


class TableQuarantined(Exception):
    """The table's stored state cannot be loaded or driven: it is out of service.

    Nothing a client sends can cause this once ``felt.wire.limits`` checks the
    requests; a stream written under older bounds, by a bug or by hand can.
    The table stops (its timers, and every call to it) until an operator
    repairs it; the other tables keep running.
    """

    def __init__(self, table_id: str, reason: str) -> None:
        super().__init__(f"table {table_id} is quarantined: {reason}")
        self.table_id, self.reason = table_id, reason


def fault_reason(exc: BaseException) -> str:
    """What went wrong, for the quarantine record and the callers (bounded)."""
    return f"{type(exc).__name__}: {exc}"[:300]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a command did: its events (empty for a retried request), the new version, the answer.

    ``response`` is the answer message for a fresh command; ``stored`` its
    serialized form (for a retried request: the first answer's bytes only).
    """

    events: tuple[AnyEvent, ...]
    sequence: int
    response: Message | None
    stored: bytes
    duplicate: bool = False


@dataclass(slots=True)
class Timing:
    """Service-level pacing that is not part of a table's rules."""

    between_hands: timedelta = timedelta(seconds=2)
    passive_delay: timedelta = timedelta(milliseconds=50)
    retry_delay: timedelta = timedelta(seconds=1)
    # An AI seat's turn this long without an action: its request is published again
    # (FELT_TABLE_AI_REASK_MS; ``TableRuntime.reask_stalled``, the manager's watchdog).
    ai_reask: timedelta = timedelta(seconds=10)
    # When a table with nobody to play for stops dealing (services.table.rest); the default
    # never rests (FELT_TABLE_IDLE_GRACE_S sets it for the table-service process).
    rest: RestPolicy = field(default_factory=RestPolicy)


def _set(event: asyncio.Event) -> asyncio.Event:
    """``event``, set."""
    event.set()
    return event


@dataclass
class TableRuntime:
    """The cached state of one table and the timers that drive it."""

    table_id: str
    store: EventStore
    clock: Clock = utc_now
    timing: Timing = field(default_factory=Timing)
    snapshots: SnapshotPolicy = field(default_factory=SnapshotPolicy)
    on_ai_turn: AiHook | None = None
    on_fault: FaultHook | None = None
    # Asked when the lease clock has run out before a write (see ``run``).
    renew_lease: LeaseHook | None = None
    # Why the table cannot be driven ("" while it can): see TableQuarantined.
    fault: str = ""
    state: TableState | None = None
    version: int = 0
    last_event_at: datetime | None = None
    # When the seat to act got its turn (the action clock counts from here).
    turn_started_at: datetime | None = None
    # Sequences of the DeckCommitted events (to open cards for a watcher resuming mid-hand),
    # and the same by hand id (hand histories).
    deck_sequences: list[int] = field(default_factory=list)
    hand_decks: dict[str, int] = field(default_factory=dict)
    # Seat -> sequence of its current occupant's PlayerSeated.
    seated_at: dict[int, int] = field(default_factory=dict)
    # The sequence the cache was rebuilt from (its snapshot's; 1 for a whole stream): the
    # indexes above know nothing of the hands before it.
    loaded_from: int = 1
    # Sequences of the snapshots since the one the cache was rebuilt from (``state_at``).
    snapshots_at: list[int] = field(default_factory=list)
    # Snapshots this runtime may trim below, once they are old enough.
    trim_points: TrimPoints = field(default_factory=TrimPoints)
    # The opponent model (services.table.opponents), fed what ``run`` folds once it is read
    # back on the first AI request; and the stats it gave the AI seat last asked (version, stats).
    opponents: OpponentModel | None = None
    _asked: tuple[int, dict[int, SeatStats]] | None = None
    # time.monotonic() until which this instance surely holds the lease (set by the manager).
    lease_expires: float = math.inf
    stale: bool = False
    # Watch streams that count as somebody watching (not the services' own: see ``watched``).
    watchers: int = 0
    # Since when nobody was there to play for (services.table.rest; None: somebody is).
    idle_since: datetime | None = None
    # The runtime chose not to deal the next hand: nobody to play for (``_arm``).
    resting: bool = False
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # Clear while a command's append is in flight (its events may be in the stream already,
    # not yet in the cache): what reads wait for (``settled``).
    _appended: asyncio.Event = field(default_factory=lambda: _set(asyncio.Event()))
    # The table's one timer: armed, a handle on the loop (``_later``); fired, the task it runs.
    _pending: asyncio.TimerHandle | None = None
    _timer: asyncio.Task[None] | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)
    _trims: set[asyncio.Task[None]] = field(default_factory=set)
    # States ``state_at`` folded, by sequence, least recently used first (REBUILT_KEPT).
    _rebuilt: OrderedDict[int, TableState] = field(default_factory=OrderedDict)
    _closed: bool = False
    _started: bool = False
    # Version -> the state whose AI request an ``_ask_ai`` is publishing (or retrying) now:
    # one at a time (a reload's new state of the same version takes over from a lost one's).
    _asking: dict[int, TableState] = field(default_factory=dict)
    # (version, time.monotonic()) the AI seat to act was last asked at (``reask_stalled``).
    _ai_asked: tuple[int, float] | None = None
    # (version, how many times the watchdog asked that version's AI seat again).
    _ai_reasked: tuple[int, int] = (0, 0)
    # The version a timer's command was refused at (``mend_timer`` leaves it be).
    _refused_at: int = -1

    # ------------------------------------------------------------------ loading

    async def load(self) -> None:
        """Rebuild the table from its latest snapshot and the events after it.

        ``EventStore.read_tail`` (the whole stream for a table without a
        snapshot), folded by ``services.table.stream.rebuild``; the state is
        the same as the whole stream's fold, which the snapshot is.
        """
        records = await self.store.read_tail(self.table_id)
        rebuilt = rebuild(records)
        self.state, self.version = rebuilt.state, rebuilt.version
        self.last_event_at, self.turn_started_at = rebuilt.last_event_at, rebuilt.turn_started_at
        self.deck_sequences, self.hand_decks = rebuilt.deck_sequences, rebuilt.hand_decks
        self.seated_at = rebuilt.seated_at
        self.loaded_from = records[0].sequence if records else 1
        self.trim_points.reset(rebuilt.snapshot, rebuilt.snapshot_at)
        self.snapshots_at = [rebuilt.snapshot] if rebuilt.snapshot else []
        self.opponents, self._asked = None, None  # read back on the next AI request
        self.stale = False
        log.info(
            "table_loaded",
            table_id=self.table_id,
            events=len(records),
            version=self.version,
            snapshot=rebuilt.snapshot,
        )

    async def settled(self) -> None:
        """Wait for the append in flight, if any, to be applied to the cached state.

        A watch stream tails the table's stream in Redis, so it can deliver an event while the
        command that appended it still waits for its append's answer, before the cache holds
        it; a read answered then would be behind what the reader was just streamed (``felt
        play`` reads the view at each event, and showed a turn before the person's). Reads
        wait for that one append, not in the lock's queue behind every command waiting (a
        reader woken by its end goes on even if the next command's append has begun), and at
        most ``SETTLE_S``: a stalled store leaves the read to answer from the cache. An append
        that failed leaves the cache ``stale``; the caller rereads it (``refresh``).
        """
        if self._appended.is_set():
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(SETTLE_S):
                await self._appended.wait()

    async def state_at(self, sequence: int) -> TableState:
        """The table's state right after the event at ``sequence`` (a retried request's answer
        is made from it again): the cache's if it is there, or one made lately, else the
        fold of the stream from the last snapshot at or before it, reading at most
        ``REBUILD_LIMIT`` events back. The first kept event of a trimmed stream need not be a
        snapshot (trims stop at the archived position): the fold starts at the last snapshot
        (or the table's creation) among the events read.

        Raises what reading the store raises, ``RequestTooOld`` if no such fold exists (the
        events were trimmed, no snapshot is near enough, or the stream has no such event).
        """
        if not self.stale and self.version == sequence and self.state is not None:
            return self.state
        made = self._rebuilt.get(sequence)
        if made is not None:
            self._rebuilt.move_to_end(sequence)
            return made
        if sequence < 1:
            raise RequestTooOld(self.table_id, sequence)
        known = bisect.bisect_right(self.snapshots_at, sequence)
        after = self.snapshots_at[known - 1] - 1 if known else 0
        after = max(after, sequence - REBUILD_LIMIT)
        try:
            records = await self.store.read(self.table_id, after, count=sequence - after)
        except EventsTrimmed as trimmed:
            after = trimmed.first_available - 1
            if after >= sequence:
                raise RequestTooOld(self.table_id, sequence) from None
            try:
                records = await self.store.read(self.table_id, after, count=sequence - after)
            except EventsTrimmed:  # trimmed again in between
                raise RequestTooOld(self.table_id, sequence) from None
        start = fold_start(records)
        if start is None:
            raise RequestTooOld(self.table_id, sequence)
        rebuilt = rebuild(records[start:])
        if rebuilt.state is None or rebuilt.version != sequence:
            raise RequestTooOld(self.table_id, sequence)
        self._rebuilt[sequence] = rebuilt.state
        while len(self._rebuilt) > REBUILT_KEPT:
            self._rebuilt.popitem(last=False)
        return rebuilt.state

    def deck_sequence_before(self, sequence: int) -> int:
        """Sequence of the last DeckCommitted at or before ``sequence`` (0 if none)."""
        found = 0
        for s in reversed(self.deck_sequences):
            if s <= sequence:
                found = s
                break
        return found

    # ------------------------------------------------------------------ commands

    async def run(
        self,
        command: CommandSource,
        request: RequestKey,
        respond: ResponseBuilder | None = None,
        expected_version: int | None = None,
        authorize: Callable[[TableState | None], None] | None = None,
        record: Callable[[Message], bytes] | None = None,
    ) -> Outcome:
        """Decide, append atomically, then fold.

        Raises ``IllegalAction``, ``VersionConflict``, ``LeaseLost``,
        ``RequestReused`` (``request``'s key already answered other content) or
        whatever ``authorize`` raises; each changes nothing. ``authorize`` and
        a callable ``command`` see the state under the table's lock, so no
        other command slips in between the check and the append.
        ``expected_version`` (the client's ``expected_sequence``) is checked
        against the cache before deciding and, through the append, against
        the stream itself. ``record`` packs what the request's idempotency
        record keeps of the answer (default: the whole answer, serialized).
        """
        async with self._lock:
            if self.fault:
                raise TableQuarantined(self.table_id, self.fault)
            if self.stale:
                await self._reload()
            if time.monotonic() >= self.lease_expires and not await self._lease_renewed():
                raise LeaseLost(self.table_id)
            if authorize is not None:
                authorize(self.state)
            if expected_version is not None and expected_version != self.version:
                raise VersionConflict(expected_version, self.version)
            now = self.clock()
            cmd = command(self.state) if callable(command) else command
            before = self.state
            state, events = execute_table(before, cmd)
            version = self.version
            snapshot_at = 0
            if before is not None and self.snapshots.due(before, cmd):
                # The deal's first event: the table as it is between the hands.
                events = [snapshot_of(before, self.seated_at), *events]
                snapshot_at = version + 1
            recorded = timestamp(now)
            turn_at = self.turn_started_at
            decks: list[int] = []
            hands: dict[str, int] = {}
            seated = dict(self.seated_at)
            payloads = []
            for offset, (event, hand_id) in enumerate(
                zip(events, hand_ids(before, events), strict=True), start=1
            ):
                sequence = version + offset
                if starts_turn(event):
                    turn_at = now
                track(event, sequence, decks, hands, seated)
                payloads.append(
                    encode_stored(event, self.table_id, sequence, request.key, hand_id, recorded)
                )
            last = version + len(events)
            response = (
                respond(before, state, last, deadline_of(state, turn_at))
                if respond is not None
                else None
            )
            if response is None:
                blob = b""
            else:
                blob = record(response) if record is not None else response.SerializeToString()
            self._appended.clear()
            try:
                result: AppendResult = await self.store.append(
                    self.table_id,
                    payloads,
                    version,
                    request.key,
                    request.seal(blob),
                    snapshot_at=snapshot_at,
                )
            except BaseException:
                # A conflict, or an outcome we cannot know (cancelled, connection lost):
                # the stream is the truth. Reread it (and rearm the timers) at once.
                self.stale = True
                self._resync_later(timedelta(0))
                raise
            finally:
                # The readers waiting in ``settled`` run only after this task's next await:
                # by then the cache below holds the append (or is marked stale).
                self._appended.set()
            if result.duplicate:
                if result.last_sequence > self.version:
                    # The request was appended by another writer (another instance's timer
                    # with the same request id) or by an attempt whose outcome we lost:
                    # this cache is behind the stream. Reread it and rearm the timers.
                    self.stale = True
                    self._resync_later(timedelta(0))
                first = request.open(result.response)
                return Outcome((), result.last_sequence, None, first, duplicate=True)
            self.state, self.version, self.last_event_at = state, last, now
            if self.opponents is not None:
                if self.opponents.done == version:
                    self.opponents.fold(events, last)
                else:  # pragma: no cover - it is only ever installed at the cache's version
                    self.opponents = None
            self.turn_started_at = turn_at
            self.deck_sequences.extend(decks)
            self.hand_decks.update(hands)
            self.seated_at = seated
            self._schedule()
            if snapshot_at:
                self.snapshots_at.append(snapshot_at)
                self.trim_points.add(snapshot_at, now)
                trim = self._spawn(self._trim(now))
                self._trims.add(trim)
                trim.add_done_callback(self._trims.discard)
            return Outcome(tuple(events), last, response, blob)

    async def _trim(self, now: datetime) -> None:
        """Trim the stream below the newest snapshot old enough (``services.table.snapshots``).

        In the background: a deal's answer does not wait for it, and a failed
        trim changes nothing (the next snapshot's trim reaches as far).
        """
        below = self.trim_points.take(now, self.snapshots.retain)
        if not below:
            return
        try:
            dropped = await self.store.trim_archived(self.table_id, below)
        except Exception as exc:
            log.warning("table_trim_failed", table_id=self.table_id, error=repr(exc))
            return
        if dropped:
            log.debug("table_trimmed", table_id=self.table_id, below=below, dropped=dropped)

    # ------------------------------------------------------------------ timers

    def start(self) -> None:
        """Begin driving the table (after ``load``)."""
        self._closed = False
        self._started = True
        self._schedule()

    @property
    def started(self) -> bool:
        return self._started and not self._closed

    async def stop(self, grace_s: float = 5.0) -> None:
        """Stop the timers (on shutdown or when the lease is lost).

        A command in flight may finish first (up to ``grace_s``), so that an
        append is not cut off between Redis and this cache.
        """
        self._closed = True
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(grace_s):
                await self._lock.acquire()
                self._lock.release()
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
        tasks = {t for t in (self._timer, *self._tasks) if t is not None and not t.done()}
        self._timer = None
        for task in tasks:
            task.cancel()
        # Bounded: a task that does not end when cancelled (a library swallowing the
        # cancellation inside a call) must not hold the caller, the manager's lease round,
        # which renews every other table's lease and adopts tables, for ever.
        done, pending = await asyncio.wait(tasks, timeout=grace_s) if tasks else (set(), set())
        for task in done:
            if not task.cancelled():
                task.exception()  # retrieved: it was cancelled, its error is of no use now
        if pending:
            log.warning("table_stop_slow", table_id=self.table_id, tasks=len(pending))
            for task in pending:  # whenever they end, their errors are seen (and dropped)
                task.add_done_callback(drop_outcome)
        self._tasks.clear()

    async def trimmed(self) -> None:
        """Wait for the trims already started to finish (tests, benchmarks)."""
        while pending := list(self._trims):
            await asyncio.gather(*pending, return_exceptions=True)

    def action_deadline(self) -> datetime | None:
        """When the seat to act will be timed out (None without a clock or an actor)."""
        if self.state is None:
            return None
        return deadline_of(self.state, self.turn_started_at)

    @contextlib.contextmanager
    def watched(self) -> Iterator[None]:
        """Inside: one more watcher of the table (a person's stream, through the gateway or
        not), so it deals on; a resting table resumes at once. When the last one leaves, the
        grace starts (``services.table.rest``)."""
        self.watchers += 1
        self.idle_since = None
        if self.resting:
            self._spawn(self._wake())
        try:
            yield
        finally:
            self.watchers -= 1
            if not self.watchers:
                self.idle_since = self.clock()

    async def _wake(self) -> None:
        """Rearm a resting table's timers (under the lock, like every rearm after an append,
        so no timer is cancelled half-way through its own append)."""
        async with self._lock:
            if self.resting and self.started:
                self._schedule()

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """A background task with its own log context (not the request's that scheduled it)."""
        task = asyncio.get_running_loop().create_task(coro, context=contextvars.Context())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _reload(self) -> None:
        """``load``; a stream that cannot be folded faults the table (storage errors pass)."""
        try:
            await self.load()
        except REDIS_ERRORS:
            raise
        except Exception as exc:
            self._faulted(exc)
            raise TableQuarantined(self.table_id, self.fault) from exc

    def _faulted(self, exc: BaseException) -> None:
        """The table's state cannot be driven: stop its timers and tell the manager."""
        if self.fault:
            return
        self.fault = fault_reason(exc)
        self._closed = True
        log.error("table_faulted", table_id=self.table_id, version=self.version, error=self.fault)
        if self.on_fault is not None:
            self.on_fault(self, self.fault)

    def _schedule(self) -> None:
        """Arm the table's next timer; a state that cannot be driven faults the table."""
        try:
            self._arm()
        except Exception as exc:  # e.g. a deadline out of datetime's range
            self._faulted(exc)

    def _arm(self) -> None:
        self._disarm()
        if self._closed or self.state is None or self.state.closed:
            return
        state = self.state
        version = self.version
        now = self.clock()
        rest = self.timing.rest
        self.idle_since = rest.idle_since(self.idle_since, state, self.watchers, now)
        was_resting, self.resting = self.resting, False
        hand = state.hand
        if hand is not None and not hand.ended and hand.actor_seat is not None:
            seat = hand.actor_seat
            player = state.player(seat)
            if player is not None and player.away:
                self._after(
                    self.timing.passive_delay,
                    version,
                    PlayHand(passive_action(hand, player.leaving)),
                    "auto",
                )
                return
            deadline = self.action_deadline()
            if player is not None and player.ai_level and self.on_ai_turn is not None:
                if self.opponents is not None and self.opponents.done == version:
                    # The model as of this turn, whatever the table does before it is sent.
                    self._asked = (version, self.opponents.stats)
                # In the trace of whatever gave the AI seat its turn (a call, a timer).
                self._ai_asked = (version, time.monotonic())
                self._spawn(self._ask_ai(state, version, deadline, current_context()))
            if deadline is not None:
                self._after(deadline - self.clock(), version, TimeOut(seat), "timeout")
            return
        closing = close_time(state)
        if state.can_start_hand():
            if rest.rests(self.idle_since, now):
                # Nobody to play for: no next hand until somebody sits down or watches.
                self.resting = True
                if not was_resting:
                    log.info("table_resting", table_id=self.table_id, version=version)
            else:
                if was_resting:
                    log.info("table_resumed", table_id=self.table_id, version=version)
                deal_at = (self.last_event_at or now) + self.timing.between_hands
                if closing is None or deal_at < closing:
                    self._after(deal_at - now, version, self._deal_or_close, "deal")
                    return
        if closing is not None:
            # Closing time: no new hand (the running one, if any, was played out).
            self._after(closing - now, version, CloseTable("closing time"), "close")

    def ask_again(self) -> bool:
        """Publish the decision request of the AI seat to act once more, if one is to act
        and no ``_ask_ai`` of this version is publishing it already.

        A request can be lost while the table's own events survive (a Redis crash under
        ``appendfsync everysec`` lost the stream entry after it was acknowledged): nothing
        else would ask again, and a table without an action clock would wait for ever. The
        request id is the version's, so a worker that has the first one answers once (the
        second answer is a duplicate).
        """
        state = self.state
        if self._closed or state is None or not self._ai_to_act(state):
            return False
        if self._asking.get(self.version) is state:
            return False
        self._ai_asked = (self.version, time.monotonic())
        self._spawn(self._ask_ai(state, self.version, self.action_deadline()))
        return True

    def reask_stalled(self, now: float) -> bool:
        """The watchdog (the manager calls it every lease round, ``now`` a
        ``time.monotonic()``): ask the AI seat again once its turn has gone
        ``timing.ai_reask`` without an action, then after twice as long each time (up to
        ``2 ** AI_REASK_MAX_DOUBLINGS`` times ``ai_reask``): a lost request is found soon,
        and one that is only slow (the workers behind) costs a few duplicates, not one
        every ``ai_reask`` while the backlog lasts.

        It needs no sign that Redis restarted (a lost request is found by its missing
        answer), and never starts a second ``_ask_ai`` beside one still retrying.
        """
        state = self.state
        if self._closed or state is None or not self._ai_to_act(state):
            return False
        if self._ai_asked is None or self._ai_asked[0] != self.version:
            self._ai_asked = (self.version, now)  # a turn this runtime did not ask: from now
            return False
        reasked = self._ai_reasked[1] if self._ai_reasked[0] == self.version else 0
        pause = self.timing.ai_reask.total_seconds() * 2 ** min(reasked, AI_REASK_MAX_DOUBLINGS)
        if now - self._ai_asked[1] < pause:
            return False
        if not self.ask_again():
            return False
        self._ai_asked = (self.version, now)
        self._ai_reasked = (self.version, reasked + 1)
        log.info("ai_request_reasked", table_id=self.table_id, version=self.version)
        return True

    def mend_timer(self) -> bool:
        """The timer watchdog (the manager calls it every lease round): a table that should
        deal next and has no timer armed or running gets its timers armed again, loudly.

        Every path that leaves a table able to deal arms its deal timer (an append's
        ``_schedule``, a timer's retry, a resync), so this finds nothing unless one of them
        is broken; then the table would sit between hands for ever while still answering
        reads, which no client can tell from a slow table. A command in flight (the lock
        held) or a cache to reread is left to its own rearm.
        """
        state = self.state
        if (
            not self.started
            or self.stale
            or self.resting
            or self._lock.locked()
            or state is None
            or not state.can_start_hand()
            or self._refused_at == self.version
            or self._pending is not None
            or (self._timer is not None and not self._timer.done())
        ):
            return False
        log.error("table_timer_lost", table_id=self.table_id, version=self.version)
        self._schedule()
        return True

    def _ai_to_act(self, state: TableState) -> bool:
        """Whether an AI seat (not away) is to act in ``state``."""
        hand = state.hand
        if hand is None or hand.ended or hand.actor_seat is None or self.on_ai_turn is None:
            return False
        player = state.player(hand.actor_seat)
        return player is not None and bool(player.ai_level) and not player.away

    async def opponent_stats(self, version: int) -> dict[int, SeatStats]:
        """The opponent model at ``version``: the table's public play up to that event.

        From the model the runtime keeps current; the first request after a
        load reads the stream back once to start it (``read_model``). Raises
        what reading the store raises.
        """
        if self._asked is not None and self._asked[0] == version:
            return self._asked[1]
        if self.opponents is not None and self.opponents.done == version:
            return self.opponents.stats
        model = await read_model(self.store, self.table_id, version)
        if self.opponents is None and self.version == model.done == version:
            self.opponents = model  # still the cache's version: from here, fed by run
        return model.stats

    async def _ask_ai(
        self,
        state: TableState,
        version: int,
        deadline: datetime | None,
        trace: TraceContext | None = None,
    ) -> None:
        assert self.on_ai_turn is not None
        if self._asking.get(version) is state:
            return  # one _ask_ai per version: that one retries until the version moves on
        self._asking[version] = state
        try:
            await self._ask_ai_once(state, version, deadline, trace)
        finally:
            if self._asking.get(version) is state:
                del self._asking[version]

    async def _ask_ai_once(
        self,
        state: TableState,
        version: int,
        deadline: datetime | None,
        trace: TraceContext | None,
    ) -> None:
        assert self.on_ai_turn is not None
        hand = state.hand
        structlog.contextvars.bind_contextvars(
            table_id=self.table_id,
            hand_id=hand.setup.hand_id if hand is not None else "",
            seat=hand.actor_seat if hand is not None else None,
        )
        delay = self.timing.retry_delay.total_seconds()
        attempt = 0
        while True:
            try:
                with attached(trace):
                    await self.on_ai_turn(self, state, version, deadline)
                return
            except REDIS_OUTAGE_ERRORS as exc:
                # Redis is away (restarting, a failover): publish again once it is back, for
                # as long as the seat is still to act at this version. Without it a table
                # with no action clock would wait for an AI answer for ever. Publishing
                # twice is harmless: the request id is the version's, answered once.
                attempt += 1
                if attempt == 1 or attempt % AI_RETRY_LOG_EVERY == 0:
                    log.warning(
                        "ai_request_retried", version=version, attempt=attempt, error=repr(exc)
                    )
            except Exception:
                # The seat's clock still runs: it is timed out if no answer comes.
                log.exception("ai_request_failed", version=version)
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, AI_REQUEST_RETRY_MAX_S)
            if self._closed or self.version != version or self.state is not state:
                # The seat acted, or the table was reloaded meanwhile: after a Redis crash
                # lost a tail, the same version number may name another history, and this
                # ``state`` is the lost one's (issue #24). The reload asks for itself.
                return

    def _deal_or_close(self, state: TableState | None) -> TableCommand:
        """The next hand, unless closing time came meanwhile (a timer may fire late)."""
        closing = close_time(state) if state is not None else None
        if closing is not None and self.clock() >= closing:
            return CloseTable("closing time")
        return StartNextHand(secrets.token_bytes(32), secrets.token_bytes(PUBLIC_ID_BYTES))

    def _disarm(self) -> None:
        """Cancel the table's timer: the armed handle, and the task of one that fired and still
        runs (unless that is the caller: a timer's own append rearms the next)."""
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
        if self._timer is not None and self._timer is not asyncio.current_task():
            self._timer.cancel()
        self._timer = None

    def _later(self, delay: timedelta, job: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Arm the table's timer: ``job()`` runs as a task once ``delay`` is over.

        Until then it is a handle on the event loop, not a task asleep: every action
        rearms the action clock, and cancelling a handle costs nothing, where a sleeping
        task was created, stepped once to sleep and stepped again to be cancelled.
        """

        def start() -> None:
            self._pending = None
            self._timer = self._spawn(job())

        self._pending = asyncio.get_running_loop().call_later(
            max(0.0, delay.total_seconds()), start
        )

    def _after(self, delay: timedelta, version: int, command: CommandSource, kind: str) -> None:
        async def fire() -> None:
            state = self.state
            hand = state.hand if state is not None else None
            structlog.contextvars.bind_contextvars(
                table_id=self.table_id,
                hand_id=hand.setup.hand_id if hand is not None else "",
                seat=hand.actor_seat if hand is not None and kind != "deal" else None,
            )
            try:
                await self.run(
                    command, server_key(kind, self.table_id, version), expected_version=version
                )
            except VersionConflict:
                # Only a stale cache gets here (every append reschedules): reread it.
                self._resync_later(timedelta(0))
            except LeaseLost:
                # Our lease clock ran out and Redis did not renew it (another instance holds
                # it, or the manager is handing it over). If the manager renews it after all,
                # this table must deal on: try again later. If it hands the table over, it
                # stops this runtime first, and a stopped runtime arms nothing.
                log.info("timer_waits_for_lease", kind=kind, table_id=self.table_id)
                self._resync_later(self.timing.retry_delay)
            except REDIS_OUTAGE_ERRORS as exc:
                # Redis is away (its renewal or the append failed): try again, without a
                # traceback a second for every table for as long as the outage lasts.
                log.warning("timer_waits_for_redis", kind=kind, error=repr(exc))
                self._resync_later(self.timing.retry_delay)
            except IllegalAction as exc:
                log.warning("timer_refused", kind=kind, code=exc.code, reason=exc.message)
                self._refused_at = version  # the state refuses it: not a lost timer
            except Exception:  # a timer must never die silently, nor leave the table stuck
                log.exception("timer_failed", kind=kind)
                self._resync_later(self.timing.retry_delay)

        self._later(delay, fire)

    async def _lease_renewed(self) -> bool:
        """The lease clock ran out: renew the lease now, if it is still ours.

        The clock is this instance's conservative view of the Redis lease, pushed on by the
        manager's rounds; a busy event loop runs a round late, and the table then refused
        every write (people's actions ``UNAVAILABLE``) until the next round, although no
        other instance could have taken it. Redis decides instead: its renewal is a
        compare-and-set on the owner, so a lease another instance took stays lost.
        """
        if self._closed or self.renew_lease is None:
            return False  # stopped: the manager handed the table over, or is doing so
        return await self.renew_lease(self)

    async def refresh(self) -> None:
        """Reread the stream if the cache may be behind it (before serving a read)."""
        if self.fault:
            raise TableQuarantined(self.table_id, self.fault)
        if self.stale:
            async with self._lock:
                if self.stale:
                    await self._reload()

    def _resync_later(self, delay: timedelta) -> None:
        if self._closed:
            return
        self._disarm()

        async def resync() -> None:
            try:
                async with self._lock:
                    if self.stale:
                        await self._reload()
                    self._schedule()
            except TableQuarantined:
                pass  # faulted: the manager quarantines it
            except Exception:
                log.exception("table_resync_failed", table_id=self.table_id)
                self._resync_later(self.timing.retry_delay)

        self._later(delay, resync)
