"""The table service's ``/metrics`` (``FELT_TABLE_METRICS_PORT``): the RPC metrics the shared
interceptor records, and the table service's own (hands, actions, tables, watchers)."""

from __future__ import annotations

import grpc
import pytest

from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
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


async def test_an_ai_seats_answer_is_timed_from_its_request(table_env: TableEnv) -> None:
    """``felt_table_ai_decision_seconds``: from the decision request published to the AI
    seat's action accepted, once per request (a duplicate answer is not timed again)."""
    server = await table_env.start_server(metrics_port=0)
    assert server.http is not None
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.nlhe(2, clock_ms=30_000))
    human = await table_env.seat(stub, table_id, 0)
    await table_env.seat(stub, table_id, 1, ai_level=epb.AI_LEVEL_NORMAL)
    watcher = table_env.watch(stub, table_id, from_sequence=1)
    await watcher.wait_event("hole_cards_dealt", seat=0)
    view = await table_env.view(stub, table_id, human)
    await table_env.submit(
        stub, table_id, human, tpb.Action(call=tpb.Action.Call()), view.table.sequence
    )
    _, request = await table_env.next_decision()
    answer = pb.SubmitActionRequest(
        table_id=table_id,
        seat=1,
        request_id=request.request_id,
        expected_sequence=request.expected_sequence,
        action=tpb.Action(check=tpb.Action.Check()),
    )
    await stub.SubmitAction(answer, metadata=table_env.ai_md)
    await stub.SubmitAction(answer, metadata=table_env.ai_md)  # a retry: the same answer

    samples = await scrape(server.http.port)

    assert value(samples, "felt_table_ai_decision_seconds_count") == 1
    assert value(samples, "felt_table_ai_decision_seconds_sum") > 0
    assert value(samples, "felt_table_actions_total", outcome="accepted") == 3
