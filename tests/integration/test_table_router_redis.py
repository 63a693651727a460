"""The shared table router (``felt.service.table_router``) on the real stores in Redis: the
leases the table service takes and the directories it announces in, public and internal.
(The fakes: tests/unit/test_table_router.py; whole processes: tests/e2e/test_failover.py.)"""

from __future__ import annotations

import redis.asyncio as redis_async_lib

from felt.service.table_router import TableRouter, owner_calls
from felt.storage.eventstore import RedisEventStore
from felt.storage.instances import INTERNAL_INSTANCE_KEY_PREFIX, RedisTableInstances


async def test_each_caller_finds_the_owner_in_its_own_directory(
    redis: redis_async_lib.Redis,
) -> None:
    leases = RedisEventStore(redis, pipeline=False)
    public = RedisTableInstances(redis)
    internal = RedisTableInstances(redis, INTERNAL_INSTANCE_KEY_PREFIX)
    for name in ("a", "b"):
        await public.announce(f"inst-{name}", f"{name}:50051", 60_000)
        await internal.announce(f"inst-{name}", f"{name}:50053", 60_000)
    gateway = TableRouter("default:1", leases, public, route_ttl_s=0.0)
    calls = owner_calls("default:2", redis, lambda channel: channel)
    try:
        assert await leases.acquire_lease("t-owned", "inst-b", 60_000)
        assert await gateway.address("t-owned") == "b:50051"
        assert await calls.router.address("t-owned") == "b:50053"
        # Nobody owns it: both pick the same instance, each at its own port.
        picked = await gateway.address("t-free")
        assert picked in ("a:50051", "b:50051")
        assert await calls.router.address("t-free") == picked.replace("50051", "50053")
        # Nothing announced (the instances withdrew): the configured target.
        for name in ("a", "b"):
            await public.withdraw(f"inst-{name}", f"{name}:50051")
        await leases.release_lease("t-owned", "inst-b")
        assert await gateway.address("t-owned") == "default:1"
    finally:
        await calls.close()
