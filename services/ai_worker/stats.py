"""The worker's reporting: group-wide lag and pending gauges, summaries, pruning dead consumers."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from felt.storage.decisions import DecisionQueue
from felt.storage.redis_client import REDIS_ERRORS
from services.ai_worker.metrics import Health, WorkerMetrics

log = structlog.get_logger("felt.ai_worker")


@dataclass
class StatsReporter:
    """Every ``interval_s`` refreshes the gauges; every ``summary_interval_s`` logs a summary
    and removes consumers that hold nothing and were not seen for ``prune_idle_ms``."""

    queue: DecisionQueue
    metrics: WorkerMetrics
    health: Health
    consumer: str
    outcomes: Counter[str]
    inflight: Callable[[], int]
    interval_s: float = 5.0
    summary_interval_s: float = 30.0
    prune_idle_ms: int = 3_600_000
    stream_stats: dict[str, Any] = field(default_factory=dict)

    async def refresh(self) -> dict[str, Any]:
        """Group-wide lag and pending count (``XINFO GROUPS``), into the gauges."""
        stats = await self.queue.stats()
        if stats is None:
            return {}
        self.metrics.pending.set(stats.pending)
        if stats.lag is not None:  # unknown after deletions (Redis 7.0 reports nil)
            self.metrics.lag.set(stats.lag)
        return {"lag": stats.lag, "pending": stats.pending, "consumers": stats.consumers}

    async def prune(self) -> None:
        for pruned in await self.queue.prune(self.consumer, self.prune_idle_ms):
            log.info("ai_consumer_pruned", pruned=pruned)

    async def run(self, closing: Callable[[], bool]) -> None:
        """The loop, until ``closing()``."""
        last_summary = time.monotonic()
        while not closing():
            await asyncio.sleep(self.interval_s)
            if closing():
                return
            try:
                self.stream_stats = await self.refresh()
                self.health.last_redis_ok = time.monotonic()
                if time.monotonic() - last_summary >= self.summary_interval_s:
                    last_summary = time.monotonic()
                    await self.prune()
                    self.log_summary("ai_worker_summary")
            except REDIS_ERRORS as exc:
                self.metrics.errors.labels(kind="redis").inc()
                log.warning("ai_stats_failed", error=str(exc))

    def log_summary(self, event: str) -> None:
        stats = self.stream_stats
        log.info(
            event,
            consumer=self.consumer,
            decisions=self.metrics.total,
            outcomes=dict(self.outcomes),
            inflight=self.inflight(),
            lag=stats.get("lag"),
            pending=stats.get("pending"),
            **self.metrics.latency_summary(),
        )
