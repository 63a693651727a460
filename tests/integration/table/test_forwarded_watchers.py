"""The per-address watch cap behind a proxy, over real gRPC.

A trusted proxy (the gateway; here this test on 127.0.0.1) names each client in
``x-forwarded-for``, and the table service counts every client's watch streams
apart, so one viewer's cap is not the whole web's. From a peer that is not
trusted the header is ignored: more streams cannot be had by writing one.
"""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from felt.wire.clients import TrustedProxies
from poker.v1 import table_service_pb2 as pb
from services.table.watch import WatchLimits
from tests.integration.table.harness import TableEnv


def forwarded(address: str) -> tuple[tuple[str, str], ...]:
    return (("x-forwarded-for", address),)


async def opened(call: Any) -> bool:
    """Whether the watch starts (its snapshot comes), or is refused past the cap."""
    try:
        async for item in call:
            return bool(item.HasField("snapshot"))
    except grpc.aio.AioRpcError as error:
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "per client address" in (error.details() or "")
        return False
    raise AssertionError("the watch ended without an item")


async def test_watch_streams_are_capped_per_forwarded_client(table_env: TableEnv) -> None:
    server = await table_env.start_server(
        watch=WatchLimits(max_per_peer=1), proxies=TrustedProxies.parse("127.0.0.1")
    )
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.nlhe(2))
    request = pb.WatchTableRequest(table_id=table_id)
    calls = []
    try:
        for client, expected in [
            ("203.0.113.7", True),
            ("2001:db8::1", True),  # another client of the same proxy: its own cap
            ("203.0.113.7:5555", False),  # the first again (a port changes nothing)
            ("::ffff:203.0.113.7", False),  # and again, IPv4-mapped
            ("198.51.100.1, 2001:db8::1, 127.0.0.1", False),  # the second, chained
        ]:
            calls.append(stub.WatchTable(request, metadata=forwarded(client)))
            assert await opened(calls[-1]) is expected, client
        assert table_env.hub(server).per_peer == {
            "203.0.113.7": 1,
            "2001:db8::/64": 1,
        }  # IPv6 counted per /64
        # The proxy's own call (no header) is counted as its own address.
        calls.append(stub.WatchTable(request))
        assert await opened(calls[-1])
        assert table_env.hub(server).per_peer["127.0.0.1"] == 1
    finally:
        for call in calls:
            call.cancel()


@pytest.mark.parametrize("proxies", ["", "10.0.0.0/8"])
async def test_a_direct_client_cannot_spoof_its_way_around_the_watch_cap(
    table_env: TableEnv, proxies: str
) -> None:
    server = await table_env.start_server(
        watch=WatchLimits(max_per_peer=1), proxies=TrustedProxies.parse(proxies)
    )
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.nlhe(2))
    request = pb.WatchTableRequest(table_id=table_id)
    first = stub.WatchTable(request, metadata=forwarded("203.0.113.7"))
    second = stub.WatchTable(request, metadata=forwarded("203.0.113.8"))
    try:
        assert await opened(first)
        assert not await opened(second)
        assert table_env.hub(server).per_peer == {"127.0.0.1": 1}
    finally:
        first.cancel()
        second.cancel()
