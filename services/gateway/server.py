"""The gateway process: the ASGI app on uvicorn, until SIGTERM or SIGINT.

uvicorn (with uvloop and httptools) serves HTTP/1.1, which carries the Connect
protocol's unary and streaming calls and gRPC-Web; every connection is bounded
(``services.gateway.connections``: its head, its body, per client address);
it stops taking connections on a signal and gives open streams a few seconds
to end.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

import structlog
import uvicorn

from felt.service.garbage import collect_less_often
from felt.service.metrics_server import Health, MetricsServer
from felt.service.rpc import on_stop_signal
from services.gateway.app import Gateway
from services.gateway.config import GatewayConfig
from services.gateway.connections import ConnectionCounts, bounded_protocol
from services.grpc_server import PortInUse
from services.settings import ConfigError

log = structlog.get_logger("felt.gateway")

# Open watch streams are cut after this on shutdown (clients resume from their last event).
SHUTDOWN_GRACE_S = 3


def _uvicorn_config(gateway: Gateway, config: GatewayConfig) -> uvicorn.Config:
    assert gateway.app is not None and gateway.caps is not None
    protocol = bounded_protocol(config.connections, config.forwarded_allow_ips)
    counts: ConnectionCounts = getattr(protocol, "counts")  # noqa: B009 - set by bounded_protocol
    caps = gateway.caps
    gateway.metrics.watch(connections=lambda: counts.total, streams=lambda: caps.total)
    return uvicorn.Config(
        cast(Any, gateway.app),
        host=config.host,
        port=config.port,
        loop="uvloop",
        # Every connection bounded (head, body, per address: services.gateway.connections).
        http=protocol,
        ws="none",  # no websockets here: an upgrade would leave the bounds behind
        forwarded_allow_ips=config.forwarded_allow_ips,
        lifespan="on",
        log_config=None,
        access_log=False,
        server_header=False,
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
    )


def listen(config: GatewayConfig) -> socket.socket:
    """The listening socket (bound here, so a taken port is a clear refusal and port 0
    picks a free one); raises :class:`PortInUse`."""
    family = socket.AF_INET6 if ":" in config.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((config.host, config.port))
    except OSError as exc:
        sock.close()
        raise PortInUse(
            f"cannot listen on {config.address}: {exc.strerror} (is another gateway running "
            "there?); choose another address (FELT_GATEWAY_ADDR)"
        ) from None
    sock.listen(1024)
    sock.set_inheritable(True)
    return sock


@dataclass
class RunningGateway:
    """A gateway serving in this event loop (tests, benchmarks): ``port``, then ``stop()``."""

    gateway: Gateway
    server: uvicorn.Server
    task: asyncio.Task[None]
    port: int
    http: MetricsServer | None = None  # FELT_GATEWAY_METRICS_PORT, if served

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def stop(self) -> None:
        self.server.should_exit = True
        await self.task
        if self.http is not None:
            await self.http.stop()
        await self.gateway.close()


async def start_gateway(config: GatewayConfig) -> RunningGateway:
    """Serve ``config`` (address ``127.0.0.1:0`` picks a port) until ``stop()``."""
    sock = listen(config)
    gateway = Gateway.create(config)
    await gateway.connect()
    server = uvicorn.Server(_uvicorn_config(gateway, config))
    server.capture_signals = _no_signals  # type: ignore[method-assign]  # the caller's loop
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            await task  # raises what stopped it
            raise RuntimeError("the gateway stopped while starting")
        await asyncio.sleep(0.01)
    http = await serve_metrics(gateway, config)
    return RunningGateway(gateway, server, task, sock.getsockname()[1], http)


async def serve_metrics(gateway: Gateway, config: GatewayConfig) -> MetricsServer | None:
    """``/metrics``, ``/healthz``, ``/readyz`` on ``FELT_GATEWAY_METRICS_PORT``, if set (the
    health endpoints only say the process answers; the public ``/healthz`` asks upstream)."""
    if config.metrics_port is None:
        return None
    http = MetricsServer(gateway.metrics, Health(stale_after_s=float("inf"), accepting=True), dict)
    port = await http.start(config.metrics_host, config.metrics_port)
    log.info("gateway_metrics_serving", port=port)
    return http


@contextlib.contextmanager
def _no_signals() -> Iterator[None]:
    yield


async def serve(config: GatewayConfig, sock: socket.socket) -> None:
    gateway = Gateway.create(config)
    server = uvicorn.Server(_uvicorn_config(gateway, config))
    # Our own signal handlers: uvicorn's re-raise the signal once it has stopped, which would
    # end the process before the channels are closed (and with the signal's status, not 0).
    # Installed before anything connects: a signal while it starts stops it as any stop does
    # (uvicorn starts and ends at once), logged, not at once by Python's default for SIGTERM.
    server.capture_signals = _no_signals  # type: ignore[method-assign]
    on_stop_signal(lambda: setattr(server, "should_exit", True))
    await gateway.connect()
    loop = asyncio.get_running_loop()
    host, port = sock.getsockname()[:2]
    announce = loop.create_task(_announce(server, host, port))
    http = await serve_metrics(gateway, config)
    try:
        await server.serve(sockets=[sock])  # returns after SIGTERM/SIGINT
    finally:
        announce.cancel()
        if http is not None:
            await http.stop()
        await gateway.close()
        log.info("gateway_stopped")


async def _announce(server: uvicorn.Server, host: str, port: int) -> None:
    while not server.started:
        await asyncio.sleep(0.02)
    collect_less_often()  # a thousand open streams are many objects for a full collection
    shown = f"[{host}]" if ":" in host else host
    log.info("gateway_started", port=port)
    print(f"gateway listening on http://{shown}:{port}", flush=True)


def run_service() -> int:
    """``felt gateway``: serve until stopped; 2 with a message for a refused start."""
    try:
        config = GatewayConfig.from_env()
        sock = listen(config)
    except (ConfigError, PortInUse) as exc:
        print(f"felt gateway: {exc}", file=sys.stderr, flush=True)
        return 2
    log.info(
        "gateway_starting",
        address=config.address,
        table=config.table_target,
        lobby=config.lobby_target,
        routing="leases" if config.redis_url else "single table service",
        origins=list(config.origins),
    )
    import uvloop

    uvloop.run(serve(config, sock))
    return 0
