"""Spectators share one upstream WatchTable stream per table (``services.gateway.fanout``).

Counted at the table service (its ``WatchHub`` admits every upstream stream):
many spectators through the gateway are one stream there, each still gets
every event in order; a late joiner's stream is gap-free; a spectator that
stops reading is dropped with ``WATCH_TOO_SLOW`` while the others go on; a
seat's stream is never shared; a spectator that asked for ``view_changes`` keeps them after
it joins the feed (one feed per choice).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from connectrpc.code import Code
from connectrpc.errors import ConnectError

from poker.v1 import table_service_connect as connect
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from services.gateway.codecs import CompactJsonCodec, Raw
from services.gateway.config import WatchCaps
from services.table.watch import WatchHub

from .conftest import Stack, admin, create_table, holdem, seat
from .test_gateway_http import connect_reason

WAIT = 20.0


async def add_chips(stub: rpc.TableServiceAsyncStub, table_id: str, token: str, n: int) -> int:
    """Append ``n`` events (seat 0 adds a chip each time); the last sequence."""
    sequence = 0
    for i in range(n):
        added: pb.AddChipsResponse = await stub.AddChips(
            pb.AddChipsRequest(table_id=table_id, seat=0, amount=1, request_id=f"{table_id}-{i}"),
            metadata=admin(),  # the lobby's call (its service credential)
        )
        sequence = added.sequence
    return sequence


async def streams_settle(hub: WatchHub, expected: int) -> None:
    """Wait until the table service holds ``expected`` watch streams (own calls close)."""
    async with asyncio.timeout(WAIT):
        while hub.streams != expected:
            await asyncio.sleep(0.02)


def sequence(item: pb.WatchTableResponse) -> int:
    if item.WhichOneof("item") == "snapshot":
        return int(item.snapshot.table.sequence)
    return int(item.event.sequence)


class Reader:
    """One Connect stream read in the background, its items kept."""

    def __init__(self, client: connect.TableServiceClient, request: pb.WatchTableRequest) -> None:
        self.items: list[pb.WatchTableResponse] = []
        self.stream: AsyncIterator[pb.WatchTableResponse] = client.watch_table(request)
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for item in self.stream:
            self.items.append(item)

    async def until(self, last: int) -> None:
        async with asyncio.timeout(WAIT):
            while not self.items or sequence(self.items[-1]) < last:
                if self.task.done():
                    self.task.result()
                    raise AssertionError("the stream ended early")
                await asyncio.sleep(0.02)

    async def close(self) -> None:
        self.task.cancel()  # the client turns its cancellation into a CANCELED ConnectError
        with contextlib.suppress(asyncio.CancelledError, ConnectError):
            await self.task


def gap_free(items: list[pb.WatchTableResponse]) -> list[int]:
    """The event sequences after the first item, checked to follow it one by one."""
    assert items[0].WhichOneof("item") == "snapshot"
    assert all(item.WhichOneof("item") == "event" for item in items[1:])
    sequences = [sequence(item) for item in items]
    assert sequences == list(range(sequences[0], sequences[0] + len(sequences)))
    return sequences


@dataclass
class Watched:
    """A table with seat 0 taken, behind a gateway: what the tests append and count with."""

    hub: WatchHub
    stub: rpc.TableServiceAsyncStub
    token: str


async def watched_table(stack: Stack, table_id: str, **gateway: Any) -> Watched:
    server = await stack.add_table_service("a")
    await stack.start_gateway(**gateway)
    assert server.watches is not None
    stub = stack.stub(server)
    await create_table(stub, table_id)
    return Watched(server.watches, stub, await seat(stub, table_id, 0))


async def test_spectators_share_one_upstream_and_get_every_event(stack: Stack) -> None:
    table = await watched_table(stack, "fan-share")
    hub, stub, token = table.hub, table.stub, table.token
    request = pb.WatchTableRequest(table_id="fan-share")
    async with (
        connect.TableServiceClient(stack.url) as binary,
        connect.TableServiceClient(stack.url, codec=CompactJsonCodec()) as json,
    ):
        readers = [Reader(binary if i % 2 else json, request) for i in range(8)]
        for reader in readers:
            await reader.until(0)  # its snapshot
        await streams_settle(hub, 1)  # one upstream stream for all eight
        last = await add_chips(stub, "fan-share", token, 12)
        for reader in readers:
            await reader.until(last)
            assert gap_free(reader.items)[-1] == last
        assert hub.streams == 1
        events = [[item.SerializeToString() for item in r.items[1:]] for r in readers]
        assert all(e == events[0] for e in events)
        for reader in readers:
            await reader.close()
    await streams_settle(hub, 0)  # closed with its last spectator
    assert stack.gateway is not None and stack.gateway.gateway.shared is not None
    assert stack.gateway.gateway.shared.feeds == {}


async def test_view_changes_go_on_after_the_catch_up(stack: Stack) -> None:
    table = await watched_table(stack, "fan-changes")
    hub, stub, token = table.hub, table.stub, table.token
    async with connect.TableServiceClient(stack.url) as client:
        changes = Reader(client, pb.WatchTableRequest(table_id="fan-changes", view_changes=True))
        plain = Reader(client, pb.WatchTableRequest(table_id="fan-changes"))
        await changes.until(0)
        await plain.until(0)
        await streams_settle(hub, 2)  # one feed per choice, the own calls closed
        last = await add_chips(stub, "fan-changes", token, 6)
        for reader in (changes, plain):
            await reader.until(last)
            gap_free(reader.items)
        assert all(item.HasField("view_change") for item in changes.items[1:])
        assert not any(item.HasField("view_change") for item in plain.items[1:])
        await changes.close()
        await plain.close()
    await streams_settle(hub, 0)


async def test_a_late_joiners_stream_is_gap_free(stack: Stack) -> None:
    table = await watched_table(stack, "fan-late")
    hub, stub, token = table.hub, table.stub, table.token
    request = pb.WatchTableRequest(table_id="fan-late")
    async with connect.TableServiceClient(stack.url) as client:
        early = Reader(client, request)
        await early.until(0)
        middle = await add_chips(stub, "fan-late", token, 5)
        await early.until(middle)
        # Joiners while events are being appended, and one resuming after an event.
        appending = asyncio.create_task(add_chips(stub, "fan-late", token, 10))
        late = [Reader(client, request) for _ in range(3)]
        resumed = Reader(
            client, pb.WatchTableRequest(table_id="fan-late", from_sequence=middle - 2)
        )
        last = await appending
        last = max(last, await add_chips(stub, "fan-late", token, 1))
        for reader in [early, *late]:
            await reader.until(last)
            gap_free(reader.items)
        await resumed.until(last)
        assert [sequence(i) for i in resumed.items] == list(range(middle - 1, last + 1))
        await streams_settle(hub, 1)
        by_sequence = {sequence(i): i.SerializeToString() for i in early.items[1:]}
        for reader in late:
            assert all(by_sequence[sequence(i)] == i.SerializeToString() for i in reader.items[1:])
        for reader in [early, *late, resumed]:
            await reader.close()


async def test_a_slow_spectator_is_dropped_and_the_others_go_on(stack: Stack) -> None:
    table = await watched_table(
        stack, "fan-slow", watch=WatchCaps(per_token=2, per_address=1000, total=1000, buffer=8)
    )
    hub, stub, token = table.hub, table.stub, table.token
    assert stack.gateway is not None and stack.gateway.gateway.shared is not None
    request = pb.WatchTableRequest(table_id="fan-slow")
    async with connect.TableServiceClient(stack.url) as client:
        fast = Reader(client, request)
        await fast.until(0)
        # A handler whose client stops reading: its stream is not pulled after the snapshot.
        slow = stack.gateway.gateway.shared.watch(request, ())
        first: Raw = await anext(slow)
        assert pb.WatchTableResponse.FromString(first.data).WhichOneof("item") == "snapshot"
        joined = await add_chips(stub, "fan-slow", token, 1)
        await fast.until(joined)
        second: Raw = await anext(slow)  # now it reads from the shared feed
        assert pb.WatchTableResponse.FromString(second.data).event.sequence == joined
        last = await add_chips(stub, "fan-slow", token, 20)  # more than its buffer of 8
        await fast.until(last)
        gap_free(fast.items)
        with pytest.raises(ConnectError) as caught:
            async with asyncio.timeout(WAIT):
                async for _ in slow:
                    pass
        assert caught.value.code is Code.RESOURCE_EXHAUSTED
        assert connect_reason(caught.value) == "WATCH_TOO_SLOW"
        after = await add_chips(stub, "fan-slow", token, 1)  # the feed goes on
        await fast.until(after)
        await streams_settle(hub, 1)
        await fast.close()


async def test_seat_watchers_are_never_shared(stack: Stack) -> None:
    server = await stack.add_table_service("a")
    await stack.start_gateway()
    assert server.watches is not None
    stub = stack.stub(server)
    await create_table(stub, "fan-seats", seats=3)
    tokens = [await seat(stub, "fan-seats", s) for s in (0, 1)]
    async with connect.TableServiceClient(stack.url) as client:
        seats = []
        for s, token in enumerate(tokens):
            stream = client.watch_table(
                pb.WatchTableRequest(table_id="fan-seats", seat=s),
                headers={"authorization": f"Bearer {token}"},
            )
            seats.append(stream)
            first = await anext(stream)
            assert first.snapshot.viewer_seat == s
        spectator = Reader(client, pb.WatchTableRequest(table_id="fan-seats"))
        await spectator.until(0)
        await streams_settle(server.watches, 3)  # a stream per seat, one for the spectators
        for stream in seats:
            await stream.aclose()  # type: ignore[attr-defined]
        await streams_settle(server.watches, 1)
        await spectator.close()


async def test_a_private_tables_spectator_watches_with_its_grant_and_a_stranger_cannot(
    stack: Stack,
) -> None:
    """A private lounge's table (issue #20): the shared feed is opened with no credential,
    which such a table refuses, so a spectator with a watch grant gets a stream of its own
    (as a seat does) and every event; one without gets the missing table's NOT_FOUND."""
    server = await stack.add_table_service("a")
    await stack.start_gateway()
    assert server.watches is not None
    stub = stack.stub(server)
    config = holdem()
    config.private = True
    await stub.CreateTable(
        pb.CreateTableRequest(table_id="fan-private", config=config, request_id="c-private"),
        metadata=admin(),
    )
    token = await seat(stub, "fan-private", 0)
    issued: pb.IssueWatchGrantResponse = await stub.IssueWatchGrant(
        pb.IssueWatchGrantRequest(table_id="fan-private"), metadata=admin()
    )
    request = pb.WatchTableRequest(table_id="fan-private")
    async with connect.TableServiceClient(stack.url) as client:
        with pytest.raises(ConnectError) as stranger:
            async with asyncio.timeout(WAIT):
                async for _ in client.watch_table(request):
                    pass
        assert stranger.value.code is Code.NOT_FOUND
        granted = client.watch_table(
            request, headers={"authorization": f"Bearer {issued.watch_grant}"}
        )
        first = await anext(granted)
        assert first.WhichOneof("item") == "snapshot" and not first.snapshot.HasField("viewer_seat")
        last = await add_chips(stub, "fan-private", token, 5)
        items = [first]
        async with asyncio.timeout(WAIT):
            while sequence(items[-1]) < last:
                items.append(await anext(granted))
        assert gap_free(items)[-1] == last
        await granted.aclose()  # type: ignore[attr-defined]


