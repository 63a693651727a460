"""The pipelined Redis connection the event store appends through
(``felt.storage.eventstore.pipeline``).

Against the test Redis (``redis_url``); keys are prefixed per test and deleted afterwards.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
import redis.asyncio as aioredis
from google.protobuf.timestamp_pb2 import Timestamp
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from felt.core.rules.events import PlayerChecked, Street, StreetStarted
from felt.core.table.events import PlayerSeated
from felt.messages.events import EventMeta
from felt.storage.eventstore.codec import encode_event, encode_stored
from felt.storage.eventstore.pipeline import Endpoint, RedisPipeline, endpoint_of, pack

WAIT = 5.0


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(redis_url)
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
async def pipe(client: aioredis.Redis) -> AsyncIterator[RedisPipeline]:
    pipe = RedisPipeline.for_client(client)
    assert pipe is not None
    try:
        yield pipe
    finally:
        await pipe.aclose()


@pytest.fixture
async def key(client: aioredis.Redis, redis_prefix: str) -> AsyncIterator[str]:
    name = f"{redis_prefix}pipe"
    yield name
    await client.delete(name)


def test_pack_is_resp() -> None:
    assert pack(("SET", b"k\r\n", 12)) == b"*3\r\n$3\r\nSET\r\n$3\r\nk\r\n\r\n$2\r\n12\r\n"


def test_endpoint_of_plain_clients_only() -> None:
    tcp = endpoint_of(aioredis.Redis.from_url("redis://user:pw@example.org:6380/3"))
    assert tcp == Endpoint(
        host="example.org", port=6380, username="user", password="pw", db=3, timeout=5.0
    )
    unix = endpoint_of(aioredis.Redis.from_url("unix:///tmp/redis.sock?db=2"))
    assert unix is not None and (unix.path, unix.db) == ("/tmp/redis.sock", 2)
    assert endpoint_of(aioredis.Redis.from_url("rediss://example.org:6380/0")) is None


async def test_concurrent_calls_are_answered_in_order(pipe: RedisPipeline, key: str) -> None:
    replies = await asyncio.gather(*(pipe.call("INCR", key) for _ in range(200)))
    assert replies == list(range(1, 201))


async def test_calls_of_one_loop_turn_share_one_write(pipe: RedisPipeline, key: str) -> None:
    await pipe.call("PING")  # connected
    protocol = pipe._protocol
    assert protocol is not None and protocol.transport is not None
    writes: list[bytes] = []
    write = protocol.transport.write

    def spy(data: bytes | bytearray | memoryview) -> None:
        writes.append(bytes(data))
        write(data)

    protocol.transport.write = spy  # type: ignore[method-assign]
    assert await asyncio.gather(*(pipe.call("INCR", key) for _ in range(10))) == list(range(1, 11))
    assert len(writes) == 1


async def test_an_error_reply_raises_and_the_pipe_goes_on(pipe: RedisPipeline, key: str) -> None:
    await pipe.call("SET", key, "text")
    with pytest.raises(ResponseError):
        await pipe.call("INCR", key)
    assert await pipe.call("GET", key) == b"text"


async def test_a_transaction_runs_its_commands_together(pipe: RedisPipeline, key: str) -> None:
    """Concurrent calls never land inside another caller's MULTI/EXEC block."""

    async def pair() -> list[int]:
        return await pipe.transaction(("INCR", key), ("GET", key))

    results = await asyncio.gather(
        *(pair() if k % 3 == 0 else pipe.call("INCR", key) for k in range(300))
    )
    pairs = [r for r in results if isinstance(r, list)]
    assert len(pairs) == 100
    for counted, read in pairs:
        assert read == str(counted).encode()  # nothing ran between the two
    assert await pipe.call("GET", key) == b"300"


async def test_a_refused_transaction_raises_and_the_pipe_goes_on(
    pipe: RedisPipeline, key: str
) -> None:
    await pipe.call("SET", key, "text")
    with pytest.raises(ResponseError, match="wrong number of arguments"):  # refused when queued
        await pipe.transaction(("SET", key, "other"), ("GET",))
    assert await pipe.call("GET", key) == b"text"  # nothing of the block ran
    with pytest.raises(ResponseError, match="not an integer"):  # refused when executed
        await pipe.transaction(("INCR", key), ("GET", key))
    assert await pipe.transaction(("APPEND", key, "!"), ("GET", key)) == [5, b"text!"]


async def test_scripts_are_sent_again_after_a_script_flush(
    pipe: RedisPipeline, client: aioredis.Redis, key: str
) -> None:
    sha = pipe.script("return redis.call('INCRBY', KEYS[1], ARGV[1])")
    assert await pipe.run_script(sha, [key], [2]) == 2
    await client.script_flush()
    assert await pipe.run_script(sha, [key], [3]) == 5


