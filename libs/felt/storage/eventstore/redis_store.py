"""The event store on Redis Streams (Redis >= 7.0; works on Redis Cluster).

Layout (``{id}`` is a hash tag, so every key of a table lives in one slot and
the Lua scripts below may touch them together):

``table:{id}:events``   stream; the event with sequence N has stream ID ``N-0``
                        and fields ``e`` (payload) and, when it has one,
                        ``r`` (request id). XREAD/XRANGE positions are thus
                        sequences, and resuming "after N" is reading after ``N-0``.
``table:{id}:meta``     hash; ``version`` = last sequence, ``snapshot`` = the
                        sequence of the latest table snapshot (set by the append
                        that writes it). Kept separately from the stream so it
                        survives trimming; a rebuild reads from ``snapshot``.
``table:{id}:requests`` hash; request id -> ``<first>:<last>:<response blob>``.
                        Records are dropped with their events by ``trim``, but
                        the kept ones (``k/`` keys: the lobby's retried calls).
``table:{id}:lease``    string; lease owner, with the lease TTL (PX).
``table:{id}:archived`` string; the last sequence the projector archived
                        (only raised). ``trim_archived`` trims below it and
                        below the latest snapshot, in one script.

One append is ONE script call (``APPEND_LUA``): it looks up the request id,
compares the version, XADDs every event with an explicit ID, bumps the version
and records the request, all atomically. Appends go ``EVALSHA`` over one
pipelined connection of their own (``felt.storage.eventstore.pipeline``: much cheaper
than a redis-py command, and concurrent appends share writes), and so do
reads (``MULTI``/``XRANGE``/``EXEC``, which is how a table is rebuilt); the
blocking ``XREAD`` of subscriptions and the rare commands go through the
redis-py client. On a Redis Cluster (``felt.storage.redis_client``) appends and reads
take the pipelined connection to the master of the table's slot
(``felt.storage.eventstore.cluster_pipeline``) and the rest redis-py's ``RedisCluster``:
every script and ``MULTI`` names keys of one table only, hence of one hash slot. Redis
7.0 has no XADD idempotency
(IDMP), hence the requests hash. The scripts start with a ``#!lua`` shebang so
Redis refuses them up front when out of memory, before any write (a script
that fails half-way is not rolled back).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Sequence
from typing import Any, cast

from redis.asyncio import Redis
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from felt.storage.eventstore.base import (
    TRIM_PAGE,
    AppendResult,
    EventsTrimmed,
    StoredRecord,
    VersionConflict,
    archived_key,
    check_append_args,
    check_snapshot_at,
    check_ttl,
    events_key,
    lease_key,
    meta_key,
    read_tail_of,
    requests_key,
)
from felt.storage.eventstore.cluster_pipeline import ClusterPipelines, redirected
from felt.storage.eventstore.pipeline import Arg, RedisPipeline
from felt.storage.redis_client import (
    is_cluster,
    raise_if_cancelling,
    ready,
    redis_from_url,
    socket_timeout_of,
)

# KEYS: events, meta, requests. ARGV: expected_version, request_id ('' = none),
# response blob, snapshot sequence ('0' = none), payload 1, payload 2, ...
# Returns {'ok', first, last} | {'dup', '<first>:<last>:<response>'} | {'conflict', version}.
APPEND_LUA = """#!lua
local rid = ARGV[2]
if rid ~= '' then
  local prev = redis.call('HGET', KEYS[3], rid)
  if prev then
    return {'dup', prev}
  end
end
local version = tonumber(redis.call('HGET', KEYS[2], 'version') or '0')
if version ~= tonumber(ARGV[1]) then
  return {'conflict', string.format('%d', version)}
end
local n = #ARGV - 4
for i = 1, n do
  local id = string.format('%d-0', version + i)
  if rid ~= '' then
    redis.call('XADD', KEYS[1], id, 'e', ARGV[4 + i], 'r', rid)
  else
    redis.call('XADD', KEYS[1], id, 'e', ARGV[4 + i])
  end
