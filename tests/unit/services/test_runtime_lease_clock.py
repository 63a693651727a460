"""Past the runtime's lease clock, a write asks Redis and a timer waits for the lease.

The runtime refuses to write once ``lease_expires`` (its own, conservative view of
the Redis lease) is past. A busy event loop can run the manager's renewal late, so
a timer may fire in that window. The timer used to give up silently, and if the
manager then renewed the lease, nothing armed the table again: it never dealt,
never rested, never asked its AI seats (a demo table seen stuck in CI).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import timedelta

import pytest

from felt.core.rules.config import Variant
from felt.core.table.aggregate import CreateTable, LeaveSeat, SeatPlayer
from felt.core.table.events import TableConfig
from felt.storage.decisions import MemoryDecisionQueue
from felt.storage.eventstore import MemoryEventStore
from felt.storage.idempotency import server_key
from felt.storage.registry import MemoryTableRegistry
from services.table.manager import TableManager
from services.table.runtime import LeaseLost, TableRuntime, Timing

FAST = Timing(
    between_hands=timedelta(milliseconds=20),
    retry_delay=timedelta(milliseconds=50),
)


async def _eventually(check: Callable[[], bool], what: str, within_s: float = 5.0) -> None:
    deadline = time.monotonic() + within_s
    while not check():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.01)


async def _two_seated(runtime: TableRuntime) -> TableRuntime:
    """Table "t" created on ``runtime`` with two people seated: between hands."""
    commands: list[CreateTable | SeatPlayer] = [
        CreateTable(TableConfig("t", Variant.NLHE, 6, 5, 10)),
        SeatPlayer(0, "p0", "P0", 1000, "", ""),
        SeatPlayer(1, "p1", "P1", 1000, "", ""),
    ]
    for n, command in enumerate(commands):
        await runtime.run(command, server_key("test", "t", n))
    return runtime


async def _table_between_hands() -> TableRuntime:
    return await _two_seated(TableRuntime("t", MemoryEventStore(), timing=FAST))


def test_a_deal_timer_refused_for_the_lease_deals_once_the_lease_is_renewed() -> None:
    async def main() -> None:
        runtime = await _table_between_hands()
        version = runtime.version
        runtime.lease_expires = 0.0  # the renewal is late
        runtime.start()
        try:
            await asyncio.sleep(0.2)  # the deal timer fired, and retried, all refused
            assert runtime.version == version
            assert runtime.state is not None and runtime.state.hand is None
            runtime.lease_expires = time.monotonic() + 60  # the manager renewed it
            await _eventually(
                lambda: runtime.state is not None and runtime.state.hand is not None,
                "the table to deal once its lease was renewed",
            )
        finally:
            await runtime.stop()

    asyncio.run(main())


def test_a_stopped_runtime_retries_nothing() -> None:
    """The manager hands a table over by stopping its runtime: no timer comes back."""

    async def main() -> None:
        runtime = await _table_between_hands()
        version = runtime.version
        runtime.lease_expires = 0.0
        runtime.start()
        await asyncio.sleep(0.1)
        await runtime.stop()
        runtime.lease_expires = time.monotonic() + 60
        await asyncio.sleep(0.3)
        assert runtime.version == version
        assert runtime._pending is None and runtime._timer is None

    asyncio.run(main())


def test_a_write_past_the_lease_clock_asks_redis_first() -> None:
    """The clock is only this instance's cautious view: past it, a write renews the lease and
    goes through if the lease is still ours, and changes nothing if it is not."""

    async def main() -> None:
        runtime = await _table_between_hands()
        asked: list[bool] = []
        still_ours = True

        async def renew(of: TableRuntime) -> bool:
            asked.append(still_ours)
            if still_ours:
                of.lease_expires = time.monotonic() + 60
            return still_ours

        runtime.renew_lease = renew
        runtime.lease_expires = 0.0
        version = runtime.version
        await runtime.run(LeaveSeat(1), server_key("test", "t", version))
        assert asked == [True] and runtime.version > version
        await runtime.run(LeaveSeat(0), server_key("test", "t", runtime.version))
        assert asked == [True], "within the renewed lease, no second renewal"
        still_ours, runtime.lease_expires = False, 0.0
        version = runtime.version
        with pytest.raises(LeaseLost):
            await runtime.run(SeatPlayer(1, "p1", "P1", 1000, "", ""), server_key("t", "t", 9))
        assert asked == [True, False] and runtime.version == version

    asyncio.run(main())


def test_a_runtime_the_manager_replaced_cannot_renew_its_way_back() -> None:
    """Found by review: the lease names the instance, not the runtime. A loop stalled past
    the lease; the manager's round stopped the runtime and adopted the table again under a
    new one. A call still holding the old runtime must not renew the lease for it and write
    behind the new one's cache."""

    async def main() -> None:
        now = [100.0]
        store = MemoryEventStore(clock=lambda: now[0])
        manager = TableManager(store, MemoryTableRegistry(), MemoryDecisionQueue())
        old = await _two_seated(await manager.register("t"))
        await manager.created(old)
        try:
            now[0] += 3600  # the stall: Redis let the lease lapse
            old.lease_expires = 0.0
            await manager._maintain_once()  # stops the old runtime, adopts the table anew
            new = manager.runtimes["t"]
            assert new is not old and new.version == old.version
            length = len(await store.read("t"))
            with pytest.raises(LeaseLost):
                await old.run(LeaveSeat(1), server_key("late", "t", old.version))
            assert len(await store.read("t")) == length
            assert new.version == length
        finally:
            await manager.stop()

    asyncio.run(main())
