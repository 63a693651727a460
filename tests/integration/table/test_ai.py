"""AI seats: a decision request with only the AI seat's view goes to the AI stream."""

from __future__ import annotations

import grpc
import pytest

from felt.storage.decisions import shard_stream
from poker.events.v1 import events_pb2 as epb
from poker.v1 import ai_pb2
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from tests.integration.table.harness import TableEnv

AI = "table-tests-ai-credential-0123456789"  # conftest's AI_TOKEN


async def _next_request(
    env: TableEnv, after: bytes = b"0-0"
) -> tuple[bytes, ai_pb2.DecisionRequest]:
    """The next decision request on the server's AI stream (blocking read)."""
    return await env.next_decision(after)


async def test_an_ai_seat_to_act_gets_a_redacted_decision_request(table_env: TableEnv) -> None:
    server = await table_env.start_server()
    assert server.manager.ai_stream == table_env.ai_stream
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.nlhe(2, clock_ms=30_000))
    human = await table_env.seat(stub, table_id, 0)
    await table_env.seat(stub, table_id, 1, ai_level=epb.AI_LEVEL_NORMAL)
    watcher = table_env.watch(stub, table_id, from_sequence=1)
    await watcher.wait_event("hole_cards_dealt", seat=0)
    view = await table_env.view(stub, table_id, human)
    assert view.hand.to_act == 0  # the human (button) acts first; nothing is asked yet
    assert await table_env.redis.xlen(shard_stream(table_env.ai_stream, 0)) == 0
    called = await table_env.submit(
        stub, table_id, human, tpb.Action(call=tpb.Action.Call()), view.table.sequence
    )

    entry, request = await _next_request(table_env)
    assert request.table_id == table_id and request.seat == 1
    assert request.expected_sequence == called.sequence
    assert request.ai_level == epb.AI_LEVEL_NORMAL
    assert request.hand_id == f"{table_id}:1"
    assert request.HasField("deadline")
    assert request.deadline == called.view.hand.action_deadline
    assert request.view.viewer_seat == 1
    seats = {s.seat: s for s in request.view.hand.seats}
    assert all(c.HasField("code") for c in seats[1].cards)
    assert all(c.hidden for c in seats[0].cards)
    assert list(request.legal_actions) == list(request.view.hand.legal_actions)
    # The big blind after the small blind called: check, raise, or all-in.
    assert [a.type for a in request.legal_actions] == [
        tpb.ACTION_TYPE_CHECK,
        tpb.ACTION_TYPE_RAISE,
        tpb.ACTION_TYPE_ALL_IN,
    ]
    for event in request.history:
        kind = event.WhichOneof("event")
        if kind == "hole_cards_dealt" and event.hole_cards_dealt.seat != 1:
            assert all(c.hidden for c in event.hole_cards_dealt.cards)
        if kind == "hand_started":
            assert not event.hand_started.setup.deck
    assert "hole_cards_dealt" in {e.WhichOneof("event") for e in request.history}
    # Nothing in the request carries a secret: no deck, seed or token hash anywhere.
    raw = request.SerializeToString()
    assert human.token.encode() not in raw

    # A worker answers with the request's id and sequence (with the AI token)...
    answer = pb.SubmitActionRequest(
        table_id=table_id,
        seat=1,
        request_id=request.request_id,
        expected_sequence=request.expected_sequence,
        action=tpb.Action(check=tpb.Action.Check()),
    )
    first = await stub.SubmitAction(answer, metadata=table_env.ai_md)
    # ... a duplicate answer is harmless (the same answer, nothing appended) ...
    length = await table_env.xlen(table_id)
    assert (await stub.SubmitAction(answer, metadata=table_env.ai_md)) == first
    assert await table_env.xlen(table_id) == length
    # ... a late answer to an old request is refused and changes nothing ...
    late = pb.SubmitActionRequest()
    late.CopyFrom(answer)
    late.request_id = "ai:some-other-request"
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.SubmitAction(late, metadata=table_env.ai_md)
    assert info.value.code() == grpc.StatusCode.ABORTED
    # ... and the AI token acts for AI seats only.
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await table_env.submit(stub, table_id, type(human)(0, "x", AI), answer.action)
    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert await table_env.xlen(table_id) == length
    # The AI seat's next turn (on the flop it acts first) is asked for again.
    _, following = await _next_request(table_env, entry)
    assert following.seat == 1 and following.expected_sequence == first.sequence
    assert following.request_id != request.request_id
