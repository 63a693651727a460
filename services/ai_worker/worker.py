"""The AI worker: answers the table service's decision requests from a Redis consumer group.

Workers are stateless and interchangeable, so operators scale by starting
more of them (``felt ai-worker`` / ``python -m services.ai_worker``); nothing
else changes. Every worker:

* joins the consumer group (``XGROUP CREATE <stream> <group> $ MKSTREAM``,
  idempotent) under a unique consumer name and reads new requests with
  ``XREADGROUP ... BLOCK`` (1 s, shorter than the client's 5 s socket timeout),
  never holding more than ``concurrency`` requests at once;
* decides each one from the seat's redacted view with the bot of the
  request's ``ai_level`` (on the event loop: bots are CPU-bound, a thread would
  add hand-offs and no parallelism), with a random source seeded from the
  request id: a redelivered request is answered identically;
* answers with ``SubmitAction(request_id, expected_sequence)`` and the AI
  token, then ``XACK``\\s. A late or duplicate answer (FAILED_PRECONDITION,
  ABORTED, NOT_FOUND, or the idempotent replay of an earlier answer) is
  harmless and acknowledged; a transient failure (UNAVAILABLE,
  DEADLINE_EXCEEDED, ...) is *not* acknowledged, so the request is retried;
* every ``claim_idle_ms / 4`` takes over requests that some consumer has held
  for ``claim_idle_ms`` without acknowledging (a crashed worker, a retried
  failure) with ``XAUTOCLAIM``, and keeps its own slow decisions from being
  taken over by resetting their idle time (``XCLAIM ... JUSTID``);
* moves poison requests (an undecodable payload, an unknown level, a bot
  action the service calls invalid, or a request delivered more than
  ``max_deliveries`` times, from ``XPENDING``'s delivery count) to the
  dead-letter stream ``<stream>:dead`` with the reason, then acknowledges them;
* on SIGTERM/SIGINT stops reading, finishes the decisions it holds (answer and
  acknowledge), leaves the group if it holds nothing, and exits 0.

With several table-service instances a request must reach the instance that
owns its table: the worker finds it by the table's lease and the instance
directory in the same Redis (``felt.service.table_router``, shared with the
gateway and the lobby; ``FELT_TABLE_TARGET`` only for a table nobody owns and
nobody announced). An UNAVAILABLE makes it look again and answer the new owner
at once; if the table has no live owner yet (its crashed owner's lease has not
lapsed), the request stays pending and is retried after ``claim_idle_ms``.

This module holds the lifecycle and the consumer-group loops; the rest is in
modules with one job each: ``config`` (settings), ``handling`` (one request to
its acknowledgement), ``answer`` (the answer policy), ``stats`` (gauges,
summaries, pruning), ``decide`` (the bots). What is left here (about 450
lines) is one job, the consumer's lifecycle: start, the read and claim
loops, heartbeats, and the drain on stop, which share the held-requests table
and are easier to check side by side. The stream is reached through the
``felt.storage.decisions.DecisionQueue`` port, so the loop also runs on the in-memory
fake (``tests/unit/services``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import structlog
from redis.asyncio import Redis

from felt.service.table_router import OwnerCalls, owner_calls
from felt.storage.decisions import (
    DecisionQueue,
    Entry,
    Fields,
    GroupMissing,
    agree_on_shards,
    redis_sharded_queue,
)
from felt.storage.redis_client import REDIS_ERRORS, connect_redis
from poker.v1 import table_service_pb2_grpc as rpc
from services.ai_worker.answer import Answerer, OwnerSubmit, SubmitStub
from services.ai_worker.config import (
    DEFAULT_GROUP,
    DEFAULT_STREAM,
    WorkerConfig,
    default_consumer_name,
)
from services.ai_worker.decide import Decider
from services.ai_worker.handling import RequestHandler
from services.ai_worker.metrics import Health, MetricsServer, WorkerMetrics
from services.ai_worker.stats import StatsReporter

log = structlog.get_logger("felt.ai_worker")

__all__ = ["DEFAULT_GROUP", "DEFAULT_STREAM", "AiWorker", "WorkerConfig", "main", "serve"]


@dataclass
class _Held:
    """A request this worker is working on: its task and when its idle time was last reset."""

    task: asyncio.Task[None]
    touched: float


@dataclass
class AiWorker:
    """One worker process's loop (see the module docstring). ``start``, then ``stop``.

    ``queue`` and ``stub`` are made from the configuration at ``start`` unless given
    (service tests give the in-memory queue and a fake table service).
    """

    config: WorkerConfig
    decider: Decider = field(default_factory=Decider)
    consumer: str = ""
    metrics: WorkerMetrics = field(init=False)
    health: Health = field(default_factory=Health)
    outcomes: Counter[str] = field(default_factory=Counter)
    queue: DecisionQueue | None = None
    stub: SubmitStub | None = None
    metrics_port: int | None = None
    _held: dict[bytes, _Held] = field(default_factory=dict)
    _stopping: asyncio.Event = field(default_factory=asyncio.Event)
    _slot_freed: asyncio.Event = field(default_factory=asyncio.Event)
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _redis: Redis | None = None  # the client this worker opened (and closes)
    _calls: OwnerCalls[rpc.TableServiceAsyncStub] | None = None
    _http: MetricsServer | None = None
    _executor: ThreadPoolExecutor | None = None
    _handler: RequestHandler | None = None
    _claim_cursor: str | bytes = "0-0"
    _closing: bool = False
    _stopped: bool = False

    def __post_init__(self) -> None:
        self.config.validate()
        self.consumer = self.consumer or self.config.consumer or default_consumer_name()
        self.metrics = WorkerMetrics(self.consumer)
        self.stats: StatsReporter | None = None  # made at start, with the queue

    def _reporter(self, queue: DecisionQueue) -> StatsReporter:
        cfg = self.config
        return StatsReporter(
            queue,
            self.metrics,
            self.health,
            self.consumer,
            self.outcomes,
            lambda: len(self._held),
            cfg.stats_interval_s,
            cfg.summary_interval_s,
            cfg.prune_idle_ms,
        )

    @property
    def _queue(self) -> DecisionQueue:
        assert self.queue is not None, "start the worker first"
        return self.queue

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Connect, join the group, start reading, claiming and reporting."""
        cfg = self.config
        if self.queue is None:
            self._redis = await connect_redis(
                cfg.redis_url, socket_timeout=5, health_check_interval=30
            )
            # A count unlike the table services' would leave shards unread: refuse to start.
            try:
                await agree_on_shards(self._redis, cfg.stream, cfg.shards)
            except BaseException:
                await self._redis.aclose()
                raise
            self.queue = redis_sharded_queue(
                self._redis, cfg.stream, cfg.shards, cfg.group, cfg.dead_stream
            )
        self.stats = self._reporter(self.queue)
        await self.ensure_group()
        self.health.last_redis_ok = time.monotonic()
        if self.stub is None:  # answers go to each table's owner, found in this Redis
            self._calls = owner_calls(
                cfg.table_target,
                self._redis,
                rpc.TableServiceStub,
                (
                    ("grpc.primary_user_agent", f"felt-ai-worker/{self.consumer}"),
                    ("grpc.keepalive_time_ms", 30_000),
                ),
                interceptors=cfg.tracing.client_interceptors(),
            )
            self.stub = OwnerSubmit(self._calls)
        assert self.stub is not None
        if cfg.bot_thread:
            self._executor = ThreadPoolExecutor(cfg.concurrency, thread_name_prefix="felt-ai-bot")
        self._handler = RequestHandler(
            self.queue,
            self.decider,
            Answerer(self.stub, cfg.ai_token, cfg.rpc_timeout_s, self.metrics),
            self.metrics,
            self.consumer,
            cfg.max_deliveries,
            self.outcomes,
            self._executor,
            cfg.tracing,
        )
        if cfg.metrics_port is not None:
            self._http = MetricsServer(self.metrics, self.health, self._health_details)
            self.metrics_port = await self._http.start(cfg.metrics_host, cfg.metrics_port)
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._read_loop(), name=f"ai-read-{self.consumer}"),
            loop.create_task(self._claim_loop(), name=f"ai-claim-{self.consumer}"),
            loop.create_task(
                self.stats.run(lambda: self._closing), name=f"ai-stats-{self.consumer}"
            ),
        ]
        self.health.accepting = True
        log.info(
            "ai_worker_started",
            consumer=self.consumer,
            stream=cfg.stream,
            group=cfg.group,
            table_target=cfg.table_target,
            concurrency=cfg.concurrency,
            claim_idle_ms=cfg.claim_idle_ms,
            metrics_port=self.metrics_port,
        )

    async def ensure_group(self) -> None:
        """Join (create if need be) the consumer group; an existing group is fine."""
        await self._queue.ensure_group()

    async def refresh_stream_stats(self) -> dict[str, object]:
        """Group-wide lag and pending count (into the gauges)."""
        assert self.stats is not None, "start the worker first"
        return await self.stats.refresh()

    def request_stop(self) -> None:
        """Stop taking new requests (signal handlers call this); ``stop`` then drains."""
        self._stopping.set()
        self.health.accepting = False

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    async def wait_stopping(self) -> None:
        await self._stopping.wait()

    async def stop(self) -> None:
        """Graceful: stop reading, finish (answer and acknowledge) held requests, leave, close.

        Requests still unfinished after ``drain_timeout_s`` are abandoned unacknowledged,
        so another worker claims them.
        """
        if self._stopped:
            return
        self.request_stop()
        if not self._tasks:  # never started
            await self._close()
            return
        # The read loop ends within block_ms; the claim loop keeps heartbeating what we hold.
        await asyncio.wait([self._tasks[0]], timeout=self.config.block_ms / 1000 + 6.0)
        held = [h.task for h in self._held.values()]
        if held:
            log.info("ai_worker_draining", consumer=self.consumer, inflight=len(held))
            _, late = await asyncio.wait(held, timeout=self.config.drain_timeout_s)
            if late:
                log.warning("ai_worker_drain_timeout", consumer=self.consumer, abandoned=len(late))
                await self._finish(list(late))
        await self._leave_group()
        if self.stats is not None:
            self.stats.log_summary("ai_worker_stopped")
        await self._close()

    async def abort(self) -> None:
        """Stop at once without acknowledging anything: what a crash looks like to the group."""
        if self._stopped:
            return
        self.request_stop()
        self._closing = True
        held = [h.task for h in self._held.values()]
        for task in held:
            task.cancel()
        await self._finish(held)
        log.warning("ai_worker_aborted", consumer=self.consumer)
        await self._close()

    async def _finish(self, tasks: list[asyncio.Task[None]]) -> None:
        """Cancel ``tasks`` and wait for them, but never forever.

        Each loop also ends by itself once ``_closing`` is set, because a cancellation
        that lands inside a Redis call is not always delivered (the client may finish
        the call instead), and a loop that survived it must not keep shutdown waiting.
        """
        for task in tasks:
            task.cancel()
        if tasks:
            grace = self.config.block_ms / 1000 + self.config.claim_idle_ms / 4000 + 2.0
            _, stuck = await asyncio.wait(tasks, timeout=grace)
            if stuck:
                log.warning("ai_worker_tasks_stuck", tasks=[t.get_name() for t in stuck])

    async def _close(self) -> None:
        self._closing = True
        self._stopped = True
        await self._finish(self._tasks)
        if self._http is not None:
            await self._http.stop()
        if self._calls is not None:
            await self._calls.close()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
        if self._redis is not None:
            await self._redis.aclose()

    async def _leave_group(self) -> None:
        """Delete this consumer if it holds nothing (DELCONSUMER would drop what it holds)."""
        try:
            await self._queue.leave(self.consumer)
        except REDIS_ERRORS as exc:
            log.warning("ai_worker_leave_failed", consumer=self.consumer, error=str(exc))

    # ------------------------------------------------------------------ reading

    @property
    def inflight(self) -> int:
        return len(self._held)

    @property
    def held_entries(self) -> list[bytes]:
        """Stream ids of the requests this worker is deciding now."""
        return list(self._held)

    def _free_slots(self) -> int:
        return self.config.concurrency - len(self._held)

    async def _wait_any(self, *events: asyncio.Event, timeout: float | None = None) -> None:
        waiters = [asyncio.ensure_future(e.wait()) for e in events]
        try:
            await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waiters:
                w.cancel()

    async def _read_loop(self) -> None:
        """Read new requests while there is room, until asked to stop."""
        cfg = self.config
        queue = self._queue
        backoff = 0.1
        # While busy, read only once half the slots are free: fewer round trips per request
        # (a read of one entry costs about as much as a read of four), and requests this
        # worker could not start yet stay in the stream for idle workers to take.
        batch = max(1, cfg.concurrency // 2)
        while not self._stopping.is_set():
            free = self._free_slots()
            if free <= 0 or (self._held and free < batch):
                self._slot_freed.clear()
                await self._wait_any(self._slot_freed, self._stopping)
                continue
            try:
                entries = await queue.read(self.consumer, free, cfg.block_ms)
                self.health.last_redis_ok = time.monotonic()
                backoff = 0.1
            except GroupMissing:  # the stream or group was deleted: recreate it
                log.warning("ai_group_missing", stream=cfg.stream, group=cfg.group)
                with contextlib.suppress(*REDIS_ERRORS):
                    await self.ensure_group()
                continue
            except REDIS_ERRORS as exc:
                self.metrics.errors.labels(kind="redis").inc()
                log.warning("ai_read_failed", error=str(exc), retry_in_s=backoff)
                await self._wait_any(self._stopping, timeout=backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            # Entries read are ours now (in our pending list), even if a stop was asked
            # meanwhile: handle them rather than leave them to be claimed later.
            for entry in entries:
                self._spawn(entry.entry_id, entry.fields, deliveries=1)

    def _spawn(self, entry_id: bytes, fields: Fields | None, deliveries: int) -> None:
        if entry_id in self._held:
            return  # already working on it (our own entry came back through a claim)
        assert self._handler is not None
        task = asyncio.get_running_loop().create_task(
            self._handler.handle(entry_id, fields, deliveries), name=f"ai-decide-{entry_id!r}"
        )
        self._held[entry_id] = _Held(task, time.monotonic())
        self.metrics.inflight.set(len(self._held))
        task.add_done_callback(lambda _t: self._release(entry_id))

    def _release(self, entry_id: bytes) -> None:
        self._held.pop(entry_id, None)
        self.metrics.inflight.set(len(self._held))
        self._slot_freed.set()

    # ------------------------------------------------------------------ claiming

    async def _claim_loop(self) -> None:
        """Keep own slow decisions ours, take over requests others left idle too long, and
        every ``trim_interval_s`` trim what the group is done with from the stream.

        Runs until the worker closes: while draining it only heartbeats (claims nothing new).
        """
        interval = max(0.05, self.config.claim_idle_ms / 4000)
        trimmed_at = time.monotonic()
        while not self._closing:
            await asyncio.sleep(interval)
            if self._closing:
                return
            try:
                await self._heartbeat()
                if not self._stopping.is_set() and self._free_slots() > 0:
                    await self.claim_once()
                every = self.config.trim_interval_s
                if every and time.monotonic() - trimmed_at >= every:
                    trimmed_at = time.monotonic()
                    trimmed = await self._queue.trim_acknowledged()
                    if trimmed:
                        log.debug("ai_stream_trimmed", entries=trimmed)
            except REDIS_ERRORS as exc:
                self.metrics.errors.labels(kind="redis").inc()
                log.warning("ai_claim_failed", error=str(exc))

    async def _heartbeat(self) -> None:
        """Reset the idle time of requests held for a while, so no one claims them meanwhile.

        ``XCLAIM`` with a min-idle-time only succeeds while the entry has been idle that
        long, so an entry another worker has just claimed is not taken back.
        """
        threshold_ms = self.config.claim_idle_ms // 2
        now = time.monotonic()
        due = [eid for eid, h in self._held.items() if (now - h.touched) * 1000 >= threshold_ms]
        if not due:
            return
        await self._queue.touch(self.consumer, due, threshold_ms)
        for eid in due:
            held = self._held.get(eid)
            if held is not None:
                held.touched = now

    async def claim_once(self) -> int:
        """One ``XAUTOCLAIM`` pass over requests idle longer than ``claim_idle_ms``."""
        cfg = self.config
        free = self._free_slots()
        if free <= 0:
            return 0
        self._claim_cursor, entries = await self._queue.claim_idle(
            self.consumer, cfg.claim_idle_ms, free, self._claim_cursor
        )
        claimed: list[Entry] = [e for e in entries if e.entry_id not in self._held]
        if not claimed:
            return 0
        counts = await self._queue.delivery_counts(self.consumer, [e.entry_id for e in claimed])
        for entry in claimed:
            eid, fields = entry.entry_id, entry.fields
            self.metrics.claimed.inc()
            log.info(
                "ai_request_claimed",
                entry_id=eid.decode(),
                deliveries=counts.get(eid, 0),
                consumer=self.consumer,
            )
            self._spawn(eid, fields, deliveries=counts.get(eid, cfg.max_deliveries + 1))
        return len(claimed)

    def _health_details(self) -> dict[str, object]:
        return {
            "consumer": self.consumer,
            "inflight": len(self._held),
            "decisions": self.metrics.total,
            "stopping": self._stopping.is_set(),
        }


# ---------------------------------------------------------------------- process


async def serve(
    config: WorkerConfig,
    ready: Callable[[AiWorker], Awaitable[None] | None] | None = None,
) -> int:
    """Run one worker until SIGTERM/SIGINT, then drain and return the exit code (0)."""
    from felt.service.rpc import on_stop_signal, started_unless_stopped

    worker = AiWorker(config)
    stop = asyncio.Event()

    def stopping() -> None:
        stop.set()
        worker.request_stop()

    # Handled from before the start: a signal while it starts stops it once it is up,
    # drained and logged (``ai_worker_stopped``) like any stop, not at once by Python's
    # default for SIGTERM; a start still stuck a few seconds after it is cancelled.
    on_stop_signal(stopping)
    await started_unless_stopped(stop, worker.start(), "ai worker")
    if stop.is_set():
        await worker.stop()
        config.tracing.shutdown()
        return 0
    if not config.ai_token:
        log.warning("ai_token_missing", hint="set FELT_AI_TOKEN to the table service's AI token")
    print(
        f"ai worker {worker.consumer} reading {config.stream} (metrics port {worker.metrics_port})",
        flush=True,
    )
    if ready is not None:
        result = ready(worker)
        if result is not None:
            await result
    await worker.wait_stopping()
    await worker.stop()
    config.tracing.shutdown()  # what the exporter still buffers
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m services.ai_worker`` (configuration from the environment)."""
    import sys

    from felt.config.settings import FELT_LOG_LEVEL, ConfigError
    from felt.service.logging import configure_logging

    configure_logging(level=FELT_LOG_LEVEL.read())
    try:
        return asyncio.run(serve(WorkerConfig.from_env()))
    except ConfigError as exc:  # a refused start (the shard count, a setting): exit 2
        print(f"felt ai-worker: {exc}", file=sys.stderr, flush=True)
        return 2
