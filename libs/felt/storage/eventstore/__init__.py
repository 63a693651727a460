"""Event store: each table's events in one append-only, versioned, idempotent log.

``RedisEventStore`` (Redis Streams, production) and ``MemoryEventStore``
(unit tests) implement the same ``EventStore`` protocol; ``codec`` turns
events into the ``poker.events.v1.StoredEvent`` bytes they store.
"""

from felt.storage.eventstore.base import (
    AppendResult,
    EventStore,
    EventStoreError,
    EventsTrimmed,
    StoredRecord,
    TableLeases,
    VersionConflict,
    archived_key,
    events_key,
    lease_key,
    meta_key,
    requests_key,
)
from felt.storage.eventstore.memory import MemoryEventStore
from felt.storage.eventstore.redis_store import RedisEventStore

__all__ = [
    "AppendResult",
    "EventStore",
    "EventStoreError",
    "EventsTrimmed",
    "MemoryEventStore",
    "RedisEventStore",
    "StoredRecord",
    "TableLeases",
    "VersionConflict",
    "archived_key",
    "events_key",
    "lease_key",
    "meta_key",
    "requests_key",
]
