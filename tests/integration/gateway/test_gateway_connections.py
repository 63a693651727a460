"""Every connection to the gateway is bounded (docs/gateway.md, "Bounds";
``services.gateway.connections``), over raw sockets on loopback.

Slow bodies (a head, then a trickle) are cut within their bound while a
``WatchTable`` stream, whose request is small and whole, is not; connections
past the cap of one address are refused while another address (127.0.0.2)
still gets through; the connections and the file descriptors the slow clients
held are given back.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import AsyncIterator

import pytest

from poker.v1 import table_service_connect as connect
from poker.v1 import table_service_pb2 as pb
from services.gateway.config import ConnectionBounds
from services.gateway.connections import MAX_HEAD_BYTES
from services.gateway.server import RunningGateway

from .conftest import Stack, create_table, seat

WAIT = 20.0
SLOW_CLIENTS = 40  # enough to see them held and given back; small for a shared machine


def held(gateway: RunningGateway) -> int:
    """The connections the gateway's server holds now."""
    return len(gateway.server.server_state.connections)


def descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


async def open_from(source: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to the gateway from the loopback address ``source``."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    return await asyncio.open_connection(sock=sock)


async def answer_or_close(reader: asyncio.StreamReader) -> bytes:
    """What the gateway sends until it closes the connection (b"" for a reset)."""
    try:
        return await asyncio.wait_for(reader.read(), WAIT)
    except ConnectionError:
        return b""


def head(length: int, path: bytes = b"/poker.v1.TableService/GetTable") -> bytes:
    return (
        b"POST %s HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\n\r\n" % (path, length)
    )


async def slow_client(port: int, chunk: bytes, every_s: float) -> tuple[bytes, float]:
    """A request whose body is ``chunk`` every ``every_s``, never whole: what the gateway
    answered and how long after the head it cut the connection."""
    reader, writer = await open_from("127.0.0.1", port)
    loop = asyncio.get_running_loop()
    try:
        writer.write(head(60_000) + b'{"tab')  # 5 of the body's bytes
        await writer.drain()
        started = loop.time()
        answered = asyncio.ensure_future(answer_or_close(reader))
        while not answered.done() and loop.time() - started < WAIT:
            await asyncio.wait({answered}, timeout=every_s)
            if not answered.done():
                try:
                    writer.write(chunk)
                    await writer.drain()
                except ConnectionError:
                    break
        return await answered, loop.time() - started
    finally:
        writer.close()


@pytest.fixture
async def watched(stack: Stack) -> AsyncIterator[str]:
    server = await stack.add_table_service("a")
    await create_table(stack.stub(server), "gw-conn")
    yield "gw-conn"


async def test_a_trickling_body_is_cut_and_what_it_held_is_given_back(
    stack: Stack, watched: str
) -> None:
    """The issue's attack, scaled down: clients that sent a head and 5 bytes of the body,
    then a byte now and then, are answered 408 and closed once the body's grace is over
    and its rate is short; the gateway's connections and this process's descriptors come
    back to where they were, and the gateway goes on serving."""
    bounds = ConnectionBounds(body_timeout_s=30.0, body_min_rate=100, body_grace_s=1.0)
    gateway = await stack.start_gateway(connections=bounds)
    assert stack.http is not None
    assert (await stack.http.get("/livez")).status_code == 200
    idle_held, idle_fds = held(gateway), descriptors()

    clients = [
        asyncio.ensure_future(slow_client(gateway.port, b"a", 0.2)) for _ in range(SLOW_CLIENTS)
    ]
    # All held at once (inside their grace), before the first is cut.
    while held(gateway) < idle_held + SLOW_CLIENTS and not any(c.done() for c in clients):
        await asyncio.sleep(0.02)
    assert held(gateway) >= idle_held + SLOW_CLIENTS
    results = await asyncio.gather(*clients)
    for answer, after in results:
        assert answer == b"" or answer.startswith(b"HTTP/1.1 408 "), answer[:100]
        # cut a tick after the grace (2 s), far from the 30 s whole-body bound
        assert after < 10.0
    assert any(answer.startswith(b"HTTP/1.1 408 ") for answer, _ in results)

    async with asyncio.timeout(WAIT):
        while held(gateway) > idle_held:
            await asyncio.sleep(0.05)
    # What the slow clients held is closed on both ends (a little slack: the in-process
    # table service may open a connection of its own meanwhile).
    assert descriptors() <= idle_fds + 8 < idle_fds + SLOW_CLIENTS
    served = await stack.post_json("GetTable", {"tableId": watched})
    assert served.status_code == 200


async def test_a_body_that_never_ends_is_cut_at_its_deadline(stack: Stack, watched: str) -> None:
    """A body arriving fast enough (500 bytes a second, over the 100 asked) but never whole
    is cut at the whole-body bound."""
    bounds = ConnectionBounds(body_timeout_s=2.0, body_min_rate=100, body_grace_s=0.5)
    gateway = await stack.start_gateway(connections=bounds)
    answer, after = await slow_client(gateway.port, b" " * 100, 0.2)
    assert answer == b"" or answer.startswith(b"HTTP/1.1 408 "), answer[:100]
    assert 1.5 < after < 10.0  # not before its bound (its rate was met), and not much later


async def test_whole_requests_and_long_streams_are_not_cut(stack: Stack, watched: str) -> None:
    """With a 1 s body bound: a request whose body comes in two parts in time is answered,
    and a WatchTable stream (its request whole at once) outlives the bound several times."""
    bounds = ConnectionBounds(body_timeout_s=1.0, body_min_rate=100, body_grace_s=0.3)
    gateway = await stack.start_gateway(connections=bounds)
    body = b'{"tableId": "%s"}' % watched.encode()
    reader, writer = await open_from("127.0.0.1", gateway.port)
    writer.write(head(len(body)) + body[:5])
    await asyncio.sleep(0.2)
    writer.write(body[5:])
    answer = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 200 ")

    async with connect.TableServiceClient(stack.url) as client:
        stream = client.watch_table(pb.WatchTableRequest(table_id=watched))
        assert (await anext(stream)).WhichOneof("item") == "snapshot"
        await asyncio.sleep(3.0)  # three times the body's bound
        await seat(stack.stub(stack.tables[0]), watched, 0)
        async with asyncio.timeout(WAIT):
            assert (await anext(stream)).event.HasField("player_seated")
        await stream.aclose()  # type: ignore[attr-defined]


async def test_connections_are_capped_per_address_and_in_all(stack: Stack, watched: str) -> None:
    """Three connections from 127.0.0.1, the cap: a fourth is answered 429 and closed,
    while 127.0.0.2 still gets through, until the total (five) is reached (503); a
    connection closed frees its place."""
    bounds = ConnectionBounds(head_timeout_s=WAIT, per_address=3, total=5)
    # No peer is a trusted proxy here (loopback is, by default: a proxy is not capped).
    gateway = await stack.start_gateway(connections=bounds, forwarded_allow_ips="")
    livez = b"GET /livez HTTP/1.1\r\nhost: x\r\n\r\n"

    first = [await open_from("127.0.0.1", gateway.port) for _ in range(3)]
    for reader, writer in first:  # each is served (and kept: keep-alive)
        writer.write(livez)
        assert (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT)).startswith(
            b"HTTP/1.1 200 "
        )
    reader, writer = await open_from("127.0.0.1", gateway.port)
    refused = await answer_or_close(reader)
    writer.close()
    assert refused.startswith(b"HTTP/1.1 429 ")
    assert refused.endswith(b"too many connections from this address; close one first")

    second = [await open_from("127.0.0.2", gateway.port) for _ in range(2)]
    for reader, writer in second:
        writer.write(livez)
        assert (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT)).startswith(
            b"HTTP/1.1 200 "
        )
    reader, writer = await open_from("127.0.0.2", gateway.port)
    full = await answer_or_close(reader)
    writer.close()
    assert full.startswith(b"HTTP/1.1 503 ")

    _, writer = first.pop()
    writer.close()
    async with asyncio.timeout(WAIT):
        while held(gateway) > 4:
            await asyncio.sleep(0.02)
    reader, writer = await open_from("127.0.0.1", gateway.port)
    writer.write(b"GET /livez HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
    assert (await answer_or_close(reader)).startswith(b"HTTP/1.1 200 ")
    writer.close()
    for _, writer in first + second:
        writer.close()


async def test_a_trusted_proxy_is_not_capped_per_address(stack: Stack, watched: str) -> None:
    """A peer in FORWARDED_ALLOW_IPS carries many clients: only the total counts it."""
    bounds = ConnectionBounds(head_timeout_s=WAIT, per_address=2, total=100)
    gateway = await stack.start_gateway(connections=bounds, forwarded_allow_ips="127.0.0.1")
    opened = [await open_from("127.0.0.1", gateway.port) for _ in range(5)]
    for reader, writer in opened:
        writer.write(b"GET /livez HTTP/1.1\r\nhost: x\r\n\r\n")
        assert (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT)).startswith(
            b"HTTP/1.1 200 "
        )
    for _, writer in opened:
        writer.close()


