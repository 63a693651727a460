"""felt.service.tracing (issue #24): the SDK only when tracing is on, the gateway a trace root
whatever a client sends, and no trace field longer than W3C allows in a decision request."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from felt.service.tracing import Tracing
from felt.storage.decisions import envelope
from felt.storage.decisions.base import TRACE_FIELD_MAX
from poker.v1 import ai_pb2

CLIENT_TRACE = "0af7651916cd43dd8448eb211c80319c"
CLIENT_PARENT = f"00-{CLIENT_TRACE}-b7ad6b7169203331-01"


def test_a_service_with_tracing_off_loads_no_more_of_the_sdk_than_redis_does() -> None:
    """redis-py 8 loads part of the SDK (its metrics) itself; ours is the tracing SDK (about
    50 modules, 100 ms at every start), only when a provider is made."""
    probe = (
        "import sys, redis\n"
        "before = set(sys.modules)\n"
        "import services.table.runtime, services.ai_worker.worker\n"
        "print(sorted(m for m in set(sys.modules) - before if m.startswith('opentelemetry.sdk')))\n"
        "print('opentelemetry.sdk.trace' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split("\n")
    assert out[:2] == ["[]", "False"]


async def test_the_gateway_starts_a_new_trace_whatever_the_client_sends() -> None:
    exporter = InMemorySpanExporter()
    seen: list[list[tuple[bytes, bytes]]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(list(scope["headers"]))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        pass

    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/poker.v1.TableService/SubmitAction",
        "raw_path": b"/poker.v1.TableService/SubmitAction",
        "root_path": "",
        "query_string": b"",
        "server": ("127.0.0.1", 8080),
        "client": ("203.0.113.9", 4000),
        "headers": [
            (b"traceparent", CLIENT_PARENT.encode()),
            (b"tracestate", b"x=" + b"y" * 4000),
            (b"baggage", b"user=mallory"),
            (b"content-type", b"application/json"),
        ],
    }
    await Tracing.to_exporter("gateway", exporter).asgi(app)(scope, receive, send)
    assert seen == [[(b"content-type", b"application/json")]]
    spans = exporter.get_finished_spans()
    assert spans
    for span in spans:
        assert span.context is not None
        assert f"{span.context.trace_id:032x}" != CLIENT_TRACE
        assert span.parent is None or span.parent.trace_id == span.context.trace_id
    assert any(span.parent is None for span in spans)


def test_a_decision_request_carries_no_oversized_trace_field() -> None:
    request = ai_pb2.DecisionRequest(request_id="r", table_id="t")
    fields = envelope(request, {"traceparent": CLIENT_PARENT, "tracestate": "x" * 600})
    assert fields["traceparent"] == CLIENT_PARENT and "tracestate" not in fields
    fine = "a=" + "b" * (TRACE_FIELD_MAX - 2)
    assert envelope(request, {"tracestate": fine})["tracestate"] == fine
