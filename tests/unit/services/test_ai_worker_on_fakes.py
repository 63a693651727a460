"""The table manager and an AI worker on the in-memory ports: no Redis, no network.

The manager publishes decision requests to ``MemoryDecisionQueue``; a real
``AiWorker`` (its loops, handling, answer policy) reads them from the same
fake and answers through a stand-in for the table service that runs the
command on the table's runtime, mapping refusals to the status codes the real
service uses. Hands get played to the end by the bots alone.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import grpc
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from felt.core.rules.commands import IllegalAction
from felt.core.rules.config import Variant
from felt.core.table.aggregate import CreateTable, PlayHand, SeatPlayer, TableCommand
from felt.core.table.events import TableConfig
from felt.storage.decisions import MemoryDecisionQueue
from felt.storage.eventstore import MemoryEventStore, VersionConflict
from felt.storage.idempotency import ai_principal, client_key
from felt.storage.registry import MemoryTableRegistry
from felt.wire.convert import action_from_proto
from poker.v1 import table_service_pb2 as pb
from services.ai_worker.config import WorkerConfig
from services.ai_worker.worker import AiWorker
from services.table.manager import TableManager
from services.table.runtime import Timing

TABLE = "fake-table"


class TableStandIn:
    """``SubmitAction`` as the AI workers see it, run straight on the table's runtime."""

    def __init__(self, manager: TableManager) -> None:
        self.manager = manager
        self.calls = 0
        self.with_view = 0  # answers the worker asked a view for (it reads none)

    async def SubmitAction(
        self, request: pb.SubmitActionRequest, *, metadata: Any, timeout: float
    ) -> pb.SubmitActionResponse:
        self.calls += 1
        self.with_view += not request.sequence_only
        runtime = await self.manager.get(request.table_id)
        key = client_key(ai_principal(request.seat), request)
        command = PlayHand(action_from_proto(request.seat, request.action))
        try:
            outcome = await runtime.run(
                command,
                key,
                lambda _before, _state, seq, _deadline: pb.SubmitActionResponse(sequence=seq),
                request.expected_sequence,
            )
        except IllegalAction as exc:
            raise _status(grpc.StatusCode.FAILED_PRECONDITION, exc.message) from None
        except VersionConflict as exc:
            raise _status(grpc.StatusCode.ABORTED, str(exc)) from None
        return pb.SubmitActionResponse(sequence=outcome.sequence)


def _status(code: grpc.StatusCode, details: str) -> grpc.aio.AioRpcError:
    empty = grpc.aio.Metadata()
    return grpc.aio.AioRpcError(code, empty, empty, details)


@pytest.fixture
async def table() -> AsyncIterator[tuple[TableManager, MemoryDecisionQueue]]:
    queue = MemoryDecisionQueue()
    manager = TableManager(
        MemoryEventStore(),
        MemoryTableRegistry(),
        queue,
        adopt=False,
        timing=Timing(between_hands=timedelta(0)),
    )
    runtime = await manager.register(TABLE)
    config = TableConfig(TABLE, Variant.NLHE, 2, small_blind=5, big_blind=10)
    setup: tuple[TableCommand, ...] = (
        CreateTable(config),
        SeatPlayer(0, "bot-0", "", 1000, "h0", "normal"),
        SeatPlayer(1, "bot-1", "", 1000, "h1", "easy"),
    )
    for n, command in enumerate(setup):
        key = client_key("admin", pb.SitInRequest(table_id=TABLE, request_id=f"setup-{n}"))
        await runtime.run(command, key)
    await manager.created(runtime)
    try:
        yield manager, queue
    finally:
        await manager.stop()


def worker_config() -> WorkerConfig:
    return WorkerConfig(metrics_port=None, claim_idle_ms=2000, block_ms=50, stats_interval_s=60)


