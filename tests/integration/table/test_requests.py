"""Requests one by one: optimistic concurrency, idempotent retries, refusals and tokens.

Every refused request must get the status a client can act on, a message a
person can read, and change nothing (the stream's length is checked).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import pytest

from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from tests.integration.table.harness import TableEnv

CALL = tpb.Action(call=tpb.Action.Call())
CHECK = tpb.Action(check=tpb.Action.Check())
FOLD = tpb.Action(fold=tpb.Action.Fold())


async def _heads_up(env: TableEnv, **server: Any) -> tuple[Any, str, dict[int, Any], tpb.TableView]:
    """A server, a heads-up NLHE table and the view once the first hand waits for seat 0."""
    srv = await env.start_server(**server)
    stub = env.stub(srv)
    table_id = await env.create_table(stub, env.nlhe(2))
    keys = await env.seat_all(stub, table_id, 2)
    watcher = env.watch(stub, table_id, from_sequence=1)
    await watcher.wait_event("hole_cards_dealt", seat=0)
    view = await env.view(stub, table_id, keys[0])
    assert view.hand.to_act == 0  # heads-up: the button (seat 0, small blind) acts first
    return stub, table_id, keys, view


async def test_two_decisions_on_one_sequence_exactly_one_wins(table_env: TableEnv) -> None:
    stub, table_id, keys, view = await _heads_up(table_env)
    other = table_env.stub(table_env.servers[0])  # a second client (own channel), same seat
    before = await table_env.xlen(table_id)
    seq = view.table.sequence
    ids = (uuid.uuid4().hex, uuid.uuid4().hex)

    results = await asyncio.gather(
        table_env.submit(stub, table_id, keys[0], CALL, seq, ids[0]),
        table_env.submit(other, table_id, keys[0], FOLD, seq, ids[1]),
        return_exceptions=True,
    )

    wins = [r for r in results if isinstance(r, pb.SubmitActionResponse)]
    losses = [r for r in results if isinstance(r, grpc.aio.AioRpcError)]
    assert len(wins) == 1 and len(losses) == 1, results
    assert losses[0].code() == grpc.StatusCode.ABORTED
    assert table_env.error_reason(losses[0]) == "STALE_SEQUENCE"
    assert "sequence" in (losses[0].details() or "")
    requests = [
        table_env.submit_request(table_id, keys[0], action, seq, rid)
        for action, rid in zip((CALL, FOLD), ids, strict=True)
    ]
    won = 0 if isinstance(results[0], pb.SubmitActionResponse) else 1
    assert not await table_env.recorded(table_id, table_env.request_key(keys[0], requests[1 - won]))
    stored = await table_env.stored(table_id)
    assert len(stored) == wins[0].sequence
    new = stored[before:]
    assert {e.request_key for e in new} == {table_env.request_key(keys[0], requests[won])}
    actions = [e.WhichOneof("event") for e in new]
    assert actions[0] in ("player_called", "player_folded")
    assert len([a for a in actions if a in ("player_called", "player_folded")]) == 1


async def test_a_retried_request_gets_the_same_answer_and_appends_nothing(
    table_env: TableEnv,
) -> None:
    stub, table_id, keys, view = await _heads_up(table_env)
    rid = uuid.uuid4().hex
    first = await table_env.submit(stub, table_id, keys[0], CALL, view.table.sequence, rid)
    length = await table_env.xlen(table_id)
    assert length == first.sequence

    again = await table_env.submit(stub, table_id, keys[0], CALL, view.table.sequence, rid)
    assert again.SerializeToString() == first.SerializeToString()
    assert await table_env.xlen(table_id) == length

    # The table moves on; the retry still gets the original answer, and nothing is decided
    # again. The same id with other content (here: no expected sequence) is refused.
    await table_env.submit(stub, table_id, keys[1], CHECK, first.sequence)
    length = await table_env.xlen(table_id)
    late = await table_env.submit(stub, table_id, keys[0], CALL, view.table.sequence, rid)
    assert late.SerializeToString() == first.SerializeToString()
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await table_env.submit(stub, table_id, keys[0], CALL, 0, rid)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert table_env.error_reason(refused.value) == "REQUEST_ID_REUSED"
    assert await table_env.xlen(table_id) == length
    # A retry that races the original on another connection is answered the same way.
    rid2 = uuid.uuid4().hex
    other = table_env.stub(table_env.servers[0])
    seq = (await table_env.view(stub, table_id)).table.sequence
    view1 = await table_env.view(stub, table_id, keys[1])
    key = keys[view1.hand.to_act]
    both = await asyncio.gather(
        table_env.submit(stub, table_id, key, CHECK, seq, rid2),
        table_env.submit(other, table_id, key, CHECK, seq, rid2),
    )
    assert both[0].SerializeToString() == both[1].SerializeToString()
    stored = await table_env.stored(table_id)
    rid2_key = table_env.request_key(key, table_env.submit_request(table_id, key, CHECK, seq, rid2))
    checks = [e for e in stored if e.request_key == rid2_key and e.HasField("player_checked")]
    assert len(checks) == 1


async def test_seat_player_and_create_table_retries(table_env: TableEnv) -> None:
    srv = await table_env.start_server()
    stub = table_env.stub(srv)
    create = pb.CreateTableRequest(
        table_id="retry-me", config=table_env.nlhe(3), request_id=uuid.uuid4().hex
    )
    first = await stub.CreateTable(create, metadata=table_env.admin)
    assert (await stub.CreateTable(create, metadata=table_env.admin)) == first
    seat = pb.SeatPlayerRequest(
        table_id="retry-me", player_id="alice", stack=500, request_id=uuid.uuid4().hex
    )
    one = await stub.SeatPlayer(seat, metadata=table_env.admin)
    length = await table_env.xlen("retry-me")
    two = await stub.SeatPlayer(seat, metadata=table_env.admin)
    assert (two.seat, two.seat_token, two.sequence) == (one.seat, one.seat_token, one.sequence)
    assert await table_env.xlen("retry-me") == length
    # Another player takes the next seat, and the retry still answers the first seat.
    bob = await table_env.seat(stub, "retry-me", 1, player_id="bob")
    assert bob.seat == 1 and one.seat == 0
    three = await stub.SeatPlayer(seat, metadata=table_env.admin)
    assert three.seat_token == one.seat_token
    # The retried token works.
    key = type(bob)(one.seat, "alice", three.seat_token)
    assert (await table_env.view(stub, "retry-me", key)).viewer_seat == 0


async def test_refused_requests_say_why_and_change_nothing(table_env: TableEnv) -> None:
    stub, table_id, keys, view = await _heads_up(table_env)
    seq = view.table.sequence
    legal = {a.type: a for a in view.hand.legal_actions}
    min_raise = legal[tpb.ACTION_TYPE_RAISE].min_to

    def submit(
        seat: int = 0,
        action: tpb.Action = CALL,
        expected: int = seq,
        token: str | None = None,
        table: str = table_id,
        request_id: str | None = None,
    ) -> Callable[[], Awaitable[Any]]:
        md = () if token == "" else (("authorization", f"Bearer {token or keys[seat].token}"),)
        rid = uuid.uuid4().hex if request_id is None else request_id
        request = pb.SubmitActionRequest(
            table_id=table, seat=seat, request_id=rid, expected_sequence=expected, action=action
        )
        return lambda: stub.SubmitAction(request, metadata=md)

    code = grpc.StatusCode
    cases: list[tuple[str, Callable[[], Awaitable[Any]], grpc.StatusCode, str]] = [
        ("not your turn", submit(seat=1, action=CHECK), code.FAILED_PRECONDITION, "NOT_YOUR_TURN"),
        (
            "below the minimum raise",
            submit(action=tpb.Action(raise_to=tpb.Action.RaiseTo(amount=min_raise - 1))),
            code.FAILED_PRECONDITION,
            "BELOW_MIN_RAISE",
        ),
        ("cannot check", submit(action=CHECK), code.FAILED_PRECONDITION, "CANNOT_CHECK"),
        ("no action", submit(action=tpb.Action()), code.INVALID_ARGUMENT, "BAD_ACTION"),
        (
            "negative raise",
            submit(action=tpb.Action(raise_to=tpb.Action.RaiseTo(amount=-5))),
            code.INVALID_ARGUMENT,
            "BAD_ACTION",
        ),
        ("no request id", submit(request_id=""), code.INVALID_ARGUMENT, "BAD_REQUEST_ID"),
        ("no token", submit(token=""), code.UNAUTHENTICATED, "SEAT_TOKEN_REQUIRED"),
        ("forged token", submit(token="v1.e30.bm9wZQ"), code.UNAUTHENTICATED, "BAD_SEAT_TOKEN"),
        ("another seat's token", submit(token=keys[1].token), code.PERMISSION_DENIED, "WRONG_SEAT"),
        ("unknown table", submit(table="no-such-table"), code.NOT_FOUND, "NO_TABLE"),
        ("malformed table id", submit(table="Bad Id!"), code.INVALID_ARGUMENT, "BAD_TABLE_ID"),
        ("stale sequence", submit(expected=seq - 1), code.ABORTED, "STALE_SEQUENCE"),
        (
            "add chips mid-hand",
            lambda: stub.AddChips(
                pb.AddChipsRequest(table_id=table_id, seat=0, amount=10, request_id="a1"),
                metadata=keys[0].service_md,
            ),
            code.FAILED_PRECONDITION,
            "HAND_RUNNING",
        ),
        (
            "sit in while sitting in",
            lambda: stub.SitIn(
                pb.SitInRequest(table_id=table_id, seat=1, request_id="s1"), metadata=keys[1].md
            ),
            code.FAILED_PRECONDITION,
            "NOT_SITTING_OUT",
        ),
        (
            "seat taken",
            lambda: stub.SeatPlayer(
                pb.SeatPlayerRequest(
                    table_id=table_id, seat=1, player_id="carol", stack=100, request_id="p1"
                ),
                metadata=table_env.admin,
            ),
            code.ALREADY_EXISTS,
            "SEAT_TAKEN",
        ),
        (
            "seat without the service credential",
            lambda: stub.SeatPlayer(
                pb.SeatPlayerRequest(
                    table_id=table_id, seat=1, player_id="carol", stack=100, request_id="p2"
                )
            ),
            code.UNAUTHENTICATED,
            "SERVICE_CREDENTIAL_REQUIRED",
        ),
        (
            "seat with a player's seat token",
            lambda: stub.SeatPlayer(
                pb.SeatPlayerRequest(
                    table_id=table_id, seat=2, player_id="carol", stack=100, request_id="p3"
                ),
                metadata=keys[0].md,
            ),
            code.PERMISSION_DENIED,
            "SERVICE_ONLY",
        ),
        (
            "add chips with the seat's own token",
            lambda: stub.AddChips(
                pb.AddChipsRequest(table_id=table_id, seat=0, amount=10, request_id="a2"),
                metadata=keys[0].md,
            ),
            code.PERMISSION_DENIED,
            "SERVICE_ONLY",
        ),
        (
            "add chips with the AI workers' token",
            lambda: stub.AddChips(
                pb.AddChipsRequest(table_id=table_id, seat=0, amount=10, request_id="a3"),
                metadata=table_env.ai_md,
            ),
            code.PERMISSION_DENIED,
            "SERVICE_ONLY",
        ),
        (
            "leave with the seat's own token",
            lambda: stub.LeaveSeat(
                pb.LeaveSeatRequest(table_id=table_id, seat=0, request_id="l1"),
                metadata=keys[0].md,
            ),
            code.PERMISSION_DENIED,
            "SERVICE_ONLY",
        ),
        (
            "leave without a token",
            lambda: stub.LeaveSeat(pb.LeaveSeatRequest(table_id=table_id, seat=0, request_id="l2")),
            code.UNAUTHENTICATED,
            "SERVICE_CREDENTIAL_REQUIRED",
        ),
        (
            "close with a seat token",
            lambda: stub.CloseTable(
                pb.CloseTableRequest(table_id=table_id, request_id="c1"), metadata=keys[1].md
            ),
            code.PERMISSION_DENIED,
            "SERVICE_ONLY",
        ),
        (
            "close without a token",
            lambda: stub.CloseTable(pb.CloseTableRequest(table_id=table_id, request_id="c2")),
            code.UNAUTHENTICATED,
            "SERVICE_CREDENTIAL_REQUIRED",
        ),
        (
            "close mid-hand",
            lambda: stub.CloseTable(
                pb.CloseTableRequest(table_id=table_id, request_id="c3"),
                metadata=table_env.admin,
            ),
            code.FAILED_PRECONDITION,
            "HAND_RUNNING",
        ),
        (
            "the service as another seat's token",
            lambda: stub.LeaveSeat(
                pb.LeaveSeatRequest(table_id=table_id, seat=0, request_id="l3"),
                metadata=keys[1].service_md,
            ),
            code.PERMISSION_DENIED,
            "WRONG_SEAT",
        ),
        (
            "view someone else's cards",
            lambda: stub.GetTableView(
                pb.GetTableViewRequest(table_id=table_id, seat=0), metadata=keys[1].md
            ),
            code.PERMISSION_DENIED,
            "WRONG_SEAT",
        ),
        (
            "view a seat without a token",
            lambda: stub.GetTableView(pb.GetTableViewRequest(table_id=table_id, seat=0)),
            code.UNAUTHENTICATED,
            "SEAT_TOKEN_REQUIRED",
        ),
        (
            "history of someone else's seat",
            lambda: stub.GetHandHistory(
                pb.GetHandHistoryRequest(table_id=table_id, seat=1), metadata=keys[0].md
            ),
            code.PERMISSION_DENIED,
            "WRONG_SEAT",
        ),
        (
            "empty seat",
            lambda: stub.SitOut(
                pb.SitOutRequest(table_id=table_id, seat=5, request_id="s2"), metadata=keys[0].md
            ),
            code.PERMISSION_DENIED,
            "WRONG_SEAT",
        ),
    ]
    length = await table_env.xlen(table_id)
    for name, call, expected_code, reason in cases:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await call()
        err = info.value
        assert err.code() == expected_code, f"{name}: {err.code()} {err.details()}"
        assert table_env.error_reason(err) == reason, f"{name}: {table_env.error_reason(err)}"
        details = err.details() or ""
        assert len(details) > 10 and "Traceback" not in details, f"{name}: {details!r}"
        assert await table_env.xlen(table_id) == length, f"{name} changed the table"
    # The legal action still goes through on the unchanged sequence.
    assert (await submit()()).sequence > seq


async def test_watch_and_view_are_refused_for_a_wrong_seat(table_env: TableEnv) -> None:
    stub, table_id, keys, _ = await _heads_up(table_env)
    call = stub.WatchTable(pb.WatchTableRequest(table_id=table_id, seat=0), metadata=keys[1].md)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call.read()
    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
    call = stub.WatchTable(pb.WatchTableRequest(table_id="nope"))
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call.read()
    assert info.value.code() == grpc.StatusCode.NOT_FOUND


async def test_a_refused_table_is_not_left_behind(table_env: TableEnv) -> None:
    srv = await table_env.start_server()
    stub = table_env.stub(srv)
    bad = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=12, small_blind=5, big_blind=10)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.CreateTable(
            pb.CreateTableRequest(table_id="bad-one", config=bad, request_id="c1"),
            metadata=table_env.admin,
        )
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "seats" in (info.value.details() or "")
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.GetTable(pb.GetTableRequest(table_id="bad-one"))
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    assert await table_env.lease_owner("bad-one") is None
    # The id is free for a good table.
    good = await table_env.create_table(stub, table_env.nlhe(3), "bad-one")
    assert good == "bad-one"


async def test_only_the_seat_token_sees_the_seat_cards(table_env: TableEnv) -> None:
    stub, table_id, keys, view = await _heads_up(table_env)
    me = {s.seat: s for s in view.hand.seats}
    assert all(c.HasField("code") for c in me[0].cards)
    assert all(c.hidden for c in me[1].cards)
    spectator = await table_env.view(stub, table_id)
    assert not spectator.HasField("viewer_seat")
    assert spectator.hand.seats and all(c.hidden for s in spectator.hand.seats for c in s.cards)
    assert not spectator.hand.legal_actions
    # The other seat sees its own cards, not seat 0's, and has no legal actions yet.
    theirs = await table_env.view(stub, table_id, keys[1])
    cards = {s.seat: s.cards for s in theirs.hand.seats}
    assert all(c.HasField("code") for c in cards[1]) and all(c.hidden for c in cards[0])
    assert not theirs.hand.legal_actions

    # A new occupant's token does not open the old occupant's hands, and the old token is dead.
    left = await stub.LeaveSeat(
        pb.LeaveSeatRequest(table_id=table_id, seat=1, request_id="bye"),
        metadata=keys[1].service_md,
    )
    assert left.stack == 990  # still dealt in: it leaves when the hand ends
    watcher = table_env.watch(stub, table_id, from_sequence=left.sequence)
    await table_env.submit(stub, table_id, keys[0], FOLD)
    await watcher.wait_event("player_left", seat=1)
    newcomer = await table_env.seat(stub, table_id, 1, player_id="newcomer")
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await table_env.view(stub, table_id, keys[1])
    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "earlier occupant" in (info.value.details() or "")
    history = await stub.GetHandHistory(
        pb.GetHandHistoryRequest(table_id=table_id, hand_id=f"{table_id}:1", seat=1),
        metadata=newcomer.md,
    )
    items = [i for i in history.events if i.event.HasField("hole_cards_dealt")]
    dealt = [i.event.hole_cards_dealt for i in items]
    assert dealt and all(c.hidden for d in dealt for c in d.cards)
    assert not any(i.card_proofs for i in items)
