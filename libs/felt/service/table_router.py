"""Which table-service instance a table's calls go to: the one that owns it.

Every caller of the table service (the gateway, the lobby, the AI workers) uses this one
router, so that a call reaches the table's owner instead of an instance that would refuse it.

A table is run by the instance holding its lease (``felt.storage.eventstore.TableLeases``:
the owner's instance id), and every instance announces where it serves under that id
(``felt.storage.instances.TableInstances``). Another instance answers UNAVAILABLE
(``TABLE_ELSEWHERE``), so :class:`TableRouter` finds the owner:

* the owner's address is looked up from both and remembered for ``route_ttl_s`` (two
  Redis reads per table per TTL, not per call);
* a table nobody owns (new, or its owner gone and its lease lapsed) goes to one of the
  announced instances, the same one for the same table (rendezvous hashing on the instance
  ids, so that new tables spread over the instances and every caller, whichever directory it
  reads, picks the same one), which adopts it
  on that call: a caller need not wait for the instances' periodic adoption. An address
  that was just unreachable is passed over for ``suspect_s`` (a crashed instance stays in
  the directory for three lease TTLs). With no directory, or nobody announced, the call
  goes to ``default``;
* after an UNAVAILABLE the route is forgotten (``forget``), so the next call, or the
  caller's one retry (:meth:`OwnerCalls.call`), asks again.

A crashed owner's lease is held until it lapses (``FELT_LEASE_TTL_MS``): until then no
other instance may run the table and calls to it fail UNAVAILABLE (retried by every caller
with the same request id). Safety never depends on timing: a stale owner's write is
refused by the version-checked append.

:class:`Channels` keeps one ``grpc.aio`` channel per address for the caller's lifetime.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import grpc
import structlog
from redis.asyncio import Redis

from felt.storage.eventstore import RedisEventStore, TableLeases
from felt.storage.instances import (
    INTERNAL_INSTANCE_KEY_PREFIX,
    RedisTableInstances,
    TableInstances,
)
from felt.storage.redis_client import REDIS_ERRORS
from felt.wire.limits import MAX_REQUEST_BYTES, TABLE_ID

log = structlog.get_logger("felt.router")

# A response (a table view, a hand's history) is bigger than a request; gRPC's default
# 4 MiB bound on received messages stays, the services' requests are bounded by them.
CHANNEL_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.max_send_message_length", MAX_REQUEST_BYTES),
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
)

CLOSE_GRACE_S = 5.0
"""How long the calls in flight on a channel of an address no longer announced may finish."""

MAX_ROUTES = 100_000
"""Remembered routes at most (table ids may come from clients: keep this bounded)."""


class Channels:
    """One channel per upstream address, made on first use, closed together; ``interceptors``
    on every one of them (e.g. a tracer's)."""

    def __init__(
        self,
        interceptors: Sequence[Any] = (),
        options: tuple[tuple[str, int | str], ...] = CHANNEL_OPTIONS,
    ) -> None:
        self.options = options
        self._interceptors = list(interceptors)
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._closing: set[asyncio.Task[None]] = set()  # channels of addresses gone

    def get(self, address: str) -> grpc.aio.Channel:
        channel = self._channels.get(address)
        if channel is None:
            channel = grpc.aio.insecure_channel(
                address, options=self.options, interceptors=self._interceptors or None
            )
            self._channels[address] = channel
        return channel

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close(grace=1.0)
        self._channels.clear()
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)

    def keep_only(self, addresses: Collection[str]) -> list[str]:
        """Close the channels of the addresses not in ``addresses`` (no longer announced):
        an instance replaced by one at a new address leaves nothing open behind. In the
        background, each with ``CLOSE_GRACE_S`` for its calls in flight: the call that found
        them gone does not wait. Returns the addresses closed."""
        gone = [a for a in self._channels if a not in addresses]
        loop = asyncio.get_running_loop()
        for address in gone:
            closing = loop.create_task(self._channels.pop(address).close(grace=CLOSE_GRACE_S))
            self._closing.add(closing)
            closing.add_done_callback(self._closing.discard)
        return gone


