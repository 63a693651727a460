"""The projector: follows the tables it is given, writes each finished hand once, marks progress.

Two loops share the followed tables:

- **Membership** (every ``scan_ms``): heartbeat into the live members, read
  the registry (``felt:tables``, so tables created later are found within a
  scan), and follow the tables rendezvous hashing gives this member
  (``ownership.owner_of``) whose projector lease it can take or renew; let go
  of those it lost or that now belong to another live member.
- **Follow**: one blocking read of every followed stream at once
  (``ProjectorFeed.read_new``), each table's records folded by its
  ``TableProjection``, then one archive transaction for every table that
  moved (hands, late shows, cursors; a compare-and-set on each position), and
  only after it commits the tables' ``table:{T}:archived`` marks raised (one
  pipelined round trip). ``run`` overlaps the two: while one write is in
  flight the next read and fold go on, so the database is kept busy with
  back-to-back transactions, each holding everything that arrived during the
  one before (a batch that grows with the load, no fixed size or timer). The
  tables are split into ``writers`` lanes (a stable hash of the table id),
  each with at most one write in flight on its own connection: a lane's next
  write is built (``take``, its expected positions the committed ones) only
  once its last has committed or failed, so a table never has two writes in
  flight, while two lanes keep two database backends (two cores) busy.

Exactly once: a table's cursor is written with its hands, and following
resumes from the stored cursor (at adoption, after any failed write), never
from memory. A crash after the commit and before the mark is healed at the
next adoption (the mark is raised to the stored position). If another
projector moved a position first (a lease lapsed during a stall), the write
is refused whole, this projector drops that table and rereads the others.
A table whose stream cannot be projected (undecodable, trimmed past its
cursor) is logged and left alone by this process; the others go on.

Two histories are never mixed: every adoption (and so every reread) first
checks the stream against the stored cursor, which holds a fingerprint of the
event at its position; a stream that ends before the cursor, or holds another
event there (a Redis restart lost a tail the table then wrote again), fails
the table like a hand number taken. After any Redis outage every followed
table is reread: at once if its lane has no write in flight, else as soon as
that write is done (never folding the new history onto the one read before).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial

import structlog

from felt.messages.values import CodecError
from felt.service.metrics_server import Health
from felt.storage.archive import HandArchive, HandNumberTaken, PositionMoved, TableWrite
from felt.storage.archive.feed import ProjectorFeed
from felt.storage.archive.projection import TableProjection, fingerprint_of
from felt.storage.archive.values import Cursor
from felt.storage.eventstore import EventsTrimmed
from felt.storage.redis_client import REDIS_OUTAGE_ERRORS
from felt.storage.registry import TableRegistry
from services.projector.metrics import ProjectorMetrics
from services.projector.ownership import owner_of

log = structlog.get_logger("felt.projector")


class StreamDiverged(Exception):
    """The table's stream is not the one its archive cursor was taken from."""

    def __init__(self, table_id: str, why: str) -> None:
        super().__init__(f"{table_id}: {why}")
        self.table_id = table_id


@dataclass
class Following:
    """A table this projector follows: its fold, and the position stored for it."""

    projection: TableProjection
    stored: int


