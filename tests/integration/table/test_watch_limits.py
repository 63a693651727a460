"""``WatchTable`` with limits, over real gRPC (issue 9, item 7).

Caps per connection and per service (``RESOURCE_EXHAUSTED`` past them), a slow
consumer dropped without touching the other watchers, and many watchers
replaying a long history while a live table plays on: its calls succeed, no
lease is lost, and every watcher gets every event once, in order. No test
here depends on timing: they wait for events, never for a clock.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import grpc
import pytest

from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from services.table.watch import WatchLimits
from tests.integration.table.harness import TableEnv

# A channel of its own: gRPC shares connections between channels with equal
# arguments unless told not to, and the per-connection cap counts connections.
OWN_CONNECTION = (("grpc.use_local_subchannel_pool", 1),)
# A client that reads nothing: no window growth, a small receive window.
STALLED = (
    *OWN_CONNECTION,
    ("grpc.http2.bdp_probe", 0),
    ("grpc.http2.lookahead_bytes", 1024),
)


class Connections:
    """Client connections to one server, each a separate gRPC peer."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.channels: list[grpc.aio.Channel] = []

    def stub(self, options: tuple[tuple[str, Any], ...] = OWN_CONNECTION) -> Any:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{self.port}", options=list(options))
        self.channels.append(channel)
        return rpc.TableServiceStub(channel)

    async def close(self) -> None:
        for channel in self.channels:
            await channel.close()


async def _first(call: Any) -> pb.WatchTableResponse:
    """The first item of a watch (its snapshot or first event), or the call's error."""
    async for item in call:
        return item  # type: ignore[no-any-return]
    raise AssertionError("the watch ended without an item")


async def _refused(call: Any) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        async for _ in call:
            pass
    return refused.value


async def _add_chips(
    env: TableEnv, stub: Any, table_id: str, key: Any, times: int, concurrency: int = 8
) -> None:
    """Append ``times`` events to the table (one chip each), through the service."""

    async def one() -> None:
        await stub.AddChips(
            pb.AddChipsRequest(
                table_id=table_id, seat=key.seat, amount=1, request_id=uuid.uuid4().hex
            ),
            metadata=key.service_md,
        )

    for start in range(0, times, concurrency):
        await asyncio.gather(*(one() for _ in range(min(concurrency, times - start))))


async def test_watch_streams_are_capped_per_client_address_and_per_service(
    table_env: TableEnv,
) -> None:
    server = await table_env.start_server(
        watch=WatchLimits(max_streams=5, max_per_peer=3, seat_reserve=1)
    )
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.nlhe(2))
    keys = await table_env.seat_all(stub, table_id, 2)
    connections = Connections(server.port)
    try:
        first = connections.stub()
        calls = [first.WatchTable(pb.WatchTableRequest(table_id=table_id)) for _ in range(2)]
        for call in calls:
            assert (await _first(call)).HasField("snapshot")
        # Found by review: more connections from one client raised its share. The cap is
        # per client address: a third stream on another connection is its last.
        second = connections.stub()
        third = second.WatchTable(pb.WatchTableRequest(table_id=table_id))
        assert (await _first(third)).HasField("snapshot")
        err = await _refused(connections.stub().WatchTable(pb.WatchTableRequest(table_id=table_id)))
        assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "per client address" in (err.details() or "")
        # The service as a whole: spectators stop one short of five (one kept for seats)...
        hub = table_env.hub(server)
        hub.limits = WatchLimits(max_streams=5, max_per_peer=10, seat_reserve=1)
        fourth = connections.stub().WatchTable(pb.WatchTableRequest(table_id=table_id))
        assert (await _first(fourth)).HasField("snapshot")
        err = await _refused(connections.stub().WatchTable(pb.WatchTableRequest(table_id=table_id)))
        assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "maximum of 4 spectator watch streams" in (err.details() or "")
        # ... and a seat's own stream still gets in, up to five.
        seat = connections.stub().WatchTable(
            pb.WatchTableRequest(table_id=table_id, seat=0), metadata=keys[0].md
        )
        assert (await _first(seat)).HasField("snapshot")
        err = await _refused(
            connections.stub().WatchTable(
                pb.WatchTableRequest(table_id=table_id, seat=1), metadata=keys[1].md
            )
        )
        assert "maximum of 5 watch streams" in (err.details() or "")
        others = [third, fourth, seat]
        # Ordinary calls are not watches: they go on.
        assert (await first.GetTable(pb.GetTableRequest(table_id=table_id))).table.table_id
        # A stream that ends gives its place back.
        calls[0].cancel()
        hub = table_env.hub(server)

        async def freed() -> bool | None:
            return True if hub.streams == 4 else None  # five less the cancelled one

        await table_env.eventually(freed, "the cancelled watch to be uncounted")
        again = first.WatchTable(
            pb.WatchTableRequest(table_id=table_id, seat=1), metadata=keys[1].md
        )
        assert (await _first(again)).HasField("snapshot")
        for call in (calls[1], *others, again):
            call.cancel()

        async def none_left() -> bool | None:
            return True if hub.streams == 0 and not hub.per_peer and not hub.feeds else None

        await table_env.eventually(none_left, "every watch to be uncounted, every feed stopped")
    finally:
        await connections.close()


