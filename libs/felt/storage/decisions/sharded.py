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
go to the right stream. On one server a read is one ``XREADGROUP`` naming every
shard's stream, blocking as a single stream's did. On a Redis Cluster one
``XREADGROUP`` may only name keys of one slot, so a read looks at each shard in
turn without blocking and, with nothing anywhere, waits on one shard at a time
(in rotation, its own) for at most ``WAIT_SLICE_MS``: a request is picked up
within about that long whichever shard it is in. A shard whose Redis fails (its
master is down) is skipped with a backoff while the others are read on.

Every service must use the same number of shards: :func:`agree_on_shards`
records it in Redis at the first start and refuses another.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from felt.config.settings import ConfigError
from felt.storage.decisions.base import (
    AI_GROUP,
    DecisionQueue,
    Entry,
    Fields,
    GroupMissing,
    GroupStats,
    dead_letter_stream,
)
from felt.storage.decisions.redis_queue import RedisDecisionQueue
from felt.storage.redis_client import REDIS_ERRORS, is_cluster, raise_if_cancelling
from poker.v1 import ai_pb2

WAIT_SLICE_MS = 25
"""How long a read waits on one shard before looking at the next (several shards only)."""
# XREADGROUP's reply over several streams: [[stream, [(id, fields), ...]], ...] or None.
_ReadReply = list[tuple[bytes, list[tuple[bytes, dict[bytes, bytes]]]]] | None

SHARD_BACKOFF_S = 0.1
"""How long a shard whose Redis failed is skipped at first (doubling, up to 5 s)."""
_SEP = b"/"


class ShardsUnreachable(ConnectionError):
    """Every shard's Redis failed: the read has nothing to give (the worker backs off)."""


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


def shards_key(stream: str) -> str:
    """Where the deployment's shard count is kept (``<stream>:shards``), set by the first
    service to start and checked by every other one."""
    return f"{stream}:shards"


class ShardCountMismatch(ConfigError):
    """This process's ``FELT_DECISION_SHARDS`` is not the one the deployment uses: it would
    publish to shards nobody reads, or read only some (a refused start: exit 2)."""


async def agree_on_shards(redis: Redis, stream: str, shards: int) -> None:
    """Record ``shards`` for ``stream`` if none is yet (``SET NX``), else check it is the same.

    Raises :class:`ShardCountMismatch` on a difference: a table service publishing to 8
    shards while the workers read 4 would leave the requests of shards 4-7 unanswered.
    Changing the count is a migration (``felt decisions migrate --reshard``), not a restart.
    """
    key = shards_key(stream)
    await redis.set(key, shards, nx=True)
    raw = await redis.get(key)
    stored = int(raw) if raw is not None else shards
    if stored != shards:
        raise ShardCountMismatch(
            f"FELT_DECISION_SHARDS is {shards} but {stream} is sharded {stored} ways (the "
            f"Redis key {key}); every table service and AI worker must use the same count"
        )


def _split(entry_id: bytes) -> tuple[int, bytes]:
    shard, sep, raw = entry_id.partition(_SEP)
    if not sep or not shard.isdigit():
        raise ValueError(f"not a sharded entry id: {entry_id!r}")
    return int(shard), raw


