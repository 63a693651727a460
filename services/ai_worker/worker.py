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
owns its table; for now a worker has one target (``FELT_TABLE_TARGET``), which
in a cluster is a gateway or load balancer that routes by table. An instance
that does not own the table answers UNAVAILABLE, which the worker treats as
transient (the request is retried after ``claim_idle_ms``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import grpc
import structlog
from redis.asyncio import Redis
from redis.exceptions import RedisError, ResponseError

from felt.decisions import AI_GROUP, AI_STREAM, ai_stream_from_env
from felt.logging import bound_contextvars
from poker.v1 import ai_pb2
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from services.ai_worker.decide import Decider, Decision, PoisonRequest, deadline_of, parse_request
from services.ai_worker.metrics import Health, MetricsServer, WorkerMetrics

log = structlog.get_logger("felt.ai_worker")

DEFAULT_STREAM = AI_STREAM  # felt.decisions: the one definition both services read
DEFAULT_GROUP = AI_GROUP

Fields = Mapping[bytes, bytes]
# XREADGROUP's reply (without decode_responses): [[stream, [(id, fields), ...]], ...] or None.
_ReadReply = list[tuple[bytes, list[tuple[bytes, dict[bytes, bytes]]]]] | None


def default_consumer_name() -> str:
    """Unique per process and start: host, pid and a random suffix (a restart is a new consumer)."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


@dataclass(frozen=True)
class WorkerConfig:
    """How a worker runs; ``from_env`` reads the documented environment variables."""

    redis_url: str = "redis://127.0.0.1:6379/0"
    table_target: str = "127.0.0.1:50051"
    ai_token: str = ""
    concurrency: int = 8
    claim_idle_ms: int = 2000
    # None: no HTTP server; 0: any free port (tests, the benchmark).
    metrics_port: int | None = 9464
    metrics_host: str = "0.0.0.0"
    stream: str = DEFAULT_STREAM
    group: str = DEFAULT_GROUP
    dead_stream: str = ""  # empty: "<stream>:dead"
    consumer: str = ""  # empty: default_consumer_name()
    max_deliveries: int = 5
    block_ms: int = 1000
    rpc_timeout_s: float = 5.0
    stats_interval_s: float = 5.0
    summary_interval_s: float = 30.0
    drain_timeout_s: float = 30.0
    # Run bots in a thread instead of on the event loop. Bots are CPU-bound Python, so a
    # thread adds no throughput (the GIL) and costs ~10% in hand-offs; it only keeps the
    # loop responsive during a slow decision. Scale with processes, not threads.
    bot_thread: bool = False
    # Consumers that hold nothing and were not seen for this long (crashed workers) are removed.
    prune_idle_ms: int = 3_600_000

    @property
    def dead_letter_stream(self) -> str:
        return self.dead_stream or f"{self.stream}:dead"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> WorkerConfig:
        """``REDIS_URL``, ``FELT_TABLE_TARGET``, ``FELT_AI_TOKEN``, ``FELT_AI_CONCURRENCY``,
        ``FELT_AI_CLAIM_IDLE_MS``, ``FELT_AI_METRICS_PORT`` (``off`` disables it),
        ``FELT_AI_METRICS_HOST``, ``FELT_AI_STREAM``, ``FELT_AI_GROUP``,
        ``FELT_AI_DEAD_STREAM``, ``FELT_AI_CONSUMER``, ``FELT_AI_MAX_DELIVERIES``,
        ``FELT_AI_BOT_THREAD`` (``1``: run bots in a thread).
        """
        e = os.environ if env is None else env
        port_text = e.get("FELT_AI_METRICS_PORT", "9464").strip().lower()
        metrics_port = None if port_text in ("", "off", "none", "-1") else int(port_text)
        config = cls(
            redis_url=e.get("REDIS_URL", cls.redis_url),
            table_target=e.get("FELT_TABLE_TARGET", cls.table_target),
            ai_token=e.get("FELT_AI_TOKEN", ""),
            concurrency=int(e.get("FELT_AI_CONCURRENCY", cls.concurrency)),
            claim_idle_ms=int(e.get("FELT_AI_CLAIM_IDLE_MS", cls.claim_idle_ms)),
            metrics_port=metrics_port,
            metrics_host=e.get("FELT_AI_METRICS_HOST", cls.metrics_host),
            stream=ai_stream_from_env(e),
            group=e.get("FELT_AI_GROUP", cls.group),
            dead_stream=e.get("FELT_AI_DEAD_STREAM", ""),
            consumer=e.get("FELT_AI_CONSUMER", ""),
            max_deliveries=int(e.get("FELT_AI_MAX_DELIVERIES", cls.max_deliveries)),
            bot_thread=e.get("FELT_AI_BOT_THREAD", "").strip().lower() in ("1", "true", "yes"),
        )
        config.validate()
        return config

    def validate(self) -> None:
        if self.concurrency < 1:
            raise ValueError("FELT_AI_CONCURRENCY must be at least 1")
        if self.claim_idle_ms < 100:
            raise ValueError("FELT_AI_CLAIM_IDLE_MS must be at least 100")
        if self.max_deliveries < 1:
            raise ValueError("FELT_AI_MAX_DELIVERIES must be at least 1")
        if self.block_ms * 1.5 >= 5000:
            # redis-py's default socket timeout is 5 s: a longer BLOCK would look like a dead
            # connection.
            raise ValueError("block_ms must stay well under the 5 s Redis socket timeout")


def _entry_ms(entry_id: bytes) -> int:
    """The Redis-server time (ms) at which a stream entry was added (from its id)."""
    try:
        return int(entry_id.split(b"-", 1)[0])
    except ValueError:
        return 0


_HARMLESS = {
    # The table moved on (someone timed the seat out, or the answer is a duplicate).
    grpc.StatusCode.FAILED_PRECONDITION: "refused",
    grpc.StatusCode.ABORTED: "stale",
    # The table is gone.
    grpc.StatusCode.NOT_FOUND: "gone",
}
_AUTH = {grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED}


@dataclass
class _Held:
    """A request this worker is working on: its task and when its idle time was last reset."""

    task: asyncio.Task[None]
    touched: float


@dataclass
class AiWorker:
    """One worker process's loop (see the module docstring). ``start``, then ``stop``."""

    config: WorkerConfig
    decider: Decider = field(default_factory=Decider)
    consumer: str = ""
    metrics: WorkerMetrics = field(init=False)
    health: Health = field(default_factory=Health)
    outcomes: Counter[str] = field(default_factory=Counter)
    redis: Redis | None = None
    metrics_port: int | None = None
    _held: dict[bytes, _Held] = field(default_factory=dict)
    _stopping: asyncio.Event = field(default_factory=asyncio.Event)
    _slot_freed: asyncio.Event = field(default_factory=asyncio.Event)
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _channel: grpc.aio.Channel | None = None
    _stub: rpc.TableServiceAsyncStub | None = None
    _http: MetricsServer | None = None
    _executor: ThreadPoolExecutor | None = None
    _claim_cursor: str | bytes = "0-0"
    _stream_stats: dict[str, Any] = field(default_factory=dict)
    _closing: bool = False
    _stopped: bool = False

    def __post_init__(self) -> None:
        self.config.validate()
        self.consumer = self.consumer or self.config.consumer or default_consumer_name()
        self.metrics = WorkerMetrics(self.consumer)
        self._metadata = (("authorization", f"Bearer {self.config.ai_token}"),)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Connect, join the group, start reading, claiming and reporting."""
        cfg = self.config
        self.redis = Redis.from_url(cfg.redis_url, socket_timeout=5, health_check_interval=30)
        await self.ensure_group()
        self.health.last_redis_ok = time.monotonic()
        self._channel = grpc.aio.insecure_channel(
            cfg.table_target,
            options=[
                ("grpc.primary_user_agent", f"felt-ai-worker/{self.consumer}"),
                ("grpc.keepalive_time_ms", 30_000),
            ],
        )
        self._stub = rpc.TableServiceStub(self._channel)
        if cfg.bot_thread:
            self._executor = ThreadPoolExecutor(cfg.concurrency, thread_name_prefix="felt-ai-bot")
        if cfg.metrics_port is not None:
            self._http = MetricsServer(self.metrics, self.health, self._health_details)
            self.metrics_port = await self._http.start(cfg.metrics_host, cfg.metrics_port)
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._read_loop(), name=f"ai-read-{self.consumer}"),
            loop.create_task(self._claim_loop(), name=f"ai-claim-{self.consumer}"),
            loop.create_task(self._stats_loop(), name=f"ai-stats-{self.consumer}"),
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
        """``XGROUP CREATE ... $ MKSTREAM``; an existing group is fine (BUSYGROUP)."""
        assert self.redis is not None
        try:
            await self.redis.xgroup_create(
                self.config.stream, self.config.group, id="$", mkstream=True
            )
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

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
        self._log_summary("ai_worker_stopped")
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
        if self._channel is not None:
            await self._channel.close()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
        if self.redis is not None:
            await self.redis.aclose()

    async def _leave_group(self) -> None:
        """Delete this consumer if it holds nothing (DELCONSUMER would drop what it holds)."""
        assert self.redis is not None
        try:
            summary = await self.redis.xpending_range(
                self.config.stream, self.config.group, "-", "+", 1, consumername=self.consumer
            )
            if not summary:
                await self.redis.xgroup_delconsumer(
                    self.config.stream, self.config.group, self.consumer
                )
        except RedisError as exc:
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
        assert self.redis is not None
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
                reply: _ReadReply = await self.redis.xreadgroup(  # type: ignore[assignment]
                    cfg.group, self.consumer, {cfg.stream: ">"}, count=free, block=cfg.block_ms
                )
                self.health.last_redis_ok = time.monotonic()
                backoff = 0.1
            except ResponseError as exc:
                if "NOGROUP" in str(exc):  # the stream or group was deleted: recreate it
                    log.warning("ai_group_missing", stream=cfg.stream, group=cfg.group)
                    with contextlib.suppress(RedisError):
                        await self.ensure_group()
                    continue
                raise
            except (RedisError, OSError) as exc:
                self.metrics.errors.labels(kind="redis").inc()
                log.warning("ai_read_failed", error=str(exc), retry_in_s=backoff)
                await self._wait_any(self._stopping, timeout=backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            # Entries read are ours now (in our pending list), even if a stop was asked
            # meanwhile: handle them rather than leave them to be claimed later.
            for _stream, entries in reply or ():
                for entry_id, fields in entries:
                    self._spawn(entry_id, fields, deliveries=1)

    def _spawn(self, entry_id: bytes, fields: Fields | None, deliveries: int) -> None:
        if entry_id in self._held:
            return  # already working on it (our own entry came back through a claim)
        task = asyncio.get_running_loop().create_task(
            self._handle(entry_id, fields, deliveries), name=f"ai-decide-{entry_id!r}"
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
        """Keep own slow decisions ours, and take over requests others left idle too long.

        Runs until the worker closes: while draining it only heartbeats (claims nothing new).
        """
        interval = max(0.05, self.config.claim_idle_ms / 4000)
        while not self._closing:
            await asyncio.sleep(interval)
            if self._closing:
                return
            try:
                await self._heartbeat()
                if not self._stopping.is_set() and self._free_slots() > 0:
                    await self.claim_once()
            except (RedisError, OSError) as exc:
                self.metrics.errors.labels(kind="redis").inc()
                log.warning("ai_claim_failed", error=str(exc))

    async def _heartbeat(self) -> None:
        """Reset the idle time of requests held for a while, so no one claims them meanwhile.

        ``XCLAIM`` with a min-idle-time only succeeds while the entry has been idle that
        long, so an entry another worker has just claimed is not taken back.
        """
        assert self.redis is not None
        threshold_ms = self.config.claim_idle_ms // 2
        now = time.monotonic()
        due = [eid for eid, h in self._held.items() if (now - h.touched) * 1000 >= threshold_ms]
        if not due:
            return
        ids: list[Any] = list(due)
        await self.redis.xclaim(
            self.config.stream, self.config.group, self.consumer, threshold_ms, ids, justid=True
        )
        for eid in due:
            held = self._held.get(eid)
            if held is not None:
                held.touched = now

    async def claim_once(self) -> int:
        """One ``XAUTOCLAIM`` pass over requests idle longer than ``claim_idle_ms``."""
        cfg = self.config
        assert self.redis is not None
        free = self._free_slots()
        if free <= 0:
            return 0
        reply = await self.redis.xautoclaim(
            cfg.stream, cfg.group, self.consumer, cfg.claim_idle_ms, self._claim_cursor, count=free
        )
        self._claim_cursor = reply[0]
        claimed = [(eid, fields) for eid, fields in reply[1] if eid not in self._held]
        if not claimed:
            return 0
        counts = await self._delivery_counts([eid for eid, _ in claimed])
        for eid, fields in claimed:
            self.metrics.claimed.inc()
            log.info(
                "ai_request_claimed",
                entry_id=eid.decode(),
                deliveries=counts.get(eid, 0),
                consumer=self.consumer,
            )
            self._spawn(eid, fields, deliveries=counts.get(eid, cfg.max_deliveries + 1))
        return len(claimed)

    async def _delivery_counts(self, entry_ids: list[bytes]) -> dict[bytes, int]:
        """How often each entry has been delivered (``XPENDING``), to spot poison requests."""
        assert self.redis is not None
        async with self.redis.pipeline(transaction=False) as pipe:
            for eid in entry_ids:
                pipe.xpending_range(
                    self.config.stream, self.config.group, eid, eid, 1, consumername=self.consumer
                )
            replies = await pipe.execute()
        counts: dict[bytes, int] = {}
        for reply in replies:
            for row in reply:
                counts[row["message_id"]] = int(row["times_delivered"])
        return counts

    # ------------------------------------------------------------------ deciding

    async def _handle(self, entry_id: bytes, fields: Fields | None, deliveries: int) -> None:
        """One request, start to acknowledgement; a bug here leaves it pending, never lost."""
        try:
            await self._handle_entry(entry_id, fields, deliveries)
        except asyncio.CancelledError:
            raise
        except Exception:
            self.metrics.errors.labels(kind="internal").inc()
            log.exception("ai_request_failed", entry_id=entry_id.decode(), retry="after claim")

    async def _handle_entry(self, entry_id: bytes, fields: Fields | None, deliveries: int) -> None:
        started = time.monotonic()
        if fields is None:  # trimmed from the stream before anyone answered
            await self._ack(entry_id)
            self._record(started, "gone", entry_id)
            return
        try:
            request = parse_request(fields.get(b"payload"))
        except PoisonRequest as exc:
            await self._dead_letter(entry_id, fields, exc.reason)
            return
        with bound_contextvars(
            table_id=request.table_id,
            hand_id=request.hand_id,
            seat=request.seat,
            request_id=request.request_id,
            entry_id=entry_id.decode(),
        ):
            deadline = deadline_of(request)
            if deadline is not None and deadline <= datetime.now(UTC):
                # Late, not poison (e.g. retried through a table-service outage): the table
                # has timed the seat out, so there is nothing left to answer.
                log.info("ai_request_expired", deadline=deadline.isoformat(), deliveries=deliveries)
                await self._ack(entry_id)
                self._record(started, "expired", entry_id)
                return
            if deliveries > self.config.max_deliveries:
                # Every worker that took it died or failed on it: stop passing it around.
                reason = f"delivered {deliveries} times (max {self.config.max_deliveries})"
                await self._dead_letter(entry_id, fields, reason)
                return
            await self._decide_and_answer(entry_id, fields, request, deadline, started)

    async def _decide_and_answer(
        self,
        entry_id: bytes,
        fields: Fields,
        request: ai_pb2.DecisionRequest,
        deadline: datetime | None,
        started: float,
    ) -> None:
        bot_started = time.monotonic()
        try:
            if self._executor is not None:
                loop = asyncio.get_running_loop()
                decision = await loop.run_in_executor(self._executor, self.decider.decide, request)
            else:
                decision = self.decider.decide(request)
        except PoisonRequest as exc:
            await self._dead_letter(entry_id, fields, exc.reason)
            return
        self.metrics.bot_seconds.observe(time.monotonic() - bot_started)
        if decision.fallback:
            self.metrics.errors.labels(kind="bot").inc()
            log.error("ai_bot_failed", level=decision.level, error=decision.error)
        outcome = await self._submit(request, decision, deadline)
        if outcome is None:
            return  # transient: left pending, retried after claim_idle_ms
        if outcome.startswith("invalid"):
            await self._dead_letter(entry_id, fields, outcome)
            return
        await self._ack(entry_id)
        self._record(started, outcome, entry_id)

    async def _submit(
        self, request: ai_pb2.DecisionRequest, decision: Decision, deadline: datetime | None
    ) -> str | None:
        """Answer the table; returns the outcome, or None when the answer should be retried."""
        assert self._stub is not None
        timeout = self.config.rpc_timeout_s
        if deadline is not None:
            # Past the deadline (plus slack for clock skew) the answer is refused anyway.
            remaining = (deadline - datetime.now(UTC)).total_seconds() + 1.0
            timeout = max(0.1, min(timeout, remaining))
        call = pb.SubmitActionRequest(
            table_id=request.table_id,
            seat=request.seat,
            request_id=request.request_id,
            expected_sequence=request.expected_sequence,
            action=decision.action,
        )
        try:
            response = await self._stub.SubmitAction(call, metadata=self._metadata, timeout=timeout)
        except grpc.aio.AioRpcError as err:
            code = err.code()
            if code in _HARMLESS:
                log.info(
                    "ai_answer_refused",
                    code=code.name,
                    detail=err.details(),
                    action=str(decision.command),
                )
                return _HARMLESS[code]
            if code == grpc.StatusCode.INVALID_ARGUMENT:
                self.metrics.errors.labels(kind="invalid").inc()
                log.error("ai_answer_invalid", detail=err.details(), action=str(decision.command))
                return f"invalid action {decision.command}: {err.details()}"
            kind = "auth" if code in _AUTH else "transient"
            self.metrics.errors.labels(kind=kind).inc()
            log.warning(
                "ai_answer_failed", code=code.name, detail=err.details(), retry="after claim"
            )
            return None
        # DEBUG: at hundreds of decisions/s a line each would dominate the log (and cost ~10%
        # CPU); the table's event stream records every action, the metrics count them.
        log.debug(
            "ai_decided",
            level=decision.level,
            action=str(decision.command),
            sequence=response.sequence,
        )
        return "accepted"

    async def _ack(self, entry_id: bytes) -> None:
        assert self.redis is not None
        try:
            await self.redis.xack(self.config.stream, self.config.group, entry_id)
        except RedisError as exc:
            # Unacknowledged: it will be claimed and answered again, which is harmless.
            self.metrics.errors.labels(kind="redis").inc()
            log.warning("ai_ack_failed", entry_id=entry_id.decode(), error=str(exc))

    async def _dead_letter(self, entry_id: bytes, fields: Fields, reason: str) -> None:
        """Park a poison request with the reason (atomically with its acknowledgement)."""
        assert self.redis is not None
        cfg = self.config
        record: dict[bytes | str, bytes | str | int] = {
            "reason": reason,
            "entry_id": entry_id,
            "consumer": self.consumer,
            "failed_at": datetime.now(UTC).isoformat(),
        }
        for key, value in fields.items():
            record.setdefault(key, value)
        kind = reason.split(":", 1)[0].split(" ", 1)[0]
        try:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.xadd(cfg.dead_letter_stream, record, maxlen=100_000, approximate=True)  # type: ignore[arg-type]
                pipe.xack(cfg.stream, cfg.group, entry_id)
                await pipe.execute()
        except RedisError as exc:
            self.metrics.errors.labels(kind="redis").inc()
            log.warning("ai_dead_letter_failed", entry_id=entry_id.decode(), error=str(exc))
            return
        self.metrics.dead_letters.labels(reason=kind).inc()
        self.outcomes["dead"] += 1
        log.error("ai_request_dead_lettered", entry_id=entry_id.decode(), reason=reason)

    def _record(self, started: float, outcome: str, entry_id: bytes) -> None:
        self.outcomes[outcome] += 1
        self.metrics.observe_decision(time.monotonic() - started, outcome)
        added_ms = _entry_ms(entry_id)
        if added_ms:
            self.metrics.request_age_seconds.observe(max(0.0, time.time() - added_ms / 1000))

    # ------------------------------------------------------------------ reporting

    def _health_details(self) -> dict[str, object]:
        return {
            "consumer": self.consumer,
            "inflight": len(self._held),
            "decisions": self.metrics.total,
            "stopping": self._stopping.is_set(),
        }

    async def refresh_stream_stats(self) -> dict[str, Any]:
        """Group-wide lag and pending count from ``XINFO GROUPS`` (into the gauges)."""
        assert self.redis is not None
        for group in await self.redis.xinfo_groups(self.config.stream):
            name = group.get("name")
            if (name.decode() if isinstance(name, bytes) else name) == self.config.group:
                lag = group.get("lag")
                pending = int(group.get("pending") or 0)
                self.metrics.pending.set(pending)
                if lag is not None:  # unknown after deletions (Redis 7.0 reports nil)
                    self.metrics.lag.set(int(lag))
                return {"lag": lag, "pending": pending, "consumers": group.get("consumers")}
        return {}

    async def _prune_consumers(self) -> None:
        """Remove consumers that hold nothing and have not been seen for a long time."""
        assert self.redis is not None
        cfg = self.config
        for consumer in await self.redis.xinfo_consumers(cfg.stream, cfg.group):
            name = consumer["name"]
            text = name.decode() if isinstance(name, bytes) else str(name)
            if (
                text != self.consumer
                and int(consumer.get("pending") or 0) == 0
                and int(consumer.get("idle") or 0) > cfg.prune_idle_ms
            ):
                await self.redis.xgroup_delconsumer(cfg.stream, cfg.group, text)
                log.info("ai_consumer_pruned", pruned=text)

    async def _stats_loop(self) -> None:
        cfg = self.config
        last_summary = time.monotonic()
        while not self._closing:
            await asyncio.sleep(cfg.stats_interval_s)
            if self._closing:
                return
            try:
                self._stream_stats = await self.refresh_stream_stats()
                self.health.last_redis_ok = time.monotonic()
                if time.monotonic() - last_summary >= cfg.summary_interval_s:
                    last_summary = time.monotonic()
                    await self._prune_consumers()
                    self._log_summary("ai_worker_summary")
            except (RedisError, OSError) as exc:
                self.metrics.errors.labels(kind="redis").inc()
                log.warning("ai_stats_failed", error=str(exc))

    def _log_summary(self, event: str) -> None:
        stats = self._stream_stats
        log.info(
            event,
            consumer=self.consumer,
            decisions=self.metrics.total,
            outcomes=dict(self.outcomes),
            inflight=len(self._held),
            lag=stats.get("lag"),
            pending=stats.get("pending"),
            **self.metrics.latency_summary(),
        )


# ---------------------------------------------------------------------- process


async def serve(
    config: WorkerConfig,
    ready: Callable[[AiWorker], Awaitable[None] | None] | None = None,
) -> int:
    """Run one worker until SIGTERM/SIGINT, then drain and return the exit code (0)."""
    import signal

    worker = AiWorker(config)
    await worker.start()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, worker.request_stop)
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
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m services.ai_worker`` (configuration from the environment)."""
    from felt.logging import configure_logging

    configure_logging(json=True, level=os.environ.get("FELT_LOG_LEVEL", "INFO"))
    return asyncio.run(serve(WorkerConfig.from_env()))
