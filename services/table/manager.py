"""Which tables this instance runs: leases, loading, takeover, AI decision requests.

Each table is owned by one instance at a time through a lease that the owner
renews. An instance adopts any registered table whose lease is free (its
owner stopped or crashed) or already names it (it was restarted under the
same instance id), rebuilds it from its stream and carries on, timers
included. Losing a lease stops the table here at once; and should a stale
owner still try to write, the version-checked append refuses it.

A table whose stream cannot be folded, or whose state cannot be driven (a
timer cannot be armed), is quarantined rather than retried: it is recorded
in the registry (in Redis the hash ``felt:tables:quarantined``, table id ->
JSON with the reason), logged as ``table_quarantined``, its lease released, and every call
to it refused with FAILED_PRECONDITION ``TABLE_QUARANTINED``. The service
and every other table keep running; no instance adopts it again until an
operator has repaired the stream and deleted its entry (``HDEL``).

The manager reaches the outside through ports only (``felt.storage.registry.TableRegistry``,
``felt.storage.eventstore.TableLeases``, ``felt.storage.decisions.DecisionPublisher``), so that the
service tests run it on in-memory fakes.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime

import structlog
from google.protobuf.message import DecodeError

from felt.core.rules.legal import legal_actions
from felt.core.table.aggregate import TableState
from felt.messages.events import EventMeta
from felt.messages.values import ai_level_to_proto
from felt.service.tracing import Tracing
from felt.storage.decisions import DecisionPublisher
from felt.storage.eventstore import EventStore, EventsTrimmed, TableLeases
from felt.storage.redis_client import REDIS_ERRORS, REDIS_OUTAGE_ERRORS, cancel_requested
from felt.storage.registry import QUARANTINE_KEY, TableRegistry
from felt.wire.convert import (
    legal_to_proto,
    redacted_stored_event,
    table_view_to_proto,
)
from felt.wire.seat_stats import stats_to_proto
from poker.v1 import ai_pb2
from services.table.runtime import (
    Clock,
    TableQuarantined,
    TableRuntime,
    Timing,
    fault_reason,
    utc_now,
)
from services.table.snapshots import SnapshotPolicy

log = structlog.get_logger("felt.table")


class TableNotFound(Exception):
    pass


class NotOwner(Exception):
    """Another instance owns the table (its lease is held)."""


@dataclass
class _Loading:
    """One table being loaded: its lock, and how many calls wait on it (gone at zero)."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    callers: int = 0


