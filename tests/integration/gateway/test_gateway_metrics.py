"""The gateway's ``/metrics`` on its own port (``FELT_GATEWAY_METRICS_PORT``): requests by
route and status, open connections and watch streams; never on the public port."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import cast

from poker.v1 import table_service_connect as connect
from poker.v1 import table_service_pb2 as pb
from tests.integration.scrape import http_get, scrape, value

from .conftest import Stack, create_table

GET_TABLE = "/poker.v1.TableService/GetTable"


async def test_the_gateway_counts_requests_connections_and_watch_streams(stack: Stack) -> None:
    server = await stack.add_table_service("a")
    gateway = await stack.start_gateway(metrics_port=0)
    assert gateway.http is not None
    port = gateway.http.port
    await create_table(stack.stub(server), "gw-metrics")
    assert (await stack.post_json("GetTable", {"tableId": "gw-metrics"})).status_code == 200
    missing = await stack.post_json("GetTable", {"tableId": "gw-no-such-table"})
    assert missing.status_code == 404
    assert (await stack.post_json("NoSuchMethod", {})).status_code == 404
    async with connect.TableServiceClient(stack.url) as client:
        # the client's stream is an async generator (closed below: the stream ends)
        stream = cast(
            AsyncGenerator[pb.WatchTableResponse],
            client.watch_table(pb.WatchTableRequest(table_id="gw-metrics")),
        )
        first = await anext(aiter(stream))
        assert first.WhichOneof("item") == "snapshot"
        watching = await scrape(port)
        await stream.aclose()

    assert value(watching, "felt_gateway_watch_streams") == 1
    assert value(watching, "felt_gateway_connections") >= 1
    assert value(watching, "felt_gateway_requests_total", route=GET_TABLE, status="200") == 1
    assert value(watching, "felt_gateway_requests_total", route=GET_TABLE, status="404") == 1
    assert value(watching, "felt_gateway_requests_total", route="rpc", status="404") == 1
    assert value(watching, "felt_gateway_request_seconds_count", route=GET_TABLE) == 2

    async def stream_counted() -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
        for _ in range(100):
            samples = await scrape(port)
            watch = "/poker.v1.TableService/WatchTable"
            if value(samples, "felt_gateway_request_seconds_count", route=watch) == 1:
                return samples
            await asyncio.sleep(0.05)
        raise AssertionError("the ended watch stream was never counted")

    ended = await stream_counted()
    assert value(ended, "felt_gateway_watch_streams") == 0
    # The public port serves no metrics: it is the web client's (a 404 or the app's page).
    assert stack.http is not None
    public = await stack.http.get("/metrics")
    assert "felt_gateway_requests_total" not in public.text
    status, _ = await http_get(port, "/readyz")
    assert status == 200
