"""OpenTelemetry tracing (issue 24, item 4): one action is one connected trace.

The gateway, the table service and an AI worker run here with tracing on (``Tracing``
around one in-memory span exporter, as ``FELT_TRACING=otlp`` would send them to a
collector). A person's ``SubmitAction`` over HTTP (Connect JSON) through the gateway
yields one trace: the gateway's HTTP span, its gRPC call, the table service's span for the
call. When that action gives the turn to an AI seat, the same trace goes on through the
decision stream (its context in the request's entry): the table service's request span,
the worker's decision span, the worker's ``SubmitAction`` and the table service's span for
it. Off (the default), nothing is traced.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Sequence

from google.protobuf import json_format
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from felt.service.tracing import Tracing
from felt.storage.decisions import envelope, trace_of
from poker.events.v1 import events_pb2 as epb
from poker.v1 import ai_pb2
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from services.ai_worker.worker import AiWorker, WorkerConfig
from tests.integration.gateway.conftest import (
    AI_TOKEN,
    Stack,
    admin,
    create_table,
    seat,
)

SUBMIT = "/poker.v1.TableService/SubmitAction"
WAIT = 20.0


def _traces(spans: Sequence[ReadableSpan]) -> dict[int, list[ReadableSpan]]:
    by_trace: dict[int, list[ReadableSpan]] = defaultdict(list)
    for span in spans:
        assert span.context is not None
        by_trace[span.context.trace_id].append(span)
    return by_trace


def _service(span: ReadableSpan) -> str:
    return str(span.resource.attributes.get("service.name"))


def _assert_connected(spans: list[ReadableSpan]) -> None:
    """One root; every other span's parent is a span of the trace."""
    ids = {s.context.span_id for s in spans if s.context is not None}
    roots = [s for s in spans if s.parent is None]
    assert len(roots) == 1, [(s.name, _service(s)) for s in roots]
    for span in spans:
        assert span.parent is None or span.parent.span_id in ids, (span.name, _service(span))


async def _traced_stack(stack: Stack, exporter: InMemorySpanExporter) -> None:
    await stack.add_table_service(
        "traced", tracing=Tracing.to_exporter("felt-table-service", exporter)
    )
    await stack.start_gateway(tracing=Tracing.to_exporter("felt-gateway", exporter))


async def _act(stack: Stack, table_id: str, tokens: dict[int, str]) -> int | None:
    """One action of the seat to act if it is a person's, through the gateway; its seat."""
    stub = stack.stub(stack.tables[0])
    view = (await stub.GetTableView(pb.GetTableViewRequest(table_id=table_id))).view
    hand = view.hand
    if not hand.HasField("to_act") or hand.street == epb.STREET_COMPLETE:
        return None
    actor = hand.to_act
    if actor not in tokens:
        return None
    legal = {a.type for a in hand.legal_actions}
    action: dict[str, object] = {"check": {}} if tpb.ACTION_TYPE_CHECK in legal else {"call": {}}
    body = {
        "tableId": table_id,
        "seat": actor,
        "requestId": f"r-{time.monotonic_ns()}",
        "expectedSequence": str(view.table.sequence),
        "action": action,
    }
    response = await stack.post_json("SubmitAction", body, tokens[actor])
    assert response.status_code == 200, response.text
    json_format.ParseDict(response.json(), pb.SubmitActionResponse())
    return actor


async def test_an_action_through_the_gateway_is_one_trace(stack: Stack) -> None:
    exporter = InMemorySpanExporter()
    await _traced_stack(stack, exporter)
    stub = stack.stub(stack.tables[0])
    await create_table(stub, "tr-action")
    tokens = {n: await seat(stub, "tr-action", n) for n in (0, 1)}
    deadline = time.monotonic() + WAIT
    while await _act(stack, "tr-action", tokens) is None:
        assert time.monotonic() < deadline, "nobody got to act"
        await asyncio.sleep(0.05)
    traces = _traces(exporter.get_finished_spans())
    through = [
        spans
        for spans in traces.values()
        if any(_service(s) == "felt-gateway" and s.kind is SpanKind.SERVER for s in spans)
    ]
    assert len(through) == 1, "one HTTP request, one trace"
    spans = through[0]
    _assert_connected(spans)
    table = [s for s in spans if _service(s) == "felt-table-service"]
    assert [(s.name, s.kind) for s in table] == [(SUBMIT, SpanKind.SERVER)]
    client = [s for s in spans if _service(s) == "felt-gateway" and s.kind is SpanKind.CLIENT]
    assert [s.name for s in client] == [SUBMIT]
    assert table[0].parent is not None and client[0].context is not None
    assert table[0].parent.span_id == client[0].context.span_id


