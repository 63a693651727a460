"""Stopping the table service ends although a cancellation gets lost inside a Redis command.

On Python 3.11, ``asyncio.wait_for`` returns its inner result when a cancellation lands
just as that finishes, and redis-py writes every command through it (``socket_timeout``):
a task cancelled while it sends a command can go on as if nothing happened. The instance
announcements renewed in such a loop, and ``Announcer.abandon`` waited for the cancelled
loop to end: the service's stop hung for ever (the API fuzzer's "restart the service" step,
once in CI). Closing the watch feeds waited alike for a feed whose blocking read lost its
cancellation (on an idle table no record ever comes to end it). These stand in for the lost
cancellation with a call that swallows it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

from felt.storage.eventstore import MemoryEventStore, StoredRecord
from felt.storage.instances import MemoryTableInstances
from services.table.announce import Announcer
from services.table.watch import WatchClosed, WatchHub


class _LosesOneCancellation(MemoryTableInstances):
    """A directory whose announcement swallows the first cancellation that lands in it."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0
        self.in_call = asyncio.Event()
        self.lost = 0

    async def announce(self, instance_id: str, address: str, ttl_ms: int) -> None:
        self.calls += 1
        if self.calls > 1:  # a renewal (the first call is start's own)
            self.in_call.set()
            try:
                await asyncio.sleep(0.05)  # the command's round trip
            except asyncio.CancelledError:
                if self.lost:
                    raise
                self.lost += 1  # lost, as inside redis-py on Python 3.11
        await super().announce(instance_id, address, ttl_ms)


def test_stopping_the_announcements_ends_when_the_cancellation_is_lost() -> None:
    async def main() -> None:
        directory = _LosesOneCancellation()
        announcer = Announcer(directory, "table-1", "127.0.0.1:1", lease_ttl_ms=3)
        await announcer.start()
        await asyncio.wait_for(directory.in_call.wait(), 5.0)
        began = time.monotonic()
        async with asyncio.timeout(10):  # a regression fails, not hangs
            await announcer.stop()
        assert directory.lost == 1
        assert time.monotonic() - began < 1.0  # the round in flight ends, then the loop
        assert await directory.announced() == {}  # withdrawn
        calls = directory.calls
        await asyncio.sleep(0.05)
        assert directory.calls == calls  # no more renewals

    asyncio.run(main())


def test_cancelling_a_stop_of_the_announcements_is_not_swallowed() -> None:
    """A caller that gives up on the stop is cancelled (it was swallowed with the renewal's
    cancellation: the API fuzzer's cancelled restart went on to start a second service)."""

    async def main() -> None:
        directory = MemoryTableInstances()
        announcer = Announcer(directory, "table-1", "127.0.0.1:1", lease_ttl_ms=3000)
        await announcer.start()
        stop = asyncio.ensure_future(announcer.stop())
        await asyncio.sleep(0)  # inside abandon, waiting for the renewals to end
        stop.cancel()
        async with asyncio.timeout(10):
            await asyncio.wait({stop})
        assert stop.cancelled()

    asyncio.run(main())


class _ReadLosesOneCancellation(MemoryEventStore):
    """A store whose blocking read of an idle table swallows the first cancellation."""

    def __init__(self) -> None:
        super().__init__()
        self.reading = asyncio.Event()
        self.lost = 0

    async def subscribe(
        self, table_id: str, from_sequence: int = 0, *, block_ms: int = 5000
    ) -> AsyncIterator[StoredRecord]:
        while True:  # nothing comes: the table is idle
            self.reading.set()
            try:
                await asyncio.sleep(block_ms / 1000)
            except asyncio.CancelledError:
                if self.lost:
                    raise
                self.lost += 1  # lost, as inside redis-py on Python 3.11
            if False:  # pragma: no cover - an async generator that yields nothing
                yield


def test_closing_the_watch_feeds_is_bounded_when_a_cancellation_is_lost() -> None:
    async def main() -> None:
        store = _ReadLosesOneCancellation()
        hub = WatchHub(store)
        watch = hub.events("t1", 0, 0)
        first = asyncio.ensure_future(anext(watch))  # joins the table's feed, waits
        await asyncio.wait_for(store.reading.wait(), 5.0)
        began = time.monotonic()
        async with asyncio.timeout(10):  # a regression fails, not hangs
            await hub.aclose()
        assert time.monotonic() - began < 5.0
        assert store.lost == 1
        with contextlib.suppress(WatchClosed):
            await asyncio.wait_for(first, 5.0)
        feed_tasks = [t for t in asyncio.all_tasks() if "TableFeed" in repr(t)]
        for task in feed_tasks:
            task.cancel()  # the second cancellation ends it (the service closes its client)
        await asyncio.wait(feed_tasks, timeout=5.0)

    asyncio.run(main())