async def test_bots_play_hands_through_the_fake_queue(
    table: tuple[TableManager, MemoryDecisionQueue],
) -> None:
    manager, queue = table
    stand_in = TableStandIn(manager)
    worker = AiWorker(worker_config(), queue=queue, stub=stand_in)
    await worker.start()
    runtime = manager.runtimes[TABLE]

    def played() -> bool:
        state = runtime.state
        if state is None or state.hands_played < 1:
            return False
        if worker.outcomes["accepted"] >= 12:
            return True
        # A seat busted (an all-in lost early): the table waits for chips, and no more
        # decisions will come. The hand was still played to its end by the bots.
        return not state.hand_running and not state.can_start_hand()

    try:
        # Conditions, not timings: the bound only stops a hung test (a loaded machine is slow).
        async with asyncio.timeout(90):
            while not played():
                await asyncio.sleep(0.01)
            # Every request read was answered and acknowledged (between two decisions).
            while queue.pending_of(worker.consumer):
                await asyncio.sleep(0.001)
    finally:
        await worker.stop()
    assert worker.outcomes["dead"] == 0
    # Every answer went through the table's runtime.
    assert stand_in.calls >= worker.outcomes["accepted"] >= 2
    assert stand_in.with_view == 0, "the table built views nobody read"


async def test_poison_is_dead_lettered_and_acknowledged() -> None:
    queue = MemoryDecisionQueue()
    worker = AiWorker(worker_config(), queue=queue, stub=TableStandIn(None))  # type: ignore[arg-type]
    await worker.start()
    try:
        queue.add({b"payload": b"\xff not a request", b"request_id": b"x"})
        queue.add({b"request_id": b"y"})
        async with asyncio.timeout(5):
            while worker.outcomes["dead"] < 2:
                await asyncio.sleep(0.01)
    finally:
        await worker.stop()
    reasons = sorted(record[b"reason"].decode().split(":")[0] for record in queue.dead)
    assert reasons == ["undecodable", "undecodable"]
    assert queue.pending_of(worker.consumer) == []
    stats = await queue.stats()
    assert stats is not None and stats.pending == 0


async def test_a_decision_request_lost_with_redis_is_asked_again_once_it_is_back(
    table: tuple[TableManager, MemoryDecisionQueue],
) -> None:
    """A crash under ``appendfsync everysec`` can lose the AI stream's last entry while the
    table's events survive: once Redis is back the manager asks the seat to act again, under
    the same request id, and play goes on."""
    manager, queue = table
    async with asyncio.timeout(30):
        while not queue.entries:
            await asyncio.sleep(0.01)
    first = dict(queue.entries[0][1])
    queue.entries.clear()  # lost with the AOF's last second
    worker = AiWorker(worker_config(), queue=queue, stub=TableStandIn(manager))
    await worker.start()  # its group reads the stream from its start (nothing left in it)
    try:
        assert manager.ask_ai_again() == 1
        async with asyncio.timeout(30):
            while not queue.entries:
                await asyncio.sleep(0.01)
        assert queue.entries[0][1][b"request_id"] == first[b"request_id"]
        async with asyncio.timeout(30):
            while worker.outcomes["accepted"] < 3:
                await asyncio.sleep(0.01)
    finally:
        await worker.stop()
    await manager.stop()
    assert manager.ask_ai_again() == 0  # nothing runs here any more


async def _first_request(queue: MemoryDecisionQueue) -> dict[bytes, bytes]:
    async with asyncio.timeout(30):
        while not queue.entries:
            await asyncio.sleep(0.01)
    return dict(queue.entries[0][1])