def unreachable(error: grpc.aio.AioRpcError) -> bool:
    """Whether ``error`` says the address could not be reached (an UNAVAILABLE the table
    service did not answer itself: its own refusals carry an ``ErrorInfo``)."""
    if error.code() is not grpc.StatusCode.UNAVAILABLE:
        return False
    trailers = error.trailing_metadata() or ()
    return not any(key == "grpc-status-details-bin" for key, _ in trailers)


@dataclass
class _Route:
    address: str
    until: float
    known: bool = True  # False: the default, because the directory could not be read


@dataclass
class TableRouter:
    """The address of a table's owner, from its lease and the instance directory."""

    default: str
    leases: TableLeases | None = None
    instances: TableInstances | None = None
    route_ttl_s: float = 1.0
    suspect_s: float = 5.0
    clock: Callable[[], float] = time.monotonic
    _routes: dict[str, _Route] = field(default_factory=dict)
    _suspects: dict[str, float] = field(default_factory=dict)
    _live: tuple[tuple[str, str], ...] = ()  # the directory's (id, address), as last read
    _live_until: float = 0.0
    reads: int = 0  # how often the directory was read (``OwnerCalls`` prunes after each)

    async def address(self, table_id: str) -> str:
        """Where ``table_id``'s calls go now."""
        address, _ = await self.locate(table_id)
        return address

    async def locate(self, table_id: str) -> tuple[str, bool]:
        """Where ``table_id``'s calls go now, and whether that was looked up (False: the
        default, because Redis could not be read, so nothing says the owner moved)."""
        if not TABLE_ID.fullmatch(table_id):  # the service refuses it; nothing to look up
            return self.default, True
        now = self.clock()
        route = self._routes.get(table_id)
        if route is not None and route.until > now:
            return route.address, route.known
        address, known = await self._resolve(table_id)
        if len(self._routes) >= MAX_ROUTES:
            self._routes.clear()
        self._routes[table_id] = _Route(address, now + self.route_ttl_s, known)
        return address, known

    def announced_addresses(self) -> frozenset[str] | None:
        """The addresses of the directory as last read (None: never read, or no directory)."""
        if self.instances is None or not self._live_until:
            return None
        return frozenset(address for _, address in self._live) | {self.default}

    def forget(self, table_id: str, unreachable: str = "") -> None:
        """The route failed (UNAVAILABLE): ask again next time. ``unreachable``: the address
        could not be reached at all, so it adopts no table for ``suspect_s``."""
        self._routes.pop(table_id, None)
        if unreachable:
            self._suspects[unreachable] = self.clock() + self.suspect_s
            self._live_until = 0.0

    async def _resolve(self, table_id: str) -> tuple[str, bool]:
        if self.leases is None or self.instances is None:
            return self.default, True
        try:
            owner = await self.leases.lease_owner(table_id)
            address = None if owner is None else await self.instances.address_of(owner)
            if address is not None:
                return address, True
            return self._adopter(table_id, await self._announced()), True
        except REDIS_ERRORS as exc:
            log.warning("table_route_unknown", table_id=table_id, error=str(exc))
            return self.default, False

    async def _announced(self) -> tuple[tuple[str, str], ...]:
        """The announced instances, (id, address) (read at most once per ``route_ttl_s``)."""
        assert self.instances is not None
        now = self.clock()
        if self._live_until <= now:
            self._live = tuple(sorted((await self.instances.announced()).items()))
            self._live_until = now + self.route_ttl_s
            self.reads += 1
        return self._live

    def _adopter(self, table_id: str, live: tuple[tuple[str, str], ...]) -> str:
        """The instance to run a table nobody owns: the same for every caller, whichever
        directory it reads (the highest hash of table and instance id), passing over
        addresses just found unreachable."""
        now = self.clock()
        for address, until in list(self._suspects.items()):
            if until <= now:
                del self._suspects[address]
        candidates = [i for i in live if i[1] not in self._suspects] or list(live)
        if not candidates:
            return self.default
        _, address = max(
            candidates, key=lambda i: hashlib.sha256(f"{table_id}\0{i[0]}".encode()).digest()
        )
        return address


Stub = TypeVar("Stub")
Answer = TypeVar("Answer")


