"""The decision queue in memory: Redis consumer-group semantics for service tests.

One object plays the stream and every consumer, so a test can run the table
service's application layer (which publishes) and AI workers (which consume)
in one process without Redis. It keeps what the workers rely on: an entry is
delivered to one consumer, stays pending until acknowledged, counts its
deliveries, can be claimed once idle, and is dead-lettered with its ack.
Idle times use ``clock`` (monotonic seconds; tests may pass a fake one).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from felt.storage.decisions.base import (
    AI_GROUP,
    AI_STREAM,
    Entry,
    Fields,
    GroupStats,
    dead_letter_stream,
    envelope,
)
from poker.v1 import ai_pb2


@dataclass(slots=True)
class _Pending:
    consumer: str
    delivered_at: float
    deliveries: int


def _fields(raw: dict[str, bytes | str]) -> dict[bytes, bytes]:
    return {k.encode(): v if isinstance(v, bytes) else str(v).encode() for k, v in raw.items()}


class MemoryDecisionQueue:
    """One stream with one consumer group (and its dead-letter stream), in memory."""

    def __init__(
        self,
        stream: str = AI_STREAM,
        group: str = AI_GROUP,
        dead_stream: str = "",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.group = group
        self.dead_stream = dead_stream or dead_letter_stream(stream)
        self.entries: list[tuple[bytes, dict[bytes, bytes]]] = []
        self.dead: list[dict[bytes, bytes]] = []
        self._clock = clock
        self._group_exists = False
        self._delivered = 0  # entries[:_delivered] went to some consumer
        self._pending: dict[bytes, _Pending] = {}
        self._seen: dict[str, float] = {}  # consumer -> last interaction
        self._added = asyncio.Event()
        self._last_ms = 0
        self._serial = 0  # entry ids' second part: never reused, even after a trim

    # ------------------------------------------------------------------ publishing

    async def publish(
        self, request: ai_pb2.DecisionRequest, trace: Mapping[str, str] | None = None
    ) -> None:
        self.add(_fields(envelope(request, trace)))

    def add(self, fields: dict[bytes, bytes]) -> bytes:
        """Append raw fields (tests use it for malformed entries); returns the entry id."""
        self._last_ms = max(self._last_ms, int(time.time() * 1000))  # ids never go back
        entry_id = f"{self._last_ms}-{self._serial}".encode()
        self._serial += 1
        self.entries.append((entry_id, dict(fields)))
        self._added.set()
        return entry_id

    # ------------------------------------------------------------------ consuming

    async def ensure_group(self) -> None:
        if not self._group_exists:
            self._group_exists = True
            self._delivered = 0  # like ``0``: entries added before the group are read too

    def _touch_consumer(self, consumer: str) -> None:
        self._seen[consumer] = self._clock()

    async def read(self, consumer: str, count: int, block_ms: int) -> list[Entry]:
        self._touch_consumer(consumer)
        if self._delivered >= len(self.entries) and block_ms > 0:
            self._added.clear()
            try:
                await asyncio.wait_for(self._added.wait(), block_ms / 1000)
            except TimeoutError:
                return []
        fresh = self.entries[self._delivered : self._delivered + count]
        self._delivered += len(fresh)
        now = self._clock()
        for entry_id, _ in fresh:
            self._pending[entry_id] = _Pending(consumer, now, 1)
        return [Entry(entry_id, fields) for entry_id, fields in fresh]

    def _fields_of(self, entry_id: bytes) -> dict[bytes, bytes] | None:
        for eid, fields in self.entries:
            if eid == entry_id:
                return fields
        return None

    async def claim_idle(
        self, consumer: str, min_idle_ms: int, count: int, cursor: bytes | str
    ) -> tuple[bytes | str, list[Entry]]:
        self._touch_consumer(consumer)
        start = cursor.encode() if isinstance(cursor, str) else cursor
        now = self._clock()
        ids = sorted((eid for eid in self._pending if _order(eid) >= _order(start)), key=_order)
        claimed: list[Entry] = []
        for n, eid in enumerate(ids):
            if len(claimed) == count:
                return ids[n], claimed
            pending = self._pending[eid]
            if (now - pending.delivered_at) * 1000 >= min_idle_ms:
                self._pending[eid] = _Pending(consumer, now, pending.deliveries + 1)
                claimed.append(Entry(eid, self._fields_of(eid)))
        return b"0-0", claimed

    async def touch(self, consumer: str, entry_ids: list[bytes], min_idle_ms: int) -> None:
        now = self._clock()
        for eid in entry_ids:
            pending = self._pending.get(eid)
            if pending is not None and (now - pending.delivered_at) * 1000 >= min_idle_ms:
                self._pending[eid] = _Pending(consumer, now, pending.deliveries)

    async def delivery_counts(self, consumer: str, entry_ids: list[bytes]) -> dict[bytes, int]:
        return {
            eid: p.deliveries
            for eid in entry_ids
            if (p := self._pending.get(eid)) is not None and p.consumer == consumer
        }

    async def ack(self, entry_id: bytes) -> None:
        self._pending.pop(entry_id, None)

    async def dead_letter(
        self, consumer: str, entry_id: bytes, fields: Fields, reason: str, failed_at: str
    ) -> None:
        record = _fields(
            {"reason": reason, "entry_id": entry_id, "consumer": consumer, "failed_at": failed_at}
        )
        for key, value in fields.items():
            record.setdefault(key, value)
        self.dead.append(record)
        await self.ack(entry_id)

    def pending_of(self, consumer: str) -> list[bytes]:
        """The entries ``consumer`` holds (what ``XPENDING ... consumer`` lists)."""
        return [eid for eid, p in self._pending.items() if p.consumer == consumer]

    async def leave(self, consumer: str) -> bool:
        if self.pending_of(consumer):
            return False
        self._seen.pop(consumer, None)
        return True

    async def stats(self) -> GroupStats | None:
        if not self._group_exists:
            return None
        consumers = set(self._seen) | {p.consumer for p in self._pending.values()}
        return GroupStats(len(self.entries) - self._delivered, len(self._pending), len(consumers))

    async def trim_acknowledged(self) -> int:
        if not self._group_exists:
            return 0
        bound = min((_order(eid) for eid in self._pending), default=None)
        if bound is None and self._delivered < len(self.entries):
            bound = _order(self.entries[self._delivered][0])
        done = (
            self._delivered
            if bound is None
            else sum(1 for eid, _ in self.entries[: self._delivered] if _order(eid) < bound)
        )
        del self.entries[:done]
        self._delivered -= done
        return done

    async def prune(self, keep: str, idle_ms: int) -> list[str]:
        now = self._clock()
        gone = [
            name
            for name, seen in self._seen.items()
            if name != keep and not self.pending_of(name) and (now - seen) * 1000 > idle_ms
        ]
        for name in gone:
            del self._seen[name]
        return gone


def _order(entry_id: bytes) -> tuple[int, int]:
    ms, _, seq = entry_id.partition(b"-")
    return int(ms or 0), int(seq or 0)
