"""The projector's side of Redis: many tables' new events at once, archived marks, who follows what.

``ProjectorFeed`` is the port; ``RedisProjectorFeed`` the adapter and
``MemoryProjectorFeed`` the fake (over a ``MemoryEventStore``), both passing
``tests/integration/archive/test_projector_feed_contract.py``.

- ``read_new``: one blocking ``XREAD`` over every followed table's stream
  (one connection however many tables; it returns as soon as any has news).
  On a Redis Cluster one ``XREAD`` may only name keys of one hash slot, so it is
  one non-blocking ``XREAD`` per table, pipelined (one round trip per node), then
  again every ``CLUSTER_POLL_MS`` until news or ``block_ms`` is over.
- ``mark_archived`` (``mark_archived_many``: several tables, one pipelined
  round trip): raises ``table:{T}:archived`` (the event store's own
  raise-only script, ``RAISE_ARCHIVED_LUA``) once the hands up to it are
  committed in PostgreSQL.
- ``entry_at``: the stream's last sequence and the event stored at a
  sequence, if retained (``XREVRANGE`` + ``XRANGE``, pipelined): the projector
  checks its stored cursor against it before resuming (after a Redis restart
  the stream may be shorter than the archive, or hold another history there).
- ``claim``/``release``: one projector follows a table at a time, by a lease
  ``table:{T}:projector`` (the table's hash slot, like its other keys) that
  the follower renews; another takes it over once it lapses.
- ``join``/``leave``: the live projectors, a sorted set ``felt:projectors``
  of member -> expiry (Redis's clock), which the projectors hash tables over
  (rendezvous hashing) to share them out.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Protocol, cast, runtime_checkable

from redis.asyncio import Redis

from felt.storage.eventstore.base import (
    EventsTrimmed,
    StoredRecord,
    archived_key,
    check_table_id,
    check_ttl,
    events_key,
)
from felt.storage.eventstore.memory import MemoryEventStore
from felt.storage.eventstore.redis_store import (
    ACQUIRE_LUA,
    RAISE_ARCHIVED_LUA,
    RELEASE_LUA,
    record_of,
)
from felt.storage.redis_client import is_cluster, raise_if_cancelling

MEMBERS_KEY = "felt:projectors"
CLUSTER_POLL_MS = 50
"""How often ``read_new`` looks again on a Redis Cluster, where it cannot block on many slots."""


def projector_lease_key(table_id: str) -> str:
    """String: the projector following the table, with the lease's TTL."""
    return f"table:{{{check_table_id(table_id)}}}:projector"


@runtime_checkable
class ProjectorFeed(Protocol):
    """What the projector needs of Redis (see the module docstring)."""

    async def read_new(
        self, after: Mapping[str, int], *, count: int, block_ms: int
    ) -> dict[str, list[StoredRecord]]:
        """Records after each table's sequence, at most ``count`` per table, oldest first.

        Waits up to ``block_ms`` for the first when none is there (0: no wait).
        Tables with nothing new are left out. Raises :class:`EventsTrimmed` if
        a table's next record is no longer retained.
        """
        ...

    async def entry_at(self, table_id: str, sequence: int) -> tuple[int, bytes | None]:
        """The stream's last sequence (0: no stream), and the payload at ``sequence`` (None if
        not retained: trimmed, or never written)."""
        ...

    async def mark_archived(self, table_id: str, sequence: int) -> int:
        """Raise the table's archived mark to ``sequence``; returns the mark now (never lower)."""
        ...

    async def mark_archived_many(self, marks: Mapping[str, int]) -> None:
        """``mark_archived`` of every table in ``marks``, in one round trip where it can."""
        ...

    async def archived(self, table_id: str) -> int:
        """The table's archived mark (0 if none)."""
        ...

    async def claim(self, table_id: str, owner: str, ttl_ms: int) -> bool:
        """Take the table's projector lease if free, or extend it if ``owner``'s."""
        ...

    async def release(self, table_id: str, owner: str) -> bool:
        """Give up ``owner``'s lease of the table (False: not held)."""
        ...

    async def join(self, member: str, ttl_ms: int) -> list[str]:
        """Say ``member`` is live for ``ttl_ms``; returns the live members, sorted."""
        ...

    async def leave(self, member: str) -> None:
        """Say ``member`` stopped."""
        ...


