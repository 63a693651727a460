"""The AI decision queue: the table service asks, AI workers answer.

The port (``base``) defines the stream's name (``AI_STREAM``, overridden by
``FELT_AI_STREAM`` on both sides), the envelope a request travels in, and the
two roles: ``DecisionPublisher`` (the table service) and ``DecisionQueue``
(a worker's consumer-group view). ``RedisDecisionQueue`` (Redis Streams,
production) and ``MemoryDecisionQueue`` (service tests) implement both and
pass one contract suite (``tests/integration/test_decision_queue_contract.py``), and so
does ``ShardedDecisionQueue`` (``sharded``), which spreads the requests over
``FELT_DECISION_SHARDS`` streams by table: what the services use.
"""

from felt.storage.decisions.base import (
    AI_GROUP,
    AI_STREAM,
    AI_STREAM_ENV,
    STREAM_MAXLEN,
    DecisionPublisher,
    DecisionQueue,
    Entry,
    Fields,
    GroupMissing,
    GroupStats,
    ai_stream_from_env,
    dead_letter_stream,
    envelope,
    payload_of,
    trace_of,
)
from felt.storage.decisions.memory import MemoryDecisionQueue
from felt.storage.decisions.redis_queue import RedisDecisionQueue
from felt.storage.decisions.sharded import (
    ShardCountMismatch,
    ShardedDecisionQueue,
    agree_on_shards,
    redis_sharded_queue,
    shard_dead_stream,
    shard_of,
    shard_stream,
    shard_streams,
)

__all__ = [
    "AI_GROUP",
    "AI_STREAM",
    "AI_STREAM_ENV",
    "STREAM_MAXLEN",
    "DecisionPublisher",
    "DecisionQueue",
    "Entry",
    "Fields",
    "GroupMissing",
    "GroupStats",
    "MemoryDecisionQueue",
    "RedisDecisionQueue",
    "ShardCountMismatch",
    "ShardedDecisionQueue",
    "agree_on_shards",
    "ai_stream_from_env",
    "dead_letter_stream",
    "envelope",
    "payload_of",
    "redis_sharded_queue",
    "shard_dead_stream",
    "shard_of",
    "shard_stream",
    "shard_streams",
    "trace_of",
]
