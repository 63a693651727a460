"""The gateway's settings, from the environment.

Each is declared, with its default, range and help, in ``felt.config.settings``
(``felt config --service gateway`` lists them, docs/operations.md's table explains them);
this module turns them into the gateway's configuration: the watch caps, the connection
bounds (``services.gateway.connections``), the failed-credential throttle
(``services.gateway.edge``), and where the table service (``FELT_TABLE_TARGET``, or the
table's owner as Redis says) and the lobby are.

A request message may be at most 64 KiB (``felt.wire.limits.MAX_REQUEST_BYTES``,
the services' own bound), refused with RESOURCE_EXHAUSTED before it is parsed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from felt.config import settings as S
from felt.config.settings import environment
from felt.service.tracing import Tracing
from felt.wire.attempts import AttemptLimits
from services.settings import attempt_limits

REPO = Path(__file__).resolve().parents[2]
SECURE_MODES = S.FELT_GATEWAY_SECURE_COOKIE.choices


@dataclass(frozen=True)
class WatchCaps:
    """How many ``WatchTable`` streams a token, a client address and the gateway may hold.

    Behind the gateway every client shares the gateway's address at the table
    service, whose per-address cap then counts them all together: the gateway
    counts per caller instead (docs/architecture.md, "Watchers").
    """

    per_token: int = S.FELT_GATEWAY_WATCH_PER_TOKEN.default
    per_address: int = S.FELT_GATEWAY_WATCH_PER_ADDRESS.default
    total: int = S.FELT_GATEWAY_WATCH_MAX.default
    buffer: int = (
        S.FELT_GATEWAY_WATCH_BUFFER.default
    )  # items a spectator may fall behind its shared feed before it is dropped


@dataclass(frozen=True)
class ConnectionBounds:
    """What one HTTP connection may hold of the gateway, and for how long
    (``services.gateway.connections``).

    A request's head must be whole ``head_timeout_s`` after the connection's start (or its
    first byte); its body ``body_timeout_s`` after the head, and, once ``body_grace_s`` is
    over, arriving at ``body_min_rate`` bytes a second at least. A client address may hold
    ``per_address`` connections (a trusted proxy, which carries many clients, is not counted
    per address), and the gateway ``total``. The defaults leave a browser (six connections
    to a host, plus its watch streams, each a connection of its own) and a slow phone
    (Felt's requests are under 1 KiB) well inside them.
    """

    head_timeout_s: float = S.FELT_GATEWAY_HEAD_TIMEOUT_MS.default / 1000
    body_timeout_s: float = S.FELT_GATEWAY_BODY_TIMEOUT_MS.default / 1000
    body_min_rate: int = S.FELT_GATEWAY_BODY_MIN_RATE.default
    body_grace_s: float = S.FELT_GATEWAY_BODY_GRACE_MS.default / 1000
    per_address: int = S.FELT_GATEWAY_CONNECTIONS_PER_ADDRESS.default
    total: int = S.FELT_GATEWAY_CONNECTIONS_MAX.default


@dataclass(frozen=True)
class GatewayConfig:
    address: str = S.FELT_GATEWAY_ADDR.default
    table_target: str = S.FELT_TABLE_TARGET.default
    lobby_target: str = S.FELT_LOBBY_TARGET.default
    redis_url: str = ""
    origins: tuple[str, ...] = ()
    static_dir: Path = REPO / "web" / "dist"
    deadline_ms: int = S.FELT_GATEWAY_DEADLINE_MS.default
    route_ttl_ms: int = S.FELT_GATEWAY_ROUTE_TTL_MS.default
    watch: WatchCaps = field(default_factory=WatchCaps)
    connections: ConnectionBounds = field(default_factory=ConnectionBounds)
    # uvicorn's FORWARDED_ALLOW_IPS, read here so the connection caps know the proxies too.
    forwarded_allow_ips: str = S.FORWARDED_ALLOW_IPS.default
    secure_cookie: str = (
        S.FELT_GATEWAY_SECURE_COOKIE.default
    )  # the refresh-token cookie's Secure: auto, always, never
    attempts: AttemptLimits = field(default_factory=AttemptLimits)
    # /metrics, /healthz, /readyz on a port of their own (FELT_GATEWAY_METRICS_PORT; None: off).
    metrics_port: int | None = None
    metrics_host: str = S.FELT_GATEWAY_METRICS_HOST.default
    # OpenTelemetry (FELT_TRACING; off by default): a span per HTTP request, its context sent
    # on to the table service and the lobby.
    tracing: Tracing = field(default_factory=Tracing.off)

    @property
    def host(self) -> str:
        return self.address.rsplit(":", 1)[0].strip("[]") or "127.0.0.1"

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> GatewayConfig:
        """The settings in ``environ`` (default: the process's); :class:`ConfigError` names a
        malformed one."""
        env = environment(environ)
        origins = tuple(o.strip() for o in S.FELT_GATEWAY_ORIGINS.read(env).split(",") if o.strip())
        static = S.FELT_GATEWAY_STATIC.read(env)
        return cls(
            address=S.FELT_GATEWAY_ADDR.read(env),
            table_target=S.FELT_TABLE_TARGET.read(env),
            lobby_target=S.FELT_LOBBY_TARGET.read(env),
            redis_url=S.REDIS_URL.read(env),
            origins=origins,
            static_dir=Path(static) if static else REPO / "web" / "dist",
            deadline_ms=S.FELT_GATEWAY_DEADLINE_MS.read(env),
            route_ttl_ms=S.FELT_GATEWAY_ROUTE_TTL_MS.read(env),
            watch=WatchCaps(
                per_token=S.FELT_GATEWAY_WATCH_PER_TOKEN.read(env),
                per_address=S.FELT_GATEWAY_WATCH_PER_ADDRESS.read(env),
                total=S.FELT_GATEWAY_WATCH_MAX.read(env),
                buffer=S.FELT_GATEWAY_WATCH_BUFFER.read(env),
            ),
            connections=ConnectionBounds(
                head_timeout_s=S.FELT_GATEWAY_HEAD_TIMEOUT_MS.read(env) / 1000,
                body_timeout_s=S.FELT_GATEWAY_BODY_TIMEOUT_MS.read(env) / 1000,
                body_min_rate=S.FELT_GATEWAY_BODY_MIN_RATE.read(env),
                body_grace_s=S.FELT_GATEWAY_BODY_GRACE_MS.read(env) / 1000,
                per_address=S.FELT_GATEWAY_CONNECTIONS_PER_ADDRESS.read(env),
                total=S.FELT_GATEWAY_CONNECTIONS_MAX.read(env),
            ),
            forwarded_allow_ips=S.FORWARDED_ALLOW_IPS.read(env),
            secure_cookie=S.FELT_GATEWAY_SECURE_COOKIE.read(env),
            attempts=attempt_limits(env),
            metrics_port=S.FELT_GATEWAY_METRICS_PORT.read(env),
            metrics_host=S.FELT_GATEWAY_METRICS_HOST.read(env),
            tracing=Tracing.from_settings("felt-gateway", env),
        )
