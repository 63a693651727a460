"""Request ids cannot be borrowed (issue #9, items 1 and 2; ``felt.storage.idempotency``).

Each attack here worked before request ids were scoped to their caller and call:
replaying another seat's id returned that seat's view with its hole cards, and
ids the server would use itself could be taken first to stall the table.
"""

from __future__ import annotations

from typing import Any

import grpc

from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from tests.integration.table.harness import TableEnv

CALL = tpb.Action(call=tpb.Action.Call())
CHECK = tpb.Action(check=tpb.Action.Check())


def _hidden_cards_of(view: tpb.TableView, seat: int) -> bool:
    hand = {s.seat: s for s in view.hand.seats}.get(seat)
    return hand is None or all(c.hidden for c in hand.cards)


async def _submit_raw(
    env: TableEnv, stub: Any, md: Any, request: pb.SubmitActionRequest
) -> pb.SubmitActionResponse | grpc.aio.AioRpcError:
    try:
        response: pb.SubmitActionResponse = await stub.SubmitAction(request, metadata=md)
    except grpc.aio.AioRpcError as err:
        return err
    return response


async def test_another_seats_request_id_gives_a_new_request_not_its_answer(
    table_env: TableEnv,
) -> None:
    server = await table_env.start_server()
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.nlhe(2))
    keys = await table_env.seat_all(stub, table_id, 2)
    watcher = table_env.watch(stub, table_id, from_sequence=1)
    await watcher.wait_event("hole_cards_dealt", seat=1)
    view = await table_env.view(stub, table_id, keys[0])
    assert view.hand.to_act == 0
    victim_id = "victims-request-1"
    first = await table_env.submit(stub, table_id, keys[0], CALL, view.table.sequence, victim_id)
    assert not _hidden_cards_of(first.view, 0)  # the victim's own answer shows its cards

    # Nobody else is shown the id: events carry neither the raw id nor the stored key.
    called = await watcher.wait_event("player_called", seat=0)
    assert called.request_id == "" and called.request_key == ""
    seat_watch = table_env.watch(stub, table_id, keys[1], from_sequence=1)
    await seat_watch.wait_sequence(first.sequence)
    assert all(e.request_id == "" and e.request_key == "" for e in seat_watch.events)

    # Seat 1 sends the victim's id (and the very same action) for its own seat: a new
    # request of its own, decided on its merits; never the victim's stored answer.
    length = await table_env.xlen(table_id)
    borrowed = table_env.submit_request(table_id, keys[1], CALL, first.sequence, victim_id)
    answer = await _submit_raw(table_env, stub, keys[1].md, borrowed)
    if isinstance(answer, grpc.aio.AioRpcError):  # seat 1 (big blind) can check, not call
        assert answer.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert await table_env.xlen(table_id) == length
        checked = table_env.submit_request(table_id, keys[1], CHECK, first.sequence, victim_id)
        answer = await _submit_raw(table_env, stub, keys[1].md, checked)
    assert isinstance(answer, pb.SubmitActionResponse), answer
    assert answer.sequence > first.sequence
    assert answer.view.viewer_seat == 1
    assert _hidden_cards_of(answer.view, 0), "seat 0's hole cards leaked to seat 1"
    # And the victim's own retry still gets the victim's first answer.
    retry = table_env.submit_request(table_id, keys[0], CALL, view.table.sequence, victim_id)
    again = await stub.SubmitAction(retry, metadata=keys[0].md)
    assert again.SerializeToString() == first.SerializeToString()


async def test_an_ai_decisions_request_id_reads_nothing_for_a_human(table_env: TableEnv) -> None:
    server = await table_env.start_server()
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.nlhe(2, clock_ms=30_000))
    human = await table_env.seat(stub, table_id, 0)
    await table_env.seat(stub, table_id, 1, ai_level=epb.AI_LEVEL_EASY)
    await table_env.watch(stub, table_id, from_sequence=1).wait_event("hole_cards_dealt", seat=1)
    view = await table_env.view(stub, table_id, human)
    called = await table_env.submit(stub, table_id, human, CALL, view.table.sequence)
    _, decision = await table_env.next_decision()
    assert decision.seat == 1 and decision.expected_sequence == called.sequence
    # The AI worker answers...
    answer = pb.SubmitActionRequest(
        table_id=table_id,
        seat=1,
        request_id=decision.request_id,
        expected_sequence=decision.expected_sequence,
        action=CHECK,
    )
    ai_answer = await stub.SubmitAction(answer, metadata=table_env.ai_md)
    assert not _hidden_cards_of(ai_answer.view, 1)
    # ... and the human, who can predict that id, replays it for its own seat: a new
    # request of its own (stale here), never the AI seat's view.
    borrowed = table_env.submit_request(
        table_id, human, CHECK, decision.expected_sequence, decision.request_id
    )
    result = await _submit_raw(table_env, stub, human.md, borrowed)
    assert isinstance(result, grpc.aio.AioRpcError)
    assert result.code() == grpc.StatusCode.ABORTED  # the table moved on: stale sequence
    assert b"seat: 1" not in (result.details() or "").encode()
    # Without an expected sequence it is decided on today's table, as the human's own.
    now = await table_env.view(stub, table_id, human)
    fresh = table_env.submit_request(table_id, human, CHECK, 0, decision.request_id)
    mine = await _submit_raw(table_env, stub, human.md, fresh)
    if isinstance(mine, pb.SubmitActionResponse):
        assert mine.view.viewer_seat == 0 and _hidden_cards_of(mine.view, 1)
        assert mine.sequence > now.table.sequence
    else:
        assert mine.code() == grpc.StatusCode.FAILED_PRECONDITION


