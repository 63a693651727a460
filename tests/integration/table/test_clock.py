"""The action clock: a seat that does not act is checked or folded, then sat out; sit out/in."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import grpc
import pytest

from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from tests.integration.table.harness import TableEnv

CLOCK_MS = 300


async def _after(watcher: Any, event: epb.StoredEvent) -> epb.StoredEvent:
    """The event right after ``event`` (waiting for it)."""
    await watcher.wait_sequence(event.sequence + 1)
    events: list[epb.StoredEvent] = watcher.events
    return next(e for e in events if e.sequence == event.sequence + 1)


async def test_idle_seats_are_checked_folded_then_sat_out(table_env: TableEnv) -> None:
    server = await table_env.start_server()
    stub = table_env.stub(server)
    table_id = await table_env.create_table(
        stub, table_env.nlhe(2, clock_ms=CLOCK_MS, max_timeouts=3)
    )
    watcher = table_env.watch(stub, table_id)
    keys = await table_env.seat_all(stub, table_id, 2)

    # Seat 0 (button, small blind) acts; seat 1 (big blind) never does. Preflop it could
    # check: it is checked for when its clock runs out.
    await watcher.wait_event("hole_cards_dealt", seat=0)
    view = await table_env.view(stub, table_id, keys[0])
    assert view.hand.to_act == 0 and view.hand.HasField("action_deadline")
    called = await table_env.submit(
        stub, table_id, keys[0], tpb.Action(call=tpb.Action.Call()), view.table.sequence
    )
    assert called.view.hand.to_act == 1
    deadline = called.view.hand.action_deadline.ToMilliseconds()
    first = await watcher.wait_event("action_timed_out", seat=1)
    assert first.hand_id.endswith(":1")
    stored = await table_env.stored(first.table_id)
    assert stored[first.sequence - 1].request_key.startswith("s/timeout/")
    assert first.recorded_at.ToMilliseconds() >= deadline
    assert (await _after(watcher, first)).player_checked.seat == 1
    table = (await stub.GetTable(pb.GetTableRequest(table_id=table_id))).table
    assert table.seats[1].consecutive_timeouts == 1

    # Flop: seat 1 acts first, times out (checked); seat 0 bets; seat 1 times out facing
    # the bet: folded, and sat out (its third time-out in a row).
    second = await watcher.wait_event("action_timed_out", seat=1, after=first.sequence)
    assert (await _after(watcher, second)).player_checked.seat == 1
    view = await table_env.view(stub, table_id, keys[0])
    assert view.hand.to_act == 0 and view.hand.street == epb.STREET_FLOP
    await table_env.submit(
        stub, table_id, keys[0], tpb.Action(bet_to=tpb.Action.BetTo(amount=10)), view.table.sequence
    )
    third = await watcher.wait_event("action_timed_out", seat=1, after=second.sequence)
    assert (await _after(watcher, third)).player_folded.seat == 1
    sat_out = await watcher.wait_event("player_sat_out", seat=1)
    assert sat_out.player_sat_out.reason == epb.SIT_OUT_REASON_TIMED_OUT
    await watcher.wait_event("hand_ended")
    table = (await stub.GetTable(pb.GetTableRequest(table_id=table_id))).table
    assert table.state == tpb.TABLE_STATE_WAITING
    assert table.seats[1].status == tpb.SEAT_STATUS_SITTING_OUT
    assert sum(s.stack for s in table.seats) == 2000

    # Sitting in again deals the next hand.
    await stub.SitIn(
        pb.SitInRequest(table_id=table_id, seat=1, request_id="back"), metadata=keys[1].md
    )
    back = await watcher.wait_event("player_sat_in", seat=1)
    started = await watcher.wait_event("hand_started", after=back.sequence)
    # Seat 1 sitting out left one player dealt in: the next hand starts fresh (RULES.md),
    # the button on the lowest seat.
    assert started.hand_started.setup.button == 0
    # Sitting out on request takes effect from the next hand: the seat still plays this
    # one (it is timed out like anyone else, not folded at once).
    response = await stub.SitOut(
        pb.SitOutRequest(table_id=table_id, seat=1, request_id="away"), metadata=keys[1].md
    )
    out = await watcher.wait_event("player_sat_out", seat=1, after=back.sequence)
    assert out.sequence == response.sequence
    assert out.player_sat_out.reason == epb.SIT_OUT_REASON_REQUESTED
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.SitOut(
            pb.SitOutRequest(table_id=table_id, seat=1, request_id="again"), metadata=keys[1].md
        )
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert table_env.error_reason(info.value) == "ALREADY_SITTING_OUT"
    # Seat 0 has the button (and the small blind) and acts first: it raises, so seat 1
    # faces a bet when its clock runs out.
    view = await table_env.view(stub, table_id, keys[0])
    assert view.hand.to_act == 0
    await table_env.submit(
        stub,
        table_id,
        keys[0],
        tpb.Action(raise_to=tpb.Action.RaiseTo(amount=30)),
        view.table.sequence,
    )
    fold = await watcher.wait_event("player_folded", seat=1, after=started.sequence)
    timed = next(e for e in watcher.events if e.sequence == fold.sequence - 1)
    assert timed.action_timed_out.seat == 1, "the requested sit-out was folded without its clock"
    # Its clock ran from its turn (the raise), not from the sit-out request.
    acted = [e for e in watcher.events if started.sequence < e.sequence < timed.sequence]
    turn = max(e.recorded_at.ToMilliseconds() for e in acted if e.HasField("bet_placed"))
    assert timed.recorded_at.ToMilliseconds() - turn >= CLOCK_MS
    await watcher.wait_event("hand_ended", after=max(out.sequence, fold.sequence))
    table = (await stub.GetTable(pb.GetTableRequest(table_id=table_id))).table
    assert table.state == tpb.TABLE_STATE_WAITING
    assert table.seats[1].status == tpb.SEAT_STATUS_SITTING_OUT
    assert sum(s.stack for s in table.seats) == 2000
    await table_env.check_rebuild(server, table_id)


async def _table_when(stub: Any, table_id: str, check: Any) -> tpb.Table | None:
    table = (await stub.GetTable(pb.GetTableRequest(table_id=table_id))).table
    return table if check(table) else None


async def test_the_table_closes_at_its_closing_time_after_the_running_hand(
    table_env: TableEnv,
) -> None:
    server = await table_env.start_server()
    stub = table_env.stub(server)
    config = table_env.nlhe(2)
    closing = time.time() + 1.0
    config.close_time.FromMilliseconds(int(closing * 1000))
    table_id = await table_env.create_table(stub, config)
    watcher = table_env.watch(stub, table_id)
    keys = await table_env.seat_all(stub, table_id, 2)

    async def play_on() -> None:
        while True:
            await table_env.act(stub, table_id, keys, lambda view, rng: _check_or_call(view))

    player = asyncio.get_running_loop().create_task(play_on())
    try:
        closed = await watcher.wait_event("table_closed", timeout=30)
    finally:
        player.cancel()
        with contextlib.suppress(BaseException):
            await player
    ms = int(closing * 1000)
    assert closed.recorded_at.ToMilliseconds() >= ms
    events = [e for e in watcher.events if e.sequence < closed.sequence]
    starts = [e for e in events if e.HasField("hand_started")]
    assert starts and all(e.recorded_at.ToMilliseconds() < ms for e in starts)
    assert events[-1].HasField("hand_ended"), "closed in the middle of a hand"
    table = (await stub.GetTable(pb.GetTableRequest(table_id=table_id))).table
    assert table.state == tpb.TABLE_STATE_CLOSED
    # Players still leave a closed table with their chips.
    left = await stub.LeaveSeat(
        pb.LeaveSeatRequest(table_id=table_id, seat=0, request_id="bye"),
        metadata=keys[0].service_md,
    )
    gone = await watcher.wait_event("player_left", seat=0)
    assert gone.player_left.stack == left.stack == table.seats[0].stack
    await table_env.check_rebuild(server, table_id)


def _check_or_call(view: tpb.TableView) -> tpb.Action:
    legal = {a.type for a in view.hand.legal_actions}
    if tpb.ACTION_TYPE_CHECK in legal:
        return tpb.Action(check=tpb.Action.Check())
    return tpb.Action(call=tpb.Action.Call())
