"""The decision queue on a Redis stream with a consumer group (production)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from felt.storage.decisions.base import (
    AI_GROUP,
    AI_STREAM,
    STREAM_MAXLEN,
    Entry,
    Fields,
    GroupMissing,
    GroupStats,
    dead_letter_stream,
    envelope,
)
from felt.storage.redis_client import raise_if_cancelling
from poker.v1 import ai_pb2

# XREADGROUP's reply (without decode_responses): [[stream, [(id, fields), ...]], ...] or None.
_ReadReply = list[tuple[bytes, list[tuple[bytes, dict[bytes, bytes]]]]] | None


class RedisDecisionQueue:
    """``XADD`` to publish; ``XREADGROUP``, ``XAUTOCLAIM``, ``XCLAIM JUSTID``, ``XACK`` to consume.

    The client must not decode responses (ids and fields are bytes).
    """

    def __init__(
        self,
        redis: Redis,
        stream: str = AI_STREAM,
        group: str = AI_GROUP,
        dead_stream: str = "",
    ) -> None:
        self.redis = redis
        self.stream = stream
        self.group = group
        self.dead_stream = dead_stream or dead_letter_stream(stream)

    async def publish(
        self, request: ai_pb2.DecisionRequest, trace: Mapping[str, str] | None = None
    ) -> None:
        fields: dict[Any, Any] = envelope(request, trace)
        await self.redis.xadd(self.stream, fields, maxlen=STREAM_MAXLEN, approximate=True)

    async def ensure_group(self) -> None:
        """``XGROUP CREATE ... 0 MKSTREAM``; an existing group is fine (BUSYGROUP).

        From ``0``, not ``$``: a request published before the group existed (the table
        service started first) is read, not lost. One read again after a deleted group is
        harmless: a table answers a request (its version's id) once."""
        try:
            await self.redis.xgroup_create(self.stream, self.group, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def read(self, consumer: str, count: int, block_ms: int) -> list[Entry]:
        try:
            reply: _ReadReply = await self.redis.xreadgroup(  # type: ignore[assignment]
                self.group, consumer, {self.stream: ">"}, count=count, block=block_ms or None
            )
        except ResponseError as exc:
            if "NOGROUP" in str(exc):
                raise GroupMissing(f"{self.stream} / {self.group}") from None
            raise
        # A cancellation lost in the read (redis-py on Python 3.11) ends the caller's read
        # loop here, rather than letting it block again (the entries read stay pending for
        # this consumer: claimed again like those of a worker that crashed).
        raise_if_cancelling()
        return [Entry(eid, fields) for _stream, entries in reply or () for eid, fields in entries]

    async def claim_idle(
        self, consumer: str, min_idle_ms: int, count: int, cursor: bytes | str
    ) -> tuple[bytes | str, list[Entry]]:
        reply = await self.redis.xautoclaim(
            self.stream, self.group, consumer, min_idle_ms, cursor, count=count
        )
        return reply[0], [Entry(eid, fields) for eid, fields in reply[1]]

    async def touch(self, consumer: str, entry_ids: list[bytes], min_idle_ms: int) -> None:
        ids: list[Any] = list(entry_ids)
        await self.redis.xclaim(self.stream, self.group, consumer, min_idle_ms, ids, justid=True)

    async def delivery_counts(self, consumer: str, entry_ids: list[bytes]) -> dict[bytes, int]:
        async with self.redis.pipeline(transaction=False) as pipe:
            for eid in entry_ids:
                pipe.xpending_range(self.stream, self.group, eid, eid, 1, consumername=consumer)
            replies = await pipe.execute()
        return {
            row["message_id"]: int(row["times_delivered"]) for reply in replies for row in reply
        }

    async def ack(self, entry_id: bytes) -> None:
        await self.redis.xack(self.stream, self.group, entry_id)

    async def dead_letter(
        self, consumer: str, entry_id: bytes, fields: Fields, reason: str, failed_at: str
    ) -> None:
        record: dict[bytes | str, bytes | str | int] = {
            "reason": reason,
            "entry_id": entry_id,
            "consumer": consumer,
            "failed_at": failed_at,
        }
        for key, value in fields.items():
            record.setdefault(key, value)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.xadd(self.dead_stream, record, maxlen=STREAM_MAXLEN, approximate=True)  # type: ignore[arg-type]
            pipe.xack(self.stream, self.group, entry_id)
            await pipe.execute()

    async def leave(self, consumer: str) -> bool:
        """``XGROUP DELCONSUMER`` only if it holds nothing (it would drop what it holds)."""
        held = await self.redis.xpending_range(
            self.stream, self.group, "-", "+", 1, consumername=consumer
        )
        if held:
            return False
        await self.redis.xgroup_delconsumer(self.stream, self.group, consumer)
        return True

    async def stats(self) -> GroupStats | None:
        """From ``XINFO GROUPS`` (lag is unknown after deletions: Redis 7.0 reports nil)."""
        for group in await self.redis.xinfo_groups(self.stream):
            if _text(group.get("name")) == self.group:
                lag = group.get("lag")
                return GroupStats(
                    None if lag is None else int(lag),
                    int(group.get("pending") or 0),
                    int(group.get("consumers") or 0),
                )
        return None

    async def trim_acknowledged(self) -> int:
        """``XTRIM MINID`` at the group's oldest pending id, or just past its last delivered one.

        Not one atomic step, and it need not be: between reading the bound and
        trimming, the group can only deliver more (which moves the bound up) or
        acknowledge (likewise); an entry below the bound was delivered and
        acknowledged already, and nothing brings it back to pending.
        """
        try:
            groups = await self.redis.xinfo_groups(self.stream)
        except ResponseError as exc:
            if "no such key" in str(exc):
                return 0  # no stream yet
            raise
        group = next((g for g in groups if _text(g.get("name")) == self.group), None)
        if group is None:
            return 0
        summary = await self.redis.xpending(self.stream, self.group)
        if int(summary.get("pending") or 0):
            bound = _text(summary["min"])
        else:
            ms, _, seq = _text(group["last-delivered-id"]).partition("-")
            bound = f"{ms}-{int(seq or 0) + 1}"
        if bound in ("0-1", "0-0"):
            return 0  # nothing delivered yet
        return int(await self.redis.xtrim(self.stream, minid=bound, approximate=False))

    async def prune(self, keep: str, idle_ms: int) -> list[str]:
        pruned = []
        for consumer in await self.redis.xinfo_consumers(self.stream, self.group):
            name = _text(consumer["name"])
            if (
                name != keep
                and int(consumer.get("pending") or 0) == 0
                and int(consumer.get("idle") or 0) > idle_ms
            ):
                await self.redis.xgroup_delconsumer(self.stream, self.group, name)
                pruned.append(name)
        return pruned


def _text(raw: object) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)
