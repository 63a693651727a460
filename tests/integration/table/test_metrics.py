"""The table service's ``/metrics`` (``FELT_TABLE_METRICS_PORT``): the RPC metrics the shared
interceptor records, and the table service's own (hands, actions, tables, watchers)."""

from __future__ import annotations

import grpc
import pytest

from poker.v1 import table_pb2 as tpb
from tests.integration.scrape import http_get, scrape, value
from tests.integration.table.harness import Policy, TableEnv

SERVICE = "poker.v1.TableService"


async def test_metrics_count_calls_hands_actions_and_watchers(
    table_env: TableEnv, policies: dict[str, Policy]
) -> None:
    server = await table_env.start_server(metrics_port=0)
    assert server.http is not None
    port = server.http.port
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.nlhe(3))
    keys = await table_env.seat_all(stub, table_id, 3, 1000)
    log = await table_env.play(stub, table_id, keys, policies["random"], hands=2, seed=3)
    # One refused action: a seat acting on a stale sequence.
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await table_env.submit(
            stub,
            table_id,
            next(iter(keys.values())),
            tpb.Action(fold=tpb.Action.Fold()),
            expected=1,
        )
    watcher = table_env.watch(stub, table_id)
    await watcher.wait_sequence(1)

    samples = await scrape(port)

    ok = value(
        samples, "felt_rpc_requests_total", service=SERVICE, method="SubmitAction", code="OK"
    )
    assert ok == len(log.actions)
    code = refused.value.code().name
    assert value(samples, "felt_rpc_requests_total", method="SubmitAction", code=code) == 1
    assert value(samples, "felt_rpc_requests_total", method="CreateTable", code="OK") == 1
    assert value(samples, "felt_rpc_duration_seconds_count", method="SeatPlayer") == 3
    assert value(samples, "felt_table_actions_total", outcome="accepted") == len(log.actions)
    assert value(samples, "felt_table_actions_total", outcome="refused") == 1
    assert value(samples, "felt_table_hands_dealt_total") >= 2
    assert value(samples, "felt_table_active_tables") == 1
    assert value(samples, "felt_table_watchers") >= 1
    assert not any("table_id" in dict(labels) for _, labels in samples)
    status, _ = await http_get(port, "/healthz")
    assert status == 200
