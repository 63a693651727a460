"""The table manager keeps nothing for tables that do not exist, and loads a table once.

Found by review: every call naming an unknown table left a loading lock behind for good,
so anonymous calls grew the service's memory without bound.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

from felt.core.rules.config import Variant
from felt.core.table.aggregate import CreateTable
from felt.core.table.events import TableConfig
from felt.storage.decisions import MemoryDecisionQueue
from felt.storage.eventstore import MemoryEventStore
from felt.storage.idempotency import client_key
from felt.storage.registry import MemoryTableRegistry
from poker.v1 import table_service_pb2 as pb
from services.table.manager import TableManager, TableNotFound


def _manager(store: MemoryEventStore, registry: MemoryTableRegistry) -> TableManager:
    return TableManager(store, registry, MemoryDecisionQueue(), adopt=False)


async def test_unknown_tables_leave_nothing_behind() -> None:
    manager = _manager(MemoryEventStore(), MemoryTableRegistry())
    for _ in range(200):
        with pytest.raises(TableNotFound):
            await manager.get(f"t-{uuid.uuid4().hex[:12]}")
    assert manager._loading == {}
    assert manager.runtimes == {}


async def test_concurrent_calls_load_a_table_once_and_then_forget_the_lock() -> None:
    store, registry = MemoryEventStore(), MemoryTableRegistry()
    first = _manager(store, registry)
    runtime = await first.register("t")
    config = TableConfig("t", Variant.NLHE, 2, small_blind=5, big_blind=10)
    key = client_key("admin", pb.SitInRequest(table_id="t", request_id="create"))
    await runtime.run(CreateTable(config), key)
    await first.created(runtime)
    await first.stop()  # hands the table over (its lease released)

    second = _manager(store, registry)
    try:
        loaded = await asyncio.gather(*(second.get("t") for _ in range(20)))
        assert all(r is loaded[0] for r in loaded)
        assert second._loading == {}
    finally:
        await second.stop()