async def test_the_selected_database_is_the_clients(
    client: aioredis.Redis, pipe: RedisPipeline, key: str
) -> None:
    await pipe.call("SET", key, "here")
    assert await client.get(key) == b"here"


async def test_a_lost_connection_fails_calls_in_flight_then_reconnects(
    pipe: RedisPipeline, client: aioredis.Redis, key: str
) -> None:
    own_id = await pipe.call("CLIENT", "ID")
    blocked = asyncio.ensure_future(pipe.call("BLPOP", key, 10))
    await asyncio.sleep(0.1)
    await client.client_kill_filter(_id=own_id)
    with pytest.raises(RedisConnectionError):
        await asyncio.wait_for(blocked, WAIT)
    assert await pipe.call("CLIENT", "ID") != own_id
    assert await pipe.call("PING") == b"PONG"


async def test_no_reply_within_the_timeout_drops_the_connection(
    client: aioredis.Redis, key: str
) -> None:
    endpoint = endpoint_of(client)
    assert endpoint is not None
    pipe = RedisPipeline(dataclasses.replace(endpoint, timeout=0.2))
    try:
        with pytest.raises(RedisTimeoutError):
            await asyncio.wait_for(pipe.call("BLPOP", key, 3), WAIT)
        assert await pipe.call("PING") == b"PONG"
    finally:
        await pipe.aclose()


async def test_a_cancelled_call_leaves_the_replies_in_step(
    pipe: RedisPipeline, client: aioredis.Redis, key: str
) -> None:
    slow = asyncio.ensure_future(pipe.call("BLPOP", key, 1))
    await asyncio.sleep(0.05)
    slow.cancel()
    with pytest.raises(asyncio.CancelledError):
        await slow
    await client.rpush(key, "x")  # the cancelled BLPOP still takes it; its reply is dropped
    assert await asyncio.wait_for(pipe.call("ECHO", "next"), WAIT) == b"next"
    assert await pipe.call("LLEN", key) == 0


async def test_a_refused_connection_is_a_connection_error() -> None:
    pipe = RedisPipeline(Endpoint(host="127.0.0.1", port=1, connect_timeout=1.0))
    with pytest.raises(RedisConnectionError):
        await pipe.call("PING")


async def test_a_closed_pipe_fails_calls_in_flight(pipe: RedisPipeline, key: str) -> None:
    blocked = asyncio.ensure_future(pipe.call("BLPOP", key, 10))
    await asyncio.sleep(0.05)
    await pipe.aclose()
    with pytest.raises(RedisConnectionError):
        await asyncio.wait_for(blocked, WAIT)


async def test_a_closed_pipe_does_not_reconnect(pipe: RedisPipeline) -> None:
    assert await pipe.call("PING") == b"PONG"
    await pipe.aclose()
    with pytest.raises(RedisConnectionError, match="closed"):
        await pipe.call("PING")


async def test_a_caller_cancelled_while_connecting_leaves_the_others_connected(
    client: aioredis.Redis,
) -> None:
    endpoint = endpoint_of(client)
    assert endpoint is not None
    pipe = RedisPipeline(endpoint)
    try:
        first = asyncio.ensure_future(pipe.call("ECHO", "first"))
        second = asyncio.ensure_future(pipe.call("ECHO", "second"))
        await asyncio.sleep(0)  # both wait for the one connect
        first.cancel()
        assert await asyncio.wait_for(second, WAIT) == b"second"
        with pytest.raises(asyncio.CancelledError):
            await first
        assert await pipe.call("PING") == b"PONG"
    finally:
        await pipe.aclose()


async def test_a_wrong_password_is_a_connection_error_with_the_servers_reason(
    client: aioredis.Redis,
) -> None:
    endpoint = endpoint_of(client)
    assert endpoint is not None
    pipe = RedisPipeline(dataclasses.replace(endpoint, password="not-the-password"))
    try:
        with pytest.raises(RedisConnectionError, match="AUTH"):
            await pipe.call("PING")
    finally:
        await pipe.aclose()


def test_encode_stored_is_encode_event() -> None:
    """The append's encoder writes the same bytes as the general one."""
    at = datetime(2026, 3, 4, 5, 6, 7, 890123, tzinfo=UTC)
    stamp = Timestamp()
    stamp.FromDatetime(at)
    for event in (
        PlayerChecked(seat=0),
        StreetStarted(street=Street.FLOP, cards=(1, 2, 3), deck_positions=(4, 5, 6)),
        PlayerSeated(0, "p", "P", 100, "h" * 64, "easy"),
    ):
        for recorded, ts in ((None, None), (at, stamp)):
            meta = EventMeta("t", 7, recorded, hand_id="h", request_key="r")
            assert encode_stored(event, "t", 7, "r", "h", ts) == encode_event(event, meta)
