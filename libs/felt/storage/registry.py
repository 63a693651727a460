"""The table registry port: which tables exist, and which are quarantined.

Every table-service instance reads the registry to find tables to adopt
(their lease free) and writes it when it creates a table or quarantines one
whose stored state cannot be applied. ``TableRegistry`` is the port the
service layer depends on; ``RedisTableRegistry`` is the production adapter
(the set ``felt:tables`` and the hash ``felt:tables:quarantined``, table id ->
JSON ``{"reason", "version", "owner", "time"}``, which operators read with
``HGETALL`` and clear with ``HDEL``); ``MemoryTableRegistry`` is the fake that
service tests run on. Both pass ``tests/integration/test_registry_contract.py``.
"""

from __future__ import annotations

import json
from typing import Protocol, runtime_checkable

from redis.asyncio import Redis

TABLES_KEY = "felt:tables"
QUARANTINE_KEY = "felt:tables:quarantined"


@runtime_checkable
class TableRegistry(Protocol):
    """The set of registered tables, and the quarantine record of those taken out of service."""

    async def add(self, table_id: str) -> None:
        """Register a created table so that any instance may adopt it later (idempotent)."""
        ...

    async def exists(self, table_id: str) -> bool:
        """Whether the table was registered."""
        ...

    async def table_ids(self) -> set[str]:
        """Every registered table (quarantined ones included)."""
        ...

    async def quarantine(self, table_id: str, record: dict[str, object]) -> None:
        """Record why the table is out of service (replaces an earlier record)."""
        ...

    async def quarantine_reason(self, table_id: str) -> str | None:
        """Why the table is quarantined (None: it is not). An operator's hand-written record
        that is not the JSON this port writes is returned as text (its first 300 characters)."""
        ...

    async def quarantined_ids(self) -> set[str]:
        """The quarantined tables."""
        ...

    async def quarantined(self) -> dict[str, dict[str, object]]:
        """The quarantined tables and their records (what ``HGETALL`` shows an operator)."""
        ...


def reason_of(raw: str) -> str:
    """The reason in a quarantine record (the raw text if an operator wrote something else)."""
    try:
        return str(json.loads(raw)["reason"])
    except (ValueError, KeyError, TypeError):
        return raw[:300]


def _text(raw: bytes | str) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


class RedisTableRegistry:
    """The registry in Redis: the set ``felt:tables`` and the hash ``felt:tables:quarantined``."""

    def __init__(
        self, redis: Redis, tables_key: str = TABLES_KEY, quarantine_key: str = QUARANTINE_KEY
    ) -> None:
        self.redis = redis
        self.tables_key = tables_key
        self.quarantine_key = quarantine_key

    async def add(self, table_id: str) -> None:
        await self.redis.sadd(self.tables_key, table_id)

    async def exists(self, table_id: str) -> bool:
        return bool(await self.redis.sismember(self.tables_key, table_id))

    async def table_ids(self) -> set[str]:
        return {_text(raw) for raw in await self.redis.smembers(self.tables_key)}

    async def quarantine(self, table_id: str, record: dict[str, object]) -> None:
        await self.redis.hset(self.quarantine_key, table_id, json.dumps(record))

    async def quarantine_reason(self, table_id: str) -> str | None:
        held = await self.redis.hget(self.quarantine_key, table_id)
        return None if held is None else reason_of(_text(held))

    async def quarantined_ids(self) -> set[str]:
        return {_text(k) for k in await self.redis.hkeys(self.quarantine_key)}

    async def quarantined(self) -> dict[str, dict[str, object]]:
        raw = await self.redis.hgetall(self.quarantine_key)
        return {_text(k): _record(_text(v)) for k, v in raw.items()}


class MemoryTableRegistry:
    """The registry in a dict and a set, for service tests (one process, no Redis).

    ``quarantined_raw`` holds records as text, like the Redis hash, so that a
    test can write an operator's malformed record the way ``HSET`` would.
    """

    def __init__(self) -> None:
        self.tables: set[str] = set()
        self.quarantined_raw: dict[str, str] = {}

    async def add(self, table_id: str) -> None:
        self.tables.add(table_id)

    async def exists(self, table_id: str) -> bool:
        return table_id in self.tables

    async def table_ids(self) -> set[str]:
        return set(self.tables)

    async def quarantine(self, table_id: str, record: dict[str, object]) -> None:
        self.quarantined_raw[table_id] = json.dumps(record)

    async def quarantine_reason(self, table_id: str) -> str | None:
        held = self.quarantined_raw.get(table_id)
        return None if held is None else reason_of(held)

    async def quarantined_ids(self) -> set[str]:
        return set(self.quarantined_raw)

    async def quarantined(self) -> dict[str, dict[str, object]]:
        return {k: _record(v) for k, v in self.quarantined_raw.items()}


def _record(text: str) -> dict[str, object]:
    """A stored record as a dict (an operator's non-JSON note becomes ``{"reason": text}``)."""
    try:
        value = json.loads(text)
    except ValueError:
        return {"reason": text[:300]}
    return value if isinstance(value, dict) else {"reason": text[:300]}