end
local first = string.format('%d', version + 1)
local last = string.format('%d', version + n)
if ARGV[4] ~= '0' then
  redis.call('HSET', KEYS[2], 'version', last, 'snapshot', ARGV[4])
else
  redis.call('HSET', KEYS[2], 'version', last)
end
if rid ~= '' then
  redis.call('HSET', KEYS[3], rid, first .. ':' .. last .. ':' .. ARGV[3])
end
return {'ok', first, last}
"""

# Drops the entries <= `upto` of KEYS[1] (events) and the request records in KEYS[2]
# of every request that wrote one of them (a retry of it is then a new request), but
# the kept ones ('k/' keys, felt.storage.idempotency.KEPT_PREFIX: the lobby's sagas retry them
# for as long as it takes). At most TRIM_PAGE entries a call: a script blocks Redis, every
# table's appends included, while it runs. Returns the number of entries dropped. The tail of both
# trimming scripts.
_DROP_UPTO_LUA = (
    """
if upto < 1 then
  return 0
end
local entries = redis.call('XRANGE', KEYS[1], '-', string.format('%d-0', upto), 'COUNT', """
    + str(TRIM_PAGE)
    + """)
for _, entry in ipairs(entries) do
  local fields = entry[2]
  for i = 1, #fields, 2 do
    if fields[i] == 'r' and string.sub(fields[i + 1], 1, 2) ~= 'k/' then
      redis.call('HDEL', KEYS[2], fields[i + 1])
    end
  end