@dataclass
class TableManager:
    """The tables this instance owns; ``leases`` default to the event store's (see
    ``felt.storage.eventstore.TableLeases`` for why they live there)."""

    store: EventStore
    registry: TableRegistry
    decisions: DecisionPublisher
    owner: str = field(default_factory=lambda: f"table-{uuid.uuid4().hex[:12]}")
    lease_ttl_ms: int = 5_000
    timing: Timing = field(default_factory=Timing)
    snapshots: SnapshotPolicy = field(default_factory=SnapshotPolicy)
    clock: Clock = utc_now
    adopt: bool = True
    leases: TableLeases | None = None
    tracing: Tracing = field(default_factory=Tracing.off)
    runtimes: dict[str, TableRuntime] = field(default_factory=dict)
    _loading: dict[str, _Loading] = field(default_factory=dict)
    _task: asyncio.Task[None] | None = None
    _stopping: asyncio.Event = field(default_factory=asyncio.Event)
    _quarantining: set[asyncio.Task[None]] = field(default_factory=set)
    # Runtimes whose lease was lost, being stopped (``_retire``).
    _retiring: set[asyncio.Task[None]] = field(default_factory=set)
    # time.monotonic() of the last lease round Redis answered (felt_table_redis_silent_seconds).
    redis_ok_at: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        if self.leases is None:
            self.leases = self.store

    @property
    def ai_stream(self) -> str:
        """Where AI decision requests go (``FELT_AI_STREAM``)."""
        return self.decisions.stream

    @property
    def _leases(self) -> TableLeases:
        assert self.leases is not None
        return self.leases

    async def start(self) -> None:
        await self._maintain_once()
        self._start_rounds()

    def _start_rounds(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._maintain())
        self._task.add_done_callback(self._rounds_ended)

    def _rounds_ended(self, task: asyncio.Task[None]) -> None:
        """The lease rounds ended: on ``stop``, as they should; otherwise they start again.

        Without them no lease of this instance is renewed and no table adopted, while every
        table here goes on answering reads from a cache that can no longer move (each write
        finds its lease lost): the instance would look alive and play nothing.
        """
        if self._stopping.is_set():
            return
        if task.cancelled():
            # Not by stop(): the event loop shutting down, or a crash test's. Nothing renews
            # this instance's leases from here on.
            log.warning("lease_rounds_cancelled", owner=self.owner)
            return
        log.error("lease_rounds_ended", owner=self.owner, error=repr(task.exception()))
        self._start_rounds()

    async def stop(self) -> None:
        """Stop timers and release every lease so another instance can take over at once."""
        # Ask the maintenance loop to finish its round: redis-py can swallow a
        # cancellation that lands inside a command (redis-py #2028), so cancel
        # only if it does not stop by itself in time.
        self._stopping.set()
        if self._task is not None and self._task.done():
            if not self._task.cancelled():
                self._task.exception()  # ended on its own just now: logged by _rounds_ended
        elif self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), self.lease_ttl_ms / 1000)
            except (TimeoutError, asyncio.CancelledError):
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                    await asyncio.wait_for(self._task, 1.0)
        if self._retiring:
            await asyncio.wait(set(self._retiring), timeout=10.0)
        for table_id, runtime in list(self.runtimes.items()):
            await runtime.stop()
            await self._leases.release_lease(table_id, self.owner)
        self.runtimes.clear()

    async def register(self, table_id: str) -> TableRuntime:
        """A runtime for a table about to be created here (takes its lease)."""
        runtime = self._new_runtime(table_id)
        if not await self._acquire(runtime):
            raise NotOwner(table_id)
        await runtime.load()
        self.runtimes[table_id] = runtime
        return runtime

    async def discard(self, runtime: TableRuntime) -> None:
        """Forget a table whose creation was refused (and give its lease back)."""
        if self.runtimes.get(runtime.table_id) is runtime and runtime.state is None:
            del self.runtimes[runtime.table_id]
            await runtime.stop()
            await self._leases.release_lease(runtime.table_id, self.owner)

    async def _acquire(self, runtime: TableRuntime) -> bool:
        started = time.monotonic()
        if not await self._leases.acquire_lease(runtime.table_id, self.owner, self.lease_ttl_ms):
            return False
        # Redis started the TTL after we sent the call: our view of the expiry is safe.
        runtime.lease_expires = started + self.lease_ttl_ms / 1000
        return True

    async def _renew(self, runtime: TableRuntime) -> bool:
        started = time.monotonic()
        if not await self._leases.renew_lease(runtime.table_id, self.owner, self.lease_ttl_ms):
            runtime.lease_expires = 0.0
            return False
        runtime.lease_expires = started + self.lease_ttl_ms / 1000
        return True

    async def _renew_current(self, runtime: TableRuntime) -> bool:
        """A write's renewal (``TableRuntime.run``, its lease clock out): only for the runtime
        this instance runs the table with now. The lease names the instance, not the
        runtime, so once a round has stopped ``runtime`` and adopted the table again under
        a new one, Redis would renew it for the old one too, and the old one would write
        behind the new one's cache."""
        return self.runtimes.get(runtime.table_id) is runtime and await self._renew(runtime)

    async def created(self, runtime: TableRuntime) -> None:
        """Record a new table so that any instance can adopt it later."""
        await self.registry.add(runtime.table_id)
        if not runtime.started:
            runtime.start()

    async def get(self, table_id: str) -> TableRuntime:
        """The runtime of a table this instance owns, taking the lease if it is free."""
        runtime = self.runtimes.get(table_id)
        if runtime is not None:
            return runtime
        # Existence first, and the loading lock only for as long as someone waits on it:
        # anonymous calls naming tables that do not exist must leave nothing behind.
        if not await self.registry.exists(table_id):
            raise TableNotFound(table_id)
        loading = self._loading.setdefault(table_id, _Loading())
        loading.callers += 1
        try:
            async with loading.lock:
                return await self._load(table_id)
        finally:
            loading.callers -= 1
            if not loading.callers:
                del self._loading[table_id]

    async def _load(self, table_id: str) -> TableRuntime:
        """``get`` under the table's loading lock: adopt and rebuild it, or say why not."""
        runtime = self.runtimes.get(table_id)
        if runtime is not None:
            return runtime
        held = await self.registry.quarantine_reason(table_id)
        if held is not None:
            raise TableQuarantined(table_id, held)
        runtime = self._new_runtime(table_id)
        if not await self._acquire(runtime):
            raise NotOwner(table_id)
        try:
            await runtime.load()
        except (*REDIS_ERRORS, asyncio.CancelledError):
            await self._leases.release_lease(table_id, self.owner)
            raise
        except Exception as exc:  # a stream that cannot be folded: never a crash loop
            reason = fault_reason(exc)
            await self._quarantine(runtime, reason)
            raise TableQuarantined(table_id, reason) from exc
        if runtime.state is None:
            await self._leases.release_lease(table_id, self.owner)
            raise TableNotFound(table_id)
        if not await self._renew(runtime):  # a long rebuild may outlast the lease
            raise NotOwner(table_id)
        self.runtimes[table_id] = runtime
        runtime.start()
        if runtime.fault:  # its timers could not be armed (``on_fault`` quarantines it)
            raise TableQuarantined(table_id, runtime.fault)
        log.info("table_adopted", table_id=table_id, owner=self.owner, version=runtime.version)
        return runtime

    def _new_runtime(self, table_id: str) -> TableRuntime:
        return TableRuntime(
            table_id,
            self.store,
            clock=self.clock,
            timing=self.timing,
            snapshots=self.snapshots,
            on_ai_turn=self.ask_ai,
            on_fault=self._faulted,
            renew_lease=self._renew_current,
        )

    def _retire(self, runtime: TableRuntime) -> None:
        """Stop a runtime taken out of service, in a task of its own (``stop`` awaits it)."""
        task = asyncio.get_running_loop().create_task(runtime.stop())
        self._retiring.add(task)
        task.add_done_callback(self._retiring.discard)

    def _faulted(self, runtime: TableRuntime, reason: str) -> None:
        """A running table's state cannot be driven: quarantine it (in the background)."""
        task = asyncio.get_running_loop().create_task(self._quarantine(runtime, reason))
        self._quarantining.add(task)
        task.add_done_callback(self._quarantining.discard)

    async def _quarantine(self, runtime: TableRuntime, reason: str) -> None:
        """Take the table out of service here and everywhere, and say why (log and registry)."""
        table_id = runtime.table_id
        log.error(
            "table_quarantined",
            table_id=table_id,
            owner=self.owner,
            version=runtime.version,
            reason=reason,
            hint=f"repair its stream, then HDEL {QUARANTINE_KEY} {table_id}",
        )
        if self.runtimes.get(table_id) is runtime:
            del self.runtimes[table_id]
        record = {
            "reason": reason,
            "version": runtime.version,
            "owner": self.owner,
            "time": datetime.now(UTC).isoformat(),
        }
        try:
            await self.registry.quarantine(table_id, record)
        except REDIS_ERRORS as exc:  # still refused here; others find out themselves
            log.warning("quarantine_not_recorded", table_id=table_id, error=repr(exc))
        await runtime.stop(grace_s=1.0)
        with contextlib.suppress(*REDIS_ERRORS):
            await self._leases.release_lease(table_id, self.owner)

    async def quarantined(self) -> dict[str, dict[str, object]]:
        """The quarantined tables and why (what an operator reads with ``HGETALL``)."""
        return await self.registry.quarantined()

    async def _maintain(self) -> None:
        redis_was_away = False
        while not self._stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.lease_ttl_ms / 3000)
            if self._stopping.is_set():
                return
            # Every round, Redis up or not: an AI seat whose request got no answer for
            # timing.ai_reask is asked again (a request lost with a Redis crash is found by
            # its missing answer, whichever connection saw the crash, if any did).
            try:
                self.reask_stalled_ai()
                self.mend_lost_timers()
            except Exception:
                # Never the end of the loop: it renews every lease of this instance.
                log.exception("table_watchdog_failed", owner=self.owner)
            began = time.monotonic()
            try:
                await self._maintain_once()
            except asyncio.CancelledError:
                if self._stopping.is_set() or cancel_requested():
                    raise
                # A callee's own cancellation (a shared future cancelled under it), not a
                # request to stop: ending the loop here would stop every lease renewal and
                # adoption of this instance while it goes on serving stale tables.
                log.error("lease_round_cancelled", owner=self.owner)
                continue
            except REDIS_OUTAGE_ERRORS as exc:
                # Redis is away (a restart): the leases run out meanwhile, and the first
                # round after it is back renews them or hands the tables over.
                log.warning("lease_maintenance_failed", owner=self.owner, error=repr(exc))
                redis_was_away = True
                continue
            except Exception:
                log.exception("lease_maintenance_failed", owner=self.owner)
                continue
            self.redis_ok_at = time.monotonic()
            took = self.redis_ok_at - began
            if took * 1000 > self.lease_ttl_ms / 2:
                # Half the TTL: the leases renewed in this round had little margin left.
                log.warning("lease_round_slow", owner=self.owner, seconds=round(took, 3))
            if redis_was_away:
                redis_was_away = False
                log.info("redis_back", owner=self.owner, tables=len(self.runtimes))

    def reask_stalled_ai(self, now: float | None = None) -> int:
        """The AI watchdog over every table here (``TableRuntime.reask_stalled``); how many
        seats were asked again."""
        at = time.monotonic() if now is None else now
        return sum(runtime.reask_stalled(at) for runtime in list(self.runtimes.values()))

    def mend_lost_timers(self) -> int:
        """The timer watchdog over every table here (``TableRuntime.mend_timer``); how many
        tables had their timers armed again."""
        return sum(runtime.mend_timer() for runtime in list(self.runtimes.values()))

    def ask_ai_again(self) -> int:
        """Ask every AI seat to act here once more (``TableRuntime.ask_again``), but those
        whose request is being published now. How many were asked."""
        return sum(runtime.ask_again() for runtime in list(self.runtimes.values()))

    async def _maintain_once(self) -> None:
        for table_id, runtime in list(self.runtimes.items()):
            if not await self._renew(runtime):
                log.warning("lease_lost", table_id=table_id, owner=self.owner)
                # Out of service at once (no read answered from its cache, no write: its
                # renewal asks for the current runtime), stopped in the background: a stop
                # waits for a command in flight, and the round must go on renewing the
                # other tables' leases meanwhile, or a slow one would cost them theirs.
                if self.runtimes.get(table_id) is runtime:
                    del self.runtimes[table_id]
                self._retire(runtime)
        if not self.adopt:
            return
        held = await self.registry.quarantined_ids()
        for table_id in await self.registry.table_ids():
            if table_id in self.runtimes or table_id in held:
                continue
            # Free, or still ours from before a restart (same instance id): take it now.
            if await self._leases.lease_owner(table_id) in (None, self.owner):
                with contextlib.suppress(NotOwner, TableNotFound, TableQuarantined):
                    await self.get(table_id)

    async def ask_ai(
        self,
        runtime: TableRuntime,
        state: TableState,
        version: int,
        deadline: datetime | None,
    ) -> None:
        """Publish a decision request with only the AI seat's redacted view and legal actions.

        ``state`` is the table at ``version``, when the AI seat got its turn.
        """
        hand = state.hand
        seat = hand.actor_seat if hand is not None else None
        if hand is None or seat is None:
            return
        player = state.player(seat)
        if player is None or not player.ai_level:
            return
        request = ai_pb2.DecisionRequest(
            request_id=f"ai:{runtime.table_id}:{version}",
            table_id=runtime.table_id,
            seat=seat,
            hand_id=hand.setup.hand_id,
            expected_sequence=version,
            ai_level=ai_level_to_proto(player.ai_level),
            view=table_view_to_proto(state, seat, version, deadline),
            legal_actions=legal_to_proto(legal_actions(hand), hand.seats[hand.actor or 0].bet),
            history=[
                redacted_stored_event(
                    e, EventMeta(runtime.table_id, hand_id=hand.setup.hand_id), seat
                )
                for e in state.hand_events
            ],
            seat_stats=await self._seat_stats(runtime, version),
        )
        if deadline is not None:
            request.deadline.FromDatetime(deadline)
        # A span for the request; its context rides in the stream entry to the worker.
        attributes: dict[str, str | int] = {
            "felt.table_id": runtime.table_id,
            "felt.seat": seat,
            "felt.version": version,
        }
        with self.tracing.span("felt.ai.request", attributes=attributes):
            await self.decisions.publish(request, self.tracing.carrier())
        log.info("ai_decision_requested", table_id=runtime.table_id, seat=seat, version=version)

    async def _seat_stats(self, runtime: TableRuntime, version: int) -> list[ai_pb2.SeatStats]:
        """The table's opponent model at ``version`` (``TableRuntime.opponent_stats``).

        If the stream cannot be read back to start it, the request goes without a model.
        """
        try:
            stats = await runtime.opponent_stats(version)
        except (EventsTrimmed, DecodeError, ValueError, *REDIS_ERRORS) as exc:
            log.warning("opponent_model_unavailable", table_id=runtime.table_id, error=repr(exc))
            return []
        return stats_to_proto(stats)