# KEYS: members. ARGV: member, ttl_ms. Heartbeat, drop the expired, list the live.
_JOIN_LUA = """#!lua
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZRANGE', KEYS[1], 0, -1)
"""


# XREAD's reply (without decode_responses): [[stream, [(id, fields), ...]], ...] or None.
_XReadReply = list[tuple[bytes, list[tuple[bytes, dict[bytes, bytes]]]]] | None


def _text(raw: bytes | str) -> str:
    return raw.decode() if isinstance(raw, bytes) else raw


def _check_follows(after: int, records: list[StoredRecord]) -> None:
    if records and records[0].sequence != after + 1:
        raise EventsTrimmed(after, records[0].sequence)


class RedisProjectorFeed:
    """:class:`ProjectorFeed` on Redis (``redis`` returns bytes; the caller closes it)."""

    def __init__(self, redis: Redis, members_key: str = MEMBERS_KEY) -> None:
        self._redis = redis
        self._members_key = members_key
        self._mark = redis.register_script(RAISE_ARCHIVED_LUA)
        self._acquire = redis.register_script(ACQUIRE_LUA)
        self._release = redis.register_script(RELEASE_LUA)
        self._join = redis.register_script(_JOIN_LUA)

    async def read_new(
        self, after: Mapping[str, int], *, count: int, block_ms: int
    ) -> dict[str, list[StoredRecord]]:
        if not after:
            if block_ms:
                await asyncio.sleep(block_ms / 1000)
            return {}
        names = {events_key(t): t for t in after}
        streams: dict[bytes | str | memoryview, int | bytes | str | memoryview] = {
            key: f"{after[t]}-0" for key, t in names.items()
        }
        if is_cluster(self._redis):
            reply = await self._poll_slots(streams, count, block_ms)
        else:
            reply = cast(
                "_XReadReply",
                await self._redis.xread(streams, count=count, block=block_ms or None),
            )
        # A cancellation lost in the read (redis-py on Python 3.11) is honoured here: the
        # projector would read again, and block again on idle tables.
        raise_if_cancelling()
        out: dict[str, list[StoredRecord]] = {}
        for stream, entries in reply or ():
            table_id = names[_text(stream)]
            records = [record_of(entry_id, fields) for entry_id, fields in entries]
            _check_follows(after[table_id], records)
            if records:
                out[table_id] = records
        return out

    async def _poll_slots(
        self,
        streams: dict[bytes | str | memoryview, int | bytes | str | memoryview],
        count: int,
        block_ms: int,
    ) -> _XReadReply:
        """``XREAD`` of each stream on its own (a cluster refuses keys of several slots in one),
        pipelined, until one has news or ``block_ms`` is over."""
        deadline = time.monotonic() + block_ms / 1000
        while True:
            async with self._redis.pipeline(transaction=False) as pipe:
                for key, position in streams.items():
                    pipe.xread({key: position}, count=count)
                replies = cast("list[_XReadReply]", await pipe.execute())
            raise_if_cancelling()  # lost in the round trip: the polls must not go on
            found = [stream for reply in replies for stream in reply or ()]
            left = deadline - time.monotonic()
            if found or left <= 0:
                return found
            await asyncio.sleep(min(left, CLUSTER_POLL_MS / 1000))

    async def entry_at(self, table_id: str, sequence: int) -> tuple[int, bytes | None]:
        key = events_key(table_id)
        async with self._redis.pipeline(transaction=False) as pipe:  # one slot: cluster too
            pipe.xrevrange(key, "+", "-", count=1)
            pipe.xrange(key, f"{sequence}-0", f"{sequence}-0")
            last, at = await pipe.execute()
        last_sequence = record_of(*last[0]).sequence if last else 0
        return last_sequence, record_of(*at[0]).payload if at else None

    async def mark_archived(self, table_id: str, sequence: int) -> int:
        return int(await self._mark(keys=[archived_key(table_id)], args=[max(0, sequence)]))

    async def mark_archived_many(self, marks: Mapping[str, int]) -> None:
        # One pipelined round trip, not one per table: the projector raises the marks of a
        # whole write after its commit, in the path of the next write.
        if not marks:
            return
        if is_cluster(self._redis):  # a cluster pipeline runs no scripts: concurrent calls
            await asyncio.gather(*(self.mark_archived(t, s) for t, s in marks.items()))
            return
        async with self._redis.pipeline(transaction=False) as pipe:
            for table_id, sequence in marks.items():
                await self._mark(
                    keys=[archived_key(table_id)], args=[max(0, sequence)], client=pipe
                )
            await pipe.execute()

    async def archived(self, table_id: str) -> int:
        raw = await self._redis.get(archived_key(table_id))
        return int(raw) if raw is not None else 0

    async def claim(self, table_id: str, owner: str, ttl_ms: int) -> bool:
        check_ttl(ttl_ms)
        return bool(await self._acquire(keys=[projector_lease_key(table_id)], args=[owner, ttl_ms]))

    async def release(self, table_id: str, owner: str) -> bool:
        return bool(await self._release(keys=[projector_lease_key(table_id)], args=[owner]))

    async def join(self, member: str, ttl_ms: int) -> list[str]:
        check_ttl(ttl_ms)
        live = await self._join(keys=[self._members_key], args=[member, ttl_ms])
        return sorted(_text(m) for m in live)

    async def leave(self, member: str) -> None:
        await self._redis.zrem(self._members_key, member)