end
if #entries > 0 then
  -- Up to the last entry read (a page): the rest goes with the next call.
  local last = tonumber(string.match(entries[#entries][1], '^(%d+)'))
  redis.call('XTRIM', KEYS[1], 'MINID', string.format('%d-0', last + 1))
end
return #entries
"""
)

# KEYS: events, requests. ARGV: up_to_sequence. Drops entries <= up_to, unconditionally.
TRIM_LUA = (
    """#!lua
local upto = tonumber(ARGV[1])
"""
    + _DROP_UPTO_LUA
)

# KEYS: events, requests, meta, archived. ARGV: before_snapshot. Drops the entries
# below the given snapshot, below the latest one and at or below the archived
# position, with their request records. Returns how many.
TRIM_ARCHIVED_LUA = (
    """#!lua
local latest = tonumber(redis.call('HGET', KEYS[3], 'snapshot') or '0')
local archived = tonumber(redis.call('GET', KEYS[4]) or '0')
local upto = math.min(tonumber(ARGV[1]), latest) - 1
if archived < upto then
  upto = archived
end
"""
    + _DROP_UPTO_LUA
)

# KEYS: archived. ARGV: sequence. Raise the archived position, never lower it.
RAISE_ARCHIVED_LUA = """#!lua
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
local new = tonumber(ARGV[1])
if new > cur then
  redis.call('SET', KEYS[1], string.format('%d', new))
  return new
end
return cur
"""

# KEYS: lease. ARGV: owner, ttl_ms. Take the lease if free, or extend it if ours.
ACQUIRE_LUA = """#!lua
local cur = redis.call('GET', KEYS[1])
if not cur then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""

# KEYS: lease. ARGV: owner, ttl_ms. Extend only if ours (compare-and-set).
RENEW_LUA = """#!lua
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""

# KEYS: lease. ARGV: owner. Delete only if ours (compare-and-delete).
RELEASE_LUA = """#!lua
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
"""

_PAGE = 5000
# Pages read over the shared pipelined connection are smaller, so that an append
# queued behind one waits little (and 500 reads fastest here anyway).
_PIPELINED_PAGE = 500


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _bytes(value: bytes | str) -> bytes:
    return value.encode() if isinstance(value, str) else value


def record_of(entry_id: bytes | str, fields: dict[Any, Any]) -> StoredRecord:
    """The record in a stream entry as redis-py returns it (``XRANGE``, ``XREAD``)."""
    # Entry ids are "<sequence>-0": the sequence is everything before the dash.
    if isinstance(entry_id, bytes):
        sequence = int(entry_id[: entry_id.index(b"-")])
    else:
        sequence = int(entry_id.split("-", 1)[0])
    rid = fields.get(b"r")
    if rid is None:
        rid = fields.get("r")
    payload = fields.get(b"e")
    if payload is None:
        payload = fields.get("e")
    if payload is None:
        raise ValueError(f"stream entry {_text(entry_id)} has no payload")
    return StoredRecord(sequence, _bytes(payload), None if rid is None else _text(rid))


def _raw_record(entry_id: bytes, fields: list[bytes]) -> StoredRecord:
    """:func:`record_of` of an entry as the pipelined connection reads it (fields flat)."""
    # The append script writes ``e`` then, if any, ``r``: read those directly (a
    # rebuild reads every entry of the stream); anything else the general way.
    size = len(fields)
    if size >= 2 and fields[0] == b"e" and (size == 2 or (size == 4 and fields[2] == b"r")):
        sequence = int(entry_id[: entry_id.index(b"-")])
        return StoredRecord(sequence, fields[1], fields[3].decode() if size == 4 else None)
    pairs = iter(fields)
    return record_of(entry_id, dict(zip(pairs, pairs, strict=True)))


def _check_contiguous(after: int, records: list[StoredRecord]) -> None:
    if records and records[0].sequence != after + 1:
        raise EventsTrimmed(after, records[0].sequence)


class RedisEventStore:
    """:class:`~felt.storage.eventstore.base.EventStore` on Redis Streams.

    ``redis`` must return bytes (``decode_responses=False``, the default);
    this store does not close it unless it made it (``from_url``). Appends and
    reads use a connection of the store's own (see the module docstring),
    which :meth:`aclose` closes.
    """

    def __init__(self, redis: Redis, *, owns_client: bool = False, pipeline: bool = True) -> None:
        self._redis = redis
        self._owns_client = owns_client
        self._append = redis.register_script(APPEND_LUA)
        # Appends and reads take the pipelined connection when it can reach the server like
        # `redis` (``pipeline=False``: through `redis` itself); on a Redis Cluster, the one
        # to the master of the table's slot (``cluster_pipeline``).
        cluster = is_cluster(redis)
        # A cluster client made here (``from_url``) has not learnt the slot map yet: the
        # store learns it before its first command (``_initialized``), as ``connect_redis``
        # does for a service's client. Without it the first append raised SlotNotCoveredError.
        self._unready = owns_client and cluster
        self._ready_lock = asyncio.Lock()
        self._pipeline = RedisPipeline.for_client(redis) if pipeline and not cluster else None
        # The scripts a deal runs (the append, and the trim after its snapshot) take the
        # pipelined connection too: through redis-py a script call cost a deal ~150 us more.
        piped = [APPEND_LUA, TRIM_ARCHIVED_LUA]
        self._nodes = ClusterPipelines.for_client(redis, piped) if pipeline else None
        self._append_sha = hashlib.sha1(APPEND_LUA.encode()).hexdigest()
        self._trim_archived_sha = hashlib.sha1(TRIM_ARCHIVED_LUA.encode()).hexdigest()
        if self._pipeline is not None:
            for body in piped:
                self._pipeline.script(body)
        self._trim = redis.register_script(TRIM_LUA)
        self._trim_archived = redis.register_script(TRIM_ARCHIVED_LUA)
        self._raise_archived = redis.register_script(RAISE_ARCHIVED_LUA)
        self._acquire = redis.register_script(ACQUIRE_LUA)
        self._renew = redis.register_script(RENEW_LUA)
        self._release = redis.register_script(RELEASE_LUA)

    @classmethod
    def from_url(cls, url: str) -> RedisEventStore:
        return cls(redis_from_url(url), owns_client=True)

    async def aclose(self) -> None:
        if self._pipeline is not None:
            await self._pipeline.aclose()
        if self._nodes is not None:
            await self._nodes.aclose()
        if self._owns_client:
            await self._redis.aclose()

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
        keys = [events_key(table_id), meta_key(table_id), requests_key(table_id)]
        args: list[bytes | str | int] = [
            expected_version,
            request_id or "",
            response,
            snapshot_at,
            *events,
        ]
        reply = await self._scripted(table_id, self._append_sha, self._append, keys, args)
        status = _bytes(reply[0])
        if status == b"ok":
            return AppendResult(int(reply[1]), int(reply[2]), response)
        if status == b"dup":
            first, last, original = _bytes(reply[1]).split(b":", 2)
            return AppendResult(int(first), int(last), original, duplicate=True)
        if status == b"conflict":
            raise VersionConflict(expected_version, int(reply[1]))
        raise RuntimeError(f"unexpected append reply {reply!r}")

    async def read(
        self, table_id: str, from_sequence: int = 0, count: int | None = None
    ) -> list[StoredRecord]:
        records: list[StoredRecord] = []
        after = from_sequence
        most = _PAGE if self._pipeline is None and self._nodes is None else _PIPELINED_PAGE
        while count is None or len(records) < count:
            page = most if count is None else min(most, count - len(records))
            # The version and the page in one transaction: together they tell a
            # trimmed stream from one that has nothing more.
            version, batch = await self._read_page(table_id, after, page)
            if not batch:
                if version > after:  # events exist past `after` but none is retained
                    raise EventsTrimmed(after, version + 1)
                break
            _check_contiguous(after, batch)
            records.extend(batch)
            after = batch[-1].sequence
            if len(batch) < page:
                break
        return records

    async def _read_page(
        self, table_id: str, after: int, page: int
    ) -> tuple[int, list[StoredRecord]]:
        """The table's version and up to ``page`` records after ``after``, atomically."""
        version_of = ("HGET", meta_key(table_id), "version")
        entries_of = ("XRANGE", events_key(table_id), f"{after + 1}-0", "+", "COUNT", page)
        await self._initialized()
        conn = self._pipe(table_id)
        if conn is not None:
            # Replies straight from hiredis: about 4x cheaper than redis-py's stream parsing.
            try:
                try:
                    raw_version, raw = await conn.transaction(version_of, entries_of)
                except RedisConnectionError:
                    # A read changes nothing, so it is safe to try once more on a new
                    # connection (redis-py's client retries like this on its own).
                    await self._lost_node()
                    conn = self._pipe(table_id) or conn
                    raw_version, raw = await conn.transaction(version_of, entries_of)
                return int(raw_version or 0), [_raw_record(i, fields) for i, fields in raw]
            except ResponseError as exc:  # a slot moved: read through redis-py, which follows
                if not redirected(exc):
                    raise
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.execute_command(*version_of)
            pipe.execute_command(*entries_of)  # parsed by redis-py's XRANGE callback
            raw_version, entries = await pipe.execute()
        return int(raw_version or 0), [record_of(i, fields) for i, fields in entries]

    async def _initialized(self) -> None:
        """Learn a cluster's slot map once, before the first command (see ``__init__``)."""
        if not self._unready:
            return
        async with self._ready_lock:
            if self._unready:
                await ready(self._redis)
                self._unready = False

    async def _scripted(
        self, table_id: str, sha: str, script: AsyncScript, keys: list[str], args: list[Arg]
    ) -> Any:
        """Run a script on the table's keys: on the pipelined connection when there is one,
        else (or when a cluster slot moved: Redis ran nothing) through redis-py."""
        await self._initialized()
        pipe = self._pipe(table_id)
        if pipe is not None:
            try:
                return await pipe.run_script(sha, keys, args)
            except ResponseError as exc:  # a slot moved: Redis ran nothing, redis-py follows
                if not redirected(exc):
                    raise
            except RedisConnectionError:
                await self._lost_node()
                raise
        return await script(keys=keys, args=args)

    def _pipe(self, table_id: str) -> RedisPipeline | None:
        """The pipelined connection for the table's keys (None: go through redis-py)."""
        if self._nodes is not None:
            return self._nodes.for_key(events_key(table_id))
        return self._pipeline

    async def _lost_node(self) -> None:
        """A connection broke: on a cluster its master may have failed, so re-read the map."""
        if self._nodes is not None:
            await self._nodes.refresh()

    async def subscribe(
        self, table_id: str, from_sequence: int = 0, *, block_ms: int = 5000
    ) -> AsyncIterator[StoredRecord]:
        key = events_key(table_id)
        # A blocking read must return before the client's socket timeout (redis-py
        # defaults to 5 s), or the wait would surface as a TimeoutError.
        socket_timeout = socket_timeout_of(self._redis)
        if socket_timeout:
            block_ms = max(1, min(block_ms, int(socket_timeout * 1000 * 0.8)))
        # Catch up with XRANGE first: it detects events trimmed before we started. One page
        # at a time, so that a long history is never held in memory at once.
        after = from_sequence
        while True:
            page = await self.read(table_id, after, _PIPELINED_PAGE)
            for record in page:
                yield record
                after = record.sequence
            if len(page) < _PIPELINED_PAGE:
                break
        while True:
            reply = cast(
                "list[tuple[bytes, list[tuple[bytes, dict[bytes, bytes]]]]] | None",
                await self._redis.xread({key: f"{after}-0"}, count=_PAGE, block=block_ms),
            )
            # A cancellation lost in the read (redis-py on Python 3.11) is honoured here: on
            # an idle stream this loop would block for ever (it hung a CI run).
            raise_if_cancelling()
            for _stream, entries in reply or ():
                batch = [record_of(entry_id, fields) for entry_id, fields in entries]
                _check_contiguous(after, batch)
                for record in batch:
                    yield record
                    after = record.sequence

    async def version(self, table_id: str) -> int:
        raw = await self._redis.hget(meta_key(table_id), "version")
        return int(raw or 0)

    async def trim(self, table_id: str, up_to_sequence: int) -> int:
        if up_to_sequence <= 0:
            return 0
        keys = [events_key(table_id), requests_key(table_id)]
        return int(await self._trim(keys=keys, args=[up_to_sequence]))

    async def latest_snapshot(self, table_id: str) -> int:
        raw = await self._redis.hget(meta_key(table_id), "snapshot")
        return int(raw or 0)

    async def read_tail(self, table_id: str) -> list[StoredRecord]:
        return await read_tail_of(self, table_id)

    async def archived(self, table_id: str) -> int:
        raw = await self._redis.get(archived_key(table_id))
        return int(raw or 0)

    async def record_archived(self, table_id: str, sequence: int) -> int:
        keys = [archived_key(table_id)]
        return int(await self._raise_archived(keys=keys, args=[max(0, sequence)]))

    async def trim_archived(self, table_id: str, before_snapshot: int) -> int:
        if before_snapshot <= 1:
            return 0
        keys = [
            events_key(table_id),
            requests_key(table_id),
            meta_key(table_id),
            archived_key(table_id),
        ]
        return int(
            await self._scripted(
                table_id, self._trim_archived_sha, self._trim_archived, keys, [before_snapshot]
            )
        )

    async def acquire_lease(self, table_id: str, owner: str, ttl_ms: int) -> bool:
        check_ttl(ttl_ms)
        return bool(await self._acquire(keys=[lease_key(table_id)], args=[owner, ttl_ms]))

    async def renew_lease(self, table_id: str, owner: str, ttl_ms: int) -> bool:
        check_ttl(ttl_ms)
        return bool(await self._renew(keys=[lease_key(table_id)], args=[owner, ttl_ms]))

    async def release_lease(self, table_id: str, owner: str) -> bool:
        return bool(await self._release(keys=[lease_key(table_id)], args=[owner]))

    async def request_result(self, table_id: str, request_id: str) -> AppendResult | None:
        if not request_id:
            return None
        raw = await self._redis.hget(requests_key(table_id), request_id)
        if raw is None:
            return None
        first, last, original = _bytes(raw).split(b":", 2)
        return AppendResult(int(first), int(last), original, duplicate=True)

    async def lease_owner(self, table_id: str) -> str | None:
        raw = await self._redis.get(lease_key(table_id))
        return None if raw is None else _text(raw)