async def test_the_watchdog_asks_a_stalled_ai_seat_again_and_only_a_stalled_one(
    table: tuple[TableManager, MemoryDecisionQueue],
) -> None:
    """A lost request is found by its missing answer (no sign of a Redis restart needed):
    after ``timing.ai_reask`` (10 s) without an action the seat is asked again, then after
    twice as long each time (20 s, 40 s, 80 s, then every 160 s), never sooner."""
    manager, queue = table
    first = await _first_request(queue)
    queue.entries.clear()  # lost with the AOF's last second
    # A whole number of seconds: (t + 160) - t is 159.99999999999997 for some floats t, and
    # the watchdog would rightly find the pause not over yet.
    now = float(math.ceil(time.monotonic()))
    assert manager.reask_stalled_ai(now) == 0  # asked a moment ago
    assert manager.reask_stalled_ai(now + 11) == 1
    assert (await _first_request(queue))[b"request_id"] == first[b"request_id"]
    assert manager.reask_stalled_ai(now + 12) == 0  # asked at now + 11
    assert manager.reask_stalled_ai(now + 22) == 0  # the pause doubled: 20 s
    asked_at = now + 11
    for published, pause in enumerate((20, 40, 80, 160, 160), start=2):
        assert manager.reask_stalled_ai(asked_at + pause - 1) == 0
        assert manager.reask_stalled_ai(asked_at + pause) == 1
        asked_at += pause
        # The re-ask's publisher runs (a loaded machine takes a while): until it is done, a
        # next re-ask would rightly be refused as one beside a publisher still at work.
        async with asyncio.timeout(10):
            while len(queue.entries) < published or any(
                runtime._asking for runtime in manager.runtimes.values()
            ):
                await asyncio.sleep(0.01)
    assert len(queue.entries) == 6  # one request per re-ask, each the same version's
    assert {e[b"request_id"] for _, e in queue.entries} == {first[b"request_id"]}


async def test_one_publisher_per_version_while_redis_is_away(
    table: tuple[TableManager, MemoryDecisionQueue], monkeypatch: pytest.MonkeyPatch
) -> None:
    """While Redis refuses, one ``_ask_ai`` retries the version's request: neither a manual
    re-ask nor the watchdog starts a second beside it, and it publishes once Redis is back."""
    manager, queue = table
    await _first_request(queue)
    queue.entries.clear()
    attempts = 0
    publish = queue.publish

    async def refused(request: Any, trace: Any = None) -> None:
        nonlocal attempts
        attempts += 1
        raise RedisConnectionError("Connection refused")

    monkeypatch.setattr(queue, "publish", refused)
    assert manager.ask_ai_again() == 1
    async with asyncio.timeout(10):
        while not attempts:
            await asyncio.sleep(0.01)
    assert manager.ask_ai_again() == 0
    assert manager.reask_stalled_ai(time.monotonic() + 60) == 0
    await asyncio.sleep(0.1)
    assert attempts == 1  # the one loop, waiting for its next attempt
    monkeypatch.setattr(queue, "publish", publish)
    await _first_request(queue)  # the loop's retry, once "Redis" is back
    assert len(queue.entries) == 1


async def test_a_retry_stops_once_the_table_was_reloaded(
    table: tuple[TableManager, MemoryDecisionQueue], monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a Redis crash lost a tail, a version number may name another history: a retry
    of a request built from the state before the reload must not be published under it."""
    manager, queue = table
    await _first_request(queue)
    queue.entries.clear()
    attempts = 0
    publish = queue.publish

    async def refused(request: Any, trace: Any = None) -> None:
        nonlocal attempts
        attempts += 1
        raise RedisConnectionError("Connection refused")

    monkeypatch.setattr(queue, "publish", refused)
    runtime = manager.runtimes[TABLE]
    assert runtime.ask_again()
    async with asyncio.timeout(10):
        while not attempts:
            await asyncio.sleep(0.01)
    await runtime.load()  # what a reload after the stream moved under the cache does
    monkeypatch.setattr(queue, "publish", publish)
    await asyncio.sleep(runtime.timing.retry_delay.total_seconds() + 0.5)
    assert queue.entries == []  # the retry saw its state was gone, and stopped
    assert runtime.ask_again()  # the reloaded state's own request
    await _first_request(queue)
