"""A table whose stored state cannot be applied is quarantined, never a crash loop.

Poisoned streams are written straight into Redis (as a bug, an older version
without today's bounds, or a hand edit could leave them). The service still
starts, every other table plays on, calls to a poisoned table are refused
with FAILED_PRECONDITION ``TABLE_QUARANTINED`` and the reason, and an
operator finds the table and the reason in ``felt:tables:quarantined`` and in
a ``table_quarantined`` log line.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]
from grpc_health.v1 import health_pb2, health_pb2_grpc  # type: ignore[import-untyped]
from structlog.testing import capture_logs

from felt.core.rules.config import Variant
from felt.core.table.aggregate import CreateTable, SeatPlayer, StartNextHand, execute_table
from felt.core.table.events import AnyEvent, TableConfig
from felt.storage.eventstore import RedisEventStore
from felt.storage.eventstore.codec import encode_stored
from felt.storage.registry import QUARANTINE_KEY, TABLES_KEY
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from services.table.stream import hand_ids, timestamp
from tests.integration.table.harness import TableEnv

CALL = tpb.Action(call=tpb.Action.Call())
TEN_THOUSAND_YEARS_MS = 10_000 * 366 * 86_400_000


def _events(table_id: str, clock_ms: int) -> list[AnyEvent]:
    """A heads-up table with a hand running, made by the rules core (no edge checks)."""
    config = TableConfig(
        table_id, Variant.NLHE, 2, small_blind=5, big_blind=10, action_timeout_ms=clock_ms
    )
    state = None
    events: list[AnyEvent] = []
    for command in (
        CreateTable(config),
        SeatPlayer(0, "p0", "", 1000, "h0"),
        SeatPlayer(1, "p1", "", 1000, "h1"),
        StartNextHand(b"\x07" * 32),
    ):
        state, new = execute_table(state, command)
        events.extend(new)
    return events


def _encode(table_id: str, events: list[AnyEvent]) -> list[bytes]:
    now = timestamp(datetime.now(UTC))
    return [
        encode_stored(event, table_id, sequence, f"poison-{sequence}", hand_id, now)
        for sequence, (event, hand_id) in enumerate(
            zip(events, hand_ids(None, events), strict=True), start=1
        )
    ]


async def _poison(env: TableEnv, table_id: str, payloads: list[bytes]) -> None:
    await RedisEventStore(env.redis).append(table_id, payloads, 0, f"poison:{table_id}", b"")
    await env.redis.sadd(TABLES_KEY, table_id)


async def _quarantined(stub: Any, table_id: str) -> str:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.GetTable(pb.GetTableRequest(table_id=table_id))
    err = info.value
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION, err.details()
    reasons = []
    for key, value in err.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            for detail in status_pb2.Status.FromString(value).details:
                error_info = error_details_pb2.ErrorInfo()
                if detail.Unpack(error_info):
                    reasons.append(error_info.reason)
    assert reasons == ["TABLE_QUARANTINED"]
    return str(err.details())


async def _records(env: TableEnv) -> dict[str, dict[str, Any]]:
    raw: dict[bytes, bytes] = await env.redis.hgetall(QUARANTINE_KEY)  # type: ignore[assignment]
    return {k.decode(): json.loads(v) for k, v in raw.items()}


async def test_poisoned_tables_are_quarantined_and_the_rest_plays_on(table_env: TableEnv) -> None:
    first = await table_env.start_server()
    stub = table_env.stub(first)
    healthy = await table_env.create_table(stub, table_env.nlhe(2))
    keys = await table_env.seat_all(stub, healthy, 2)
    await table_env.watch(stub, healthy, from_sequence=1).wait_event("hole_cards_dealt", seat=1)
    await first.stop()
    table_env.servers.remove(first)

    # 1. The 10,000-year action clock, accepted before bounds existed: a hand is running,
    #    and its deadline is beyond datetime's range.
    await _poison(table_env, "clock", _encode("clock", _events("clock", TEN_THOUSAND_YEARS_MS)))
    # 2. Bytes that are no StoredEvent after a good start.
    good = _encode("garbled", _events("garbled", 0))
    await _poison(table_env, "garbled", [*good[:2], b"\xff\xff\xff\xff"])
    # 3. A stream that does not start with TableCreated.
    await _poison(table_env, "headless", _encode("headless", _events("headless", 0))[1:])
    lengths = {t: await table_env.xlen(t) for t in ("clock", "garbled", "headless")}

    with capture_logs() as logs:  # until every record is in: the clock's is a timer's
        second = await table_env.start_server()  # adopts every table: must not raise
        stub = table_env.stub(second)
        health = health_pb2_grpc.HealthStub(table_env.channels[-1])
        assert (
            await health.Check(health_pb2.HealthCheckRequest())
        ).status == health_pb2.HealthCheckResponse.SERVING

        # The healthy table plays on.
        view = await table_env.view(stub, healthy, keys[0])
        done = await table_env.submit(stub, healthy, keys[0], CALL, view.table.sequence)
        assert done.sequence > view.table.sequence

        async def all_recorded() -> dict[str, dict[str, Any]] | None:
            records = await _records(table_env)
            return records if len(records) == 3 else None

        records = await table_env.eventually(all_recorded, "three quarantine records")
    assert set(records) == {"clock", "garbled", "headless"}
    assert "OverflowError" in records["clock"]["reason"]
    assert "StoredEvent" in records["garbled"]["reason"]
    assert all(r["owner"] == second.manager.owner for r in records.values())
    for table_id in records:
        details = await _quarantined(stub, table_id)
        assert "quarantined" in details and records[table_id]["reason"][:40] in details
        assert await table_env.xlen(table_id) == lengths[table_id]  # nothing written
        assert await table_env.lease_owner(table_id) is None  # nobody holds it
    logged = {e["table_id"]: e for e in logs if e["event"] == "table_quarantined"}
    assert set(logged) == set(records) and all(e["log_level"] == "error" for e in logged.values())

    # A restart starts again, adopts only the healthy table, and still refuses the others.
    await second.stop()
    table_env.servers.remove(second)
    third = await table_env.start_server()
    stub = table_env.stub(third)
    assert set(third.manager.runtimes) == {healthy}
    assert "OverflowError" in await _quarantined(stub, "clock")
    assert (await table_env.view(stub, healthy)).table.sequence >= done.sequence


async def test_a_running_table_that_cannot_reload_is_quarantined(table_env: TableEnv) -> None:
    server = await table_env.start_server()
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.nlhe(2))
    keys = await table_env.seat_all(stub, table_id, 2)
    await table_env.watch(stub, table_id, from_sequence=1).wait_event("hole_cards_dealt", seat=1)
    other = await table_env.create_table(stub, table_env.nlhe(2))
    other_keys = await table_env.seat_all(stub, other, 2)
    view = await table_env.view(stub, table_id, keys[0])
    # Something other than this runtime writes a bad event behind its back.
    version = view.table.sequence
    await RedisEventStore(table_env.redis).append(table_id, [b"\xff\xff\xff\xff"], version, "x")

    with pytest.raises(grpc.aio.AioRpcError) as info:  # the cache was behind: retry, it says
        await table_env.submit(stub, table_id, keys[0], CALL, version)
    # ABORTED when the submit finds the cache behind; UNAVAILABLE (handing the table over)
    # when the runtime has already met the bad event on its own. Either says "retry".
    assert info.value.code() in (grpc.StatusCode.ABORTED, grpc.StatusCode.UNAVAILABLE)

    async def refused() -> str | None:
        try:
            await stub.GetTable(pb.GetTableRequest(table_id=table_id))
        except grpc.aio.AioRpcError as err:
            if err.code() == grpc.StatusCode.FAILED_PRECONDITION:
                return str(err.details())
        return None

    assert "quarantined" in await table_env.eventually(refused, "the table to be quarantined")

    async def recorded() -> dict[str, dict[str, Any]] | None:
        records = await _records(table_env)
        return records if table_id in records else None

    assert "StoredEvent" in (await table_env.eventually(recorded, "the record"))[table_id]["reason"]
    assert table_id not in server.manager.runtimes
    # The other table plays on.
    await table_env.watch(stub, other, from_sequence=1).wait_event("hole_cards_dealt", seat=1)
    mine = await table_env.view(stub, other, other_keys[0])
    await table_env.submit(stub, other, other_keys[0], CALL, mine.table.sequence)