def padded_head(size: int, body: bytes) -> bytes:
    """A request head of exactly ``size`` bytes (a padding header fills it), for ``body``."""
    bare = head(len(body))
    pad = size - len(bare) - len(b"x-pad: \r\n")
    assert pad > 0
    return bare[:-2] + b"x-pad: " + b"a" * pad + b"\r\n\r\n"


async def test_the_request_heads_bound_is_exact_pipelined_or_not(
    stack: Stack, watched: str
) -> None:
    """A head of exactly ``MAX_HEAD_BYTES`` is answered, one byte more is 431. So is a
    pipelined request's head past the bound that comes in one read with a whole request
    before it (it was fed to the parser with that request's body, uncounted: the bound
    overshot by one read)."""
    gateway = await stack.start_gateway()
    body = b'{"tableId": "%s"}' % watched.encode()

    async def send(raw: bytes) -> bytes:
        reader, writer = await open_from("127.0.0.1", gateway.port)
        writer.write(raw)
        await writer.drain()
        if raw.count(b"HTTP/1.1\r\n") == 1:
            answer = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT)
        else:
            answer = await answer_or_close(reader)
        writer.close()
        return answer

    assert (await send(padded_head(MAX_HEAD_BYTES, body) + body)).startswith(b"HTTP/1.1 200 ")
    too_large = await send(padded_head(MAX_HEAD_BYTES + 1, body) + body)
    assert too_large.startswith(b"HTTP/1.1 431 ")
    pipelined = head(len(body)) + body + padded_head(MAX_HEAD_BYTES + 1_000, body) + body
    answers = await send(pipelined)
    assert b"HTTP/1.1 431 " in answers, answers[:200]
    assert answers.count(b"HTTP/1.1 200 ") <= 1  # the first request's, at most
    served = await stack.post_json("GetTable", {"tableId": watched})
    assert served.status_code == 200
