"""The gateway's HTTP application (ASGI): Connect RPCs, CORS, health, the web client.

One port serves:

* ``/poker.v1.LobbyService/*``, ``/poker.v1.TableService/*`` and
  ``/poker.v1.HistoryService/*`` (the lobby's process serves it): the public RPCs
  of the three services (internal ones, service credentials and the operator's
  view refused here: ``services.gateway.edge``) over the Connect protocol (JSON
  or binary protobuf, unary and server streaming), gRPC-Web as well (both from ``connectrpc``'s
  generated ASGI applications, ``poker.v1.*_connect``), forwarded by
  ``services.gateway.forward``; request messages of at most 64 KiB;
* ``/healthz``: 200 while the table service and the lobby answer their gRPC
  health checks (503 and which one does not, else); ``/livez``: 200 while the
  gateway itself runs;
* everything else: the web client's files (``web/dist``, with ``index.html``
  for ``/``; a path outside it, ``..`` or a symlink out, is a 404), or a page
  saying how to build them.

Every answer carries the headers of ``SECURITY_HEADERS``: a strict
Content-Security-Policy (scripts, styles and calls from this origin only, no
framing), ``nosniff``, no referrer. A request header that is not visible ASCII
(which no HTTP client sends and gRPC metadata cannot carry) is refused 400
before it reaches an RPC.

Answers are sent uncompressed (see ``_ACCEPT_COMPRESSED``). CORS (Starlette's
middleware) admits the configured origins only, with the headers Connect and
gRPC-Web use; none configured, only same-origin pages (the web client served
here) can call.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc  # type: ignore[import-untyped]
from redis.asyncio import Redis
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.staticfiles import StaticFiles

from felt.service.table_router import Channels, TableRouter
from felt.storage.eventstore import RedisEventStore
from felt.storage.instances import RedisTableInstances
from felt.storage.redis_client import ready, redis_from_url
from felt.wire.attempts import FailedAttempts
from felt.wire.limits import MAX_REQUEST_BYTES
from felt.wire.tokens import is_watch_grant
from poker.v1 import (
    history_service_connect,
    history_service_pb2,
    lobby_service_connect,
    lobby_service_pb2,
    table_service_connect,
    table_service_pb2,
)
from services.gateway.caps import StreamCaps
from services.gateway.codecs import Raw, codecs
from services.gateway.config import GatewayConfig
from services.gateway.edge import Edge
from services.gateway.fanout import Metadata, SharedWatches
from services.gateway.forward import (
    FixedRoute,
    Forwarder,
    TableRoute,
    bearer,
    client_host,
    client_metadata,
    guarded_stream,
)
from services.gateway.metrics import GatewayMetrics, MeteredApp, rpc_routes
from services.gateway.raw_request import Request, has_field
from services.gateway.session_cookie import SessionCookies

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

TABLE_SERVICE = table_service_pb2.DESCRIPTOR.services_by_name["TableService"]
LOBBY_SERVICE = lobby_service_pb2.DESCRIPTOR.services_by_name["LobbyService"]
# Served by the lobby's process, beside LobbyService (docs/architecture.md, "The history service").
HISTORY_SERVICE = history_service_pb2.DESCRIPTOR.services_by_name["HistoryService"]

# What a browser may send and read cross-origin: the Connect and gRPC-Web protocols' headers.
CORS_ALLOW_HEADERS = [
    "authorization",
    "content-type",
    "connect-protocol-version",
    "connect-timeout-ms",
    "connect-accept-encoding",
    "connect-content-encoding",
    "grpc-timeout",
    "x-grpc-web",
    "x-user-agent",
]
CORS_EXPOSE_HEADERS = [
    "grpc-status",
    "grpc-message",
    "grpc-status-details-bin",
    "connect-content-encoding",
    "content-encoding",
]

# Answers are not compressed: Felt's messages are small (a request well under 1 KiB, a view a
# few KiB) and a stream sends one message per event to every watcher, so gzip would cost more
# CPU than it saves (every client accepts it, so every answer would be compressed; an ingress
# in front may compress what leaves the cluster). The headers by which a client offers to
# accept compressed answers are dropped; compressed requests are still read.
_ACCEPT_COMPRESSED = frozenset(
    (b"accept-encoding", b"connect-accept-encoding", b"grpc-accept-encoding")
)

# What a browser is told of every answer (the web client's pages above all): its scripts,
# styles and API calls come from this origin only (Vite builds no inline script; the favicon
# is a data: URI), no plugin, no <base>, no page may frame it (clickjacking: the action
# buttons); no content-type sniffing; no referrer sent on. Strict on purpose: were a server or
# player string ever rendered as HTML, no script it carried would run. (HSTS is the TLS
# terminator's to send: this port speaks plain HTTP.)
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
)

# A header value an RPC may carry: visible ASCII and spaces. gRPC metadata holds no other
# (a tab or a control character made the upstream call fail inside the gateway) and the
# Connect library decodes headers as UTF-8 (a Latin-1 byte was a 500 with Python's message).
_HEADER_VALUE = re.compile(rb"[\x20-\x7e]*")
_BAD_HEADER = json.dumps(
    {
        "code": "invalid_argument",
        "message": "a request header holds a character other than visible ASCII",
    }
).encode()

_NOT_BUILT = b"""<!doctype html><meta charset="utf-8"><title>Felt</title>
<h1>Felt is running</h1>
<p>The web client is not built yet (<code>web/dist</code> is missing). The API is served here
over Connect: see docs/gateway.md.</p>
"""


@dataclass
class Gateway:
    """The running gateway: its upstream channels, routes, caps and the ASGI app."""

    config: GatewayConfig
    channels: Channels = field(default_factory=Channels)
    redis: Redis | None = None
    router: TableRouter | None = None
    caps: StreamCaps | None = None
    shared: SharedWatches | None = None
    app: ASGIApp | None = None
    metrics: GatewayMetrics = field(default_factory=GatewayMetrics)

    @classmethod
    def create(cls, config: GatewayConfig) -> Gateway:
        """The gateway for ``config`` (channels connect on first use; call in the event loop)."""
        gateway = cls(config, Channels(config.tracing.client_interceptors()))
        if config.redis_url:
            gateway.redis = redis_from_url(config.redis_url)
            gateway.router = TableRouter(
                config.table_target,
                RedisEventStore(gateway.redis, pipeline=False),
                RedisTableInstances(gateway.redis),
                config.route_ttl_ms / 1000,
            )
        else:
            gateway.router = TableRouter(config.table_target)
        gateway.caps = StreamCaps(config.watch)
        deadline_s = config.deadline_ms / 1000
        tables = Forwarder(
            TABLE_SERVICE, gateway.channels, TableRoute(gateway.router), gateway.caps, deadline_s
        )
        lobby = Forwarder(
            LOBBY_SERVICE,
            gateway.channels,
            FixedRoute(config.lobby_target),
            gateway.caps,
            deadline_s,
        )
        history = Forwarder(
            HISTORY_SERVICE,
            gateway.channels,
            FixedRoute(config.lobby_target),
            gateway.caps,
            deadline_s,
        )
        gateway.shared = shared_watches(tables, config.watch.buffer)
        table_calls = tables.implementation()
        table_calls.watch_table = guarded_stream(
            _watch_table(table_calls.watch_table, gateway.shared, gateway.caps)
        )
        edge = Edge(FailedAttempts(config.attempts), client_host)  # services.gateway.edge
        rpc: dict[str, ASGIApp] = {}
        for connect_app in (
            table_service_connect.TableServiceASGIApplication(
                cast(table_service_connect.TableService, edge.guard(TABLE_SERVICE, table_calls)),
                read_max_bytes=MAX_REQUEST_BYTES,
                codecs=codecs(raw_requests=True),  # parsed once by upb, forwarded as sent
            ),
            lobby_service_connect.LobbyServiceASGIApplication(
                cast(
                    lobby_service_connect.LobbyService,
                    # a browser's refresh token in an HttpOnly cookie (session_cookie.py),
                    # around the edge's guard (only what players call is forwarded)
                    SessionCookies(config.secure_cookie).wrap(
                        edge.guard(LOBBY_SERVICE, lobby.implementation())
                    ),
                ),
                read_max_bytes=MAX_REQUEST_BYTES,
                codecs=codecs(),
            ),
            history_service_connect.HistoryServiceASGIApplication(
                cast(
                    history_service_connect.HistoryService,
                    edge.guard(HISTORY_SERVICE, history.implementation()),
                ),
                read_max_bytes=MAX_REQUEST_BYTES,
                codecs=codecs(),
            ),
        ):
            rpc[connect_app.path + "/"] = cast(ASGIApp, connect_app)
        inner = _Dispatch(rpc, gateway.health, _static(config.static_dir))
        app: ASGIApp = inner
        if config.origins:
            app = cast(
                ASGIApp,
                CORSMiddleware(
                    cast(Any, inner),
                    allow_origins=list(config.origins),
                    allow_methods=["GET", "POST"],
                    allow_headers=CORS_ALLOW_HEADERS,
                    expose_headers=CORS_EXPOSE_HEADERS,
                    max_age=7200,
                ),
            )
        gateway.app = cast(
            ASGIApp,
            config.tracing.asgi(
                MeteredApp(
                    app, gateway.metrics, rpc_routes(TABLE_SERVICE, LOBBY_SERVICE, HISTORY_SERVICE)
                )
            ),
        )
        return gateway

    async def connect(self) -> None:
        """Open what must be open before the first request (a Redis Cluster's slot map)."""
        if self.redis is not None:
            await ready(self.redis)

    async def health(self) -> dict[str, str]:
        """Each upstream's gRPC health status (``SERVING`` when it is well)."""
        targets = {"table": self.config.table_target, "lobby": self.config.lobby_target}
        results = await asyncio.gather(*(self._check(t) for t in targets.values()))
        return dict(zip(targets, results, strict=True))

    async def _check(self, target: str) -> str:
        stub = health_pb2_grpc.HealthStub(self.channels.get(target))
        try:
            reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=1.0)
        except grpc.aio.AioRpcError as exc:
            return f"UNREACHABLE ({exc.code().name})"
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))

    async def close(self) -> None:
        await self.channels.close()
        if self.redis is not None:
            await self.redis.aclose()


