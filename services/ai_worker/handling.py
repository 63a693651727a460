"""One decision request, from delivery to acknowledgement (or dead letter).

The steps: an entry deleted before anyone read it is acknowledged; an
undecodable one is dead-lettered; an expired one (the table has timed the seat
out) is acknowledged unanswered; one delivered more than ``max_deliveries``
times is dead-lettered; otherwise the bot of its level decides (seeded from
the request id, so a redelivery is answered identically) and the answer
policy (``services.ai_worker.answer``) says whether to acknowledge, dead-letter
or leave it pending for a retry.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime

import structlog

from felt.service.logging import bound_contextvars
from felt.service.tracing import Tracing
from felt.storage.decisions import DecisionQueue, Fields, payload_of, trace_of
from felt.storage.redis_client import REDIS_ERRORS
from poker.v1 import ai_pb2
from services.ai_worker.answer import Answerer
from services.ai_worker.decide import Decider, PoisonRequest, deadline_of, parse_request
from services.ai_worker.metrics import DEAD_LETTER_REASONS, WorkerMetrics

log = structlog.get_logger("felt.ai_worker")


def entry_ms(entry_id: bytes) -> int:
    """The server time (ms) at which a stream entry was added (from its id)."""
    try:
        return int(entry_id.split(b"-", 1)[0])
    except ValueError:
        return 0


@dataclass
class RequestHandler:
    """Handles delivered requests for one consumer; counts outcomes."""

    queue: DecisionQueue
    decider: Decider
    answerer: Answerer
    metrics: WorkerMetrics
    consumer: str
    max_deliveries: int
    outcomes: Counter[str]
    executor: ThreadPoolExecutor | None = None
    tracing: Tracing = field(default_factory=Tracing.off)

    async def handle(self, entry_id: bytes, fields: Fields | None, deliveries: int) -> None:
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
            await self.ack(entry_id)
            self._record(started, "gone", entry_id)
            return
        try:
            request = parse_request(payload_of(fields))
        except PoisonRequest as exc:
            await self.dead_letter(entry_id, fields, exc.reason)
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
                await self.ack(entry_id)
                self._record(started, "expired", entry_id)
                return
            if deliveries > self.max_deliveries:
                # Every worker that took it died or failed on it: stop passing it around.
                reason = f"delivered {deliveries} times (max {self.max_deliveries})"
                await self.dead_letter(entry_id, fields, reason)
                return
            attributes: dict[str, str | int] = {
                "felt.table_id": request.table_id,
                "felt.seat": request.seat,
                "felt.request_id": request.request_id,
            }
            # The table service's request span is the parent: one trace, there and back.
            with self.tracing.span("felt.ai.decide", trace_of(fields), attributes):
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
            if self.executor is not None:
                loop = asyncio.get_running_loop()
                decision = await loop.run_in_executor(self.executor, self.decider.decide, request)
            else:
                decision = self.decider.decide(request)
        except PoisonRequest as exc:
            await self.dead_letter(entry_id, fields, exc.reason)
            return
        self.metrics.bot_seconds.observe(time.monotonic() - bot_started)
        if decision.fallback:
            self.metrics.errors.labels(kind="bot").inc()
            log.error("ai_bot_failed", level=decision.level, error=decision.error)
        outcome = await self.answerer.submit(request, decision, deadline)
        if outcome is None:
            return  # transient: left pending, retried after claim_idle_ms
        if outcome.startswith("invalid"):
            await self.dead_letter(entry_id, fields, outcome)
            return
        await self.ack(entry_id)
        self._record(started, outcome, entry_id)

    async def ack(self, entry_id: bytes) -> None:
        try:
            await self.queue.ack(entry_id)
        except REDIS_ERRORS as exc:
            # Unacknowledged: it will be claimed and answered again, which is harmless.
            self.metrics.errors.labels(kind="redis").inc()
            log.warning("ai_ack_failed", entry_id=entry_id.decode(), error=str(exc))

    async def dead_letter(self, entry_id: bytes, fields: Fields, reason: str) -> None:
        """Park a poison request with the reason (atomically with its acknowledgement)."""
        kind = reason.split(":", 1)[0].split(" ", 1)[0]
        kind = kind if kind in DEAD_LETTER_REASONS else "other"
        try:
            await self.queue.dead_letter(
                self.consumer, entry_id, fields, reason, datetime.now(UTC).isoformat()
            )
        except REDIS_ERRORS as exc:
            self.metrics.errors.labels(kind="redis").inc()
            log.warning("ai_dead_letter_failed", entry_id=entry_id.decode(), error=str(exc))
            return
        self.metrics.dead_letters.labels(reason=kind).inc()
        self.outcomes["dead"] += 1
        log.error("ai_request_dead_lettered", entry_id=entry_id.decode(), reason=reason)

    def _record(self, started: float, outcome: str, entry_id: bytes) -> None:
        self.outcomes[outcome] += 1
        self.metrics.observe_decision(time.monotonic() - started, outcome)
        added_ms = entry_ms(entry_id)
        if added_ms:
            self.metrics.request_age_seconds.observe(max(0.0, time.time() - added_ms / 1000))