class OwnerCalls(Generic[Stub]):
    """Unary calls to a table's owner with a stub per address (``make_stub(channel)``, e.g.
    ``TableServiceStub``), each retried once after an UNAVAILABLE if the route then names
    another instance. Callers send a ``request_id`` with every mutating call, so a retry
    is answered, never applied twice."""

    def __init__(
        self,
        router: TableRouter,
        make_stub: Callable[[grpc.aio.Channel], Stub],
        channels: Channels | None = None,
    ) -> None:
        self.router = router
        self.channels = channels or Channels()
        self._make_stub = make_stub
        self._stubs: dict[str, Stub] = {}
        self._pruned = 0  # the router's ``reads`` when the stubs were last pruned

    @classmethod
    def fixed(cls, stub: Stub) -> OwnerCalls[Stub]:
        """Every call to ``stub`` (one instance, or a test's), never retried elsewhere."""
        calls: OwnerCalls[Stub] = cls(TableRouter(""), lambda _channel: stub)
        calls._stubs[""] = stub
        return calls

    def stub(self, address: str) -> Stub:
        """The stub for the instance at ``address``."""
        stub = self._stubs.get(address)
        if stub is None:
            stub = self._make_stub(self.channels.get(address))
            self._stubs[address] = stub
        return stub

    async def prune(self, keep: str = "") -> None:
        """Drop the stubs and close the channels of addresses the directory no longer
        announces (as the router last read it; ``keep`` too, the address about to be
        called): instances come and go at new addresses, and would otherwise leave a
        channel each behind for good."""
        live = self.router.announced_addresses()
        if live is None:
            return
        live |= {keep}
        for address in [a for a in self._stubs if a not in live]:
            del self._stubs[address]
        self.channels.keep_only(live)

    async def owner(self, table_id: str) -> tuple[str, Stub]:
        """The address of ``table_id``'s owner now, and its stub (for a stream: call
        :meth:`failed` if it ends UNAVAILABLE)."""
        address = await self.router.address(table_id)
        if self.router.reads != self._pruned:
            self._pruned = self.router.reads
            await self.prune(keep=address)
        return address, self.stub(address)

    async def call(self, table_id: str, call: Callable[[Stub], Awaitable[Answer]]) -> Answer:
        """``call(stub)`` at ``table_id``'s owner; after an UNAVAILABLE, once more at the
        owner the route names then, if that is another instance."""
        address, stub = await self.owner(table_id)
        try:
            return await call(stub)
        except grpc.aio.AioRpcError as error:
            retry = await self.moved(table_id, address, error)
            if retry is None:
                raise
        try:
            return await call(self.stub(retry))
        except grpc.aio.AioRpcError as error:
            self.failed(table_id, retry, error)
            raise

    async def moved(self, table_id: str, address: str, error: grpc.aio.AioRpcError) -> str | None:
        """After ``error`` from ``address``: the owner's new address, if the route moved."""
        if error.code() is not grpc.StatusCode.UNAVAILABLE:
            return None
        self.failed(table_id, address, error)
        again, known = await self.router.locate(table_id)
        # Not looked up (Redis unreadable): nothing says the owner moved, and the default
        # may be any instance, which would adopt a table its owner still runs.
        return again if known and again != address else None

    def failed(self, table_id: str, address: str, error: grpc.aio.AioRpcError) -> None:
        """Forget the route after an UNAVAILABLE (and mark an unreachable address)."""
        if error.code() is grpc.StatusCode.UNAVAILABLE:
            self.router.forget(table_id, address if unreachable(error) else "")

    async def close(self) -> None:
        self._stubs.clear()
        await self.channels.close()


def owner_calls(
    default: str,
    redis: Redis | None,
    make_stub: Callable[[grpc.aio.Channel], Stub],
    options: tuple[tuple[str, int | str], ...] = CHANNEL_OPTIONS,
    directory: str = INTERNAL_INSTANCE_KEY_PREFIX,
    interceptors: Sequence[Any] = (),
) -> OwnerCalls[Stub]:
    """Calls routed by the leases and the instance ``directory`` in ``redis`` (the caller's
    client, which it closes): by default the internal addresses, which the lobby and the AI
    workers call. Without Redis, every call goes to ``default``."""
    if redis is None:
        router = TableRouter(default)
    else:
        router = TableRouter(
            default,
            RedisEventStore(redis, pipeline=False),
            RedisTableInstances(redis, directory),
        )
    return OwnerCalls(router, make_stub, Channels(interceptors, options))
