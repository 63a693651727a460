"""Waiting for tasks a service stops, without waiting for ever.

A cancelled task may not end when asked: redis-py writes each command through
``asyncio.wait_for``, which on Python 3.11 returns the command's result when a cancellation
lands just as it completes, so the cancellation is lost and a loop around it goes on. A stop
that awaited such a task would hang the service's shutdown (the API fuzzer found one: a table
service that never stopped). A stop therefore waits a bounded time, lets its caller's own
cancellation through, and leaves any error of a task that ends later unreported but seen.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any


def drop_outcome(task: asyncio.Task[Any]) -> None:
    """A done callback that retrieves ``task``'s error, if any, so that asyncio does not log
    "exception was never retrieved" for a task whose outcome nobody needs."""
    if not task.cancelled():
        task.exception()


async def ended_within(tasks: Iterable[asyncio.Task[Any]], seconds: float) -> int:
    """Wait at most ``seconds`` for ``tasks`` to end (cancel them first if they should stop);
    how many are still running. Whenever each ends, its outcome is dropped
    (:func:`drop_outcome`). The caller's own cancellation goes through."""
    waiting = set(tasks)
    if not waiting:
        return 0
    _, pending = await asyncio.wait(waiting, timeout=seconds)
    for task in waiting:
        task.add_done_callback(drop_outcome)
    return len(pending)
