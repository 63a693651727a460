"""``felt projector``: one projector process (configuration in ``services.projector.config``).

Operators scale by starting more: the live projectors share the registered
tables by rendezvous hashing and per-table leases (``services.projector.projector``).
SIGTERM or SIGINT stops it gracefully: the read in progress ends, its write
commits (or not, and is read again by whoever follows the table next), the
leases are released so the other projectors take the tables at their next
scan, and it leaves the member set. SIGKILL loses nothing either: the stored
cursors say where to resume.

``/metrics``, ``/healthz`` (200 while Redis and PostgreSQL answered in the last
15 s) and ``/readyz`` on ``FELT_PROJECTOR_METRICS_PORT`` (``felt.service.metrics_server``).
"""

from __future__ import annotations

import asyncio
import sys
import time

import asyncpg
import structlog

from felt.service.metrics_server import MetricsServer
from felt.service.rpc import on_stop_signal, stop_event, until_stopped
from felt.storage.archive.feed import RedisProjectorFeed
from felt.storage.archive.postgres import PostgresHandArchive
from felt.storage.redis_client import connect_redis
from felt.storage.registry import RedisTableRegistry
from services.projector.config import ProjectorConfig
from services.projector.metrics import ProjectorMetrics
from services.projector.projector import Projector
from services.settings import ConfigError

log = structlog.get_logger("felt.projector")


async def _schema_ready(pool: asyncpg.Pool, wait_s: float) -> None:
    """The archive's tables exist; in development mode, wait up to ``wait_s`` for them (the
    process runner may start ``felt lobby --dev``, which migrates, at the same time)."""
    deadline = time.monotonic() + wait_s
    while await pool.fetchval("SELECT to_regclass('archive_cursors')") is None:
        if time.monotonic() >= deadline:
            raise ConfigError("the archive's tables are missing: run `felt db migrate` first")
        await asyncio.sleep(0.5)


async def serve(config: ProjectorConfig) -> int:
    """Run until SIGTERM/SIGINT; 0 when stopped.

    The signals are handled from the start: a signal while it connects stops it once
    connected, and one while it waits for the archive's tables ends the wait; either way it
    logs ``projector_stopped``, not ended at once by Python's default for SIGTERM."""
    stop = stop_event()
    pool = await asyncpg.create_pool(config.database_url, min_size=1, max_size=config.pool_size)
    redis = await connect_redis(config.redis_url)
    http: MetricsServer | None = None
    try:
        member = config.member
        if not await until_stopped(stop, _schema_ready(pool, 60.0 if config.dev_mode else 0.0)):
            log.info("projector_stopped", member=member)
            return 0
        metrics = ProjectorMetrics(member)
        projector = Projector(
            member,
            RedisProjectorFeed(redis),
            RedisTableRegistry(redis),
            PostgresHandArchive(pool),
            metrics,
            lease_ms=config.lease_ms,
            scan_ms=config.scan_ms,
            read_count=config.read_count,
            block_ms=config.block_ms,
            writers=config.writers,
        )
        if config.metrics_port is not None:

            def details() -> dict[str, object]:
                return {"member": member, "tables": len(projector.following)}

            http = MetricsServer(metrics, projector.health, details)
            port = await http.start(config.metrics_host, config.metrics_port)
        else:
            port = None
        on_stop_signal(projector.request_stop)  # in place of stop.set
        if stop.is_set():
            projector.request_stop()
        projector.health.last_redis_ok = time.monotonic()
        log.info("projector_started", member=member, metrics_port=port)
        print(f"projector {member} archiving (metrics port {port})", flush=True)
        await projector.run()
        return 0
    finally:
        if http is not None:
            await http.stop()
        await redis.aclose()
        await pool.close()


def run_service(config: ProjectorConfig | None = None) -> int:
    """``felt projector``: serve until stopped; 2 with a message for a refused start."""
    try:
        return asyncio.run(serve(config or ProjectorConfig.from_env()))
    except ConfigError as exc:
        log.error("projector_refused_to_start", error=str(exc))
        print(f"felt projector: {exc}", file=sys.stderr, flush=True)
        return 2
