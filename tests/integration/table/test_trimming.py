"""Rebuilt after trimming on Redis, a table is the one its whole stream folds to.

The unit test's check (``tests/unit/services/trimming.py``) on ``RedisEventStore``:
random tables of both variants played by a real ``TableRuntime`` that writes
snapshots and trims through the Lua script, the projector's archived
position (``table:{T}:archived``) raised at random. Plus what Redis holds
for a trimmed table, and the AI decision stream trimmed once acknowledged.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from typing import Any

import grpc
import pytest
import redis.asyncio as aioredis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from felt.storage.eventstore import (
    EventsTrimmed,
    RedisEventStore,
    archived_key,
    events_key,
    meta_key,
    requests_key,
)
from felt.wire.tokens import SEAT_TOKEN_HEADER
from poker.v1 import table_service_pb2 as pb
from services.table.runtime import TableRuntime
from services.table.snapshots import SnapshotPolicy
from tests.integration.table.harness import TableEnv
from tests.unit.services.trimming import play_archive_trim_rebuild
from tests.unit.table.random_tables import RandomTable, random_table


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    table=random_table(table_id="trim"),
    every=st.integers(1, 3),
    retain_s=st.sampled_from([0, 0, 5]),
    seed=st.integers(0, 2**32),
)
def test_a_table_rebuilt_after_trimming_on_redis_is_the_whole_streams(
    redis_url: str, table: RandomTable, every: int, retain_s: int, seed: int
) -> None:
    async def check() -> None:
        t = f"trim-{uuid.uuid4().hex}"
        client = aioredis.Redis.from_url(redis_url)
        store = RedisEventStore(client)
        try:
            await play_archive_trim_rebuild(store, table, every, retain_s, seed, table_id=t)
        finally:
            await store.aclose()
            await client.delete(events_key(t), meta_key(t), requests_key(t), archived_key(t))
            await client.aclose()

    asyncio.run(check())


async def test_a_served_table_trims_once_archived_and_watchers_of_trimmed_events_are_told(
    table_env: TableEnv, policies: dict[str, Any]
) -> None:
    """Over gRPC: snapshots at every deal, trimming only once the archived position allows,
    OUT_OF_RANGE for a watch from a trimmed sequence, and a rebuild equal to the live table."""
    server = await table_env.start_server(snapshots=SnapshotPolicy(1, timedelta(0)))
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.nlhe(2))
    keys = await table_env.seat_all(stub, table_id, 2)
    store = RedisEventStore(table_env.redis)
    await table_env.play(stub, table_id, keys, policies["passive"], hands=3)
    live = server.manager.runtimes[table_id]
    assert await store.latest_snapshot(table_id) > 1
    assert (await store.read(table_id))[0].sequence == 1  # nothing archived: nothing trimmed
    await store.record_archived(table_id, live.version)
    await table_env.play(stub, table_id, keys, policies["passive"], hands=2)
    await live.trimmed()
    latest = await store.latest_snapshot(table_id)
    first = (await store.read(table_id, latest - 1))[0]
    assert first.sequence == latest
    with pytest.raises(EventsTrimmed):
        await store.read(table_id)
    # The trim stopped at the archived position (the last hands were not archived).
    remaining: list[tuple[bytes, dict[bytes, bytes]]] = await table_env.redis.xrange(  # type: ignore[assignment]
        events_key(table_id), count=1
    )
    oldest = int(remaining[0][0].split(b"-")[0])
    assert oldest <= await store.archived(table_id) + 1

    watcher = table_env.watch(stub, table_id, from_sequence=1)
    await watcher.wait(lambda: watcher.done, "the watch from a trimmed sequence to end")
    assert isinstance(watcher.error, grpc.aio.AioRpcError)
    assert watcher.error.code() == grpc.StatusCode.OUT_OF_RANGE
    assert "archived" in str(watcher.error.details())
    fresh = table_env.watch(stub, table_id)
    await fresh.wait(lambda: bool(fresh.items), "a view of the table")

    await live.stop()
    rebuilt = TableRuntime(table_id, store)
    await rebuilt.load()
    assert rebuilt.state == live.state and rebuilt.version == live.version
    assert rebuilt.seated_at == live.seated_at


async def _play_archive_and_trim_past(
    table_env: TableEnv,
    server: Any,
    table_id: str,
    keys: dict[int, Any],
    passive: Any,
    sequence: int,
) -> None:
    """Two hands, all archived, two more: the table trims past ``sequence`` (checked)."""
    stub = table_env.stub(server)
    store = RedisEventStore(table_env.redis)
    live = server.manager.runtimes[table_id]
    await table_env.play(stub, table_id, keys, passive, hands=2)
    await store.record_archived(table_id, live.version)
    await table_env.play(stub, table_id, keys, passive, hands=2)
    await live.trimmed()
    with pytest.raises(EventsTrimmed):
        await store.read(table_id, sequence - 1)  # its events are gone


async def test_a_seating_retried_after_its_events_were_trimmed_gets_its_first_answer(
    table_env: TableEnv, policies: dict[str, Any]
) -> None:
    """The lobby's buy-in saga retries ``SeatPlayer`` with the same id until it hears an
    answer, for as long as that takes (a lobby that crashed after the seat was taken and came
    back minutes later). Trimming must not turn that retry into a new request: the table would
    refuse it (ALREADY_SEATED, a definite refusal) and the lobby would refund chips the seat
    still holds."""
    server = await table_env.start_server(snapshots=SnapshotPolicy(1, timedelta(0)))
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.nlhe(3))
    keys = await table_env.seat_all(stub, table_id, 2)
    request = pb.SeatPlayerRequest(
        table_id=table_id,
        seat=2,
        player_id="buyer",
        display_name="Buyer",
        stack=500,
        request_id="buy-in/b-0123456789abcdef01234567",
    )
    admin = table_env.admin
    first = await stub.SeatPlayer(request, metadata=admin)
    keys[2] = type(keys[0])(first.seat, "buyer", first.seat_token)  # conftest's SeatKey
    passive = policies["passive"]
    await _play_archive_and_trim_past(table_env, server, table_id, keys, passive, first.sequence)

    again = await stub.SeatPlayer(request, metadata=admin)
    assert (again.seat, again.seat_token, again.sequence) == (
        first.seat,
        first.seat_token,
        first.sequence,
    )


async def test_a_leave_retried_after_its_events_were_trimmed_gets_its_first_answer(
    table_env: TableEnv, policies: dict[str, Any]
) -> None:
    """The lobby's leave saga retries ``LeaveSeat`` (request id ``leave/<saga>``) until it
    records the answer's sequence. A retry after trimming must get that answer, not a refusal
    (the seat's token is void once it left) that leaves the saga LEAVING for good."""
    server = await table_env.start_server(snapshots=SnapshotPolicy(1, timedelta(0)))
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.nlhe(3))
    keys = await table_env.seat_all(stub, table_id, 2)
    leaver = await table_env.seat(stub, table_id, 2, player_id="leaver")
    request = pb.LeaveSeatRequest(table_id=table_id, seat=2, request_id="leave/b-0123456789abcd")
    as_leaver = (*table_env.admin, (SEAT_TOKEN_HEADER, leaver.token))  # as the lobby sends it
    first = await stub.LeaveSeat(request, metadata=as_leaver)
    passive = policies["passive"]
    await _play_archive_and_trim_past(table_env, server, table_id, keys, passive, first.sequence)

    again = await stub.LeaveSeat(request, metadata=as_leaver)
    assert (again.stack, again.sequence) == (first.stack, first.sequence)
