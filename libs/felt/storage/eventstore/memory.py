"""An in-memory event store for unit tests: same contract as the Redis one, one process only."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field

from felt.storage.eventstore.base import (
    TRIM_PAGE,
    AppendResult,
    EventsTrimmed,
    StoredRecord,
    VersionConflict,
    check_append_args,
    check_snapshot_at,
    check_table_id,
    check_ttl,
    read_tail_of,
)
from felt.storage.idempotency import KEPT_PREFIX


@dataclass
class _Table:
    version: int = 0
    records: list[StoredRecord] = field(default_factory=list)  # retained, oldest first
    requests: dict[str, AppendResult] = field(default_factory=dict)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    lease_owner: str | None = None
    lease_expires: float = 0.0
    snapshot: int = 0  # sequence of the latest snapshot
    archived: int = 0  # the projector's archived position


class MemoryEventStore:
    """:class:`~felt.storage.eventstore.base.EventStore` in a dict. Not thread-safe; one event loop.

    ``clock`` returns seconds (monotonic) and decides lease expiry; tests may
    inject a fake one.
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._tables: dict[str, _Table] = {}
        self._clock = clock

    def _table(self, table_id: str) -> _Table:
        table = self._tables.get(check_table_id(table_id))
        if table is None:
            table = self._tables[table_id] = _Table()
        return table

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
        check_append_args(events, expected_version)
        check_snapshot_at(snapshot_at, expected_version, len(events))
        table = self._table(table_id)
        # No await below: the check and the append are atomic within the event loop.
        if request_id and (prev := table.requests.get(request_id)) is not None:
            return AppendResult(prev.first_sequence, prev.last_sequence, prev.response, True)
        if table.version != expected_version:
            raise VersionConflict(expected_version, table.version)
        first = table.version + 1
        for offset, payload in enumerate(events):
            table.records.append(StoredRecord(first + offset, bytes(payload), request_id or None))
        table.version += len(events)
        if snapshot_at:
            table.snapshot = snapshot_at
        result = AppendResult(first, table.version, bytes(response))
        if request_id:
            table.requests[request_id] = result
        table.changed.set()
        table.changed = asyncio.Event()
        return result

    def _after(self, table: _Table, after: int, count: int | None) -> list[StoredRecord]:
        if after >= table.version:
            return []
        first_retained = table.records[0].sequence if table.records else table.version + 1
        if after + 1 < first_retained:
            raise EventsTrimmed(after, first_retained)
        start = after + 1 - first_retained
        stop = None if count is None else start + count
        return table.records[start:stop]

    async def read(
        self, table_id: str, from_sequence: int = 0, count: int | None = None
    ) -> list[StoredRecord]:
        return list(self._after(self._table(table_id), from_sequence, count))

    async def subscribe(
        self, table_id: str, from_sequence: int = 0, *, block_ms: int = 5000
    ) -> AsyncIterator[StoredRecord]:
        table = self._table(table_id)
        after = from_sequence
        while True:
            changed = table.changed
            batch = self._after(table, after, None)
            for record in batch:
                yield record
                after = record.sequence
            if not batch:
                await changed.wait()

    async def version(self, table_id: str) -> int:
        return self._table(table_id).version

    async def trim(self, table_id: str, up_to_sequence: int) -> int:
        table = self._table(table_id)
        dropped = [r for r in table.records[:TRIM_PAGE] if r.sequence <= up_to_sequence]
        table.records = table.records[len(dropped) :]
        for record in dropped:
            if record.request_id is not None and not record.request_id.startswith(KEPT_PREFIX):
                table.requests.pop(record.request_id, None)
        return len(dropped)

    async def latest_snapshot(self, table_id: str) -> int:
        return self._table(table_id).snapshot

    async def read_tail(self, table_id: str) -> list[StoredRecord]:
        return await read_tail_of(self, table_id)

    async def archived(self, table_id: str) -> int:
        return self._table(table_id).archived

    async def record_archived(self, table_id: str, sequence: int) -> int:
        table = self._table(table_id)
        table.archived = max(table.archived, sequence)
        return table.archived

    async def trim_archived(self, table_id: str, before_snapshot: int) -> int:
        table = self._table(table_id)
        up_to = min(min(before_snapshot, table.snapshot) - 1, table.archived)
        return await self.trim(table_id, up_to) if up_to >= 1 else 0

    def _holder(self, table: _Table) -> str | None:
        if table.lease_owner is not None and self._clock() >= table.lease_expires:
            table.lease_owner = None
        return table.lease_owner

    async def acquire_lease(self, table_id: str, owner: str, ttl_ms: int) -> bool:
        check_ttl(ttl_ms)
        table = self._table(table_id)
        if self._holder(table) not in (None, owner):
            return False
        table.lease_owner = owner
        table.lease_expires = self._clock() + ttl_ms / 1000
        return True

    async def renew_lease(self, table_id: str, owner: str, ttl_ms: int) -> bool:
        check_ttl(ttl_ms)
        table = self._table(table_id)
        if self._holder(table) != owner:
            return False
        table.lease_expires = self._clock() + ttl_ms / 1000
        return True

    async def release_lease(self, table_id: str, owner: str) -> bool:
        table = self._table(table_id)
        if self._holder(table) != owner:
            return False
        table.lease_owner = None
        return True

    async def request_result(self, table_id: str, request_id: str) -> AppendResult | None:
        prev = self._table(table_id).requests.get(request_id) if request_id else None
        if prev is None:
            return None
        return AppendResult(prev.first_sequence, prev.last_sequence, prev.response, duplicate=True)

    async def lease_owner(self, table_id: str) -> str | None:
        return self._holder(self._table(table_id))