def shared_watches(tables: Forwarder, buffer: int) -> SharedWatches:
    """Spectators' streams, one upstream ``WatchTable`` per table (``services.gateway.fanout``)."""
    method = TABLE_SERVICE.methods_by_name["WatchTable"]

    def relay(request: Request, metadata: Metadata) -> AsyncIterator[Raw]:
        return tables.relay(method, request, metadata, None)

    return SharedWatches(relay, buffer)


def _watch_table(forwarded: Any, shared: SharedWatches, caps: StreamCaps) -> Any:
    """``WatchTable``: a seat's stream of its own (its cards are its own), an anonymous
    spectator's shared, one with a credential (a watch grant) its own."""

    async def watch_table(request: Request, ctx: Any) -> AsyncIterator[Raw]:
        if has_field(request, "seat") or is_watch_grant(bearer(ctx)):
            # A seat's stream, or a private table's spectator's (its watch grant): one of its
            # own, counted once, by the forwarder that opens it (``Forwarder._server_stream``).
            # The shared feed is opened with no credential, which a private table refuses (it
            # would end every watcher's stream with its NOT_FOUND); any other token watches
            # through the shared feed, so tokens buy no extra streams.
            async for item in forwarded(request, ctx):
                yield item
            return
        with caps.admit(bearer(ctx), client_host(ctx)):
            async for item in shared.watch(request, client_metadata(ctx)):
                yield item

    return watch_table