class MemoryProjectorFeed:
    """:class:`ProjectorFeed` over a :class:`MemoryEventStore`, for service tests."""

    def __init__(
        self, store: MemoryEventStore, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.store = store
        self.marks: dict[str, int] = {}
        self._leases: dict[str, tuple[str, float]] = {}
        self._members: dict[str, float] = {}
        self._clock = clock

    async def read_new(
        self, after: Mapping[str, int], *, count: int, block_ms: int
    ) -> dict[str, list[StoredRecord]]:
        deadline = self._clock() + block_ms / 1000
        while True:
            out: dict[str, list[StoredRecord]] = {}
            for table_id, sequence in after.items():
                records = await self.store.read(table_id, sequence, count)
                _check_follows(sequence, records)
                if records:
                    out[table_id] = records
            if out or self._clock() >= deadline:
                return out
            await asyncio.sleep(0.005)

    async def entry_at(self, table_id: str, sequence: int) -> tuple[int, bytes | None]:
        last = await self.store.version(table_id)
        if sequence < 1 or sequence > last:
            return last, None
        try:
            records = await self.store.read(table_id, sequence - 1, 1)
        except EventsTrimmed:
            return last, None
        return last, records[0].payload if records else None

    async def mark_archived(self, table_id: str, sequence: int) -> int:
        mark = self.marks[table_id] = max(self.marks.get(check_table_id(table_id), 0), sequence)
        return mark

    async def mark_archived_many(self, marks: Mapping[str, int]) -> None:
        for table_id, sequence in marks.items():
            await self.mark_archived(table_id, sequence)

    async def archived(self, table_id: str) -> int:
        return self.marks.get(table_id, 0)

    async def claim(self, table_id: str, owner: str, ttl_ms: int) -> bool:
        check_ttl(ttl_ms)
        now = self._clock()
        held = self._leases.get(table_id)
        if held is not None and held[0] != owner and held[1] > now:
            return False
        self._leases[table_id] = (owner, now + ttl_ms / 1000)
        return True

    async def release(self, table_id: str, owner: str) -> bool:
        held = self._leases.get(table_id)
        if held is None or held[0] != owner or held[1] <= self._clock():
            return False
        del self._leases[table_id]
        return True

    async def join(self, member: str, ttl_ms: int) -> list[str]:
        check_ttl(ttl_ms)
        now = self._clock()
        self._members[member] = now + ttl_ms / 1000
        self._members = {m: t for m, t in self._members.items() if t > now}
        return sorted(self._members)

    async def leave(self, member: str) -> None:
        self._members.pop(member, None)