class ShardedDecisionQueue:
    """:class:`DecisionQueue` over one queue per shard (``queues[i]`` reads shard ``i``'s stream).

    ``stream`` and ``dead_stream`` are the base names the shards' are made of.
    """

    def __init__(
        self,
        queues: Sequence[DecisionQueue],
        stream: str,
        dead_stream: str = "",
        *,
        together: Redis | None = None,
    ) -> None:
        if not queues:
            raise ValueError("a sharded queue needs at least one shard")
        self.shards = list(queues)
        self.stream = stream
        self.dead_stream = dead_stream or dead_letter_stream(stream)
        self.group = self.shards[0].group
        # One server (``together``: the client every shard's queue uses): one XREADGROUP names
        # every shard's stream and blocks, as one stream did. A cluster cannot (keys of
        # several slots), so sweeps and waits take turns, each with its own counter: with
        # one shared, an even number of shards made the waits skip every other shard.
        self._together = together
        self._turn = {"sweep": 0, "wait": 0}
        # A shard whose read failed (its master is down) is skipped until then, so the
        # others go on being read; the delay doubles while it keeps failing.
        self._down_until = [0.0] * len(self.shards)
        self._down_for = [0.0] * len(self.shards)

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
        if self._together is not None:
            return await self._read_together(self._together, consumer, count, block_ms)
        deadline = time.monotonic() + max(0, block_ms) / 1000
        while True:
            found = await self._sweep(consumer, count)
            # Each shard's read honours a cancellation it lost (redis-py on Python 3.11), if
            # the shard is a Redis queue; checked here too, whatever the shards are.
            raise_if_cancelling()
            left_ms = int((deadline - time.monotonic()) * 1000)
            if found or left_ms <= 0:
                return found
            wait = max(1, min(left_ms, WAIT_SLICE_MS))
            shard = self._next_up("wait")
            if shard is None:  # every shard is failing: wait out the slice, then sweep again
                await asyncio.sleep(wait / 1000)
                continue
            found = self._tag(shard, await self._shard_read(shard, consumer, count, wait))
            raise_if_cancelling()
            if found:
                return found

    async def _read_together(
        self, redis: Redis, consumer: str, count: int, block_ms: int
    ) -> list[Entry]:
        """``XREADGROUP`` naming every shard's stream, blocking up to ``block_ms`` (it returns
        at once when some stream has entries): idle, one command per ``block_ms``.

        Its ``COUNT`` bounds each stream, and whatever it returns is delivered (pending for
        ``consumer``), so none may be dropped: each stream is asked for its share of what is
        still wanted (rounded up), again while some stream gave its whole share; at most
        ``count + shards - 1`` entries in all.
        """
        found: list[Entry] = []
        block: int | None = block_ms or None
        while len(found) < count:
            each = -(-(count - len(found)) // len(self.shards))
            got, full = await self._read_all(redis, consumer, each, block)
            found += got
            if not full:  # no stream had more than it gave
                break
            block = None  # the rest only if already there
        return found

    async def _read_all(
        self, redis: Redis, consumer: str, each: int, block: int | None
    ) -> tuple[list[Entry], bool]:
        """One ``XREADGROUP`` over every shard; whether some shard gave ``each`` (may have more)."""
        keys = [shard_stream(self.stream, i) for i in range(len(self.shards))]
        streams: dict[Any, Any] = dict.fromkeys(keys, ">")
        index = {key.encode(): i for i, key in enumerate(keys)}
        try:
            reply: _ReadReply = await redis.xreadgroup(  # type: ignore[assignment]
                self.group, consumer, streams, count=each, block=block
            )
        except ResponseError as exc:
            if "NOGROUP" in str(exc):
                raise GroupMissing(f"{self.stream}:{{*}} / {self.group}") from None
            raise
        # A cancellation lost in the read (redis-py on Python 3.11): see raise_if_cancelling.
        raise_if_cancelling()
        found: list[Entry] = []
        full = False
        for key, entries in reply or ():
            shard = index[key if isinstance(key, bytes) else str(key).encode()]
            found += self._tag(shard, [Entry(eid, fields) for eid, fields in entries])
            full = full or len(entries) >= each
        return found, full

    def _next_up(self, counter: str) -> int | None:
        """The next shard in ``counter``'s rotation that is not backing off (None: none is)."""
        now = time.monotonic()
        start = self._turn[counter]
        for step in range(len(self.shards)):
            shard = (start + step) % len(self.shards)
            if self._down_until[shard] <= now:
                self._turn[counter] = (shard + 1) % len(self.shards)
                return shard
        return None

    async def _shard_read(
        self, shard: int, consumer: str, count: int, block_ms: int
    ) -> list[Entry]:
        """A shard's read; if its Redis fails, the shard backs off and nothing is read."""
        try:
            entries = await self.shards[shard].read(consumer, count, block_ms)
        except REDIS_ERRORS:
            self._failed(shard)
            return []
        self._down_for[shard] = 0.0
        return entries

    def _failed(self, shard: int) -> None:
        self._down_for[shard] = min(max(SHARD_BACKOFF_S, self._down_for[shard] * 2), 5.0)
        self._down_until[shard] = time.monotonic() + self._down_for[shard]

    def _raise_if_all_down(self) -> None:
        if all(until > time.monotonic() for until in self._down_until):
            raise ShardsUnreachable(f"no shard of {self.stream} could be read")

    async def _sweep(self, consumer: str, count: int) -> list[Entry]:
        """Up to ``count`` entries from the shards in turn, without waiting.

        A shard that fails is skipped (and backs off); what the others gave is returned,
        never dropped. Only when every shard is failing does the read raise.
        """
        found: list[Entry] = []
        start = self._turn["sweep"]
        self._turn["sweep"] = (start + 1) % len(self.shards)
        now = time.monotonic()
        for step in range(len(self.shards)):
            shard = (start + step) % len(self.shards)
            if self._down_until[shard] > now:
                continue
            found += self._tag(
                shard, await self._shard_read(shard, consumer, count - len(found), 0)
            )
            if len(found) >= count:
                break
        if not found:
            self._raise_if_all_down()
        return found

    @staticmethod
    def _tag(shard: int, entries: list[Entry]) -> list[Entry]:
        return [Entry(b"%d%s%s" % (shard, _SEP, e.entry_id), e.fields) for e in entries]

    async def claim_idle(
        self, consumer: str, min_idle_ms: int, count: int, cursor: bytes | str
    ) -> tuple[bytes | str, list[Entry]]:
        """One ``XAUTOCLAIM`` per call: on the shard the cursor names (``<shard>/<id>``;
        ``0-0``: the first shard from its start), from where it stopped. When that shard is
        done the cursor names the next one from its start; after the last, ``0-0`` again.
        A shard whose Redis fails is passed over (it is claimed from on the next round)."""
        raw = cursor.encode() if isinstance(cursor, str) else cursor
        shard, inner = _split(raw) if _SEP in raw else (0, b"0-0")
        if shard >= len(self.shards):
            shard, inner = 0, b"0-0"
        after: bytes | str = b"0-0"
        entries: list[Entry] = []
        if self._down_until[shard] <= time.monotonic():  # else passed over this round
            try:
                after, entries = await self.shards[shard].claim_idle(
                    consumer, min_idle_ms, count, inner
                )
            except REDIS_ERRORS:
                self._failed(shard)
        inner = after.encode() if isinstance(after, str) else after
        if inner == b"0-0":  # this shard is done: the next one, from its start
            shard += 1
            if shard == len(self.shards):
                return b"0-0", self._tag(shard - 1, entries)
            return b"%d%s0-0" % (shard, _SEP), self._tag(shard - 1, entries)
        return b"%d%s%s" % (shard, _SEP, inner), self._tag(shard, entries)

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
        got = await asyncio.gather(*(q.stats() for q in self.shards), return_exceptions=True)
        failed = [g for g in got if isinstance(g, BaseException)]
        for error in failed:
            if not isinstance(error, REDIS_ERRORS):
                raise error
        if len(failed) == len(got):
            raise failed[0]
        each = [s for s in got if isinstance(s, GroupStats)]
        if not each:
            return None
        lags = [s.lag for s in each]
        # A shard that could not be asked has an unknown lag, like one Redis reports as nil.
        unknown = failed or any(x is None for x in lags)
        lag = None if unknown else sum(x for x in lags if x is not None)
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
        """Each shard trims its own stream; a shard whose Redis fails is trimmed next time."""
        trimmed = 0
        for shard, queue in enumerate(self.shards):
            try:
                trimmed += await queue.trim_acknowledged()
            except REDIS_ERRORS:
                self._failed(shard)
        return trimmed


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
    together = None if is_cluster(redis) else redis
    return ShardedDecisionQueue(queues, stream, dead_stream, together=together)
