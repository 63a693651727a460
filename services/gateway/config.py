"""The gateway's settings, from the environment.

``FELT_GATEWAY_ADDR``            HTTP listen address, default ``127.0.0.1:8080``
``FELT_TABLE_TARGET``            a table-service instance (default ``127.0.0.1:50051``): where
                                 calls go when no instance owns the table yet (``CreateTable``,
                                 a table nobody runs) or when Redis cannot say who does
``FELT_LOBBY_TARGET``            the lobby (default ``127.0.0.1:50052``)
``REDIS_URL``                    where the table leases and the instances' addresses are read
                                 (unset: every table call goes to ``FELT_TABLE_TARGET``)
``FELT_GATEWAY_ORIGINS``         comma-separated origins browsers may call from (CORS), e.g.
                                 ``https://play.example.com``; ``*`` for any; empty for none
                                 (same-origin only: the web client the gateway serves itself)
``FELT_GATEWAY_STATIC``          the web client's files, served at ``/`` (default ``web/dist``)
``FELT_GATEWAY_DEADLINE_MS``     the most a unary call may take upstream (default 10000); a
                                 client's shorter ``connect-timeout-ms`` wins
``FELT_GATEWAY_WATCH_PER_TOKEN`` ``WatchTable`` streams one bearer token may hold (default 4)
``FELT_GATEWAY_WATCH_PER_ADDRESS`` streams one client address may hold, all tokens and none
                                 (default 64)
``FELT_GATEWAY_WATCH_MAX``       streams through this gateway (default 10000)
``FELT_GATEWAY_WATCH_BUFFER``    items a spectator may fall behind its table's shared stream
                                 before it is dropped (default 512; ``services.gateway.fanout``)
``FELT_GATEWAY_ROUTE_TTL_MS``    how long a table's owner is remembered (default 1000)
``FELT_GATEWAY_HEAD_TIMEOUT_MS``  the most a request's line and headers may take to arrive
                                 (default 10000)
``FELT_GATEWAY_BODY_TIMEOUT_MS``  the most a request's body may take to arrive (default 30000)
``FELT_GATEWAY_BODY_MIN_RATE``    bytes a second a body must arrive at once its grace is over
                                 (default 256; 0: no such bound)
``FELT_GATEWAY_BODY_GRACE_MS``    how long a body may arrive at any pace (default 5000)
``FELT_GATEWAY_CONNECTIONS_PER_ADDRESS`` connections one client address may hold open (default
                                 128; an IPv6 client by its /64; a trusted proxy is not capped)
``FELT_GATEWAY_CONNECTIONS_MAX``  connections the gateway holds open in all (default 10000)
``FELT_GATEWAY_SECURE_COOKIE``   ``auto`` (default: ``Secure`` when the page is served over
                                 TLS), ``always`` or ``never``: the refresh-token cookie
                                 (``services.gateway.session_cookie``)
``FORWARDED_ALLOW_IPS``          the proxies in front (uvicorn's setting, default
                                 ``127.0.0.1,::1``): their ``X-Forwarded-For`` is believed,
                                 and their connections count only toward the total
                                 (``services.gateway.connections``)
``FELT_AUTH_FAILURE_BURST``, ``FELT_AUTH_FAILURE_PER_MIN`` refused credentials (anything but a
                                 player's token) one client address may send at once (20) and
                                 then per minute (30); past them RESOURCE_EXHAUSTED
                                 ``AUTH_THROTTLED`` (``services.gateway.edge``)

A request message may be at most 64 KiB (``felt.wire.limits.MAX_REQUEST_BYTES``,
the services' own bound), refused with RESOURCE_EXHAUSTED before it is parsed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from felt.wire.attempts import AttemptLimits
from services.settings import ConfigError, attempt_limits, int_setting

REPO = Path(__file__).resolve().parents[2]
SECURE_MODES = ("auto", "always", "never")


@dataclass(frozen=True)
class WatchCaps:
    """How many ``WatchTable`` streams a token, a client address and the gateway may hold.

    Behind the gateway every client shares the gateway's address at the table
    service, whose per-address cap then counts them all together: the gateway
    counts per caller instead (docs/architecture.md, "Watchers").
    """

    per_token: int = 4
    per_address: int = 64
    total: int = 10_000
    buffer: int = 512  # items a spectator may fall behind its shared feed before it is dropped


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

    head_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    body_min_rate: int = 256
    body_grace_s: float = 5.0
    per_address: int = 128
    total: int = 10_000


@dataclass(frozen=True)
class GatewayConfig:
    address: str = "127.0.0.1:8080"
    table_target: str = "127.0.0.1:50051"
    lobby_target: str = "127.0.0.1:50052"
    redis_url: str = ""
    origins: tuple[str, ...] = ()
    static_dir: Path = REPO / "web" / "dist"
    deadline_ms: int = 10_000
    route_ttl_ms: int = 1_000
    watch: WatchCaps = field(default_factory=WatchCaps)
    connections: ConnectionBounds = field(default_factory=ConnectionBounds)
    # uvicorn's FORWARDED_ALLOW_IPS, read here so the connection caps know the proxies too.
    forwarded_allow_ips: str = "127.0.0.1,::1"
    secure_cookie: str = "auto"  # the refresh-token cookie's Secure: auto, always, never
    attempts: AttemptLimits = field(default_factory=AttemptLimits)

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
        env = os.environ if environ is None else environ
        address = env.get("FELT_GATEWAY_ADDR", "127.0.0.1:8080").strip()
        _, sep, port = address.rpartition(":")
        if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
            raise ConfigError(f"FELT_GATEWAY_ADDR must be host:port, not {address!r}")
        origins = tuple(
            o.strip() for o in env.get("FELT_GATEWAY_ORIGINS", "").split(",") if o.strip()
        )
        static = env.get("FELT_GATEWAY_STATIC", "").strip()
        secure_cookie = env.get("FELT_GATEWAY_SECURE_COOKIE", "").strip() or "auto"
        if secure_cookie not in SECURE_MODES:
            raise ConfigError(
                f"FELT_GATEWAY_SECURE_COOKIE must be one of {', '.join(SECURE_MODES)}"
            )
        return cls(
            address=address,
            table_target=env.get("FELT_TABLE_TARGET", "127.0.0.1:50051").strip(),
            lobby_target=env.get("FELT_LOBBY_TARGET", "127.0.0.1:50052").strip(),
            redis_url=env.get("REDIS_URL", "").strip(),
            origins=origins,
            static_dir=Path(static) if static else REPO / "web" / "dist",
            deadline_ms=int_setting(env, "FELT_GATEWAY_DEADLINE_MS", 10_000, 100, 600_000),
            route_ttl_ms=int_setting(env, "FELT_GATEWAY_ROUTE_TTL_MS", 1_000, 0, 60_000),
            watch=WatchCaps(
                per_token=int_setting(env, "FELT_GATEWAY_WATCH_PER_TOKEN", 4, 1, 10_000),
                per_address=int_setting(env, "FELT_GATEWAY_WATCH_PER_ADDRESS", 64, 1, 1_000_000),
                total=int_setting(env, "FELT_GATEWAY_WATCH_MAX", 10_000, 1, 1_000_000),
                buffer=int_setting(env, "FELT_GATEWAY_WATCH_BUFFER", 512, 8, 1_000_000),
            ),
            connections=ConnectionBounds(
                head_timeout_s=_ms(env, "FELT_GATEWAY_HEAD_TIMEOUT_MS", 10_000, 100, 600_000),
                body_timeout_s=_ms(env, "FELT_GATEWAY_BODY_TIMEOUT_MS", 30_000, 100, 600_000),
                body_min_rate=int_setting(env, "FELT_GATEWAY_BODY_MIN_RATE", 256, 0, 1 << 30),
                body_grace_s=_ms(env, "FELT_GATEWAY_BODY_GRACE_MS", 5_000, 0, 600_000),
                per_address=int_setting(
                    env, "FELT_GATEWAY_CONNECTIONS_PER_ADDRESS", 128, 1, 1_000_000
                ),
                total=int_setting(env, "FELT_GATEWAY_CONNECTIONS_MAX", 10_000, 1, 1_000_000),
            ),
            forwarded_allow_ips=env.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1").strip(),
            secure_cookie=secure_cookie,
            attempts=attempt_limits(env),
        )


def _ms(env: Mapping[str, str], name: str, default: int, low: int, high: int) -> float:
    """A duration setting in milliseconds, as seconds."""
    return int_setting(env, name, default, low, high) / 1000
