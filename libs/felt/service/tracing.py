"""OpenTelemetry tracing for the services: off unless ``FELT_TRACING`` says where spans go.

One action is one trace: the gateway's HTTP span (the maintained ASGI middleware), its
gRPC call to the table service and the table service's span for it (the maintained gRPC
interceptors, which carry the W3C ``traceparent`` in the call's metadata); when the
action hands the turn to an AI seat, the table service's span for the decision request,
whose context travels in the request's stream entry (:func:`felt.storage.decisions.envelope`,
``trace`` fields), the worker's span for the decision, and its ``SubmitAction`` back to the
table service.

Each process holds one :class:`Tracing`, made from its settings (``from_settings``) or, in
tests, around an in-memory exporter (``to_exporter``). The provider is the object's own,
never OpenTelemetry's global one, so several services in one test process keep theirs
apart; switched off, it adds no interceptor and its spans are OpenTelemetry's no-op ones,
and the SDK is never imported (about 50 modules, 100 ms at every process start): only the
API is, and the SDK when a provider is made.

The gateway is the edge: a public client's ``traceparent``/``tracestate``/``baggage`` are
dropped before its HTTP span (``asgi``), which so starts every trace anew; a client can
neither join our traces nor grow the context we hand on.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.context import Context

from felt.config.settings import FELT_OTLP_ENDPOINT, FELT_TRACING, Env

if TYPE_CHECKING:  # the SDK only when a provider is made (see the module docstring)
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter

__all__ = ["TraceContext", "Tracing", "attached", "current_context"]

TraceContext = Context
"""A trace context (OpenTelemetry's), as callers that hand one on name it."""


def current_context() -> Context:
    """The trace context now (to hand to a task that starts with a fresh context)."""
    return otel_context.get_current()


@dataclass(frozen=True)
class Tracing:
    """One process's tracing: its provider, or None when tracing is off."""

    provider: TracerProvider | None = None

    @classmethod
    def off(cls) -> Tracing:
        return cls(None)

    @classmethod
    def from_settings(cls, service: str, env: Env | None = None) -> Tracing:
        """``FELT_TRACING``: off, or spans of ``service`` to the OTLP collector or stdout."""
        mode = FELT_TRACING.read(env)
        if mode == "off":
            return cls.off()
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

        exporter: SpanExporter
        if mode == "otlp":
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

            exporter = OTLPSpanExporter(endpoint=FELT_OTLP_ENDPOINT.read(env), insecure=True)
        else:
            exporter = ConsoleSpanExporter()
        provider = _provider(service)
        provider.add_span_processor(BatchSpanProcessor(exporter))
        return cls(provider)

    @classmethod
    def to_exporter(cls, service: str, exporter: SpanExporter) -> Tracing:
        """Spans of ``service`` to ``exporter`` as each ends (tests: an in-memory one)."""
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        provider = _provider(service)
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        return cls(provider)

    @property
    def enabled(self) -> bool:
        return self.provider is not None

    def server_interceptors(self) -> list[Any]:
        """gRPC server interceptors (outermost first): a span per call, its parent from the
        caller's metadata."""
        if self.provider is None:
            return []
        from opentelemetry.instrumentation.grpc import aio_server_interceptor

        return [aio_server_interceptor(tracer_provider=self.provider)]  # type: ignore[no-untyped-call]

    def client_interceptors(self) -> list[Any]:
        """gRPC client interceptors for a channel: a span per call, its context sent along."""
        if self.provider is None:
            return []
        from opentelemetry.instrumentation.grpc import aio_client_interceptors

        return list(aio_client_interceptors(tracer_provider=self.provider))  # type: ignore[no-untyped-call]

    def asgi(self, app: Any) -> Any:
        """``app`` wrapped in OpenTelemetry's ASGI middleware (a span per HTTP request), behind
        one that drops the client's trace headers: every request's span is a new root."""
        if self.provider is None:
            return app
        from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware

        return _DropTraceHeaders(OpenTelemetryMiddleware(app, tracer_provider=self.provider))

    @contextlib.contextmanager
    def span(
        self,
        name: str,
        parent: Context | Mapping[str, str] | None = None,
        attributes: Mapping[str, str | int] | None = None,
    ) -> Iterator[trace.Span]:
        """A span named ``name``, the current one while it lasts; its parent the current span,
        or ``parent``: a context, or a carrier (:meth:`carrier`'s) from another process."""
        if self.provider is None:
            yield trace.INVALID_SPAN
            return
        if parent is not None and not isinstance(parent, Context):
            parent = propagate.extract(dict(parent))
        tracer = self.provider.get_tracer("felt")
        with tracer.start_as_current_span(
            name, context=parent, attributes=dict(attributes or {})
        ) as span:
            yield span

    def carrier(self) -> dict[str, str]:
        """The current trace context as W3C headers (``traceparent``), to send along."""
        if self.provider is None:
            return {}
        headers: dict[str, str] = {}
        propagate.inject(headers)
        return headers

    def shutdown(self) -> None:
        """Send what is buffered and stop (at the process's end)."""
        if self.provider is not None:
            self.provider.shutdown()


def _provider(service: str) -> TracerProvider:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    return TracerProvider(resource=Resource.create({"service.name": service}))


UNTRUSTED_HEADERS = frozenset({b"traceparent", b"tracestate", b"baggage"})
"""The trace-context headers a public client may send and the gateway ignores."""


class _DropTraceHeaders:
    """ASGI middleware: the request's scope without :data:`UNTRUSTED_HEADERS`."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") in ("http", "websocket"):
            headers = [
                (k, v) for k, v in scope.get("headers", ()) if k.lower() not in UNTRUSTED_HEADERS
            ]
            scope = {**scope, "headers": headers}
        await self.app(scope, receive, send)


@contextlib.contextmanager
def attached(parent: Context | None) -> Iterator[None]:
    """Run the block in trace context ``parent`` (None: as it is)."""
    if parent is None:
        yield
        return
    token = otel_context.attach(parent)
    try:
        yield
    finally:
        otel_context.detach(token)
