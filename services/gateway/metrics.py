"""The gateway's Prometheus metrics, served on a port of their own (``FELT_GATEWAY_METRICS_PORT``)
rather than on the public HTTP server, whose every path a browser may reach.

:class:`MeteredApp` wraps the ASGI app: each HTTP request is counted by route and status
when its response starts, and timed to its end (a watch stream: its whole life). The
route is a known RPC (``/poker.v1.TableService/SubmitAction``), ``rpc`` for any other path
under a service, ``health``, or ``static``: the path a client sends is never a label
(bounded cardinality). The gauges read the open connections and watch streams when scraped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, MutableMapping
from typing import Any

from google.protobuf.descriptor import ServiceDescriptor
from prometheus_client import Counter, Gauge, Histogram
from starlette.types import ASGIApp, Receive, Scope, Send

from felt.service.metrics import RPC_BUCKETS, RpcMetrics


class GatewayMetrics(RpcMetrics):
    """One gateway's metrics (its registry: the metrics port's ``/metrics``)."""

    def __init__(self) -> None:
        super().__init__()
        self.requests_by_route = Counter(
            "felt_gateway_requests",
            "HTTP requests, by route (an RPC, rpc, health, static) and status.",
            ["route", "status"],
            registry=self.registry,
        )
        self.request_seconds = Histogram(
            "felt_gateway_request_seconds",
            "Time an HTTP request took, by route (a watch stream: its whole life).",
            ["route"],
            registry=self.registry,
            buckets=RPC_BUCKETS,
        )

    def watch(self, connections: Callable[[], int], streams: Callable[[], int]) -> None:
        """Gauges read when scraped: open client connections and watch streams."""
        Gauge(
            "felt_gateway_connections", "Open client connections.", registry=self.registry
        ).set_function(connections)
        Gauge(
            "felt_gateway_watch_streams", "Open WatchTable streams.", registry=self.registry
        ).set_function(streams)


def rpc_routes(*services: ServiceDescriptor) -> dict[str, str]:
    """Every RPC path the gateway serves -> its route label (the path itself)."""
    return {
        f"/{service.full_name}/{method.name}": f"/{service.full_name}/{method.name}"
        for service in services
        for method in service.methods
    }


class MeteredApp:
    """Counts and times every HTTP request ``app`` answers (see the module docstring)."""

    def __init__(self, app: ASGIApp, metrics: GatewayMetrics, routes: dict[str, str]) -> None:
        self.app, self.metrics, self.routes = app, metrics, routes
        self.services = tuple({path.rsplit("/", 1)[0] + "/" for path in routes})

    def route(self, path: str) -> str:
        known = self.routes.get(path)
        if known is not None:
            return known
        if path.startswith(self.services):
            return "rpc"
        if path in ("/healthz", "/livez"):
            return "health"
        return "static"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        route = self.route(scope["path"])
        started, status = time.perf_counter(), "disconnected"

        async def counted(message: MutableMapping[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = str(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, counted)
        finally:
            self.metrics.requests_by_route.labels(route, status).inc()
            self.metrics.request_seconds.labels(route).observe(time.perf_counter() - started)
