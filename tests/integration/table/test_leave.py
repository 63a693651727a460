"""LeaveSeat over gRPC: the seat to act has its cards folded (issue #9, item 12)."""

from __future__ import annotations

import grpc
import pytest

from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from tests.integration.table.harness import TableEnv


async def test_leaving_when_to_act_folds_instead_of_checking_it_down(table_env: TableEnv) -> None:
    server = await table_env.start_server()
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.nlhe(2, clock_ms=60_000))
    keys = await table_env.seat_all(stub, table_id, 2)
    watcher = table_env.watch(stub, table_id, from_sequence=1)
    await watcher.wait_event("hole_cards_dealt", seat=1)
    view = await table_env.view(stub, table_id, keys[0])
    button = view.hand.to_act
    big_blind = 1 - button
    called = await table_env.submit(
        stub, table_id, keys[button], tpb.Action(call=tpb.Action.Call()), view.table.sequence
    )
    # The big blind may check; it leaves instead.
    assert called.view.hand.to_act == big_blind
    left = await stub.LeaveSeat(
        pb.LeaveSeatRequest(table_id=table_id, seat=big_blind, request_id="bye"),
        metadata=keys[big_blind].service_md,
    )
    folded = await watcher.wait_event("player_folded", seat=big_blind)
    assert folded.sequence > left.sequence
    gone = await watcher.wait_event("player_left", seat=big_blind)
    ended = next(e for e in watcher.events if e.HasField("hand_ended"))
    stacks = {s.seat: s.stack for s in ended.hand_ended.stacks}
    assert gone.player_left.stack == stacks[big_blind] == left.stack
    assert not any(e.HasField("player_checked") for e in watcher.events)
    await table_env.check_rebuild(server, table_id)


async def test_a_seats_next_occupant_cannot_see_or_show_the_last_players_cards(
    table_env: TableEnv,
) -> None:
    """Found by review: the last hand stays until the next deal, and a heads-up table whose
    player left waits there; the seat's new occupant was shown (and could show) its cards."""
    server = await table_env.start_server()
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.nlhe(2))
    keys = await table_env.seat_all(stub, table_id, 2)
    watcher = table_env.watch(stub, table_id, from_sequence=1)
    await watcher.wait_event("hole_cards_dealt", seat=1)
    view = await table_env.view(stub, table_id, keys[0])
    actor = view.hand.to_act
    mine = {s.seat: s for s in view.hand.seats}[actor]
    assert not any(c.hidden for c in mine.cards)
    fold = tpb.Action(fold=tpb.Action.Fold())
    # The other player sits out, so no next hand is dealt once the seat is taken again (a
    # race the test lost now and then: the new hand's HAND_RUNNING instead).
    other = 1 - actor
    await stub.SitOut(
        pb.SitOutRequest(table_id=table_id, seat=other, request_id="away"),
        metadata=keys[other].md,
    )
    await table_env.submit(stub, table_id, keys[actor], fold)
    await stub.LeaveSeat(
        pb.LeaveSeatRequest(table_id=table_id, seat=actor, request_id="gone"),
        metadata=keys[actor].service_md,
    )
    await watcher.wait_event("player_left", seat=actor)
    mallory = await table_env.seat(stub, table_id, actor)
    seen = await table_env.view(stub, table_id, mallory)
    assert seen.hand.hand_id == view.hand.hand_id  # still the last hand
    assert all(c.hidden for c in {s.seat: s for s in seen.hand.seats}[actor].cards)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await stub.ShowCards(
            pb.ShowCardsRequest(table_id=table_id, seat=actor, request_id="show"),
            metadata=mallory.md,
        )
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert table_env.error_reason(refused.value) == "NOT_YOUR_HAND"
