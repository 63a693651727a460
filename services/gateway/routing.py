"""Which table-service instance a table's calls go to: the one that owns it.

A table is run by the instance holding its lease (``felt.storage.eventstore.TableLeases``:
the owner's instance id), and every instance announces where it serves under
that id (``felt.storage.instances.TableInstances``). Another instance would answer
UNAVAILABLE, so the gateway sends each call to the owner:

* the owner's address is looked up from both and remembered for
  ``route_ttl_s`` (two Redis reads per table per TTL, not per call);
* a table nobody owns (new, or its owner gone) goes to the default target,
  which adopts it; so does every call when there is no Redis to ask;
* after an UNAVAILABLE the route is forgotten (``forget``), so the next call
  (or the gateway's one retry, see ``services.gateway.forward``) asks again.

One ``grpc.aio`` channel per address, kept for the gateway's lifetime.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
import structlog
from redis.exceptions import RedisError

from felt.storage.eventstore import TableLeases
from felt.storage.instances import TableInstances
from felt.wire.limits import MAX_REQUEST_BYTES, TABLE_ID

log = structlog.get_logger("felt.gateway")

# A response (a table view, a hand's history) is bigger than a request; gRPC's default
# 4 MiB bound on received messages stays, the services' requests are bounded by them.
CHANNEL_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.max_send_message_length", MAX_REQUEST_BYTES),
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
)


class Channels:
    """One channel per upstream address, made on first use, closed together."""

    def __init__(self, interceptors: Sequence[Any] = ()) -> None:
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._interceptors = list(interceptors)  # tracing's, when it is on

    def get(self, address: str) -> grpc.aio.Channel:
        channel = self._channels.get(address)
        if channel is None:
            channel = grpc.aio.insecure_channel(
                address, options=CHANNEL_OPTIONS, interceptors=self._interceptors or None
            )
            self._channels[address] = channel
        return channel

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close(grace=1.0)
        self._channels.clear()


@dataclass
class _Route:
    address: str
    until: float


@dataclass
class TableRouter:
    """The address of a table's owner, from its lease and the instance directory."""

    default: str
    leases: TableLeases | None = None
    instances: TableInstances | None = None
    route_ttl_s: float = 1.0
    clock: Callable[[], float] = time.monotonic
    _routes: dict[str, _Route] = field(default_factory=dict)

    async def address(self, table_id: str) -> str:
        """Where ``table_id``'s calls go now."""
        if not TABLE_ID.fullmatch(table_id):  # the service refuses it; nothing to look up
            return self.default
        now = self.clock()
        route = self._routes.get(table_id)
        if route is not None and route.until > now:
            return route.address
        address = await self._resolve(table_id)
        if len(self._routes) > 100_000:  # table ids come from clients: keep this bounded
            self._routes.clear()
        self._routes[table_id] = _Route(address, now + self.route_ttl_s)
        return address

    def forget(self, table_id: str) -> None:
        """The route failed (UNAVAILABLE): ask again next time."""
        self._routes.pop(table_id, None)

    async def _resolve(self, table_id: str) -> str:
        if self.leases is None or self.instances is None:
            return self.default
        try:
            owner = await self.leases.lease_owner(table_id)
            address = None if owner is None else await self.instances.address_of(owner)
        except (RedisError, OSError) as exc:
            log.warning("gateway_route_unknown", table_id=table_id, error=str(exc))
            return self.default
        return address or self.default
