"""The lobby process: gRPC server on a PostgreSQL pool, health, reflection, graceful shutdown.

Configuration comes from the environment:

``DATABASE_URL``               PostgreSQL (required); its schema from ``felt db migrate``
``FELT_LOBBY_ADDR``            listen address, default ``127.0.0.1:50052`` (``:0`` picks a port)
``FELT_LOBBY_ACCESS_SECRET``   HMAC secret signing access tokens, at least 32 bytes
``FELT_LOBBY_REFRESH_SECRET``  HMAC secret deriving refresh tokens, at least 32 bytes, another
``FELT_LOBBY_ACCESS_TTL_S``    access token lifetime (default 900; 60 to 86400)
``FELT_LOBBY_REFRESH_TTL_S``   session lifetime from its last refresh (default 2592000, 30 days)
``FELT_LOBBY_STARTING_GRANT``  chips a new account starts with (default 10000)
``FELT_LOBBY_TOP_UP``          chips a free top-up gives (default 5000)
``FELT_LOBBY_TOP_UP_BELOW``    a top-up is for a balance under this (default 500)
``FELT_LOBBY_TOP_UP_COOLDOWN_S`` time between two top-ups of one player (default 3600)
``FELT_LOBBY_MAX_LOUNGES``     lounges one player may have at once (default 3)
``FELT_LOBBY_HOUSE_DAILY_WIN_LIMIT`` chips one account may win from the house's AI seats in a
                              UTC day before it may join none that day (default 100000)
``FELT_LOBBY_MAX_SIGN_UPS``    sign-ups (CreateGuest, Register) per client address (IPv6: /48)
                              in a window (default 30)
``FELT_LOBBY_SIGN_UP_WINDOW_S`` that window (default 3600)
``FELT_LOBBY_DB_POOL``         most PostgreSQL connections (default 20)
``FELT_TABLE_ADDR``            the table service, default ``127.0.0.1:50051``
``FELT_ADMIN_TOKEN``           the table service's service credential (its internal calls:
                               tables, seating, leaving, closing); also the operator's
                               credential for the history service; development mode: the
                               public ``felt.wire.tokens.DEV_SERVICE_TOKEN`` when unset
``REDIS_URL``                  the tables' streams, read by the history service for hands not
                               archived yet (unset: the archive only)
``FELT_TRUSTED_PROXIES``       proxies (the gateway) whose ``x-forwarded-for`` names the client
                               that sign-ups and sign-ins are counted for (addresses, networks)
``FELT_LOBBY_RECOVERY_ATTEMPTS`` attempts of the saga recovery pass at one buy-in or chip add
                              before it is stuck, left to an operator (``felt sagas``; default
                              10, 1-100)
``FELT_LOBBY_RECOVERY_BATCH``  buy-ins (and chip adds) one recovery pass drives at most
                              (default 32, 1-1000)
``FELT_LOBBY_METRICS_PORT``    ``/metrics`` (RPCs, sign-ups: ``services.lobby.metrics``; the
                              recovery's counters and stuck gauge),
                              ``/healthz``, ``/readyz`` on this port; unset or ``off``: none
``FELT_LOBBY_METRICS_HOST``    its address (default ``127.0.0.1``)
``FELT_DEV_MODE``              ``1``: development mode (public development secrets, and the
                               schema migrated at start)
``FELT_AUTH_FAILURE_BURST``, ``FELT_AUTH_FAILURE_PER_MIN`` failed credential attempts one client
                               address may make at once (20) and then per minute (30); past
                               them RESOURCE_EXHAUSTED ``AUTH_THROTTLED`` (``felt.wire.attempts``)
``FELT_GRPC_REFLECTION``       ``1``/``0``: gRPC reflection on or off (default: on in
                               development mode only)

Production mode (the default) refuses to start (exit status 2) without both
secrets of at least 32 bytes, with the development ones, with one secret for
both, with a ``FELT_ADMIN_TOKEN`` under 32 bytes or shaped like a player's
token (``felt.wire.credentials``), or on a database whose schema is not up to
date (run ``felt db migrate`` first: two releases must never migrate one
database behind an operator's back).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import asyncpg
import grpc
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc  # type: ignore[import-untyped]
from grpc_reflection.v1alpha import reflection  # type: ignore[import-untyped]
from redis.asyncio import Redis

from felt.config import settings as S
from felt.config.settings import environment
from felt.service.metrics_server import Health, MetricsServer
from felt.service.rpc import run, serve_until_stopped
from felt.service.table_router import OwnerCalls, owner_calls
from felt.storage.archive import HandArchive
from felt.storage.archive.postgres import PostgresHandArchive
from felt.storage.eventstore import EventStore, RedisEventStore
from felt.storage.migrations import applied_versions, load, migrate
from felt.storage.redis_client import connect_redis, redis_from_url
from felt.wire.attempts import AttemptLimits, FailedAttempts
from felt.wire.clients import TrustedProxies
from felt.wire.credentials import credential_problems
from felt.wire.limits import MAX_REQUEST_BYTES
from felt.wire.tokens import DEV_SERVICE_TOKEN
from poker.v1 import (
    history_service_pb2,
    history_service_pb2_grpc,
    lobby_service_pb2,
    lobby_service_pb2_grpc,
    table_service_pb2_grpc,
)
from services.grpc_server import PortInUse, aio_server, bind
from services.lobby.application import LobbyApp, LobbySecrets, LobbySettings
from services.lobby.auth import Authenticator
from services.lobby.busted import BustedSeats
from services.lobby.chips import ChipsApp
from services.lobby.closing import ClosingApp
from services.lobby.db_cli import MIGRATIONS
from services.lobby.history import HistoryApp
from services.lobby.history_service import HistoryService
from services.lobby.interceptors import auth_interceptor, call_interceptor
from services.lobby.lounges import LoungeApp
from services.lobby.metrics import LobbyMetrics
from services.lobby.ports import Tables
from services.lobby.postgres import (
    PgBuyIns,
    PgChipAdds,
    PgCloses,
    PgLedger,
    PgLounges,
    PgPlayers,
    PgSessions,
    PgThrottle,
)
from services.lobby.postgres.pool import create_pool
from services.lobby.postgres.skeletons import backfill_skeletons
from services.lobby.recovery import RecoveryPolicy
from services.lobby.refills import RefillApp
from services.lobby.seating import SeatingApp
from services.lobby.service import LobbyService
from services.lobby.tables import GrpcTables
from services.lobby.tokens import Passwords
from services.settings import ConfigError as ConfigError
from services.settings import attempt_limits, reflection_setting, trusted_proxies

log = structlog.get_logger("felt.lobby")

SERVICE_NAME = lobby_service_pb2.DESCRIPTOR.services_by_name["LobbyService"].full_name
HISTORY_SERVICE_NAME = history_service_pb2.DESCRIPTOR.services_by_name["HistoryService"].full_name
DEV_SECRETS = LobbySecrets(
    b"felt-lobby-development-access-secret-not-for-production",
    b"felt-lobby-development-refresh-secret-not-for-production",
)
MIN_SECRET_BYTES = 32
_SERVER_OPTIONS = (("grpc.max_receive_message_length", MAX_REQUEST_BYTES),)


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass
class LobbyServerConfig:
    database_url: str
    address: str = S.FELT_LOBBY_ADDR.default
    secrets: LobbySecrets = field(default_factory=lambda: DEV_SECRETS)
    settings: LobbySettings = field(default_factory=LobbySettings)
    pool_size: int = S.FELT_LOBBY_DB_POOL.default
    dev_mode: bool = False
    grace_s: float = 5.0
    passwords: Passwords | None = None  # None: Argon2id with the library's defaults
    clock: Callable[[], datetime] = _utcnow
    table_address: str = S.FELT_TABLE_ADDR.default
    table_admin_token: str = ""
    tables: Tables | None = None  # None: GrpcTables on table_address (tests pass a fake)
    recover_every_s: float = 2.0  # the saga recovery pass (leaves wait for a hand's end)
    recovery: RecoveryPolicy = field(default_factory=RecoveryPolicy)  # its backoff and bounds
    metrics_port: int | None = None  # /metrics, /healthz, /readyz (None: not served)
    metrics_host: str = S.FELT_LOBBY_METRICS_HOST.default
    redis_url: str = ""  # the tables' streams, for hands not archived yet ("": archive only)
    archive: HandArchive | None = None  # None: PostgresHandArchive on the pool
    # Whose x-forwarded-for names the client (the gateway): FELT_TRUSTED_PROXIES.
    proxies: TrustedProxies = field(default_factory=TrustedProxies)
    # Failed credential attempts per client address (FELT_AUTH_FAILURE_*).
    attempts: AttemptLimits = field(default_factory=AttemptLimits)
    # gRPC reflection (FELT_GRPC_REFLECTION); None: in development mode only.
    reflection: bool | None = None

    @property
    def reflects(self) -> bool:
        """Whether the server answers gRPC reflection."""
        return self.dev_mode if self.reflection is None else self.reflection

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, *, dev: bool = False
    ) -> LobbyServerConfig:
        env = environment(environ)
        dev = dev or S.FELT_DEV_MODE.read(env)
        access = S.FELT_LOBBY_ACCESS_SECRET.read(env).encode()
        refresh = S.FELT_LOBBY_REFRESH_SECRET.read(env).encode()
        service_token = S.FELT_ADMIN_TOKEN.read(env)
        if dev:
            access, refresh = access or DEV_SECRETS.access, refresh or DEV_SECRETS.refresh
            service_token = service_token or DEV_SERVICE_TOKEN
        settings = LobbySettings(
            access_ttl=timedelta(seconds=S.FELT_LOBBY_ACCESS_TTL_S.read(env)),
            refresh_ttl=timedelta(seconds=S.FELT_LOBBY_REFRESH_TTL_S.read(env)),
            starting_grant=S.FELT_LOBBY_STARTING_GRANT.read(env),
            top_up_amount=S.FELT_LOBBY_TOP_UP.read(env),
            top_up_below=S.FELT_LOBBY_TOP_UP_BELOW.read(env),
            top_up_cooldown=timedelta(seconds=S.FELT_LOBBY_TOP_UP_COOLDOWN_S.read(env)),
            max_lounges_per_owner=S.FELT_LOBBY_MAX_LOUNGES.read(env),
            house_daily_win_limit=S.FELT_LOBBY_HOUSE_DAILY_WIN_LIMIT.read(env),
            ai_refills_per_day=S.FELT_LOBBY_AI_REFILLS_PER_DAY.read(env),
            busted_grace_s=S.FELT_LOBBY_BUSTED_GRACE_S.read(env),
            sign_up_max_per_client=S.FELT_LOBBY_MAX_SIGN_UPS.read(env),
            sign_up_window=timedelta(seconds=S.FELT_LOBBY_SIGN_UP_WINDOW_S.read(env)),
        )
        return cls(
            recovery=RecoveryPolicy(
                max_attempts=S.FELT_LOBBY_RECOVERY_ATTEMPTS.read(env),
                batch=S.FELT_LOBBY_RECOVERY_BATCH.read(env),
            ),
            metrics_port=S.FELT_LOBBY_METRICS_PORT.read(env),
            metrics_host=S.FELT_LOBBY_METRICS_HOST.read(env),
            database_url=S.DATABASE_URL.read(env),
            address=S.FELT_LOBBY_ADDR.read(env),
            secrets=LobbySecrets(access, refresh),
            settings=settings,
            pool_size=S.FELT_LOBBY_DB_POOL.read(env),
            dev_mode=dev,
            table_address=S.FELT_TABLE_ADDR.read(env),
            proxies=trusted_proxies(env),
            table_admin_token=service_token,
            redis_url=S.REDIS_URL.read(env),
            attempts=attempt_limits(env),
            reflection=reflection_setting(env, dev),
        )

    def check(self) -> None:
        """Refuse an unsafe configuration outside development mode."""
        if not self.database_url:
            raise ConfigError("DATABASE_URL is unset")
        if self.dev_mode:
            log.warning("development_mode", insecure_secrets=self.secrets == DEV_SECRETS)
            return
        problems = []
        for name, secret, dev in (
            (S.FELT_LOBBY_ACCESS_SECRET.name, self.secrets.access, DEV_SECRETS.access),
            (S.FELT_LOBBY_REFRESH_SECRET.name, self.secrets.refresh, DEV_SECRETS.refresh),
        ):
            if secret == dev:
                problems.append(f"{name} is the public development secret")
            elif len(secret) < MIN_SECRET_BYTES:
                problems.append(f"{name} must be at least {MIN_SECRET_BYTES} bytes")
        if self.secrets.access == self.secrets.refresh:
            problems.append("the access and refresh secrets must differ")
        if self.tables is None and not self.table_admin_token:
            problems.append("FELT_ADMIN_TOKEN (the table service's service credential) is unset")
        elif self.tables is None and self.table_admin_token == DEV_SERVICE_TOKEN:
            problems.append("FELT_ADMIN_TOKEN is the public development service credential")
        elif self.table_admin_token:  # also the operator's credential for the history service
            problems.extend(credential_problems({S.FELT_ADMIN_TOKEN.name: self.table_admin_token}))
        if problems:
            raise ConfigError(
                "refusing to start in production mode: " + "; ".join(problems) + ". For "
                "development only, set FELT_DEV_MODE=1."
            )


@dataclass
class RunningLobbyServer:
    server: grpc.aio.Server
    port: int
    pool: asyncpg.Pool
    health: health.aio.HealthServicer
    app: LobbyApp
    lounges: LoungeApp
    seating: SeatingApp
    closing: ClosingApp
    grace_s: float
    calls: OwnerCalls[table_service_pb2_grpc.TableServiceAsyncStub] | None = (
        None  # the table service, routed
    )
    routes: Redis | None = None  # the leases and instance directory it routes by
    recovery: asyncio.Task[None] | None = None
    streams: RedisEventStore | None = None
    metrics: MetricsServer | None = None
    chips: ChipsApp | None = None
    busted: BustedSeats | None = None  # the busted seats' pass (its loop runs it too)

    async def stop(self) -> None:
        await self.health.enter_graceful_shutdown()
        if self.recovery is not None:
            self.recovery.cancel()
            await asyncio.gather(self.recovery, return_exceptions=True)
        if self.metrics is not None:
            self.metrics.health.accepting = False
            await self.metrics.stop()
        await self.server.stop(self.grace_s)
        await self.pool.close()
        if self.calls is not None:
            await self.calls.close()
        if self.routes is not None:
            await self.routes.aclose()
        if self.streams is not None:
            await self.streams.aclose()
        log.info("lobby_stopped", port=self.port)


async def _schema_ready(config: LobbyServerConfig) -> None:
    if config.dev_mode:
        await migrate(config.database_url, MIGRATIONS)
        await backfill_skeletons(config.database_url)
        return
    wanted = [m.version for m in load(MIGRATIONS)]
    if await applied_versions(config.database_url) != wanted:
        raise ConfigError("the database schema is not up to date: run `felt db migrate` first")


async def start_lobby_server(config: LobbyServerConfig) -> RunningLobbyServer:
    """Start serving (tests use this with address ``127.0.0.1:0``)."""
    config.check()
    await _schema_ready(config)
    attempts = FailedAttempts(config.attempts)  # one count per client for both services
    metrics = LobbyMetrics()  # the RPCs of both services, sign-ups, the recovery's
    server = aio_server(
        *_SERVER_OPTIONS,
        interceptors=[
            call_interceptor(SERVICE_NAME, metrics),
            auth_interceptor(
                SERVICE_NAME,
                Authenticator(config.secrets.access, config.clock, attempts=attempts),
                config.proxies,
            ),
            call_interceptor(HISTORY_SERVICE_NAME, metrics),
            auth_interceptor(
                HISTORY_SERVICE_NAME,
                Authenticator(
                    config.secrets.access, config.clock, config.table_admin_token, attempts
                ),
                config.proxies,
            ),
        ],
    )
    port = bind(server, config.address)
    pool = await create_pool(config.database_url, min_size=1, max_size=config.pool_size)
    app = LobbyApp(
        PgPlayers(pool),
        PgSessions(pool),
        PgThrottle(pool),
        PgLedger(pool),
        config.passwords or Passwords(),
        config.secrets,
        config.settings,
        config.clock,
    )
    archive = config.archive or PostgresHandArchive(pool)
    calls, routes, tables = None, None, config.tables
    if tables is None:  # each table's calls to its owner, found in Redis (else one address)
        routes = redis_from_url(config.redis_url) if config.redis_url else None
        calls = owner_calls(config.table_address, routes, table_service_pb2_grpc.TableServiceStub)
        tables = GrpcTables(calls, config.table_admin_token, archive)
    lounges = LoungeApp(app, PgLounges(pool), tables)
    opened = await lounges.recover()  # lounges a crash left half-created
    if opened:
        log.info("lounges_recovered", opened=opened)
    seating = SeatingApp(lounges, PgBuyIns(pool), tables, config.recovery, metrics.recovery)
    seated, compensated = await seating.recover()  # buy-ins a crash left half-done
    if seated or compensated:
        log.info("buy_ins_recovered", seated=seated, compensated=compensated)
    chips = ChipsApp(
        lounges, PgBuyIns(pool), PgChipAdds(pool), tables, config.recovery, metrics.recovery
    )
    added, refunded = await chips.recover()  # chip adds a crash left half-done
    if added or refunded:
        log.info("chip_adds_recovered", added=added, compensated=refunded)
    refills = RefillApp(app, tables)
    busted = BustedSeats(PgLounges(pool), refills, PgBuyIns(pool))
    closing = ClosingApp(seating, PgCloses(pool), chips, refills, busted)
    closed, ended = await closing.recover()  # closes a crash left half-done
    if closed or ended:
        log.info("closes_recovered", closed=closed, ended=ended)
    lobby_service_pb2_grpc.add_LobbyServiceServicer_to_server(
        LobbyService(app, lounges, seating, closing, config.proxies, chips=chips), server
    )
    streams = (
        RedisEventStore(await connect_redis(config.redis_url), owns_client=True)
        if config.redis_url
        else None
    )
    live: EventStore | None = streams
    history = HistoryApp(app, archive, live, lounges.lounges)
    history_service_pb2_grpc.add_HistoryServiceServicer_to_server(HistoryService(history), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    if config.reflects:
        reflection.enable_server_reflection(
            (SERVICE_NAME, HISTORY_SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME),
            server,
        )
    await server.start()
    await health_servicer.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
    await health_servicer.set(HISTORY_SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
    await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    http = None
    passes = Health(stale_after_s=max(15.0, 3 * config.recover_every_s))
    if config.metrics_port is not None:
        http = MetricsServer(metrics, passes, lambda: {})
        metrics_port = await http.start(config.metrics_host, config.metrics_port)
        passes.last_redis_ok, passes.accepting = time.monotonic(), True
        log.info("lobby_metrics_serving", port=metrics_port)
    log.info("lobby_started", port=port)
    recovery = asyncio.create_task(
        _recover_forever(seating, closing, config.recover_every_s, passes, chips, busted)
    )
    return RunningLobbyServer(
        server,
        port,
        pool,
        health_servicer,
        app,
        lounges,
        seating,
        closing,
        config.grace_s,
        calls,
        routes,
        recovery,
        streams,
        http,
        chips,
        busted,
    )


async def _recover_forever(
    seating: SeatingApp,
    closing: ClosingApp,
    every_s: float,
    passes: Health,
    chips: ChipsApp | None = None,
    busted: BustedSeats | None = None,
) -> None:
    """The saga recovery passes, periodically, in loops of their own so that none can hold
    another up (a close whose table hangs keeps no buy-in waiting): buy-ins an unreachable
    table service left RESERVED (fairly, with backoff: ``services.lobby.recovery``) and
    leaves whose seat is vacated only when its hand ends; chip adds left RESERVED; lounges
    left CREATING, closing lounges (and those whose table ended by itself), with the
    throttle's counts whose window has passed forgotten; busted AI seats refilled from the
    house (``services.lobby.busted``). An error is logged and the next pass tries again (the
    sagas' state is in the database); ``passes`` (``/healthz``) is live while the buy-ins'
    passes complete."""

    async def buy_ins() -> None:
        await seating.recover()
        passes.last_redis_ok = time.monotonic()

    async def chip_adds() -> None:
        if chips is not None:  # a loop of its own: a hanging table holds up no buy-in
            await chips.recover()  # chip adds an unreachable table service left RESERVED

    async def closes() -> None:
        await seating.lounges.recover()  # lounges left CREATING
        await closing.recover()
        await seating.lobby.forget_old_attempts()

    async def busted_seats() -> None:
        if busted is not None:  # a loop of its own: reads every lounge's table in turn
            await busted.recover()

    async def saga_counts() -> None:
        # felt_lobby_sagas{kind,state}: counted in a loop of its own, off the passes that
        # /healthz follows, and five times rarer (a gauge, not a trigger).
        await seating.recovery.count_states()
        if chips is not None:
            await chips.recovery.count_states()

    await asyncio.gather(
        _every(every_s, buy_ins),
        _every(every_s, closes),
        _every(every_s, chip_adds),
        _every(every_s, busted_seats),
        _every(every_s * SAGA_COUNTS_EVERY, saga_counts),
    )


SAGA_COUNTS_EVERY = 5
"""``felt_lobby_sagas`` is counted every this many recovery intervals."""


async def _every(every_s: float, one_pass: Callable[[], Awaitable[None]]) -> None:
    while True:
        await asyncio.sleep(every_s)
        try:
            await one_pass()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("saga_recovery_failed", recovery=one_pass.__name__)


async def serve(config: LobbyServerConfig) -> None:
    """Run until SIGTERM or SIGINT, then shut down gracefully."""
    await serve_until_stopped(start_lobby_server(config), "lobby")


def run_service(*, dev: bool = False) -> int:
    """``felt lobby``: serve until stopped; 2 with a message for a refused start."""
    return run(
        serve(LobbyServerConfig.from_env(dev=dev)),
        "felt lobby",
        (ConfigError, PortInUse),
        "lobby_refused_to_start",
        "felt.lobby",
    )
