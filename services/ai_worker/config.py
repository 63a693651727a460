"""The AI worker's configuration: defaults and the documented environment variables."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

from felt.config import settings as S
from felt.config.settings import environment
from felt.service.tracing import Tracing
from felt.storage.decisions import AI_GROUP, AI_STREAM, ai_stream_from_env
from felt.storage.decisions import dead_letter_stream as default_dead_stream

DEFAULT_STREAM = AI_STREAM  # felt.storage.decisions: the one definition both services read
DEFAULT_GROUP = AI_GROUP


def default_consumer_name() -> str:
    """Unique per process and start: host, pid and a random suffix (a restart is a new consumer)."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


@dataclass(frozen=True)
class WorkerConfig:
    """How a worker runs; ``from_env`` reads the documented environment variables."""

    redis_url: str = S.LOCAL_REDIS
    table_target: str = S.FELT_TABLE_TARGET.default
    ai_token: str = ""
    concurrency: int = S.FELT_AI_CONCURRENCY.default
    claim_idle_ms: int = S.FELT_AI_CLAIM_IDLE_MS.default
    # None: no HTTP server; 0: any free port (tests, the benchmark).
    metrics_port: int | None = S.FELT_AI_METRICS_PORT.default
    metrics_host: str = S.FELT_AI_METRICS_HOST.default
    stream: str = DEFAULT_STREAM
    group: str = DEFAULT_GROUP
    dead_stream: str = ""  # empty: "<stream>:dead" (each shard's: "<stream>:dead:{<i>}")
    shards: int = S.FELT_DECISION_SHARDS.default  # the streams "<stream>:{<i>}", i < shards
    consumer: str = ""  # empty: default_consumer_name()
    max_deliveries: int = S.FELT_AI_MAX_DELIVERIES.default
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
    # How often a worker trims the requests every consumer is done with from the stream
    # (``DecisionQueue.trim_acknowledged``; any worker may, it is idempotent). 0: never.
    trim_interval_s: float = S.FELT_AI_TRIM_INTERVAL_S.default
    # OpenTelemetry (FELT_TRACING; off by default): a span per decision, in the trace of the
    # table service's request (its context comes in the stream entry).
    tracing: Tracing = field(default_factory=Tracing.off)

    @property
    def dead_letter_stream(self) -> str:
        return self.dead_stream or default_dead_stream(self.stream)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> WorkerConfig:
        """``REDIS_URL``, ``FELT_TABLE_TARGET``, ``FELT_AI_TOKEN``, ``FELT_AI_CONCURRENCY``,
        ``FELT_AI_CLAIM_IDLE_MS``, ``FELT_AI_METRICS_PORT`` (``off`` disables it),
        ``FELT_AI_METRICS_HOST``, ``FELT_AI_STREAM``, ``FELT_AI_GROUP``,
        ``FELT_AI_DEAD_STREAM``, ``FELT_DECISION_SHARDS``, ``FELT_AI_CONSUMER``,
        ``FELT_AI_MAX_DELIVERIES``,
        ``FELT_AI_BOT_THREAD`` (``1``: run bots in a thread), ``FELT_AI_TRIM_INTERVAL_S``
        (``0``: never trim the stream).
        """
        e = environment(env)
        config = cls(
            redis_url=S.REDIS_URL.read(e) or S.LOCAL_REDIS,
            table_target=S.FELT_TABLE_TARGET.read(e),
            ai_token=S.FELT_AI_TOKEN.read(e),
            concurrency=S.FELT_AI_CONCURRENCY.read(e),
            claim_idle_ms=S.FELT_AI_CLAIM_IDLE_MS.read(e),
            metrics_port=S.FELT_AI_METRICS_PORT.read(e),
            metrics_host=S.FELT_AI_METRICS_HOST.read(e),
            stream=ai_stream_from_env(e),
            group=S.FELT_AI_GROUP.read(e),
            dead_stream=S.FELT_AI_DEAD_STREAM.read(e),
            shards=S.FELT_DECISION_SHARDS.read(e),
            consumer=S.FELT_AI_CONSUMER.read(e),
            max_deliveries=S.FELT_AI_MAX_DELIVERIES.read(e),
            bot_thread=S.FELT_AI_BOT_THREAD.read(e),
            trim_interval_s=S.FELT_AI_TRIM_INTERVAL_S.read(e),
            tracing=Tracing.from_settings("felt-ai-worker", e),
        )
        config.validate()
        return config

    def validate(self) -> None:
        if self.concurrency < 1:
            raise S.ConfigError("FELT_AI_CONCURRENCY must be at least 1")
        if self.claim_idle_ms < 100:
            raise S.ConfigError("FELT_AI_CLAIM_IDLE_MS must be at least 100")
        if self.max_deliveries < 1:
            raise S.ConfigError("FELT_AI_MAX_DELIVERIES must be at least 1")
        if not 0 <= self.trim_interval_s <= 86_400:
            raise S.ConfigError("FELT_AI_TRIM_INTERVAL_S must be between 0 and 86400")
        if self.block_ms * 1.5 >= 5000:
            # redis-py's default socket timeout is 5 s: a longer BLOCK would look like a dead
            # connection.
            raise ValueError("block_ms must stay well under the 5 s Redis socket timeout")
