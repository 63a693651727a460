"""Ownership: one writer per table (leases), takeover after a crash, stale writers refused."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import pytest

from felt.core.rules.commands import Act, ActionKind
from felt.core.table.aggregate import LeaveSeat, PlayHand, SitOut
from felt.storage.eventstore import RedisEventStore, VersionConflict
from felt.storage.idempotency import server_key
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from services.table.runtime import TableRuntime
from tests.integration.table.harness import TableEnv

CALL = tpb.Action(call=tpb.Action.Call())
CHECK = tpb.Action(check=tpb.Action.Check())


async def _answered(call: Any) -> Any:
    """``call()``'s answer once the instance serves the table (None while UNAVAILABLE)."""
    try:
        return await call()
    except grpc.aio.AioRpcError as err:
        if err.code() == grpc.StatusCode.UNAVAILABLE:
            return None
        raise


async def test_a_crashed_owner_table_is_taken_over_and_finished(table_env: TableEnv) -> None:
    ttl = 800
    first = await table_env.start_server(lease_ttl_ms=ttl)
    stub = table_env.stub(first)
    clock_ms = 600
    table_id = await table_env.create_table(stub, table_env.nlhe(3, clock_ms=clock_ms))
    keys = await table_env.seat_all(stub, table_id, 3)
    watcher = table_env.watch(stub, table_id, from_sequence=1)
    dealt = await watcher.wait_event("hole_cards_dealt", seat=2)
    view = await table_env.view(stub, table_id, keys[dealt.hole_cards_dealt.seat])
    actor = view.hand.to_act
    view = await table_env.view(stub, table_id, keys[actor])
    rid = uuid.uuid4().hex
    acted = await table_env.submit(stub, table_id, keys[actor], CALL, view.table.sequence, rid)
    await watcher.close()
    owner = await table_env.lease_owner(table_id)
    assert owner == first.manager.owner

    await table_env.crash(first)  # mid-hand, a seat's clock running, the lease not released
    assert await table_env.lease_owner(table_id) == owner
    second = await table_env.start_server(lease_ttl_ms=ttl)
    stub2 = table_env.stub(second)
    # Until the lease expires the table is not served; then the new instance adopts it.
    started = time.monotonic()
    table = await table_env.eventually(
        lambda: _answered(lambda: stub2.GetTable(pb.GetTableRequest(table_id=table_id))),
        "the second instance to take the table over",
    )
    assert time.monotonic() - started < ttl / 1000 + 10
    assert await table_env.lease_owner(table_id) == second.manager.owner
    assert table.table.sequence == acted.sequence
    # The in-flight retry is answered from the log, identically.
    again = await table_env.submit(stub2, table_id, keys[actor], CALL, view.table.sequence, rid)
    assert again.SerializeToString() == acted.SerializeToString()
    # Nobody acts: the new owner's timers time the seats out and finish the hand.
    watcher = table_env.watch(stub2, table_id, from_sequence=acted.sequence)
    timed_out = await watcher.wait_event("action_timed_out")
    await watcher.wait_event("hand_ended", timeout=30)
    stored = await table_env.stored(table_id)
    assert stored[timed_out.sequence - 1].request_key.startswith("s/timeout/")
    assert [e.sequence for e in stored] == list(range(1, len(stored) + 1))
    request = table_env.submit_request(table_id, keys[actor], CALL, view.table.sequence, rid)
    key = table_env.request_key(keys[actor], request)
    assert len([e for e in stored if e.request_key == key and e.HasField("player_called")]) == 1
    # The hand the crash cut (the first hand ended after the acknowledged call): all three
    # seats' chips. An earlier hand may have been dealt to the first two seats alone, before
    # the third sat down (a loaded machine), and counts only theirs.
    hand_end = next(e for e in stored if e.HasField("hand_ended") and e.sequence > acted.sequence)
    assert sum(s.stack for s in hand_end.hand_ended.stacks) == 3000


async def test_only_the_lease_holder_serves_a_table(table_env: TableEnv) -> None:
    first = await table_env.start_server(lease_ttl_ms=1500)
    stub = table_env.stub(first)
    table_id = await table_env.create_table(stub, table_env.nlhe(2))
    keys = await table_env.seat_all(stub, table_id, 2)
    second = await table_env.start_server(lease_ttl_ms=1500)
    stub2 = table_env.stub(second)
    calls: list[Callable[[], Awaitable[Any]]] = [
        lambda: stub2.GetTable(pb.GetTableRequest(table_id=table_id)),
        lambda: table_env.submit(stub2, table_id, keys[0], CALL),
    ]
    for call in calls:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await call()
        assert info.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "another table-service instance" in (info.value.details() or "")
    # The first keeps renewing its lease: the second still cannot take the table later on.
    await second.manager._maintain_once()
    assert table_id not in second.manager.runtimes
    assert await table_env.lease_owner(table_id) == first.manager.owner

    # The first instance stalls (stops renewing) and its lease runs out: the second takes
    # over and writes. The stale first instance can no longer write: its own lease clock
    # tells it so, and the versioned append would refuse it anyway.
    task = first.manager._task
    assert task is not None
    task.cancel()
    first.manager._task = None
    await table_env.redis.delete(f"table:{{{table_id}}}:lease")  # expired, as far as Redis knows

    async def dealt() -> tpb.TableView | None:
        # Adopted, with a hand to act in: the first instance may have stalled before dealing
        # one, and then the second deals it after adopting the table.
        view = await _answered(lambda: table_env.view(stub2, table_id, keys[0]))
        return view if view is not None and view.hand.HasField("to_act") else None

    view = await table_env.eventually(dealt, "the second instance to adopt the table and deal")
    await table_env.submit(stub2, table_id, keys[view.hand.to_act], CALL, view.table.sequence)
    length = await table_env.xlen(table_id)
    stale = first.manager.runtimes[table_id]
    assert stale.version < length
    # Within its local lease time, the stale owner's decision is refused by the append.
    stale.lease_expires = time.monotonic() + 60
    assert stale.state is not None and stale.state.hand is not None
    actor = stale.state.hand.actor_seat
    assert actor is not None
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await table_env.submit(stub, table_id, keys[actor], CALL, stale.version)
    assert info.value.code() == grpc.StatusCode.ABORTED
    assert await table_env.xlen(table_id) == length
    # Once its lease time is over it refuses to write at all, even after rereading.
    stale.lease_expires = time.monotonic()
    view = await table_env.view(stub2, table_id)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await table_env.submit(stub, table_id, keys[view.hand.to_act], CHECK, view.table.sequence)
    assert info.value.code() == grpc.StatusCode.UNAVAILABLE
    assert await table_env.xlen(table_id) == length


