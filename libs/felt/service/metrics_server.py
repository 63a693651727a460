"""``/metrics``, ``/healthz`` and ``/readyz`` of a Felt process, over plain HTTP.

``GET /metrics`` is the Prometheus text format of the process's own
``CollectorRegistry``. ``GET /healthz`` is liveness: 200 while the process
has talked to its backends recently, 503 otherwise. ``GET /readyz`` is
readiness: 200 while it takes new work, 503 while it drains.

The server is a few lines on ``asyncio.start_server`` rather than
``prometheus_client.start_http_server`` so it runs on the process's event
loop (no thread), binds port 0 in tests, and stops with the process. Every
service serves its metrics with it (its registry: :mod:`felt.service.metrics`), on a port
of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from prometheus_client.exposition import CONTENT_TYPE_LATEST


class Exposes(Protocol):
    """Metrics that can write themselves in the Prometheus text format."""

    def exposition(self) -> bytes: ...


@dataclass
class Health:
    """What the health endpoints report; the worker updates it as it runs."""

    last_redis_ok: float = 0.0
    accepting: bool = False
    stale_after_s: float = 15.0

    def live(self) -> bool:
        return time.monotonic() - self.last_redis_ok < self.stale_after_s


class MetricsServer:
    """``/metrics``, ``/healthz`` and ``/readyz`` on one port (see the module docstring)."""

    def __init__(
        self, metrics: Exposes, health: Health, details: Callable[[], dict[str, object]]
    ) -> None:
        self.metrics = metrics
        self.health = health
        self.details = details
        self._server: asyncio.Server | None = None
        self.port = 0

    async def start(self, host: str, port: int) -> int:
        self._server = await asyncio.start_server(self._handle, host, port)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self.port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = await asyncio.wait_for(reader.readline(), timeout=5)
            while True:  # skip headers; no request has a body
                line = await asyncio.wait_for(reader.readline(), timeout=5)
                if line in (b"\r\n", b"\n", b""):
                    break
            parts = request_line.decode("latin-1").split()
            path = parts[1].split("?", 1)[0] if len(parts) >= 2 else "/"
            status, content_type, body = self._route(path)
            head = (
                f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            )
            writer.write(head.encode() + body)
            await writer.drain()
        except (TimeoutError, ConnectionError, UnicodeDecodeError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def _route(self, path: str) -> tuple[str, str, bytes]:
        if path == "/metrics":
            return "200 OK", CONTENT_TYPE_LATEST, self.metrics.exposition()
        if path in ("/healthz", "/readyz"):
            live = self.health.live()
            ok = live if path == "/healthz" else live and self.health.accepting
            body = json.dumps({"ok": ok, **self.details()}).encode()
            status = "200 OK" if ok else "503 Service Unavailable"
            return status, "application/json", body
        return "404 Not Found", "text/plain", b"not found: try /metrics, /healthz or /readyz\n"
