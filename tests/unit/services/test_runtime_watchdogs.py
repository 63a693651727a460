"""The table service's own watchdogs: a table that can deal always has a timer, stopping a
runtime is bounded, and the lease round outlives a callee's cancellation.

Each guards the way a table was seen to stop in CI (a table between hands for a minute
while it still answered reads): whichever path leaves a table able to deal without a
timer, the manager's round arms it again and says so; a runtime whose task ignores its
cancellation cannot hold the round that renews every other table's lease; and a
cancellation raised from inside the round, not meant for it, does not end it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import timedelta

from felt.core.rules.commands import Act, ActionKind
from felt.core.rules.config import Variant
from felt.core.table.aggregate import CreateTable, PlayHand, SeatPlayer
from felt.core.table.events import TableConfig
from felt.storage.decisions import MemoryDecisionQueue
from felt.storage.eventstore import MemoryEventStore
from felt.storage.idempotency import server_key
from felt.storage.registry import MemoryTableRegistry
from services.table.manager import TableManager
from services.table.runtime import TableRuntime, Timing


class _NotAnException(BaseException):
    """What no ``except Exception`` catches (asyncio re-raises only SystemExit and
    KeyboardInterrupt out of the loop)."""


FAST = Timing(between_hands=timedelta(milliseconds=20), retry_delay=timedelta(milliseconds=50))


async def _eventually(check: Callable[[], bool], what: str, within_s: float = 5.0) -> None:
    deadline = time.monotonic() + within_s
    while not check():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.01)


async def _seated(manager: TableManager, seats: int = 2) -> TableRuntime:
    """Table "t" registered on ``manager`` with ``seats`` people: between hands, not started."""
    runtime = await manager.register("t")
    commands: list[CreateTable | SeatPlayer] = [
        CreateTable(TableConfig("t", Variant.NLHE, 6, 5, 10, action_timeout_ms=0)),
        *(SeatPlayer(s, f"p{s}", f"P{s}", 1000, "", "") for s in range(seats)),
    ]
    for n, command in enumerate(commands):
        await runtime.run(command, server_key("test", "t", n))
    return runtime


def _manager() -> TableManager:
    return TableManager(
        MemoryEventStore(), MemoryTableRegistry(), MemoryDecisionQueue(), timing=FAST, adopt=False
    )


async def _short_rounds() -> tuple[MemoryEventStore, TableManager]:
    """A manager with a table, its lease rounds every 0.1 s (not started)."""
    store = MemoryEventStore()
    manager = TableManager(
        store,
        MemoryTableRegistry(),
        MemoryDecisionQueue(),
        timing=FAST,
        lease_ttl_ms=300,
        adopt=False,
    )
    await manager.created(await _seated(manager))
    return store, manager


def _lose_the_timer(runtime: TableRuntime) -> None:
    """What a broken path would leave: the timer gone, nothing else changed."""
    if runtime._pending is not None:
        runtime._pending.cancel()
        runtime._pending = None
    if runtime._timer is not None:
        runtime._timer.cancel()
        runtime._timer = None


def test_a_table_able_to_deal_without_a_timer_is_armed_again_and_deals() -> None:
    async def main() -> None:
        manager = _manager()
        runtime = await _seated(manager)
        runtime.timing = Timing(between_hands=timedelta(seconds=60))  # no deal on its own
        await manager.created(runtime)
        try:
            assert manager.mend_lost_timers() == 0, "a healthy table is left alone"
            _lose_the_timer(runtime)
            runtime.timing = FAST
            assert manager.mend_lost_timers() == 1
            assert manager.mend_lost_timers() == 0, "armed now"
            await _eventually(
                lambda: runtime.state is not None and runtime.state.hand is not None,
                "the table to deal once its timer was armed again",
            )
            assert manager.mend_lost_timers() == 0, "a hand is running"
        finally:
            await manager.stop()

    asyncio.run(main())


def test_a_table_that_cannot_deal_is_not_a_lost_timer() -> None:
    async def main() -> None:
        manager = _manager()
        runtime = await _seated(manager, seats=1)  # one player: nothing to deal
        await manager.created(runtime)
        try:
            _lose_the_timer(runtime)
            assert manager.mend_lost_timers() == 0
        finally:
            await manager.stop()

    asyncio.run(main())


def test_stopping_a_runtime_whose_task_ignores_cancellation_is_bounded() -> None:
    async def main() -> None:
        manager = _manager()
        runtime = await _seated(manager)
        await manager.created(runtime)
        release = asyncio.Event()

        async def stubborn() -> None:
            while not release.is_set():
                try:
                    await asyncio.sleep(10)
                except asyncio.CancelledError:
                    continue  # swallowed, as a library can do inside a call

        runtime._spawn(stubborn())
        await asyncio.sleep(0)
        began = time.monotonic()
        async with asyncio.timeout(10):  # a regression fails, not hangs
            await runtime.stop(grace_s=0.2)
        assert time.monotonic() - began < 2.0
        release.set()
        await manager.stop()

    asyncio.run(main())


def test_the_lease_round_outlives_a_cancellation_raised_inside_it() -> None:
    async def main() -> None:
        store, manager = await _short_rounds()
        renewals: list[str] = []
        renew = store.renew_lease

        async def renew_once_cancelled(table_id: str, owner: str, ttl_ms: int) -> bool:
            renewals.append(table_id)
            if len(renewals) == 1:
                raise asyncio.CancelledError  # a callee's own, not the round's
            return await renew(table_id, owner, ttl_ms)

        await manager.start()
        store.renew_lease = renew_once_cancelled  # type: ignore[method-assign]
        try:
            await _eventually(lambda: len(renewals) >= 3, "the round to go on renewing")
            assert manager._task is not None and not manager._task.done()
        finally:
            await manager.stop()

    asyncio.run(main())


def test_the_lease_rounds_go_on_after_a_watchdog_fails_and_start_again_if_they_end() -> None:
    async def main() -> None:
        _, manager = await _short_rounds()
        rounds: list[int] = []
        reask = manager.reask_stalled_ai

        def failing_reask(now: float | None = None) -> int:
            rounds.append(len(rounds))
            if len(rounds) == 1:
                raise RuntimeError("a watchdog's bug")
            return reask(now)

        manager.reask_stalled_ai = failing_reask  # type: ignore[method-assign]
        await manager.start()
        try:
            await _eventually(lambda: len(rounds) >= 3, "the rounds to go on after the error")
            first = manager._task
            assert first is not None and not first.done()
            maintain_once = manager._maintain_once

            async def ending_round() -> None:
                manager._maintain_once = maintain_once  # type: ignore[method-assign]
                raise _NotAnException("the loop ends")

            manager._maintain_once = ending_round  # type: ignore[method-assign]
            await _eventually(lambda: manager._task is not first, "the rounds to start again")
            seen = len(rounds)
            await _eventually(lambda: len(rounds) >= seen + 2, "the new rounds to run")
        finally:
            await manager.stop()
        assert manager._task is not None and manager._task.done()

    asyncio.run(main())


def test_a_table_closed_at_its_hand_limit_is_not_a_lost_timer() -> None:
    """A table that played its hand limit closes with the hand: no timer, on purpose."""

    async def main() -> None:
        manager = _manager()
        runtime = await manager.register("t")
        config = TableConfig("t", Variant.NLHE, 6, 5, 10, action_timeout_ms=0, hand_limit=1)
        commands: list[CreateTable | SeatPlayer] = [
            CreateTable(config),
            *(SeatPlayer(s, f"p{s}", f"P{s}", 1000, "", "") for s in range(2)),
        ]
        for n, command in enumerate(commands):
            await runtime.run(command, server_key("test", "t", n))
        await manager.created(runtime)
        try:
            await _eventually(
                lambda: runtime.state is not None and runtime.state.hand is not None,
                "the one hand to be dealt",
            )
            hand = runtime.state.hand if runtime.state is not None else None
            assert hand is not None and hand.actor_seat is not None
            fold = PlayHand(Act(hand.actor_seat, ActionKind.FOLD))
            await runtime.run(fold, server_key("test", "t", runtime.version))
            assert runtime.state is not None and runtime.state.hands_played == 1
            assert runtime.state.closed and runtime._pending is None
            assert manager.mend_lost_timers() == 0
        finally:
            await manager.stop()

    asyncio.run(main())


def test_a_lost_lease_whose_stop_is_slow_costs_no_other_table_its_lease() -> None:
    """Found by review: the round stopped a lost table before renewing the next, and a stop
    waits for a command in flight (up to 5 s), past the other tables' leases."""

    async def main() -> None:
        store = MemoryEventStore()
        manager = TableManager(
            store, MemoryTableRegistry(), MemoryDecisionQueue(), lease_ttl_ms=600, adopt=False
        )
        tables = {}
        for table_id in ("t", "u"):
            runtime = await manager.register(table_id)
            await runtime.run(
                CreateTable(TableConfig(table_id, Variant.NLHE, 6, 5, 10)),
                server_key("test", table_id, 0),
            )
            await manager.created(runtime)
            tables[table_id] = runtime
        await manager.start()
        try:
            await tables["t"]._lock.acquire()  # a command in flight, for ever
            await store.release_lease("t", manager.owner)
            assert await store.acquire_lease("t", "another-instance", 60_000)
            began = time.monotonic()
            await _eventually(lambda: "t" not in manager.runtimes, "t's lease to be found lost")
            for _ in range(10):  # rounds every 0.2 s: u's lease runs out unless renewed
                await asyncio.sleep(0.2)
                assert manager.runtimes.get("u") is tables["u"], "u was handed over"
                assert await store.lease_owner("u") == manager.owner
            assert time.monotonic() - began < 5
            tables["t"]._lock.release()
        finally:
            await manager.stop()

    asyncio.run(main())
