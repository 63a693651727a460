"""Where each table-service instance can be reached: the instance directory port.

A table's lease (``table:{id}:lease``) names the instance that owns it, by its
instance id, which is an identity, not an address: the gateway needs to send a
table's calls to the owner (another instance answers UNAVAILABLE). Every
instance therefore announces the address it serves on under its id, for a
time it keeps renewing (a few lease TTLs): a stopped instance withdraws it, a
crashed one's entry expires shortly after its leases.

A caller routing a table nobody owns (new, or its owner crashed) picks one of the
announced instances (``felt.service.table_router``), so the directory also lists them.

``TableInstances`` is the port; ``RedisTableInstances`` keeps one string per
instance, ``felt:table-instance:<instance id>`` -> ``host:port``, with a TTL
(``redis-cli GET`` shows it to an operator), and the set of announced ids,
``felt:table-instances`` (ids whose string lapsed are dropped from it when it is
read). The internal addresses (the table service's internal port, which the lobby and the
AI workers call) form a second directory of the same shape, ``felt:table-internal:<id>``
and ``felt:table-internals``. ``MemoryTableInstances`` is the fake, with an injected clock.
Both pass ``tests/integration/test_instances_contract.py``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from redis.asyncio import Redis

INSTANCE_KEY_PREFIX = "felt:table-instance:"
"""The public addresses (the gateway's calls)."""
INTERNAL_INSTANCE_KEY_PREFIX = "felt:table-internal:"
"""The internal addresses (``FELT_TABLE_INTERNAL_ADDR``: the lobby's and the AI workers' calls)."""


@runtime_checkable
class TableInstances(Protocol):
    """Instance id -> the address it serves gRPC on, while it keeps saying so."""

    async def announce(self, instance_id: str, address: str, ttl_ms: int) -> None:
        """Say ``instance_id`` serves at ``address`` for the next ``ttl_ms`` (renews it)."""
        ...

    async def withdraw(self, instance_id: str, address: str) -> None:
        """Forget ``instance_id``'s address, if it is still ``address`` (a stopping instance)."""
        ...

    async def address_of(self, instance_id: str) -> str | None:
        """Where ``instance_id`` serves, if it announced it and that has not lapsed."""
        ...

    async def announced(self) -> dict[str, str]:
        """Every instance id whose announcement has not lapsed -> its address."""
        ...


# KEYS: the instance's key. ARGV: address. Delete only if it still holds this address, so an
# instance restarted under the same id that announced again is not erased by the old one.
_WITHDRAW_LUA = """#!lua
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class RedisTableInstances:
    """The directory in Redis: ``felt:table-instance:<id>`` -> address, with a TTL."""

    def __init__(self, redis: Redis, prefix: str = INSTANCE_KEY_PREFIX) -> None:
        self.redis = redis
        self.prefix = prefix
        self.index = prefix.rstrip(":") + "s"  # felt:table-instances
        self._withdraw = redis.register_script(_WITHDRAW_LUA)

    def key(self, instance_id: str) -> str:
        return self.prefix + instance_id

    async def announce(self, instance_id: str, address: str, ttl_ms: int) -> None:
        # Two keys, two commands (no script: under Redis Cluster they may live apart).
        await self.redis.set(self.key(instance_id), address, px=ttl_ms)
        await self.redis.sadd(self.index, instance_id)

    async def withdraw(self, instance_id: str, address: str) -> None:
        if await self._withdraw(keys=[self.key(instance_id)], args=[address]):
            await self.redis.srem(self.index, instance_id)

    async def address_of(self, instance_id: str) -> str | None:
        raw = await self.redis.get(self.key(instance_id))
        if raw is None:
            return None
        return raw.decode() if isinstance(raw, bytes) else str(raw)

    async def announced(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for member in await self.redis.smembers(self.index):
            instance_id = member.decode() if isinstance(member, bytes) else str(member)
            address = await self.address_of(instance_id)
            if address is None:  # lapsed (a crash): an announcement would add it back
                await self.redis.srem(self.index, instance_id)
            else:
                found[instance_id] = address
        return found


class MemoryTableInstances:
    """The directory in a dict, for service tests; ``clock`` (seconds) decides expiry."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.entries: dict[str, tuple[str, float]] = {}

    async def announce(self, instance_id: str, address: str, ttl_ms: int) -> None:
        self.entries[instance_id] = (address, self._clock() + ttl_ms / 1000)

    async def withdraw(self, instance_id: str, address: str) -> None:
        held = self.entries.get(instance_id)
        if held is not None and held[0] == address:
            del self.entries[instance_id]

    async def address_of(self, instance_id: str) -> str | None:
        held = self.entries.get(instance_id)
        if held is None:
            return None
        if self._clock() >= held[1]:
            del self.entries[instance_id]
            return None
        return held[0]

    async def announced(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for instance_id in list(self.entries):
            address = await self.address_of(instance_id)
            if address is not None:
                found[instance_id] = address
        return found
