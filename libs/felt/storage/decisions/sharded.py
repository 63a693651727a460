"""The decision queue sharded by table: N streams instead of one hot key.

With one stream every table's requests land on one key, hence on one Redis
Cluster node. Here a request goes to shard ``crc32(table_id) % N`` (stable:
the same table always uses the same shard, so its requests stay in order), and
each shard is a stream of its own with its own consumer group and dead-letter
stream. Key names carry the shard in a hash tag, so that a shard's stream and
its dead-letter stream share a slot (dead-lettering is one ``MULTI``)::

    <FELT_AI_STREAM>:{<i>}              the requests of shard i
    <dead-letter stream>:{<i>}          its dead letters (default <FELT_AI_STREAM>:dead:{<i>})

Workers read every shard through one :class:`ShardedDecisionQueue`, which
implements the same :class:`~felt.storage.decisions.base.DecisionQueue` port
over one per-shard queue each (Redis or in-memory). An entry's id names its
shard (``b"<i>/<stream id>"``), so acknowledging, touching and dead-lettering
go to the right stream. On a Redis Cluster one ``XREADGROUP`` may only name
keys of one slot, so a read looks at each shard in turn without blocking and,
with nothing anywhere, waits on one shard at a time (in rotation) for at most
``WAIT_SLICE_MS``: a request is picked up within about that long whichever
shard it is in. With a single shard the read simply blocks on it.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import Mapping, Sequence

from redis.asyncio import Redis

from felt.storage.decisions.base import (
    AI_GROUP,
    DecisionQueue,
    Entry,
    Fields,
    GroupStats,
    dead_letter_stream,
)
from felt.storage.decisions.redis_queue import RedisDecisionQueue
from poker.v1 import ai_pb2

WAIT_SLICE_MS = 25
"""How long a read waits on one shard before looking at the next (several shards only)."""
_SEP = b"/"


def shard_of(table_id: str, shards: int) -> int:
    """The shard of a table's requests: stable across processes and releases (CRC-32)."""
    return zlib.crc32(table_id.encode()) % shards


def shard_stream(stream: str, shard: int) -> str:
    """The stream of shard ``shard`` (``<stream>:{<shard>}``: the shard is the hash tag)."""
    return f"{stream}:{{{shard}}}"


def shard_streams(stream: str, shards: int) -> list[str]:
    """Every shard's stream, in shard order (what KEDA's triggers and operators look at)."""
    return [shard_stream(stream, i) for i in range(shards)]


def shard_dead_stream(stream: str, shard: int, dead_stream: str = "") -> str:
    """The dead-letter stream of a shard: in the shard's slot, next to its stream."""
    return shard_stream(dead_stream or dead_letter_stream(stream), shard)


def _split(entry_id: bytes) -> tuple[int, bytes]:
    shard, sep, raw = entry_id.partition(_SEP)
    if not sep or not shard.isdigit():
        raise ValueError(f"not a sharded entry id: {entry_id!r}")
    return int(shard), raw