def _static(directory: Path) -> ASGIApp:
    if (directory / "index.html").is_file():
        return _Files(StaticFiles(directory=directory, html=True))
    return _not_built


class _Files:
    """The web client's files; a path that names none (a ``..`` out of the directory, a
    symlink out of it, nothing there) a plain 404, a method other than GET or HEAD a 405.

    Starlette's ``StaticFiles`` says so by raising ``HTTPException``, which only a Starlette
    application turns into an answer: served bare, every such request was a 500.
    """

    def __init__(self, files: StaticFiles) -> None:
        self.files = files

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.files(cast(Any, scope), cast(Any, receive), cast(Any, send))
        except HTTPException as exc:
            status = 404 if exc.status_code == 401 else exc.status_code  # 401: unreadable
            body = b"not found" if status == 404 else exc.detail.encode()
            extra = [(k.lower().encode(), v.encode()) for k, v in (exc.headers or {}).items()]
            await _respond(send, status, body, b"text/plain", extra)


async def _not_built(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["path"] != "/":
        await _respond(send, 404, b"not found", b"text/plain")
        return
    await _respond(send, 200, _NOT_BUILT, b"text/html; charset=utf-8")


async def _respond(
    send: Send,
    status: int,
    body: bytes,
    content_type: bytes,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    headers = [(b"content-type", content_type), (b"content-length", b"%d" % len(body))]
    await send(
        {"type": "http.response.start", "status": status, "headers": headers + (extra or [])}
    )
    await send({"type": "http.response.body", "body": body})


def _secured(send: Send) -> Send:
    """``send``, with ``SECURITY_HEADERS`` added to the answer's start (unless set)."""

    async def secured(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", ()))
            present = {bytes(name).lower() for name, _ in headers}
            headers.extend(h for h in SECURITY_HEADERS if h[0] not in present)
            message = {**message, "headers": headers}
        await send(message)

    return secured


def _plain_ascii(scope: Scope) -> bool:
    """Every header value and the query string visible ASCII (``_HEADER_VALUE``)."""
    if not _HEADER_VALUE.fullmatch(scope.get("query_string", b"")):
        return False
    return all(_HEADER_VALUE.fullmatch(value) for _, value in scope["headers"])


class _Dispatch:
    """Routes a request by its path: an RPC to its service's app, health, else static."""

    def __init__(
        self,
        rpc: dict[str, ASGIApp],
        health: Callable[[], Awaitable[dict[str, str]]],
        static: ASGIApp,
    ) -> None:
        self.rpc = rpc
        self.health = health
        self.static = static

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return  # no websockets here
        path: str = scope["path"]
        send = _secured(send)
        for prefix, app in self.rpc.items():
            if path.startswith(prefix):
                if not _plain_ascii(scope):
                    await _respond(send, 400, _BAD_HEADER, b"application/json")
                    return
                headers = [h for h in scope["headers"] if h[0] not in _ACCEPT_COMPRESSED]
                await app({**scope, "headers": headers}, receive, send)
                return
        if path == "/livez":
            await _respond(send, 200, b"ok", b"text/plain")
            return
        if path == "/healthz":
            statuses = await self.health()
            ok = all(s == "SERVING" for s in statuses.values())
            body = json.dumps(statuses).encode()
            await _respond(send, 200 if ok else 503, body, b"application/json")
            return
        await self.static(scope, receive, send)


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
