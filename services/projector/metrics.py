"""The projector's Prometheus metrics (its own registry; served by ``felt.service.metrics_server``).

``felt_projector_lag_seconds`` is the headline: for each hand archived, the
time from its ``HandEnded`` being recorded to the transaction holding it
committing (a histogram, and a gauge of the latest write's worst hand).
Labelled counters have every label's series from the start (at 0), so that
the first failure is an increase Prometheus sees; ``felt_projector_failed_tables``
is what the alert on a failed table watches (a level, not a one-off increment).
"""

from __future__ import annotations

from collections import deque

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

ERROR_KINDS = ("redis", "database", "table")
"""Every ``felt_projector_errors{kind}``."""

LAG_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class ProjectorMetrics:
    """Counters, gauges and histograms of one projector."""

    def __init__(self, member: str, recent: int = 10_000) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.lag = Histogram(
            "felt_projector_lag_seconds",
            "Time from a hand's HandEnded being recorded to the hand committed in the archive.",
            registry=self.registry,
            buckets=LAG_BUCKETS,
        )
        self.last_lag = Gauge(
            "felt_projector_last_lag_seconds",
            "The worst lag of the hands in the latest write.",
            registry=self.registry,
        )
        self.hands = Counter("felt_projector_hands", "Hands archived.", registry=self.registry)
        self.events = Counter(
            "felt_projector_events", "Stream events read.", registry=self.registry
        )
        self.writes = Counter(
            "felt_projector_writes", "Archive transactions committed.", registry=self.registry
        )
        self.write_seconds = Histogram(
            "felt_projector_write_seconds",
            "Time of one archive transaction.",
            registry=self.registry,
            buckets=LAG_BUCKETS,
        )
        self.conflicts = Counter(
            "felt_projector_conflicts",
            "Writes refused because another projector had moved a table's position.",
            registry=self.registry,
        )
        self.errors = Counter(
            "felt_projector_errors",
            "Failures, by kind (redis, database, table: a stream that cannot be projected).",
            ["kind"],
            registry=self.registry,
        )
        for kind in ERROR_KINDS:  # every series from the start: a first failure is a change
            self.errors.labels(kind=kind)
        self.failed_tables = Gauge(
            "felt_projector_failed_tables",
            "Tables this projector has left alone since it started (a stream it cannot project,"
            " or one that diverged from the archive).",
            registry=self.registry,
        )
        self.tables = Gauge(
            "felt_projector_tables", "Tables this projector follows.", registry=self.registry
        )
        self.members = Gauge(
            "felt_projector_members", "Live projectors sharing the tables.", registry=self.registry
        )
        info = Gauge("felt_projector_info", "This projector.", ["member"], registry=self.registry)
        info.labels(member=member).set(1)
        self.recent_lags: deque[float] = deque(maxlen=recent)

    def observe_lag(self, seconds: float) -> None:
        self.lag.observe(seconds)
        self.recent_lags.append(seconds)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