async def test_a_watch_grants_stream_is_counted_once(stack: Stack) -> None:
    """A spectator's stream with a watch grant is its own stream, counted once against the
    caps (it was counted twice: by the watch route and again by the forwarder it opens), so
    a grant may hold ``per_token`` streams, each one stream in the gateway's count."""
    server = await stack.add_table_service("a")
    caps = (await stack.start_gateway()).gateway.caps  # per_token 2
    assert server.watches is not None and caps is not None
    stub = stack.stub(server)
    config = holdem()
    config.private = True
    await stub.CreateTable(
        pb.CreateTableRequest(table_id="fan-counted", config=config, request_id="c-counted"),
        metadata=admin(),
    )
    issued: pb.IssueWatchGrantResponse = await stub.IssueWatchGrant(
        pb.IssueWatchGrantRequest(table_id="fan-counted"), metadata=admin()
    )
    headers = {"authorization": f"Bearer {issued.watch_grant}"}
    request = pb.WatchTableRequest(table_id="fan-counted")
    async with connect.TableServiceClient(stack.url) as client:
        streams = [client.watch_table(request, headers=headers) for _ in range(2)]
        for stream in streams:
            first = await anext(stream)
            assert first.WhichOneof("item") == "snapshot"
        assert caps.total == 2 and list(caps.per_token.values()) == [2]
        with pytest.raises(ConnectError) as third:
            async with asyncio.timeout(WAIT):
                async for _ in client.watch_table(request, headers=headers):
                    pass
        assert connect_reason(third.value) == "TOO_MANY_WATCHES"
        for stream in streams:
            await stream.aclose()  # type: ignore[attr-defined]
