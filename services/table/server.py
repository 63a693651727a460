"""The table-service process: gRPC server, health, reflection, graceful shutdown.

Configuration comes from the environment (12-factor), so the same image runs
in development, CI and a cluster:

``REDIS_URL``            event store and AI stream (required)
``FELT_TABLE_ADDR``      listen address, default ``127.0.0.1:50051`` (``:0`` picks a port)
``FELT_TOKEN_SECRET``    HMAC secret for seat tokens (shared with the lobby)
``FELT_ADMIN_TOKEN``     bearer token for admin calls (unset: admin calls are open, dev only)
``FELT_AI_TOKEN``        bearer token AI workers act with for AI seats
``FELT_BETWEEN_HANDS_MS`` pause between hands (default 2000)
``FELT_LEASE_TTL_MS``    table lease TTL (default 5000); a crashed owner's tables move after it

A request message may be at most 64 KiB (``felt.api.limits.MAX_REQUEST_BYTES``); a bigger
one is RESOURCE_EXHAUSTED before it is parsed.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
from dataclasses import dataclass, field
from datetime import timedelta

import grpc
import structlog
from grpc_health.v1 import (  # type: ignore[import-untyped]
    health,
    health_pb2,
    health_pb2_grpc,
)
from grpc_reflection.v1alpha import reflection  # type: ignore[import-untyped]
from redis.asyncio import Redis

from felt.api.limits import MAX_REQUEST_BYTES
from felt.eventstore import RedisEventStore
from poker.v1 import table_service_pb2, table_service_pb2_grpc
from services.table.manager import AI_STREAM, TableManager
from services.table.runtime import Timing
from services.table.service import Secrets, TableService

log = structlog.get_logger("felt.table")

# No request is anywhere near this (felt.api.limits bounds every field); a bigger one is
# refused with RESOURCE_EXHAUSTED before it is even parsed.
_SERVER_OPTIONS = [("grpc.max_receive_message_length", MAX_REQUEST_BYTES)]
SERVICE_NAME = table_service_pb2.DESCRIPTOR.services_by_name["TableService"].full_name
DEV_SECRET = b"felt-development-secret-do-not-use-in-production"


@dataclass
class TableServerConfig:
    redis_url: str
    address: str = "127.0.0.1:50051"
    secrets: Secrets = field(default_factory=lambda: Secrets(DEV_SECRET))
    between_hands_ms: int = 2000
    lease_ttl_ms: int = 5000
    grace_s: float = 5.0
    # Where AI decision requests go (AI workers read the same stream; tests use their own).
    ai_stream: str = AI_STREAM

    @classmethod
    def from_env(cls) -> TableServerConfig:
        secret = os.environ.get("FELT_TOKEN_SECRET", "").encode()
        if not secret:
            log.warning("insecure_token_secret", hint="set FELT_TOKEN_SECRET in production")
            secret = DEV_SECRET
        admin = os.environ.get("FELT_ADMIN_TOKEN", "")
        if not admin:
            log.warning("admin_calls_open", hint="set FELT_ADMIN_TOKEN in production")
        return cls(
            redis_url=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
            address=os.environ.get("FELT_TABLE_ADDR", "127.0.0.1:50051"),
            secrets=Secrets(secret, admin, os.environ.get("FELT_AI_TOKEN", "")),
            between_hands_ms=int(os.environ.get("FELT_BETWEEN_HANDS_MS", "2000")),
            lease_ttl_ms=int(os.environ.get("FELT_LEASE_TTL_MS", "5000")),
        )


@dataclass
class RunningTableServer:
    server: grpc.aio.Server
    port: int
    manager: TableManager
    health: health.aio.HealthServicer
    redis: Redis
    grace_s: float
    store: RedisEventStore | None = None

    async def stop(self) -> None:
        """Stop taking calls, finish those in flight, then hand the tables back."""
        await self.health.enter_graceful_shutdown()
        await self.server.stop(self.grace_s)
        await self.manager.stop()
        if self.store is not None:
            await self.store.aclose()  # its own connection (the client is closed below)
        await self.redis.aclose()
        log.info("table_service_stopped", port=self.port)


async def start_table_server(config: TableServerConfig) -> RunningTableServer:
    """Start serving (tests use this with address ``127.0.0.1:0``)."""
    redis = Redis.from_url(config.redis_url)
    store = RedisEventStore(redis)
    manager = TableManager(
        store,
        redis,
        lease_ttl_ms=config.lease_ttl_ms,
        timing=Timing(between_hands=timedelta(milliseconds=config.between_hands_ms)),
        ai_stream=config.ai_stream,
    )
    server = grpc.aio.server(options=_SERVER_OPTIONS)
    table_service_pb2_grpc.add_TableServiceServicer_to_server(
        TableService(manager, config.secrets), server
    )
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    port = server.add_insecure_port(config.address)
    await server.start()
    await manager.start()
    await health_servicer.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
    await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    log.info("table_service_started", port=port, owner=manager.owner)
    return RunningTableServer(server, port, manager, health_servicer, redis, config.grace_s, store)


async def serve(config: TableServerConfig, ready: asyncio.Event | None = None) -> None:
    """Run until SIGTERM or SIGINT, then shut down gracefully."""
    running = await start_table_server(config)
    _tune_gc()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"table service listening on port {running.port}", flush=True)
    if ready is not None:
        ready.set()
    await stop.wait()
    await running.stop()


def _tune_gc() -> None:
    """Collect garbage less often: a request makes many short-lived objects but few cycles.

    What start-up created is frozen out of the collector's sight; young
    objects are collected every 20,000 allocations instead of 700.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)


def main() -> None:
    from felt.logging import configure_logging

    configure_logging(json=True)
    asyncio.run(serve(TableServerConfig.from_env()))


if __name__ == "__main__":
    main()