class ShardedDecisionQueue:
    """:class:`DecisionQueue` over one queue per shard (``queues[i]`` reads shard ``i``'s stream).

    ``stream`` and ``dead_stream`` are the base names the shards' are made of.
    """

    def __init__(self, queues: Sequence[DecisionQueue], stream: str, dead_stream: str = "") -> None:
        if not queues:
            raise ValueError("a sharded queue needs at least one shard")
        self.shards = list(queues)
        self.stream = stream
        self.dead_stream = dead_stream or dead_letter_stream(stream)
        self.group = self.shards[0].group
        self._next = 0  # the shard a read looks at first (rotates, so no shard starves)

    # ------------------------------------------------------------------ publishing

    async def publish(
        self, request: ai_pb2.DecisionRequest, trace: Mapping[str, str] | None = None
    ) -> None:
        shard = self.shards[shard_of(request.table_id, len(self.shards))]
        await shard.publish(request, trace)

    # ------------------------------------------------------------------ consuming

    async def ensure_group(self) -> None:
        for queue in self.shards:
            await queue.ensure_group()

    async def read(self, consumer: str, count: int, block_ms: int) -> list[Entry]:
        if len(self.shards) == 1:
            return self._tag(0, await self.shards[0].read(consumer, count, block_ms))
        deadline = time.monotonic() + max(0, block_ms) / 1000
        while True:
            found = await self._sweep(consumer, count)
            left_ms = int((deadline - time.monotonic()) * 1000)
            if found or left_ms <= 0:
                return found
            shard = self._rotate()
            wait = max(1, min(left_ms, WAIT_SLICE_MS))
            found = self._tag(shard, await self.shards[shard].read(consumer, count, wait))
            if found:
                return found

    def _rotate(self) -> int:
        shard = self._next
        self._next = (shard + 1) % len(self.shards)
        return shard

    async def _sweep(self, consumer: str, count: int) -> list[Entry]:
        """Up to ``count`` entries from the shards in turn, without waiting."""
        found: list[Entry] = []
        start = self._rotate()
        for step in range(len(self.shards)):
            shard = (start + step) % len(self.shards)
            found += self._tag(
                shard, await self.shards[shard].read(consumer, count - len(found), 0)
            )
            if len(found) >= count:
                break
        return found

    @staticmethod
    def _tag(shard: int, entries: list[Entry]) -> list[Entry]:
        return [Entry(b"%d%s%s" % (shard, _SEP, e.entry_id), e.fields) for e in entries]

    async def claim_idle(
        self, consumer: str, min_idle_ms: int, count: int, cursor: bytes | str
    ) -> tuple[bytes | str, list[Entry]]:
        """``XAUTOCLAIM`` on each shard in turn from the cursor's (``<shard>/<id>``; ``0-0``: the
        first shard from its start) until ``count`` are taken or the last shard is done (then
        the cursor is ``0-0`` again)."""
        raw = cursor.encode() if isinstance(cursor, str) else cursor
        shard, inner = _split(raw) if _SEP in raw else (0, b"0-0")
        if shard >= len(self.shards):
            shard, inner = 0, b"0-0"
        taken: list[Entry] = []
        while True:
            after, entries = await self.shards[shard].claim_idle(
                consumer, min_idle_ms, count - len(taken), inner
            )
            taken += self._tag(shard, entries)
            inner = after.encode() if isinstance(after, str) else after
            if inner == b"0-0":  # this shard is done: on to the next, from its start
                shard += 1
                if shard == len(self.shards):
                    return b"0-0", taken
            if len(taken) >= count:
                return b"%d%s%s" % (shard, _SEP, inner), taken

    def _by_shard(self, entry_ids: list[bytes]) -> dict[int, list[bytes]]:
        out: dict[int, list[bytes]] = {}
        for entry_id in entry_ids:
            shard, raw = _split(entry_id)
            out.setdefault(shard, []).append(raw)
        return out

    async def touch(self, consumer: str, entry_ids: list[bytes], min_idle_ms: int) -> None:
        for shard, raws in self._by_shard(entry_ids).items():
            await self.shards[shard].touch(consumer, raws, min_idle_ms)

    async def delivery_counts(self, consumer: str, entry_ids: list[bytes]) -> dict[bytes, int]:
        counts: dict[bytes, int] = {}
        for shard, raws in self._by_shard(entry_ids).items():
            got = await self.shards[shard].delivery_counts(consumer, raws)
            counts.update({b"%d%s%s" % (shard, _SEP, raw): n for raw, n in got.items()})
        return counts

    async def ack(self, entry_id: bytes) -> None:
        shard, raw = _split(entry_id)
        await self.shards[shard].ack(raw)

    async def dead_letter(
        self, consumer: str, entry_id: bytes, fields: Fields, reason: str, failed_at: str
    ) -> None:
        shard, raw = _split(entry_id)
        await self.shards[shard].dead_letter(consumer, raw, fields, reason, failed_at)

    async def leave(self, consumer: str) -> bool:
        left = [await queue.leave(consumer) for queue in self.shards]
        return all(left)

    async def stats(self) -> GroupStats | None:
        """The shards' groups added up (lag unknown if any shard's is; None: no group at all)."""
        each = [s for s in await asyncio.gather(*(q.stats() for q in self.shards)) if s]
        if not each:
            return None
        lags = [s.lag for s in each]
        lag = None if any(x is None for x in lags) else sum(x for x in lags if x is not None)
        return GroupStats(lag, sum(s.pending for s in each), max(s.consumers for s in each))

    async def prune(self, keep: str, idle_ms: int) -> list[str]:
        """Each shard prunes its own consumers; returns every name pruned from some shard.

        A consumer is pruned from a shard where it holds nothing and was idle ``idle_ms``
        there, even if it holds requests of another shard (those stay with it). A live
        worker reads every shard, so it is never idle long on one (workers prune after an
        hour), and a read recreates it anyway.
        """
        pruned: set[str] = set()
        for queue in self.shards:
            pruned.update(await queue.prune(keep, idle_ms))
        return sorted(pruned)

    async def trim_acknowledged(self) -> int:
        return sum([await queue.trim_acknowledged() for queue in self.shards])


def redis_sharded_queue(
    redis: Redis, stream: str, shards: int, group: str = AI_GROUP, dead_stream: str = ""
) -> ShardedDecisionQueue:
    """The production queue: ``shards`` Redis streams of ``stream``, each with its group."""
    queues: list[DecisionQueue] = [
        RedisDecisionQueue(
            redis, shard_stream(stream, i), group, shard_dead_stream(stream, i, dead_stream)
        )
        for i in range(shards)
    ]
    return ShardedDecisionQueue(queues, stream, dead_stream)
