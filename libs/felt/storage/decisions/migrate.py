"""Moving a deployment's single decision stream to the sharded ones, once.

Before sharding, every request went to ``<FELT_AI_STREAM>`` (``felt:ai:decisions``) and
dead letters to ``<FELT_AI_STREAM>:dead``. The sharded queue reads
``<FELT_AI_STREAM>:{i}`` instead, so whatever the old stream still held would never be
read. :func:`migrate_unsharded` (``felt decisions migrate``) carries it over:

* the requests the old group had not finished (never delivered, or delivered and not
  acknowledged) are added to their table's shard, whose group is created first (so the
  new workers read them); requests already answered are not;
* every dead letter is copied to shard 0's dead-letter stream (they are for operators);
* then both old streams are deleted: the requests stream only once nothing was added to it
  since the last look (``WATCH``/``MULTI``/``DEL``), else what was added is copied and it
  looks again, so a request a table service still publishes is never deleted uncopied.

Run it once with the old table services and workers stopped (a worker still holding a
request would answer it as well: harmless, an answer for a version that moved on is
refused, but pointless). Run again, it finds nothing and changes nothing. It copies entry
by entry (the old and new keys are in different hash slots on a cluster), so a run cut
short is simply run again: the requests it had copied are copied once more, and a table
answers a duplicate decision once (its request key).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from redis.asyncio import Redis
from redis.exceptions import ResponseError, WatchError

from felt.storage.decisions.base import AI_GROUP, STREAM_MAXLEN, dead_letter_stream, payload_of
from felt.storage.decisions.sharded import (
    agree_on_shards,
    redis_sharded_queue,
    shard_dead_stream,
    shard_of,
)
from poker.v1 import ai_pb2

_PAGE = 500

_Entries = list[tuple[bytes, dict[bytes, bytes]]]


@dataclass(frozen=True, slots=True)
class Migrated:
    """What a run moved: requests to the shards, dead letters to shard 0's dead stream."""

    requests: int
    dead_letters: int


def _shard_of_entry(fields: dict[bytes, bytes], shards: int) -> int:
    """The shard of a request's table (shard 0 for one that cannot be read: a worker there
    dead-letters it, as it would have)."""
    raw = payload_of(fields)
    if raw is None:
        return 0
    try:
        table_id = ai_pb2.DecisionRequest.FromString(raw).table_id
    except Exception:
        return 0
    return shard_of(table_id, shards)


async def _unfinished(redis: Redis, stream: str, group: str) -> tuple[_Entries, bytes]:
    """The entries of ``stream`` that ``group`` has not finished (all of them without it),
    and the id up to which the stream was looked at (every entry up to it is finished or
    returned)."""
    last = b"-"
    pending: set[bytes] = set()
    try:
        groups = await redis.xinfo_groups(stream)
    except ResponseError:
        groups = []
    info = next((g for g in groups if _text(g.get("name")) == group), None)
    if info is not None:
        last_delivered = _text(info.get("last-delivered-id") or "0-0")
        last = b"(" + last_delivered.encode()
        start: bytes | str = "-"
        while True:
            rows = await redis.xpending_range(stream, group, start, "+", _PAGE)
            pending.update(cast(bytes, row["message_id"]) for row in rows)
            if len(rows) < _PAGE:
                break
            start = b"(" + cast(bytes, rows[-1]["message_id"])
    out: _Entries = []
    for entry_id in sorted(pending, key=_id_key):
        got = cast(_Entries, await redis.xrange(stream, entry_id, entry_id))
        out.extend(got)  # an entry deleted meanwhile is simply gone
    tail = await _range(redis, stream, last)
    out.extend(tail)
    if tail:
        through = tail[-1][0]
    elif last.startswith(b"("):
        through = last[1:]
    else:
        through = b"0-0"
    return out, through


async def _range(redis: Redis, stream: str, start: bytes | str) -> _Entries:
    out: _Entries = []
    while True:
        page = cast(_Entries, await redis.xrange(stream, start, "+", count=_PAGE))
        out.extend(page)
        if len(page) < _PAGE:
            return out
        start = b"(" + page[-1][0]


async def migrate_unsharded(
    redis: Redis,
    stream: str,
    shards: int,
    group: str = AI_GROUP,
    dead_stream: str = "",
) -> Migrated:
    """Move the unsharded ``stream`` (and its dead-letter stream) to ``shards`` shards."""
    old_dead = dead_stream or dead_letter_stream(stream)
    queue = redis_sharded_queue(redis, stream, shards, group, dead_stream)
    moved = dead = 0
    await agree_on_shards(redis, stream, shards)
    if await redis.exists(stream):
        entries, through = await _unfinished(redis, stream, group)
        await queue.ensure_group()
        while True:
            for _entry_id, fields in entries:
                target = queue.shards[_shard_of_entry(fields, shards)].stream
                await redis.xadd(target, cast(Any, fields), maxlen=STREAM_MAXLEN, approximate=True)
                moved += 1
            entries, through = await _delete_unless_added(redis, stream, through)
            if not entries and not through:
                break
    if await redis.exists(old_dead):
        target = shard_dead_stream(stream, 0, dead_stream)
        for _entry_id, fields in await _range(redis, old_dead, "-"):
            await redis.xadd(target, cast(Any, fields), maxlen=STREAM_MAXLEN, approximate=True)
            dead += 1
        await redis.delete(old_dead)
    return Migrated(moved, dead)


async def _delete_unless_added(redis: Redis, stream: str, through: bytes) -> tuple[_Entries, bytes]:
    """Delete ``stream`` unless entries were added past ``through`` (a table service still
    publishing): then those entries and the new ``through``, to copy before trying again.

    ``WATCH`` makes the ``DEL`` fail if anything is added between the look and the delete,
    so no request XADDed while the migration runs is deleted uncopied. Returns ``([], b"")``
    once deleted.
    """
    async with redis.pipeline(transaction=True) as pipe:
        await pipe.watch(stream)
        added = cast(_Entries, await pipe.xrange(stream, b"(" + through, "+", count=_PAGE))
        if added:
            await pipe.unwatch()  # type: ignore[no-untyped-call]  # redis-py leaves it untyped
            return added, added[-1][0]
        pipe.multi()  # type: ignore[no-untyped-call]
        pipe.delete(stream)
        try:
            await pipe.execute()
        except WatchError:
            return [], through  # something came meanwhile: look again
    return [], b""


def _id_key(entry_id: bytes) -> tuple[int, int]:
    ms, _, seq = entry_id.partition(b"-")
    return int(ms), int(seq or 0)


def _text(raw: object) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)