@dataclass
class Projector:
    """One projector instance (see the module docstring); ``run`` until ``request_stop``."""

    member: str
    feed: ProjectorFeed
    registry: TableRegistry
    archive: HandArchive
    metrics: ProjectorMetrics
    lease_ms: int = 10_000
    scan_ms: int = 1_000
    read_count: int = 1_000
    block_ms: int = 200
    writers: int = 2
    following: dict[str, Following] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)
    suspect: set[str] = field(default_factory=set)
    """Tables to reread from their stored cursors (after a Redis outage) once their lane
    has no write in flight."""
    health: Health = field(default_factory=lambda: Health(accepting=True))
    _stop: asyncio.Event = field(default_factory=asyncio.Event)

    # ------------------------------------------------------------------ lifecycle

    def request_stop(self) -> None:
        self._stop.set()
        self.health.accepting = False

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    async def run(self) -> None:
        """Share the tables and archive them until stopped; then let go of everything."""
        await self.rebalance()
        scanner = asyncio.create_task(self._scan_forever())
        lanes: dict[int, asyncio.Task[int]] = {}
        try:
            while not self.stopping:
                # Redis may have restarted without what was read ahead of the archive (a
                # crash under appendfsync everysec): start again from the stored cursors
                # (checked against the stream) rather than fold new events onto lost ones.
                await self._reread_suspects(lambda t: self._lane(t) not in lanes)
                try:
                    # A lane in flight will want its next write soon: wait less for news.
                    await self._read(min(self.block_ms, 20) if lanes else self.block_ms)
                except REDIS_OUTAGE_ERRORS as exc:
                    self.metrics.errors.labels(kind="redis").inc()
                    log.warning("projector_read_failed", error=repr(exc))
                    self.suspect.update(self.following)
                    await self._pause(1.0)
                    continue
                for lane in range(max(1, self.writers)):
                    writing = lanes.get(lane)
                    if writing is not None:
                        if not writing.done():
                            continue  # what it read waits for this lane's next write
                        await self._written(lanes.pop(lane))
                        await self._reread_suspects(partial(self._in_lane, lane=lane))
                    if self._moved(lane):
                        lanes[lane] = asyncio.create_task(self._write(lane))
        finally:
            for writing in lanes.values():  # let the writes in flight commit, raise marks
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await writing
            scanner.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await scanner
            await self._let_go()

    async def _written(self, writing: asyncio.Task[int]) -> int:
        """Wait for the write in flight; hands it wrote (a Redis failure of its marks is
        logged: the marks are raised again at the next write or adoption)."""
        try:
            hands = await writing
        except REDIS_OUTAGE_ERRORS as exc:
            self.metrics.errors.labels(kind="redis").inc()
            log.warning("projector_mark_failed", error=repr(exc))
            self.suspect.update(self.following)
            return 0
        if hands >= 0:  # Redis answered and so did PostgreSQL (or had nothing to do)
            self.health.last_redis_ok = time.monotonic()
        return max(hands, 0)

    async def _pause(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), seconds)

    async def _scan_forever(self) -> None:
        while not self.stopping:
            await self._pause(self.scan_ms / 1000)
            if self.stopping:
                return
            try:
                await self.rebalance()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.metrics.errors.labels(kind="redis").inc()
                log.warning("projector_scan_failed", error=repr(exc))

    async def _let_go(self) -> None:
        for table_id in list(self.following):
            with contextlib.suppress(Exception):
                await self.feed.release(table_id, self.member)
        self.following.clear()
        with contextlib.suppress(Exception):
            await self.feed.leave(self.member)
        self.metrics.tables.set(0)
        log.info("projector_stopped", member=self.member)

    # ------------------------------------------------------------------ sharing

    async def rebalance(self) -> None:
        """Heartbeat, then follow exactly the tables this member should and may."""
        members = await self.feed.join(self.member, max(3 * self.scan_ms, 1_000))
        self.metrics.members.set(len(members))
        tables = await self.registry.table_ids()
        mine = {t for t in tables if owner_of(t, members) == self.member} - self.failed
        for table_id in list(self.following):
            if table_id not in mine:
                self._drop(table_id)
                await self.feed.release(table_id, self.member)
            elif not await self.feed.claim(table_id, self.member, self.lease_ms):
                self._drop(table_id)
        for table_id in sorted(mine - set(self.following)):
            if self.stopping:
                return
            if await self.feed.claim(table_id, self.member, self.lease_ms):
                await self._adopt(table_id)
        self.metrics.tables.set(len(self.following))

    async def _adopt(self, table_id: str) -> None:
        self.suspect.discard(table_id)
        cursor = await self.archive.cursor(table_id)
        try:
            await self._check_stream(table_id, cursor)
        except StreamDiverged as exc:
            log.error("projector_stream_diverged", table_id=table_id, error=str(exc))
            self._fail(table_id, exc)
            return
        await self.feed.mark_archived(table_id, cursor.position)
        self.following[table_id] = Following(TableProjection(table_id, cursor), cursor.position)
        log.info("projector_following", table_id=table_id, position=cursor.position)

    async def _check_stream(self, table_id: str, cursor: Cursor) -> None:
        """Raise :class:`StreamDiverged` unless the stream still holds the event the cursor
        was taken at (an event trimmed since cannot be compared: its length is checked)."""
        if cursor.position == 0:
            return
        last, payload = await self.feed.entry_at(table_id, cursor.position)
        if last < cursor.position:
            raise StreamDiverged(
                table_id, f"the stream ends at {last}, the archive at {cursor.position}"
            )
        if payload is not None and cursor.fingerprint not in ("", fingerprint_of(payload)):
            raise StreamDiverged(
                table_id, f"another event than the archived one at {cursor.position}"
            )

    async def _reread_suspects(self, ready: Callable[[str], bool]) -> None:
        """Reread the suspect tables ``ready`` says have no write in flight."""
        due = [t for t in self.suspect if ready(t)]
        self.suspect.difference_update(due)
        await self._reread(due)

    def _drop(self, table_id: str) -> None:
        if self.following.pop(table_id, None) is not None:
            log.info("projector_let_go", table_id=table_id)

    def _fail(self, table_id: str, exc: Exception) -> None:
        self.metrics.errors.labels(kind="table").inc()
        log.error("projector_table_failed", table_id=table_id, error=repr(exc))
        self.failed.add(table_id)
        self.metrics.failed_tables.set(len(self.failed))
        self._drop(table_id)

    # ------------------------------------------------------------------ following

    async def step(self) -> int:
        """Read what is new on every followed table, archive what it finished; hands written.

        One cycle, read then write, in turn (``run`` overlaps them)."""
        await self._read()
        hands = await self._write()
        if hands >= 0:  # Redis answered and so did PostgreSQL (or had nothing to do)
            self.health.last_redis_ok = time.monotonic()
        return max(hands, 0)

    async def _read(self, block_ms: int | None = None) -> None:
        """Read what is new on every followed table and fold it into its projection."""
        held = dict(self.following)
        after = {t: f.projection.read_to for t, f in held.items()}
        wait = self.block_ms if block_ms is None else block_ms
        try:
            got = await self.feed.read_new(after, count=self.read_count, block_ms=wait)
        except EventsTrimmed as exc:
            # One table's stream was trimmed past our cursor: find it, leave it, go on.
            await self._find_trimmed(after, exc)
            return
        for table_id, records in got.items():
            f = self.following.get(table_id)
            if f is None or f is not held[table_id] or f.projection.read_to != after[table_id]:
                continue  # let go of, or re-adopted, while reading
            try:
                for record in records:
                    f.projection.feed(record)
            except (CodecError, ValueError) as exc:
                self._fail(table_id, exc)
                continue
            self.metrics.events.inc(len(records))

    async def _find_trimmed(self, after: dict[str, int], exc: EventsTrimmed) -> None:
        for table_id, sequence in after.items():
            try:
                await self.feed.read_new({table_id: sequence}, count=1, block_ms=0)
            except EventsTrimmed as trimmed:
                self._fail(table_id, trimmed)
        log.warning("projector_stream_trimmed", error=str(exc))

    def _in_lane(self, table_id: str, lane: int) -> bool:
        return self._lane(table_id) == lane

    def _lane(self, table_id: str) -> int:
        return zlib.crc32(table_id.encode()) % max(1, self.writers)

    def _moved(self, lane: int | None = None) -> bool:
        """Whether a followed table (of ``lane``; None: any) has something to write."""
        return any(
            (lane is None or self._lane(t) == lane)
            and (f.projection.position != f.stored or f.projection.has_pending)
            for t, f in self.following.items()
        )

    async def _write(self, lane: int | None = None) -> int:
        """One transaction for every table (of ``lane``; None: all) that moved; hands written
        (-1: the database failed)."""
        writes: list[TableWrite] = []
        for table_id, f in self.following.items():
            p = f.projection
            if p.position == f.stored and not p.has_pending:
                continue
            if lane is not None and self._lane(table_id) != lane:
                continue
            batch = p.take()
            writes.append(
                TableWrite(
                    table_id, f.stored, batch.cursor, batch.hands, batch.late, batch.table_events
                )
            )
        if not writes:
            return 0
        started = time.monotonic()
        try:
            await self.archive.write(writes)
        except HandNumberTaken as exc:
            # The stream diverged from the archive (a Redis crash lost archived events and the
            # table played on from before them): archiving on would mix two histories. Leave
            # this table to an operator (docs/operations.md, "What a Redis crash costs"); the
            # others of the batch are written at the next round.
            log.error("projector_stream_diverged", table_id=exc.table_id, error=str(exc))
            self._fail(exc.table_id, exc)
            await self._reread(w.table_id for w in writes if w.table_id != exc.table_id)
            return 0
        except PositionMoved as exc:
            self.metrics.conflicts.inc()
            log.warning("projector_position_moved", table_id=exc.table_id, error=str(exc))
            self._drop(exc.table_id)
            await self._reread(w.table_id for w in writes if w.table_id != exc.table_id)
            return 0
        except Exception as exc:
            self.metrics.errors.labels(kind="database").inc()
            log.warning("projector_write_failed", error=repr(exc))
            await self._reread(w.table_id for w in writes)
            await self._pause(1.0)
            return -1
        now = time.time()
        self.metrics.writes.inc()
        self.metrics.write_seconds.observe(time.monotonic() - started)
        worst = 0.0
        hands = 0
        for w in writes:
            held = self.following.get(w.table_id)
            if held is not None:
                held.stored = w.cursor.position
            for hand in w.hands:
                lag = max(0.0, now - hand.ended_at.timestamp())
                self.metrics.observe_lag(lag)
                worst = max(worst, lag)
            hands += len(w.hands)
        self.metrics.hands.inc(hands)
        if hands:
            self.metrics.last_lag.set(worst)
        await self.feed.mark_archived_many({w.table_id: w.cursor.position for w in writes})
        return hands

    async def _reread(self, table_ids: Iterable[str]) -> None:
        """Start the tables again from their stored cursors (what was read but not written).

        A table that cannot be reread now is let go (the next scan adopts it again); one log
        line says how many, not one per table (during an outage, every table fails)."""
        failed: list[str] = []
        error: Exception | None = None
        for table_id in list(table_ids):
            if table_id in self.following:
                try:
                    await self._adopt(table_id)
                except Exception as exc:
                    failed.append(table_id)
                    error = error or exc
                    self.following.pop(table_id, None)
        if failed:
            log.warning(
                "projector_reread_failed", tables=len(failed), first=failed[0], error=repr(error)
            )
