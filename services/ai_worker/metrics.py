"""Metrics and health of one AI worker, served over plain HTTP.

``GET /metrics`` is the Prometheus text format (scraped per pod; KEDA or an
HPA can scale on ``felt_ai_stream_lag``/``felt_ai_stream_pending``, which every
worker reports for the whole group). ``GET /healthz`` is liveness: 200 while
the read loop has talked to Redis recently, 503 otherwise. ``GET /readyz`` is
readiness: 200 while the worker takes new requests, 503 while it drains.

The server is ``felt.service.metrics_server`` (shared with the projector). Each worker has
its own ``CollectorRegistry`` so several workers can live in one process
(tests, the benchmark) without clashing.
"""

from __future__ import annotations

from collections import deque

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from felt.service.metrics_server import Health, MetricsServer

__all__ = [
    "DEAD_LETTER_REASONS",
    "ERROR_KINDS",
    "LATENCY_BUCKETS",
    "Health",
    "MetricsServer",
    "WorkerMetrics",
    "quantile",
]

ERROR_KINDS = ("transient", "bot", "redis", "auth", "invalid", "internal")
"""Every ``felt_ai_errors{kind}``: each series exists (at 0) from the start, so that its first
increment is a change ``rate()``/``increase()`` can see (issue #24)."""

DEAD_LETTER_REASONS = (
    "undecodable",
    "incomplete",
    "unconvertible",
    "unknown",  # an unknown ai_level
    "delivered",  # delivered too many times
    "invalid",  # the table called the action invalid
    "other",
)
"""Every ``felt_ai_dead_letters{reason}`` (the first word of the reason), initialised like
``ERROR_KINDS``."""

# Decisions are a proto decode, a bot and one RPC: milliseconds, with a long tail for
# "hard" bots and a slow table service.
LATENCY_BUCKETS = (
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)


def quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile (nearest rank) of ``values``; 0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[rank]


class WorkerMetrics:
    """Counters, gauges and latency histograms of one worker (its own registry)."""

    def __init__(self, consumer: str, recent: int = 2048) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        labels = {"consumer": consumer}
        self.decision_seconds = Histogram(
            "felt_ai_decision_seconds",
            "Time from reading a decision request to its answer being acknowledged.",
            registry=self.registry,
            buckets=LATENCY_BUCKETS,
        )
        self.bot_seconds = Histogram(
            "felt_ai_bot_seconds",
            "Time the bot took to choose an action.",
            registry=self.registry,
            buckets=LATENCY_BUCKETS,
        )
        self.request_age_seconds = Histogram(
            "felt_ai_request_age_seconds",
            "Time from the request entering the stream to its answer (queueing included).",
            registry=self.registry,
            buckets=LATENCY_BUCKETS,
        )
        self.decisions = Counter(
            "felt_ai_decisions",
            "Requests handled, by outcome (accepted, stale, refused, expired, gone).",
            ["outcome"],
            registry=self.registry,
        )
        self.errors = Counter(
            "felt_ai_errors",
            "Failures: transient (retried), bot (answered with a safe action), redis, auth.",
            ["kind"],
            registry=self.registry,
        )
        self.dead_letters = Counter(
            "felt_ai_dead_letters",
            "Requests moved to the dead-letter stream, by reason.",
            ["reason"],
            registry=self.registry,
        )
        self.claimed = Counter(
            "felt_ai_claimed",
            "Pending requests taken over from idle consumers with XAUTOCLAIM.",
            registry=self.registry,
        )
        self.inflight = Gauge(
            "felt_ai_inflight", "Decisions being worked on now.", registry=self.registry
        )
        self.lag = Gauge(
            "felt_ai_stream_lag",
            "Requests in the stream not yet delivered to any consumer of the group.",
            registry=self.registry,
        )
        self.pending = Gauge(
            "felt_ai_stream_pending",
            "Requests delivered but not yet acknowledged, group-wide.",
            registry=self.registry,
        )
        for kind in ERROR_KINDS:
            self.errors.labels(kind=kind)
        for reason in DEAD_LETTER_REASONS:
            self.dead_letters.labels(reason=reason)
        info = Gauge("felt_ai_worker_info", "This worker.", ["consumer"], registry=self.registry)
        info.labels(**labels).set(1)
        self._recent: deque[float] = deque(maxlen=recent)
        self.total = 0

    def observe_decision(self, seconds: float, outcome: str) -> None:
        self.decisions.labels(outcome=outcome).inc()
        self.decision_seconds.observe(seconds)
        self._recent.append(seconds)
        self.total += 1

    def latency_summary(self) -> dict[str, float]:
        """p50/p99 over the most recent decisions (for the periodic log line)."""
        values = list(self._recent)
        return {
            "p50_ms": round(quantile(values, 0.50) * 1000, 2),
            "p99_ms": round(quantile(values, 0.99) * 1000, 2),
        }

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
