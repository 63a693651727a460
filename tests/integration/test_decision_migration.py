"""``felt decisions migrate``: an unsharded deployment's decision stream moves to the shards.

A release before sharding left requests in ``<stream>`` (some answered, one delivered and
not acknowledged, two never delivered) and dead letters in ``<stream>:dead``. After the
migration the sharded queue's workers get exactly the unfinished requests, each in its
table's shard, the dead letters are in shard 0's dead-letter stream, the old streams are
gone, and a second run changes nothing. Real Redis, a stream named per test.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import cast

import pytest
import redis.asyncio as aioredis

from felt.storage.decisions import (
    RedisDecisionQueue,
    dead_letter_stream,
    payload_of,
    redis_sharded_queue,
    shard_dead_stream,
    shard_of,
    shard_stream,
)
from felt.storage.decisions.migrate import migrate_unsharded
from felt.storage.decisions.sharded import shards_key
from poker.v1 import ai_pb2
from tests.felt_command import run_felt

SHARDS = 3
GROUP = "workers"


@pytest.fixture
async def stream(redis_url: str) -> AsyncIterator[str]:
    name = f"test-{uuid.uuid4().hex}:decisions"
    yield name
    client = aioredis.Redis.from_url(redis_url)
    try:
        await client.delete(name, dead_letter_stream(name), shards_key(name))
        for i in range(SHARDS):
            await client.delete(shard_stream(name, i), shard_dead_stream(name, i))
    finally:
        await client.aclose()


def _request(n: int) -> ai_pb2.DecisionRequest:
    return ai_pb2.DecisionRequest(request_id=f"ai:{n}", table_id=f"table-{n}", seat=1)


def _request_ids(entries: list[tuple[bytes, dict[bytes, bytes]]]) -> list[str]:
    out = []
    for _, fields in entries:
        raw = payload_of(fields)
        assert raw is not None
        out.append(ai_pb2.DecisionRequest.FromString(raw).request_id)
    return out


async def test_unfinished_requests_and_dead_letters_move_to_the_shards(
    redis: aioredis.Redis, stream: str
) -> None:
    old = RedisDecisionQueue(redis, stream, GROUP)  # what the last release used
    await old.ensure_group()
    for n in range(6):
        await old.publish(_request(n))
    answered = await old.read("w", 3, 0)  # 0, 1, 2 delivered
    await old.ack(answered[0].entry_id)
    await old.ack(answered[2].entry_id)  # 1 is still pending: its worker died
    poison = answered[0].fields
    assert poison is not None
    await old.dead_letter("w", answered[0].entry_id, poison, "poison: test", "2024-01-01")

    done = await migrate_unsharded(redis, stream, SHARDS, GROUP)
    assert (done.requests, done.dead_letters) == (4, 1)  # 1 (pending), 3, 4, 5 (unread)
    assert not await redis.exists(stream, dead_letter_stream(stream))

    for i in range(SHARDS):  # each request is in its table's shard, and only there
        entries = cast(
            "list[tuple[bytes, dict[bytes, bytes]]]",
            await redis.xrange(shard_stream(stream, i)),
        )
        expected = [f"ai:{n}" for n in (1, 3, 4, 5) if shard_of(f"table-{n}", SHARDS) == i]
        assert _request_ids(entries) == expected
    queue = redis_sharded_queue(redis, stream, SHARDS, GROUP)
    got: list[str] = []
    for _ in range(SHARDS + 1):
        got += [
            ai_pb2.DecisionRequest.FromString(payload_of(e.fields) or b"").request_id
            for e in await queue.read("new", 10, 0)
            if e.fields is not None
        ]
    assert sorted(got) == ["ai:1", "ai:3", "ai:4", "ai:5"]
    dead = cast(
        "list[tuple[bytes, dict[bytes, bytes]]]",
        await redis.xrange(shard_dead_stream(stream, 0)),
    )
    assert [fields[b"reason"] for _, fields in dead] == [b"poison: test"]

    again = await migrate_unsharded(redis, stream, SHARDS, GROUP)
    assert (again.requests, again.dead_letters) == (0, 0)


async def test_a_stream_no_group_ever_read_moves_whole(redis: aioredis.Redis, stream: str) -> None:
    old = RedisDecisionQueue(redis, stream, GROUP)
    for n in range(3):
        await old.publish(_request(n))
    done = await migrate_unsharded(redis, stream, SHARDS, GROUP)
    assert (done.requests, done.dead_letters) == (3, 0)
    moved = 0
    for i in range(SHARDS):
        moved += int(await redis.xlen(shard_stream(stream, i)))
    assert moved == 3


def test_the_felt_command_lists_the_shards_and_migrates(redis_url: str, stream: str) -> None:
    env = {"REDIS_URL": redis_url, "FELT_AI_STREAM": stream, "FELT_DECISION_SHARDS": "2"}
    status, out, err = run_felt("decisions", "streams", **env)
    assert status == 0, err
    assert out.split() == [shard_stream(stream, 0), shard_stream(stream, 1)]
    status, out, err = run_felt("decisions", "migrate", **env)
    assert status == 0, err
    assert "moved 0 unfinished requests and 0 dead letters" in out


async def test_requests_published_while_it_runs_are_not_deleted(
    redis: aioredis.Redis, stream: str
) -> None:
    """A table service still publishing to the old stream during the migration: every request
    ends up in a shard or (published after the delete) in the old stream, none deleted."""
    old = RedisDecisionQueue(redis, stream, GROUP)
    for n in range(200):
        await old.publish(_request(n))
    published = 200

    async def publish_meanwhile() -> None:  # 100 more, one per turn of the loop
        nonlocal published
        for _ in range(100):
            await old.publish(_request(published))
            published += 1
            await asyncio.sleep(0)

    publisher = asyncio.ensure_future(publish_meanwhile())
    try:
        done = await migrate_unsharded(redis, stream, SHARDS, GROUP)
    finally:
        await publisher
    in_shards = sum([int(await redis.xlen(shard_stream(stream, i))) for i in range(SHARDS)])
    left = int(await redis.xlen(stream))
    assert done.requests == in_shards
    assert in_shards + left == published


@pytest.mark.parametrize("command", ["table-service", "ai-worker"])
def test_a_service_with_another_shard_count_refuses_to_start(
    redis_url: str, stream: str, command: str
) -> None:
    """Shards 4-7 of a table service with 8 would never be read by workers with 4: the
    second count to start is refused (exit 2, naming both), before serving anything."""
    env = {
        "REDIS_URL": redis_url,
        "FELT_AI_STREAM": stream,
        "FELT_DEV_MODE": "1",
        "FELT_TABLE_ADDR": "127.0.0.1:0",
        "FELT_AI_METRICS_PORT": "0",
    }
    status, _, err = run_felt("decisions", "migrate", FELT_DECISION_SHARDS="4", **env)
    assert status == 0, err  # records 4
    status, _, err = run_felt(command, FELT_DECISION_SHARDS="8", **env)
    assert status == 2
    assert f"FELT_DECISION_SHARDS is 8 but {stream} is sharded 4 ways" in err