async def test_the_next_deals_id_cannot_be_squatted(table_env: TableEnv) -> None:
    """Before: an AddChips with the next deal's id made the deal a duplicate: no more hands."""
    server = await table_env.start_server()
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.nlhe(2))
    first = await table_env.seat(stub, table_id, 0)  # alone: no hand is dealt yet
    version = await table_env.xlen(table_id)
    # Two chip top-ups, then the second player: the deal is then at version + 3. Take its
    # id first, in the old spelling and in the new one.
    for rid in (f"deal:{table_id}:{version + 3}", f"s/deal/{table_id}/{version + 3}"):
        chips = pb.AddChipsRequest(table_id=table_id, seat=0, request_id=rid, amount=1)
        await stub.AddChips(chips, metadata=first.service_md)
    await table_env.seat(stub, table_id, 1)
    assert await table_env.xlen(table_id) == version + 3
    dealt = await table_env.watch(stub, table_id, from_sequence=1).wait_event("hand_started")
    stored = await table_env.stored(table_id)
    assert stored[dealt.sequence - 1].request_key == f"s/deal/{table_id}/{version + 3}"


async def _button_calls_with(
    env: TableEnv, rid_for: Any, clock_ms: int, ai: bool
) -> tuple[Any, ...]:
    """Heads-up, seat 0 human; the button calls with the id ``rid_for(version after it)``."""
    server = await env.start_server()
    stub = env.stub(server)
    table_id = await env.create_table(stub, env.nlhe(2, clock_ms=clock_ms))
    human = await env.seat(stub, table_id, 0)
    if ai:
        await env.seat(stub, table_id, 1, ai_level=epb.AI_LEVEL_EASY)
    else:
        await env.seat(stub, table_id, 1)
    watcher = env.watch(stub, table_id, from_sequence=1)
    await watcher.wait_event("hole_cards_dealt", seat=1)
    view = await env.view(stub, table_id, human)
    assert view.hand.to_act == 0  # heads-up: the button (seat 0 dealt first) acts first
    rid = rid_for(table_id, view.table.sequence + 1)
    called = await env.submit(stub, table_id, human, CALL, view.table.sequence, rid)
    assert called.sequence == view.table.sequence + 1
    return stub, table_id, called, watcher, rid


async def test_the_next_ai_decisions_id_cannot_be_squatted(table_env: TableEnv) -> None:
    """Before: the AI's answer with that id was taken as a duplicate and the table stalled."""
    stub, table_id, called, _, rid = await _button_calls_with(
        table_env, lambda t, n: f"ai:{t}:{n}", 30_000, ai=True
    )
    _, decision = await table_env.next_decision()
    assert decision.request_id == rid  # the human used the very id the AI answers with
    answer = pb.SubmitActionRequest(
        table_id=table_id,
        seat=1,
        request_id=decision.request_id,
        expected_sequence=decision.expected_sequence,
        action=CHECK,
    )
    checked = await stub.SubmitAction(answer, metadata=table_env.ai_md)
    assert checked.sequence > called.sequence and checked.view.viewer_seat == 1


async def test_the_next_timers_id_cannot_be_squatted(table_env: TableEnv) -> None:
    """Before: the clock's time-out was taken as a duplicate and the seat to act never timed out."""
    _, _, called, watcher, _ = await _button_calls_with(
        table_env, lambda t, n: f"timeout:{t}:{n}", 300, ai=False
    )
    timed_out = await watcher.wait_event("action_timed_out", seat=1)
    assert timed_out.sequence == called.sequence + 1


async def test_leave_seat_with_a_submit_action_id_leaves(table_env: TableEnv) -> None:
    server = await table_env.start_server()
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.nlhe(3))
    keys = await table_env.seat_all(stub, table_id, 3)
    # Seats 0 and 1 are in the first hand; seat 2 only if it sat down before the deal (10 ms
    # after the second seat), and this table has no clock to end a hand without it.
    await table_env.watch(stub, table_id, from_sequence=1).wait_event("hole_cards_dealt", seat=1)
    view = await table_env.view(stub, table_id, keys[0])
    actor = keys[view.hand.to_act]
    shared_id = "one-id-for-two-calls"
    await table_env.submit(stub, table_id, actor, CALL, view.table.sequence, shared_id)
    left = await stub.LeaveSeat(
        pb.LeaveSeatRequest(table_id=table_id, seat=actor.seat, request_id=shared_id),
        metadata=actor.service_md,
    )
    assert left.sequence > view.table.sequence
    stored = await table_env.stored(table_id)
    wrote = [e for e in stored if e.sequence > view.table.sequence]
    assert any(
        e.HasField("player_left") or e.HasField("player_sat_out") or e.HasField("player_folded")
        for e in wrote
    ), [e.WhichOneof("event") for e in wrote]
