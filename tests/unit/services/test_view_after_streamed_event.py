"""A view read is never behind an event the stream already holds.

A watch stream tails the table's stream in the store, so it can hand a client an event while
the command that appended it still waits for its append's answer, before the runtime's cache
holds it. ``felt play`` reads the view at each event; once, under load, it read the view
before the cache had the AI's fold that gave the person the turn, and showed no choices while
the table waited on the person. Reads now wait for the command in flight
(``TableRuntime.settled``); these tests hold an append between the store and the cache.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from felt.core.rules.config import Variant
from felt.core.table.aggregate import CreateTable, SeatPlayer
from felt.core.table.events import TableConfig
from felt.storage.decisions import MemoryDecisionQueue
from felt.storage.eventstore import MemoryEventStore
from felt.storage.eventstore.base import AppendResult
from felt.storage.idempotency import server_key
from felt.storage.registry import MemoryTableRegistry
from services.table import runtime as runtime_module
from services.table.manager import TableManager
from services.table.runtime import TableRuntime


class _HeldStore(MemoryEventStore):
    """Stores an append at once (a stream reading the store sees it) and answers it only when
    ``release`` is set, while ``hold`` is on."""

    def __init__(self) -> None:
        super().__init__()
        self.hold = False
        self.fail = False  # the held append then fails: an outcome its caller cannot know
        self.stored = asyncio.Event()
        self.release = asyncio.Event()

    async def append(
        self,
        table_id: str,
        events: Sequence[bytes],
        expected_version: int,
        request_id: str | None = None,
        response: bytes = b"",
        *,
        snapshot_at: int = 0,
    ) -> AppendResult:
        result = await super().append(
            table_id, events, expected_version, request_id, response, snapshot_at=snapshot_at
        )
        if self.hold:
            self.stored.set()
            await self.release.wait()
            if self.fail:
                raise ConnectionError("the answer was lost")
        return result


async def _created(store: _HeldStore) -> tuple[TableManager, TableRuntime]:
    """Table "t" created on ``store``, no one seated."""
    manager = TableManager(store, MemoryTableRegistry(), MemoryDecisionQueue(), adopt=False)
    runtime = await manager.register("t")
    await runtime.run(
        CreateTable(TableConfig("t", Variant.NLHE, 6, 5, 10)), server_key("t", "t", 0)
    )
    return manager, runtime


async def _seating_held(store: _HeldStore, runtime: TableRuntime) -> asyncio.Task[Any]:
    """A player seated at "t" while ``store`` holds the append: the task, once the store has
    the event and the runtime's cache does not."""
    seating = asyncio.create_task(
        runtime.run(SeatPlayer(0, "p0", "P0", 1000, "", ""), server_key("t", "t", 1))
    )
    await store.stored.wait()
    return seating


async def test_a_read_waits_for_the_append_the_stream_already_holds() -> None:
    store = _HeldStore()
    manager, runtime = await _created(store)
    store.hold = True
    seating = await _seating_held(store, runtime)
    in_store = (await store.read_tail("t"))[-1].sequence
    assert runtime.version < in_store  # the stream could deliver what the cache lacks

    read = asyncio.create_task(runtime.settled())
    await asyncio.sleep(0.01)
    assert not read.done()  # the read waits for the command in flight
    store.release.set()
    await read
    assert runtime.version == in_store
    await seating
    await manager.stop()


async def test_a_read_with_no_command_in_flight_does_not_wait() -> None:
    manager, runtime = await _created(_HeldStore())
    await asyncio.wait_for(runtime.settled(), 0.5)
    await manager.stop()


async def test_a_read_after_a_failed_append_rereads_the_stream() -> None:
    store = _HeldStore()
    manager, runtime = await _created(store)
    store.hold = store.fail = True
    seating = await _seating_held(store, runtime)
    in_store = (await store.read_tail("t"))[-1].sequence
    read = asyncio.create_task(runtime.settled())
    store.release.set()
    await read
    # The append failed after the store took it: the cache is behind and says so, and a
    # read rereads it (``Queries._viewer``: ``refresh`` when ``stale``).
    assert runtime.stale and runtime.version < in_store
    store.hold = False
    await runtime.refresh()
    assert runtime.version == in_store
    assert isinstance(seating.exception(), ConnectionError)
    await manager.stop()


async def test_a_stalled_append_holds_a_read_only_for_a_while(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(runtime_module, "SETTLE_S", 0.05)
    store = _HeldStore()
    manager, runtime = await _created(store)
    store.hold = True
    seating = await _seating_held(store, runtime)
    await asyncio.wait_for(runtime.settled(), 1.0)  # answers from the cache, not hung
    store.release.set()
    await seating
    await manager.stop()
