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
  only after it commits the tables' ``table:{T}:archived`` marks raised.

Exactly once: a table's cursor is written with its hands, and following
resumes from the stored cursor (at adoption, after any failed write), never
from memory. A crash after the commit and before the mark is healed at the
next adoption (the mark is raised to the stored position). If another
projector moved a position first (a lease lapsed during a stall), the write
is refused whole, this projector drops that table and rereads the others.
A table whose stream cannot be projected (undecodable, trimmed past its
cursor) is logged and left alone by this process; the others go on.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import structlog

from felt.archive import HandArchive, PositionMoved, TableWrite
from felt.archive.feed import ProjectorFeed
from felt.archive.projection import TableProjection
from felt.eventstore import EventsTrimmed
from felt.eventstore.codec import CodecError
from felt.metrics_server import Health
from felt.registry import TableRegistry
from services.projector.metrics import ProjectorMetrics
from services.projector.ownership import owner_of

log = structlog.get_logger("felt.projector")


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
    following: dict[str, Following] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)
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
        try:
            while not self.stopping:
                try:
                    await self.step()
                except (OSError, ConnectionError, TimeoutError) as exc:
                    self.metrics.errors.labels(kind="redis").inc()
                    log.warning("projector_read_failed", error=repr(exc))
                    await self._pause(1.0)
        finally:
            scanner.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await scanner
            await self._let_go()

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
        cursor = await self.archive.cursor(table_id)
        await self.feed.mark_archived(table_id, cursor.position)
        self.following[table_id] = Following(TableProjection(table_id, cursor), cursor.position)
        log.info("projector_following", table_id=table_id, position=cursor.position)

    def _drop(self, table_id: str) -> None:
        if self.following.pop(table_id, None) is not None:
            log.info("projector_let_go", table_id=table_id)

    def _fail(self, table_id: str, exc: Exception) -> None:
        self.metrics.errors.labels(kind="table").inc()
        log.error("projector_table_failed", table_id=table_id, error=repr(exc))
        self.failed.add(table_id)
        self._drop(table_id)

    # ------------------------------------------------------------------ following

    async def step(self) -> int:
        """Read what is new on every followed table, archive what it finished; hands written."""
        after = {t: f.projection.read_to for t, f in self.following.items()}
        try:
            got = await self.feed.read_new(after, count=self.read_count, block_ms=self.block_ms)
        except EventsTrimmed as exc:
            # One table's stream was trimmed past our cursor: find it, leave it, go on.
            await self._find_trimmed(after, exc)
            return 0
        for table_id, records in got.items():
            f = self.following.get(table_id)
            if f is None or f.projection.read_to != after[table_id]:
                continue  # let go of, or re-adopted, while reading
            try:
                for record in records:
                    f.projection.feed(record)
            except (CodecError, ValueError) as exc:
                self._fail(table_id, exc)
                continue
            self.metrics.events.inc(len(records))
        hands = await self._write()
        if hands >= 0:  # Redis answered and so did PostgreSQL (or had nothing to do)
            self.health.last_redis_ok = time.monotonic()
        return max(hands, 0)

    async def _find_trimmed(self, after: dict[str, int], exc: EventsTrimmed) -> None:
        for table_id, sequence in after.items():
            try:
                await self.feed.read_new({table_id: sequence}, count=1, block_ms=0)
            except EventsTrimmed as trimmed:
                self._fail(table_id, trimmed)
        log.warning("projector_stream_trimmed", error=str(exc))

    async def _write(self) -> int:
        """One transaction for every table that moved; hands written (-1: the database failed)."""
        writes: list[TableWrite] = []
        for table_id, f in self.following.items():
            p = f.projection
            if p.position == f.stored and not p.has_pending:
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
        await asyncio.gather(
            *(self.feed.mark_archived(w.table_id, w.cursor.position) for w in writes)
        )
        return hands

    async def _reread(self, table_ids: Iterable[str]) -> None:
        """Start the tables again from their stored cursors (what was read but not written)."""
        for table_id in list(table_ids):
            if table_id in self.following:
                try:
                    await self._adopt(table_id)
                except Exception as exc:
                    log.warning("projector_reread_failed", table_id=table_id, error=repr(exc))
                    self._drop(table_id)
