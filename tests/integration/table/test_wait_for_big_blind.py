"""Wait for the big blind over gRPC: SeatPlayerRequest / SitInRequest.wait_for_big_blind."""

from __future__ import annotations

import uuid

import grpc
import pytest

from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from tests.integration.table.harness import TableEnv

# Long enough that both seatings below land during the first hand (a few milliseconds
# each), short enough that the three hands it takes pass in seconds.
CLOCK_MS = 1500


async def test_a_waiting_newcomer_is_dealt_in_at_its_big_blind_and_posts_it(
    table_env: TableEnv,
) -> None:
    server = await table_env.start_server()
    stub = table_env.stub(server)
    # Nobody acts: the clock checks or folds for every seat, so hands follow one another.
    table_id = await table_env.create_table(stub, table_env.nlhe(4, clock_ms=CLOCK_MS))
    watcher = table_env.watch(stub, table_id)
    await table_env.seat(stub, table_id, 0)
    await table_env.seat(stub, table_id, 2)
    first = await watcher.wait_event("hand_started")  # heads-up: big blind on seat 2
    await table_env.seat(stub, table_id, 3)
    # Seat 1 sits down waiting: the big blind moves 2 -> 3 -> 0 -> 1 (dead-button rule).
    seated = await stub.SeatPlayer(
        pb.SeatPlayerRequest(
            table_id=table_id,
            seat=1,
            player_id=f"p1-{uuid.uuid4().hex[:6]}",
            display_name="Waiting",
            stack=1000,
            request_id=uuid.uuid4().hex,
            wait_for_big_blind=True,
        ),
        metadata=table_env.admin,
    )
    waiting = await watcher.wait_event("player_waiting_for_big_blind", seat=1)
    assert waiting.sequence == seated.sequence
    assert waiting.sequence - 1 == (await watcher.wait_event("player_seated", seat=1)).sequence, (
        "the wait is recorded with the seating, in one batch"
    )
    table = (await stub.GetTable(pb.GetTableRequest(table_id=table_id))).table
    assert table.seats[1].waiting_for_big_blind

    # Every hand dealt without seat 1 has its big blind elsewhere; the first one dealing it
    # in makes it the big blind, and it posts exactly the big blind.
    after = first.sequence
    skipped = 0
    while True:
        started = await watcher.wait_event("hand_started", after=after)
        dealt = [s.seat for s in started.hand_started.setup.seats]
        if 1 in dealt:
            break
        skipped += 1
        assert skipped <= 3, "the big blind reached seat 1 and it was still not dealt in"
        after = (await watcher.wait_event("hand_ended", after=started.sequence)).sequence
    await watcher.wait_event("blind_posted", seat=1, after=started.sequence)
    blinds = {
        e.blind_posted.seat: e.blind_posted.amount
        for e in watcher.events
        if e.hand_id == started.hand_id and e.HasField("blind_posted")
    }
    assert blinds[1] == 10
    assert skipped == 2  # hands 2 and 3 (big blinds on seats 3 and 0) went on without it
    assert started.hand_started.setup.button != 1
    table = (await stub.GetTable(pb.GetTableRequest(table_id=table_id))).table
    assert not table.seats[1].waiting_for_big_blind
    # The live state is the fold of the stream, and so is a rebuild (from a snapshot on).
    await table_env.check_rebuild(server, table_id)


async def test_draw_has_no_big_blind_to_wait_for(table_env: TableEnv) -> None:
    server = await table_env.start_server()
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.draw(3))
    key = await table_env.seat(stub, table_id, 0)
    await stub.SitOut(
        pb.SitOutRequest(table_id=table_id, seat=0, request_id="away"), metadata=key.md
    )
    before = await table_env.xlen(table_id)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.SitIn(
            pb.SitInRequest(table_id=table_id, seat=0, request_id="back", wait_for_big_blind=True),
            metadata=key.md,
        )
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert table_env.error_reason(info.value) == "NO_BIG_BLIND"
    assert await table_env.xlen(table_id) == before  # nothing changed by the refusal
    table = (await stub.GetTable(pb.GetTableRequest(table_id=table_id))).table
    assert table.seats[0].status == tpb.SEAT_STATUS_SITTING_OUT
