"""A Redis read that loses a cancellation, for the contract tests of every blocking reader.

redis-py awaits each reply through ``asyncio.wait_for``, which on Python 3.11 returns the
reply when a cancellation lands just as the read ends: the cancellation is lost, though the
task still counts the request. A read loop on an idle stream then blocked for ever (a
cancelled subscription hung a CI run). Each adapter's loop must honour the pending request
(``felt.storage.redis_client.raise_if_cancelling``); these helpers stage the race.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


class LosesOneCancellation:
    """A blocking read of an idle stream whose first cancellation is swallowed (``lost``)."""

    def __init__(self) -> None:
        self.reading = asyncio.Event()
        self.lost: list[bool] = []

    async def round_trip(self) -> None:
        self.reading.set()
        try:
            await asyncio.sleep(0.05)
        except asyncio.CancelledError:
            if self.lost:
                raise
            self.lost.append(True)

    async def read(self, *args: object, **kwargs: object) -> None:
        """Stands in for ``xread`` / ``xreadgroup``: an empty reply after one round trip."""
        await self.round_trip()
        return None

    async def assert_cancel_ends(self, loop: Coroutine[Any, Any, object]) -> None:
        """Run ``loop``, cancel it while it reads: it must end cancelled, having lost one."""
        task = asyncio.create_task(loop)
        await asyncio.wait_for(self.reading.wait(), 5.0)
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=10)  # a regression fails, not hangs
        if not done:
            task.cancel()  # the second cancellation is not swallowed
            await asyncio.wait({task})
        assert self.lost == [True]
        assert done and task.cancelled()