async def test_a_slow_consumer_is_dropped_and_the_others_see_everything(
    table_env: TableEnv,
) -> None:
    server = await table_env.start_server(watch=WatchLimits(buffer=32))
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.nlhe(2))
    key = await table_env.seat(stub, table_id, 0)
    connections = Connections(server.port)
    try:
        reader = table_env.watch(stub, table_id)
        await reader.wait(lambda: bool(reader.items), "the reader's snapshot")
        stalled = connections.stub(STALLED).WatchTable(pb.WatchTableRequest(table_id=table_id))
        assert (await stalled.read()).HasField("snapshot")  # then it reads nothing more
        hub = table_env.hub(server)

        def watchers() -> int:
            feed = hub.feeds.get(table_id)
            return len(feed.subscribers) if feed is not None else 0

        async def both_following() -> bool | None:
            return True if watchers() == 2 else None

        await table_env.eventually(both_following, "both watchers to follow the table")
        start = reader.last_sequence
        # Far more than the stalled client's windows and its buffer of 32 can hold, one event
        # at a time (a reader keeps up with that; a burst larger than the buffer would not).
        added = 0
        while watchers() == 2:
            await _add_chips(table_env, stub, table_id, key, 100, concurrency=1)
            added += 100
            assert added <= 20_000, "the stalled watcher was never dropped"
        end = start + added
        # The reader got every event once, in order, with nothing missing.
        await reader.wait_sequence(end)
        sequences = [e.sequence for e in reader.events]
        assert sequences == list(range(start + 1, end + 1))
        assert not reader.done
        # The stalled watch was ended by the server; its place is given back.

        async def read_to_the_end() -> None:
            while True:
                item = await stalled.read()
                assert item is not grpc.aio.EOF, "the stalled watch ended as if complete"

        with pytest.raises(grpc.aio.AioRpcError) as ended:
            await asyncio.wait_for(read_to_the_end(), 30)
        assert ended.value.code() in (
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            grpc.StatusCode.CANCELLED,
        )

        async def uncounted() -> bool | None:
            return True if hub.streams == 1 else None

        await table_env.eventually(uncounted, "the dropped watch to be uncounted")
        # The reader carries on with the next events.
        await _add_chips(table_env, stub, table_id, key, 3)
        await reader.wait_sequence(end + 3)
    finally:
        await connections.close()


async def test_many_watchers_replaying_history_do_not_starve_a_live_table(
    table_env: TableEnv, policies: Any
) -> None:
    watchers_count = 60
    server = await table_env.start_server(
        watch=WatchLimits(max_per_peer=watchers_count + 8, replays=2, page=50)
    )
    stub = table_env.stub(server)
    history_table = await table_env.create_table(stub, table_env.nlhe(2))
    key = await table_env.seat(stub, history_table, 0)
    await _add_chips(table_env, stub, history_table, key, 1200)
    live_table = await table_env.create_table(stub, table_env.nlhe(2))
    live_seats = await table_env.seat_all(stub, live_table, 2)
    owner = server.manager.owner

    connections = Connections(server.port)
    try:
        spectators = connections.stub()
        calls = [
            spectators.WatchTable(pb.WatchTableRequest(table_id=history_table, from_sequence=1))
            for _ in range(watchers_count)
        ]
        received: list[list[int]] = [[] for _ in calls]

        async def follow(index: int, call: Any, until: int) -> None:
            async for item in call:
                received[index].append(int(item.event.sequence))
                if item.event.sequence >= until:
                    return

        # While they replay: the history table keeps growing, the live table plays.
        version = await table_env.xlen(history_table)
        more = 100
        followers = [
            asyncio.ensure_future(follow(i, c, version + more)) for i, c in enumerate(calls)
        ]
        log = await table_env.play(stub, live_table, live_seats, policies["random"], hands=3)
        await _add_chips(table_env, stub, history_table, key, more)
        await asyncio.wait_for(asyncio.gather(*followers), 120)

        # Every watcher: every event from 2 on, once, in order.
        expected = list(range(2, version + more + 1))
        for index, sequences in enumerate(received):
            assert sequences == expected, f"watcher {index} missed or repeated events"
        # The live table played its hands with every call answered, and kept its lease.
        assert log.actions
        assert await table_env.lease_owner(live_table) == owner
        assert await table_env.lease_owner(history_table) == owner
        assert set(server.manager.runtimes) >= {live_table, history_table}
        for call in calls:
            call.cancel()
    finally:
        await connections.close()