@contextlib.asynccontextmanager
async def _two_writers(table_env: TableEnv) -> AsyncIterator[tuple[TableRuntime, TableRuntime]]:
    """Two runtimes of one table (one seated player), both loaded at the same version."""
    server = await table_env.start_server()
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.nlhe(3))
    await table_env.seat_all(stub, table_id, 1)
    store = RedisEventStore(table_env.redis)
    one, two = TableRuntime(table_id, store), TableRuntime(table_id, store)
    try:
        await one.load()
        await two.load()
        assert one.version == two.version
        yield one, two
    finally:
        await one.stop()
        await two.stop()
        await store.aclose()


async def test_a_stale_writer_gets_a_version_conflict_not_a_fork(table_env: TableEnv) -> None:
    async with _two_writers(table_env) as (one, two):
        table_id = one.table_id
        done = await one.run(SitOut(0), server_key("test", table_id, 1))
        with pytest.raises(VersionConflict):
            await two.run(LeaveSeat(0), server_key("test", table_id, 2))
        assert two.stale  # (checked at once: a reread is already on its way)
        stored = await table_env.stored(table_id)
        assert len(stored) == done.sequence
        assert [e.request_key for e in stored[-len(done.events) :]] == [f"s/test/{table_id}/1"]
        # Rereading, it decides on the real state (seat 0 sits out) and appends after it.
        left = await two.run(LeaveSeat(0), server_key("test", table_id, 2))
        assert left.sequence == done.sequence + 1
        assert [e.sequence for e in await table_env.stored(table_id)] == list(
            range(1, left.sequence + 1)
        )


async def test_a_duplicate_written_by_another_writer_brings_the_cache_up_to_date(
    table_env: TableEnv,
) -> None:
    # Two instances' timers name the same request ("deal:<table>:<version>"): the second
    # gets the first's answer as a duplicate, and must then reread what the first wrote
    # (else it would serve an old table and arm no timer: the table would stall).
    async with _two_writers(table_env) as (one, two):
        same = server_key("deal", one.table_id, one.version)
        done = await one.run(SitOut(0), same)
        again = await two.run(SitOut(0), same)
        assert again.duplicate and again.sequence == done.sequence
        assert two.stale  # and a reread is on its way
        await table_env.eventually(
            lambda: asyncio.sleep(0, two.version == done.sequence or None),
            "the second writer to reread the stream",
        )
        assert two.state == one.state


class _LostReply(RedisEventStore):
    """Appends, then loses the reply (as a dropped connection or a cancelled call would)."""

    lose = False

    async def append(self, *args: Any, **kwargs: Any) -> Any:
        result = await super().append(*args, **kwargs)
        if self.lose:
            self.lose = False
            raise ConnectionError("connection lost after the write")
        return result


async def test_an_append_with_an_unknown_outcome_is_reread_at_once(table_env: TableEnv) -> None:
    server = await table_env.start_server()
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.nlhe(2))
    keys = await table_env.seat_all(stub, table_id, 2)
    await table_env.watch(stub, table_id, from_sequence=1).wait_event("hole_cards_dealt", seat=0)
    await server.manager.stop()  # hand the table to a runtime on the flaky store
    store = _LostReply(table_env.redis)
    runtime = TableRuntime(table_id, store)
    await runtime.load()
    runtime.start()
    try:
        assert runtime.state is not None and runtime.state.hand is not None
        actor = runtime.state.hand.actor_seat
        assert actor == 0
        store.lose = True
        lost = server_key("test", table_id, runtime.version)
        with pytest.raises(ConnectionError):
            await runtime.run(PlayHand(Act(actor, ActionKind.CALL)), lost, None, runtime.version)
        # The call went through; the runtime rereads the stream by itself, and a retry
        # of the same request is recognised.
        length = await table_env.xlen(table_id)

        async def caught_up() -> bool | None:
            return True if runtime.version == length and not runtime.stale else None

        await table_env.eventually(caught_up, "the runtime to reread the stream")
        assert runtime.state is not None and runtime.state.hand is not None
        assert runtime.state.hand.actor_seat == 1
        # (The service answers a retry from the request's record: deciding again refuses it.)
        assert await store.request_result(table_id, lost.key) is not None
        assert keys[1].seat == 1
    finally:
        await runtime.stop()
        await store.aclose()
