"""The AI worker's ``OwnerSubmit``: a decision retried at a table's new owner gets what is
left of the first attempt's timeout, not the whole of it again, so the answer never overruns
the decision's deadline (on the in-memory leases and directory; the router's own behaviour is
tests/unit/test_table_router.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc

from felt.service.table_router import OwnerCalls, TableRouter
from felt.storage.eventstore import MemoryEventStore
from felt.storage.instances import MemoryTableInstances
from poker.v1 import table_service_pb2 as pb
from services.ai_worker.answer import OwnerSubmit


class Instance:
    """One address's stub: records each call's timeout; the old owner answers UNAVAILABLE
    after a while (the table moved meanwhile)."""

    def __init__(self, leases: MemoryEventStore | None, timeouts: list[float]) -> None:
        self.leases = leases  # set for the old owner: it hands the table to b as it fails
        self.timeouts = timeouts

    async def SubmitAction(
        self, request: pb.SubmitActionRequest, *, metadata: Any, timeout: float
    ) -> pb.SubmitActionResponse:
        self.timeouts.append(timeout)
        if self.leases is None:
            return pb.SubmitActionResponse(sequence=7)
        await asyncio.sleep(0.3)
        await self.leases.release_lease(request.table_id, "inst-a")
        await self.leases.acquire_lease(request.table_id, "inst-b", 60_000)
        raise grpc.aio.AioRpcError(
            grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), "gone"
        )


async def test_a_retry_at_the_new_owner_gets_the_time_left() -> None:
    leases, instances = MemoryEventStore(), MemoryTableInstances()
    await instances.announce("inst-a", "a:1", 60_000)
    await instances.announce("inst-b", "b:1", 60_000)
    await leases.acquire_lease("t1", "inst-a", 60_000)
    timeouts: list[float] = []
    calls: OwnerCalls[Any] = OwnerCalls(
        TableRouter("a:1", leases, instances, route_ttl_s=0.0), lambda _channel: None
    )
    calls._stubs["a:1"] = Instance(leases, timeouts)
    calls._stubs["b:1"] = Instance(None, timeouts)
    answer = await OwnerSubmit(calls).SubmitAction(
        pb.SubmitActionRequest(table_id="t1", seat=1), metadata=(), timeout=1.0
    )
    assert answer.sequence == 7
    first, retry = timeouts
    assert 0.9 < first <= 1.0
    assert retry <= 1.0 - 0.3  # what the first attempt left, not a second second
