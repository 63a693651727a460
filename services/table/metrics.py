"""The table service's Prometheus metrics, beside the RPC metrics every service has.

Counted where they happen without touching the rules or the table's runtime: the
event store and the decision queue the server builds are the metered subclasses
below (an append counts the hands it starts, a version conflict is counted), the
shared interceptor hands every ended call to :meth:`TableMetrics.observe_rpc`
(``SubmitAction``: accepted or refused; an AI seat's answer closes the decision's
latency), and the gauges read the manager and the watch hub when scraped. No
label names a table: a service runs thousands.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from prometheus_client import Counter, Gauge, Histogram
from redis.asyncio import Redis

from felt.service.metrics import RpcMetrics
from felt.storage.decisions import DecisionPublisher
from felt.storage.eventstore import AppendResult, RedisEventStore, VersionConflict
from poker.events.v1 import events_pb2
from poker.v1 import ai_pb2

# From publishing a decision request to the AI seat's action accepted: a bot, a Redis
# round trip and an RPC, with the tail of a busy worker pool.
DECISION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
# Decision requests awaiting an answer that are remembered (the oldest forgotten past it).
MAX_PENDING_DECISIONS = 10_000
AI_PREFIX = "ai:"  # the request id of an AI seat's answer (its decision request's)


class TableMetrics(RpcMetrics):
    """One table service's metrics (its registry: ``/metrics``)."""

    def __init__(self) -> None:
        super().__init__()
        self.hands = Counter(
            "felt_table_hands_dealt", "Hands started on this instance.", registry=self.registry
        )
        self.actions = Counter(
            "felt_table_actions",
            "SubmitAction calls, by outcome (accepted, refused).",
            ["outcome"],
            registry=self.registry,
        )
        self._accepted = self.actions.labels("accepted")
        self._refused = self.actions.labels("refused")
        self.conflicts = Counter(
            "felt_table_append_conflicts",
            "Appends refused because the table's stream had moved (another writer, a retry).",
            registry=self.registry,
        )
        self.decision_seconds = Histogram(
            "felt_table_ai_decision_seconds",
            "Time from publishing an AI seat's decision request to its action accepted.",
            registry=self.registry,
            buckets=DECISION_BUCKETS,
        )
        self._asked: OrderedDict[str, float] = OrderedDict()

    def watch(
        self,
        active: Callable[[], int],
        resting: Callable[[], int],
        watchers: Callable[[], int],
        redis_silent: Callable[[], float] = lambda: 0.0,
    ) -> None:
        """Gauges read when scraped: the tables run here, those resting, the watch streams,
        and the seconds since Redis last answered a lease round (an alert needs no traffic)."""
        for name, doc, read in (
            ("felt_table_active_tables", "Tables this instance runs (resting ones too).", active),
            ("felt_table_resting_tables", "Tables resting: nobody to play for.", resting),
            ("felt_table_watchers", "Open WatchTable streams.", watchers),
            (
                "felt_table_redis_silent_seconds",
                "Seconds since Redis last answered this instance's lease round (every third"
                " of FELT_LEASE_TTL_MS while it does).",
                redis_silent,
            ),
        ):
            Gauge(name, doc, registry=self.registry).set_function(read)

    def observe_rpc(
        self, service: str, method: str, code: str, seconds: float, request: Any
    ) -> None:
        super().observe_rpc(service, method, code, seconds, request)
        if method != "SubmitAction":
            return
        if code != "OK":
            self._refused.inc()
            return
        self._accepted.inc()
        request_id: str = request.request_id
        if request_id.startswith(AI_PREFIX):
            asked = self._asked.pop(request_id, None)
            if asked is not None:
                self.decision_seconds.observe(time.monotonic() - asked)

    def asked(self, request_id: str) -> None:
        """A decision request was published: its answer closes the latency."""
        self._asked[request_id] = time.monotonic()
        if len(self._asked) > MAX_PENDING_DECISIONS:
            self._asked.popitem(last=False)


class MeteredEventStore(RedisEventStore):
    """The Redis event store, counting the hands its appends start and its conflicts."""

    def __init__(self, metrics: TableMetrics, redis: Redis, **options: Any) -> None:
        super().__init__(redis, **options)
        self.metrics = metrics

    async def append(
        self,
        table_id: str,
        events: Sequence[bytes],
        expected_version: int,
        request_id: str | None = None,
        response: bytes = b"",
        *,
        snapshot_at: int = 0,
    ) -> AppendResult:
        try:
            result = await super().append(
                table_id, events, expected_version, request_id, response, snapshot_at=snapshot_at
            )
        except VersionConflict:
            self.metrics.conflicts.inc()
            raise
        if not result.duplicate:
            started = sum(_starts_hand(event) for event in events)
            if started:
                self.metrics.hands.inc(started)
        return result


def _starts_hand(event: bytes) -> bool:
    return events_pb2.StoredEvent.FromString(event).WhichOneof("event") == "hand_started"


class MeteredDecisionQueue:
    """A decision publisher (the sharded Redis queue), noting when each request was published."""

    def __init__(self, metrics: TableMetrics, publisher: DecisionPublisher) -> None:
        self.publisher = publisher
        self.stream = publisher.stream
        self.metrics = metrics

    async def publish(
        self, request: ai_pb2.DecisionRequest, trace: Mapping[str, str] | None = None
    ) -> None:
        await self.publisher.publish(request, trace)
        self.metrics.asked(request.request_id)