async def test_an_ai_decision_is_one_trace_through_the_decision_stream(
    stack: Stack, redis_url: str
) -> None:
    exporter = InMemorySpanExporter()
    await _traced_stack(stack, exporter)
    stub = stack.stub(stack.tables[0])
    await create_table(stub, "tr-ai")
    tokens = {0: await seat(stub, "tr-ai", 0)}
    await stub.SeatPlayer(
        pb.SeatPlayerRequest(
            table_id="tr-ai",
            seat=1,
            player_id="bot",
            stack=10_000,
            ai_level=epb.AI_LEVEL_EASY,
            request_id="s-bot",
        ),
        metadata=admin(),
    )
    manager = stack.tables[0].manager
    worker = AiWorker(
        WorkerConfig(
            redis_url=redis_url,
            table_target=f"127.0.0.1:{stack.tables[0].port}",
            ai_token=AI_TOKEN,
            stream=manager.ai_stream,
            metrics_port=None,
            claim_idle_ms=5_000,
            tracing=Tracing.to_exporter("felt-ai-worker", exporter),
        )
    )
    await worker.start()
    try:
        deadline = time.monotonic() + WAIT
        found: list[ReadableSpan] | None = None
        while found is None:
            assert time.monotonic() < deadline, "no AI decision followed a person's action"
            await _act(stack, "tr-ai", tokens)
            await asyncio.sleep(0.2)
            for spans in _traces(exporter.get_finished_spans()).values():
                names = {s.name for s in spans}
                gateway = any(_service(s) == "felt-gateway" for s in spans)
                answered = sum(1 for s in spans if s.name == SUBMIT and s.kind is SpanKind.SERVER)
                if gateway and "felt.ai.decide" in names and answered >= 2:
                    found = spans
    finally:
        await worker.stop()
    _assert_connected(found)
    by_name = {(s.name, _service(s), s.kind) for s in found}
    assert ("felt.ai.request", "felt-table-service", SpanKind.INTERNAL) in by_name
    assert ("felt.ai.decide", "felt-ai-worker", SpanKind.INTERNAL) in by_name
    assert (SUBMIT, "felt-ai-worker", SpanKind.CLIENT) in by_name
    # The chain: the request's span -> the decision (across the stream) -> the worker's call
    # -> the table service's span for the AI's action.
    by_id = {s.context.span_id: s for s in found if s.context is not None}
    decide = next(s for s in found if s.name == "felt.ai.decide")
    assert decide.parent is not None and by_id[decide.parent.span_id].name == "felt.ai.request"
    call = next(s for s in found if s.name == SUBMIT and _service(s) == "felt-ai-worker")
    assert call.parent is not None and by_id[call.parent.span_id] is decide
    assert call.context is not None
    answer = next(
        s
        for s in found
        if s.name == SUBMIT and s.kind is SpanKind.SERVER and s.parent is not None
        if s.parent.span_id == call.context.span_id
    )
    assert _service(answer) == "felt-table-service"


def test_the_trace_context_rides_in_the_stream_entry_and_only_when_traced() -> None:
    request = ai_pb2.DecisionRequest(request_id="ai:t:3", table_id="t")
    plain = envelope(request)
    assert set(plain) == {"payload", "request_id"}
    parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    traced = envelope(request, {"traceparent": parent, "other": "x"})
    assert traced["traceparent"] == parent and "other" not in traced
    fields = {k.encode(): v if isinstance(v, bytes) else v.encode() for k, v in traced.items()}
    assert trace_of(fields) == {"traceparent": parent}
    assert trace_of({b"traceparent": b"\xff" * 10}) == {}  # not ASCII: ignored
    off = Tracing.off()
    assert off.carrier() == {} and off.server_interceptors() == []
    assert off.client_interceptors() == [] and off.asgi(plain) is plain
    with off.span("nothing") as span:
        assert not span.is_recording()
