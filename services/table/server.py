"""The table-service process: gRPC server, health, reflection, graceful shutdown.

Configuration comes from the environment (12-factor), so the same image runs
in development, CI and a cluster:

``REDIS_URL``            event store and AI stream (required)
``FELT_TABLE_ADDR``      listen address, default ``127.0.0.1:50051`` (``:0`` picks a port)
``FELT_TABLE_INTERNAL_ADDR`` a second listen address for the internal calls (the lobby's, the AI
                         workers'); set, the first one no longer serves the internal calls
                         (``services.table.public_port``); unset (default), one port serves all
``FELT_TOKEN_SECRET``    HMAC secret for seat tokens (shared with the lobby), at least 32 bytes
``FELT_ADMIN_TOKEN``     the service credential: the lobby's bearer token for internal calls
``FELT_AI_TOKEN``        bearer token AI workers act with for AI seats
``FELT_SEAT_TOKEN_TTL_S`` lifetime of the seat tokens issued (default 86400, one day)
``FELT_DEV_MODE``        ``1``: development mode (see below; ``felt serve --dev`` sets it)
``FELT_INSTANCE_ID``     this instance's lease identity (default ``<hostname>:<port>``)
``FELT_TABLE_ADVERTISE_ADDR`` where others (the gateway) reach this instance, announced in the
                         instance directory (``felt.storage.instances``); default the listen host
                         (the host name for ``0.0.0.0``) and the bound port
``FELT_TABLE_INTERNAL_ADVERTISE_ADDR`` where the lobby and the AI workers reach the internal
                         port, announced in the internal directory; default its listen host
                         and bound port (no internal port: the advertised address)
``FELT_BETWEEN_HANDS_MS`` pause between hands (default 2000)
``FELT_LEASE_TTL_MS``    table lease TTL (default 5000); a crashed owner's tables move after it
``FELT_TABLE_IDLE_GRACE_S`` seconds a table with no person seated and nobody watching deals on
                         before it rests (default 60; 0: never rests; ``services.table.rest``)
``FELT_WATCH_MAX_STREAMS`` ``WatchTable`` streams in this instance (default 1000)
``FELT_WATCH_MAX_PER_PEER`` ``WatchTable`` streams per client address (default 64)
``FELT_TRUSTED_PROXIES`` proxies (the gateway) whose ``x-forwarded-for`` names the client whose
                         streams are counted (addresses or networks, comma separated)
``FELT_WATCH_SEAT_RESERVE`` of the instance's streams, those only seats' own may use (100)
``FELT_SEAT_RATE_PER_S``, ``FELT_SEAT_RATE_BURST`` mutations per caller and second (10), burst (30)
``FELT_WATCH_BUFFER``    events a watcher may fall behind before it is dropped (default 512)
``FELT_WATCH_REPLAYS``   watchers reading history at once (default 4)
``FELT_WATCH_PAGE``      events per history read (default 200)
``FELT_AUTH_FAILURE_BURST``, ``FELT_AUTH_FAILURE_PER_MIN`` failed credential attempts one client
                         address may make at once (20) and then per minute (30); past them
                         RESOURCE_EXHAUSTED ``AUTH_THROTTLED`` (``felt.wire.attempts``)
``FELT_TABLE_METRICS_PORT`` ``/metrics``, ``/healthz``, ``/readyz`` (``services.table.metrics``;
                         default off, ``0``: any free port), on ``FELT_TABLE_METRICS_HOST``
``FELT_GRPC_REFLECTION`` ``1``/``0``: gRPC reflection on or off (default: on in development
                         mode only)

Production mode (the default) refuses to start without a token secret of at
least 32 bytes (and never with the development secret), or without an admin
token and an AI token of at least 32 bytes each, different, and not shaped like
a player's token (``felt.wire.credentials``): anyone who knows the secret can
mint every seat's token, the development secret is public, and a short
credential can be guessed. Development mode must be asked for; it fills
in the development secret and, without ``FELT_ADMIN_TOKEN``, the public
development service credential (``DEV_SERVICE_TOKEN``), and says so in the
log. Internal calls are never open to a caller without the credential.

The instance id is what a table's lease names as its owner. The default,
host name and bound port, survives a restart of the process (the port is
bound exclusively, so no two live instances share it): an instance killed
and restarted at once recognises its own leases and takes its tables back
without waiting for them to expire.

A request message may be at most 64 KiB (``felt.wire.limits.MAX_REQUEST_BYTES``); a bigger
one is RESOURCE_EXHAUSTED before it is parsed.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import time
from collections.abc import Mapping
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

from felt.config import settings as S
from felt.config.settings import environment
from felt.service.garbage import collect_less_often
from felt.service.metrics_server import Health, MetricsServer
from felt.service.rpc import run, serve_until_stopped
from felt.service.tracing import Tracing
from felt.storage.decisions import (
    AI_STREAM,
    agree_on_shards,
    ai_stream_from_env,
    redis_sharded_queue,
)
from felt.storage.eventstore import RedisEventStore
from felt.storage.instances import INTERNAL_INSTANCE_KEY_PREFIX, RedisTableInstances
from felt.storage.redis_client import connect_redis
from felt.storage.registry import RedisTableRegistry
from felt.wire.attempts import AttemptLimits, FailedAttempts
from felt.wire.clients import TrustedProxies
from felt.wire.credentials import credential_problems
from felt.wire.limits import MAX_REQUEST_BYTES
from poker.v1 import table_service_pb2, table_service_pb2_grpc
from services.grpc_server import PortInUse, aio_server, bind
from services.settings import ConfigError as ConfigError
from services.settings import attempt_limits, reflection_setting, trusted_proxies
from services.table.announce import Announcer, advertised_address
from services.table.auth import DEV_SERVICE_TOKEN, Authenticator, Secrets
from services.table.interceptors import auth_interceptor, call_interceptor
from services.table.manager import TableManager
from services.table.metrics import MeteredDecisionQueue, MeteredEventStore, TableMetrics
from services.table.public_port import PublicPortInterceptor
from services.table.ratelimit import RateLimits
from services.table.rest import RestPolicy
from services.table.runtime import Timing
from services.table.service import TableService
from services.table.snapshots import SnapshotPolicy
from services.table.watch import WatchHub, WatchLimits

log = structlog.get_logger("felt.table")

# No request is anywhere near this (felt.wire.limits bounds every field); a bigger one is
# refused with RESOURCE_EXHAUSTED before it is even parsed.
_SERVER_OPTIONS = (("grpc.max_receive_message_length", MAX_REQUEST_BYTES),)
SERVICE_NAME = table_service_pb2.DESCRIPTOR.services_by_name["TableService"].full_name
DEV_SECRET = b"felt-development-secret-do-not-use-in-production"
MIN_SECRET_BYTES = 32
MAX_TOKEN_TTL_S = S.FELT_SEAT_TOKEN_TTL_S.high


@dataclass
class TableServerConfig:
    redis_url: str
    address: str = "127.0.0.1:50051"
    # FELT_TABLE_INTERNAL_ADDR: the internal calls' own port ("" : the one port serves all).
    internal_address: str = ""
    secrets: Secrets = field(default_factory=lambda: Secrets(DEV_SECRET))
    between_hands_ms: int = 2000
    lease_ttl_ms: int = 5000
    ai_reask_ms: int = S.FELT_TABLE_AI_REASK_MS.default
    # FELT_TABLE_IDLE_GRACE_S (services.table.rest). Unset in the environment: 60 s; a config
    # built in code (tests, benchmarks) never rests unless it says so.
    idle_grace_s: int = 0
    grace_s: float = 5.0
    # Where AI decision requests go (FELT_AI_STREAM; AI workers read the same stream).
    ai_stream: str = AI_STREAM
    # FELT_DECISION_SHARDS: the requests go to "<ai_stream>:{<crc32(table) % shards>}".
    decision_shards: int = S.FELT_DECISION_SHARDS.default
    # Development mode: the public development secret and service credential are allowed.
    dev_mode: bool = False
    # The lease owner name; empty: "<hostname>:<bound port>" (see the module docstring).
    instance_id: str = ""
    # Where the gateway reaches this instance; empty: the listen host and the bound port.
    advertise: str = ""
    # FELT_TABLE_INTERNAL_ADVERTISE_ADDR: where the lobby and the AI workers reach the internal
    # port ("": its listen host and bound port).
    internal_advertise: str = ""
    watch: WatchLimits = field(default_factory=WatchLimits)
    # Whose x-forwarded-for names the client (the gateway): FELT_TRUSTED_PROXIES.
    proxies: TrustedProxies = field(default_factory=TrustedProxies)
    rate: RateLimits = field(default_factory=RateLimits)
    snapshots: SnapshotPolicy = field(default_factory=SnapshotPolicy)
    # Failed credential attempts per client address (FELT_AUTH_FAILURE_*).
    attempts: AttemptLimits = field(default_factory=AttemptLimits)
    # gRPC reflection (FELT_GRPC_REFLECTION); None: in development mode only.
    reflection: bool | None = None
    # /metrics, /healthz, /readyz (FELT_TABLE_METRICS_PORT; None: not served).
    metrics_port: int | None = None
    metrics_host: str = S.FELT_TABLE_METRICS_HOST.default
    # OpenTelemetry (FELT_TRACING; off by default): a span per call and per AI request.
    tracing: Tracing = field(default_factory=Tracing.off)

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, *, dev: bool = False
    ) -> TableServerConfig:
        """The configuration from the environment; ``dev`` (or ``FELT_DEV_MODE=1``) asks for
        development mode. Raises :class:`ConfigError` on a malformed value."""
        env = environment(environ)
        dev = dev or S.FELT_DEV_MODE.read(env)
        secret = S.FELT_TOKEN_SECRET.read(env).encode()
        admin = S.FELT_ADMIN_TOKEN.read(env)
        if dev:
            secret = secret or DEV_SECRET
            admin = admin or DEV_SERVICE_TOKEN
        return cls(
            redis_url=S.REDIS_URL.read(env) or S.LOCAL_REDIS,
            address=S.FELT_TABLE_ADDR.read(env),
            internal_address=S.FELT_TABLE_INTERNAL_ADDR.read(env),
            secrets=Secrets(
                secret, admin, S.FELT_AI_TOKEN.read(env), S.FELT_SEAT_TOKEN_TTL_S.read(env)
            ),
            between_hands_ms=S.FELT_BETWEEN_HANDS_MS.read(env),
            lease_ttl_ms=S.FELT_LEASE_TTL_MS.read(env),
            ai_reask_ms=S.FELT_TABLE_AI_REASK_MS.read(env),
            idle_grace_s=S.FELT_TABLE_IDLE_GRACE_S.read(env),
            dev_mode=dev,
            instance_id=S.FELT_INSTANCE_ID.read(env),
            advertise=S.FELT_TABLE_ADVERTISE_ADDR.read(env),
            internal_advertise=S.FELT_TABLE_INTERNAL_ADVERTISE_ADDR.read(env),
            ai_stream=ai_stream_from_env(env),
            decision_shards=S.FELT_DECISION_SHARDS.read(env),
            watch=WatchLimits.from_env(env),
            proxies=trusted_proxies(env),
            rate=RateLimits.from_env(env),
            snapshots=SnapshotPolicy.from_env(env),
            attempts=attempt_limits(env),
            reflection=reflection_setting(env, dev),
            metrics_port=S.FELT_TABLE_METRICS_PORT.read(env),
            metrics_host=S.FELT_TABLE_METRICS_HOST.read(env),
            tracing=Tracing.from_settings("felt-table-service", env),
        )

    @property
    def reflects(self) -> bool:
        """Whether the server answers gRPC reflection."""
        return self.dev_mode if self.reflection is None else self.reflection

    def check(self) -> None:
        """Refuse an unsafe configuration outside development mode; log the mode either way."""
        secret, admin = self.secrets.token_secret, self.secrets.admin_token
        if self.dev_mode:
            log.warning(
                "development_mode",
                insecure_secret=secret == DEV_SECRET,
                public_service_token=admin == DEV_SERVICE_TOKEN,
                hint="never expose a development-mode table service; unset FELT_DEV_MODE",
            )
            return
        problems = []
        if secret == DEV_SECRET:
            problems.append("FELT_TOKEN_SECRET is the public development secret")
        elif len(secret) < MIN_SECRET_BYTES:
            problems.append(
                f"FELT_TOKEN_SECRET must be at least {MIN_SECRET_BYTES} bytes "
                f"(it has {len(secret)}); e.g. `openssl rand -base64 48`"
            )
        if admin == DEV_SERVICE_TOKEN:
            problems.append("FELT_ADMIN_TOKEN is the public development service credential")
        elif not admin:
            problems.append("FELT_ADMIN_TOKEN is unset (it is the service credential)")
        else:
            problems.extend(
                credential_problems(
                    {S.FELT_ADMIN_TOKEN.name: admin, S.FELT_AI_TOKEN.name: self.secrets.ai_token}
                )
            )
        if not 0 < self.secrets.token_ttl_s <= MAX_TOKEN_TTL_S:
            problems.append(f"the seat token lifetime must be 1 s to {MAX_TOKEN_TTL_S} s")
        if problems:
            raise ConfigError(
                "refusing to start in production mode: "
                + "; ".join(problems)
                + ". For development only, set FELT_DEV_MODE=1 (or run `felt serve --dev`)."
            )
        log.info("production_mode", token_ttl_s=self.secrets.token_ttl_s, reflection=self.reflects)


@dataclass
class RunningTableServer:
    server: grpc.aio.Server
    port: int
    manager: TableManager
    health: health.aio.HealthServicer
    redis: Redis
    grace_s: float
    store: RedisEventStore | None = None
    watches: WatchHub | None = None
    announcer: Announcer | None = None
    # The internal calls' server and port (FELT_TABLE_INTERNAL_ADDR), if it has one.
    internal: grpc.aio.Server | None = None
    internal_port: int | None = None
    metrics: TableMetrics | None = None
    # /metrics, /healthz, /readyz (FELT_TABLE_METRICS_PORT), if served.
    http: MetricsServer | None = None
    # The watch feeds' own client and store (``feed_connections``).
    feeds: Redis | None = None
    feed_store: RedisEventStore | None = None

    async def stop(self) -> None:
        """Stop taking calls, finish those in flight, then hand the tables back."""
        await self.health.enter_graceful_shutdown()
        if self.http is not None:
            self.http.health.accepting = False
        servers = [s for s in (self.server, self.internal) if s is not None]
        await asyncio.gather(*(s.stop(self.grace_s) for s in servers))
        if self.watches is not None:
            await self.watches.aclose()
        if self.feed_store is not None:
            await self.feed_store.aclose()
        if self.feeds is not None:
            await self.feeds.aclose()
        await self.manager.stop()
        if self.announcer is not None:
            await self.announcer.stop()
        if self.store is not None:
            await self.store.aclose()  # its own connection (the client is closed below)
        await self.redis.aclose()
        if self.http is not None:
            await self.http.stop()
        log.info("table_service_stopped", port=self.port)


def feed_connections(limits: WatchLimits) -> int:
    """Connections the watch feeds' Redis client may open: one blocking read per watched
    table (at most one table per stream) and one per history replay, with a few to spare."""
    return limits.max_streams + limits.replays + 8


async def start_table_server(config: TableServerConfig) -> RunningTableServer:
    """Start serving (tests use this with address ``127.0.0.1:0``).

    Raises :class:`ConfigError` for an unsafe configuration and :class:`PortInUse`
    when the address is taken, before touching any table.
    """
    config.check()
    metrics = TableMetrics()
    interceptors = [  # the first is the outermost
        *config.tracing.server_interceptors(),
        call_interceptor(SERVICE_NAME, metrics),
        auth_interceptor(
            SERVICE_NAME,
            Authenticator(config.secrets, FailedAttempts(config.attempts)),
            config.proxies,
        ),
    ]
    internal: grpc.aio.Server | None = None
    internal_port: int | None = None
    if config.internal_address:
        # The public port serves no internal call; the internal one serves every call.
        public = [PublicPortInterceptor(SERVICE_NAME), *interceptors]
        server = aio_server(*_SERVER_OPTIONS, interceptors=public)
        internal = aio_server(*_SERVER_OPTIONS, interceptors=interceptors)
    else:
        server = aio_server(*_SERVER_OPTIONS, interceptors=interceptors)
    port = bind(server, config.address)  # first: the instance id may name the port
    try:
        if internal is not None:
            internal_port = bind(internal, config.internal_address)
        redis = await connect_redis(config.redis_url)
        # The live feeds' blocking reads (one per watched table) get a client of their own:
        # sharing one pool (redis-py's default: 100 connections) they took every connection
        # past 100 watched tables, and lease renewals and appends failed with "Too many
        # connections", so the instance handed its tables over. Sized to the watch caps.
        feeds = await connect_redis(
            config.redis_url, max_connections=feed_connections(config.watch)
        )
    except BaseException:
        await server.stop(None)  # bound, never started: let its port go
        if internal is not None and internal_port is not None:
            await internal.stop(None)
        raise
    try:
        # Every service must shard alike (else requests go where no worker reads), and every
        # shard's group must exist before the first request: made at 0, none is lost.
        await agree_on_shards(redis, config.ai_stream, config.decision_shards)
        decisions = redis_sharded_queue(redis, config.ai_stream, config.decision_shards)
        await decisions.ensure_group()
    except BaseException:
        await redis.aclose()
        await feeds.aclose()
        for each in (server, internal):
            if each is not None:
                await each.stop(None)
        raise
    store = MeteredEventStore(metrics, redis)
    manager = TableManager(
        store,
        RedisTableRegistry(redis),
        MeteredDecisionQueue(metrics, decisions),
        owner=config.instance_id or _instance_id(config.address, port),
        lease_ttl_ms=config.lease_ttl_ms,
        timing=Timing(
            between_hands=timedelta(milliseconds=config.between_hands_ms),
            ai_reask=timedelta(milliseconds=config.ai_reask_ms),
            rest=RestPolicy.of_seconds(config.idle_grace_s),
        ),
        snapshots=config.snapshots,
        tracing=config.tracing,
    )
    feed_store = RedisEventStore(feeds)
    service = TableService(
        manager, config.secrets, config.watch, config.rate, config.proxies, feed_store=feed_store
    )
    health_servicer = health.aio.HealthServicer()
    servers = [s for s in (server, internal) if s is not None]
    for each in servers:
        table_service_pb2_grpc.add_TableServiceServicer_to_server(service, each)
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, each)
        if config.reflects:
            reflection.enable_server_reflection(
                (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), each
            )
    for each in servers:
        await each.start()
    await manager.start()
    outside = advertised_address(config.address, port, config.advertise)
    inside = outside  # without an internal port the public one serves the internal calls
    if internal_port is not None:
        inside = advertised_address(
            config.internal_address, internal_port, config.internal_advertise
        )
    announcer = Announcer(
        RedisTableInstances(redis),
        manager.owner,
        outside,
        config.lease_ttl_ms,
        internal=(RedisTableInstances(redis, INTERNAL_INSTANCE_KEY_PREFIX), inside),
    )
    await announcer.start()
    await health_servicer.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
    await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    http = await _serve_metrics(config, metrics, manager, service.watches)
    log.info(
        "table_service_started",
        port=port,
        internal_port=internal_port,
        owner=manager.owner,
        metrics_port=http.port if http is not None else None,
    )
    return RunningTableServer(
        server,
        port,
        manager,
        health_servicer,
        redis,
        config.grace_s,
        store,
        service.watches,
        announcer,
        internal,
        internal_port,
        metrics,
        http,
        feeds,
        feed_store,
    )


async def _serve_metrics(
    config: TableServerConfig, metrics: TableMetrics, manager: TableManager, watches: WatchHub
) -> MetricsServer | None:
    """``/metrics``, ``/healthz``, ``/readyz`` on ``FELT_TABLE_METRICS_PORT``, if set.

    Here the health endpoints only say the process answers: the table service's probes are
    gRPC health (``grpc.health.v1``), which knows when it drains."""
    metrics.watch(
        active=lambda: len(manager.runtimes),
        resting=lambda: sum(1 for r in manager.runtimes.values() if r.resting),
        watchers=lambda: watches.streams,
        redis_silent=lambda: time.monotonic() - manager.redis_ok_at,
    )
    if config.metrics_port is None:
        return None
    health_ = Health(stale_after_s=float("inf"), accepting=True)
    http = MetricsServer(metrics, health_, lambda: {"tables": len(manager.runtimes)})
    await http.start(config.metrics_host, config.metrics_port)
    return http


def _instance_id(address: str, port: int) -> str:
    """``table-<hostname>-<listen host>:<port>``: the same after a restart, unique among live
    instances (two cannot bind one port exclusively)."""
    host = address.rsplit(":", 1)[0] if ":" in address else address
    return f"table-{socket.gethostname()}-{host}:{port}"


async def serve(config: TableServerConfig, ready: asyncio.Event | None = None) -> None:
    """Run until SIGTERM or SIGINT, then shut down gracefully."""
    try:
        await serve_until_stopped(
            start_table_server(config), "table service", started=collect_less_often, ready=ready
        )
    finally:
        config.tracing.shutdown()  # what the exporter still buffers


def run_service(*, dev: bool = False) -> int:
    """``felt table-service``: serve until stopped; 2 with a message for a refused start."""
    return run(
        serve(TableServerConfig.from_env(dev=dev)),
        "felt table-service",
        (ConfigError, PortInUse),
        "table_service_refused_to_start",
        "felt.table",
    )


def main() -> None:
    from felt.service.logging import configure_logging

    configure_logging()
    sys.exit(run_service())


if __name__ == "__main__":
    main()
