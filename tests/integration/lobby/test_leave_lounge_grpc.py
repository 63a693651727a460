"""LeaveLounge over gRPC on loopback against PostgreSQL (the table service a fake): the stack
back at once when the seat is not dealt in, when the hand ends when it is (by the lobby's
own recovery pass), exactly once under retries and concurrent leaves, and refusals."""

from __future__ import annotations

import asyncio

import grpc

from poker.events.v1 import events_pb2 as epb
from poker.v1 import lobby_service_pb2 as pb

from . import test_join_lounge_grpc as joining
from .test_join_lounge_grpc import Lobby, balance, guest
from .test_lobby_grpc import auth, refused, rid

lobby = joining.lobby  # the fixture: a lobby server on PostgreSQL with a fake table service


async def test_leave_lounge(lobby: Lobby) -> None:
    stub = await lobby.start()
    alice, bob = await guest(stub, "Alice"), await guest(stub, "Bob")
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=4, small_blind=5, big_blind=10)
    create = pb.CreateLoungeRequest(name="Hold'em", config=config, request_id=rid())
    lid = (await stub.CreateLounge(create, metadata=auth(alice))).lounge.lounge_id
    for who, seat in ((alice, 0), (bob, 1)):
        join = pb.JoinLoungeRequest(lounge_id=lid, seat=seat, buy_in=500, request_id=rid())
        await stub.JoinLounge(join, metadata=auth(who))

    # Not dealt in: gone at once with the stack, which is back in the balance.
    lobby.tables.deal(lid)
    lobby.tables.move_chips(lid, 1, 0, 150)
    lobby.tables.end_hand(lid)
    leave = pb.LeaveLoungeRequest(lounge_id=lid, request_id=rid())
    left = await stub.LeaveLounge(leave, metadata=auth(alice))
    assert (left.lounge_id, left.seat, left.state, left.stack, left.balance) == (
        lid,
        0,
        pb.LEAVE_STATE_LEFT,
        650,
        10_150,
    )
    assert await stub.LeaveLounge(leave, metadata=auth(alice)) == left  # a retry
    again = pb.LeaveLoungeRequest(lounge_id=lid, request_id=rid())
    assert await refused(stub.LeaveLounge(again, metadata=auth(alice))) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_SEATED",
    )
    assert await balance(stub, alice) == 10_150
    seats = (await stub.GetLounge(pb.GetLoungeRequest(lounge_id=lid), metadata=auth(bob))).lounge
    assert [s.seat for s in seats.seats] == [1]

    # Dealt in: two concurrent leaves; the chips come back once, when the hand ends.
    lobby.tables.deal(lid)
    first, second = (pb.LeaveLoungeRequest(lounge_id=lid, request_id=rid()) for _ in range(2))
    answers = await asyncio.gather(
        stub.LeaveLounge(first, metadata=auth(bob)), stub.LeaveLounge(second, metadata=auth(bob))
    )
    assert {a.state for a in answers} == {pb.LEAVE_STATE_LEAVING}
    assert {a.balance for a in answers} == {9_500}
    lobby.tables.end_hand(lid)
    assert lobby.running is not None
    assert await lobby.running.seating.recover_leaves() == 1
    done = await stub.LeaveLounge(second, metadata=auth(bob))
    assert (done.state, done.stack, done.balance) == (pb.LEAVE_STATE_LEFT, 350, 9_850)
    assert await stub.LeaveLounge(first, metadata=auth(bob)) == done
    entries = await stub.ListLedgerEntries(pb.ListLedgerEntriesRequest(), metadata=auth(bob))
    assert [e.amount for e in entries.entries] == [350, -500, 10_000]

    reused = pb.LeaveLoungeRequest(lounge_id="l-other", request_id=first.request_id)
    assert (await refused(stub.LeaveLounge(reused, metadata=auth(bob))))[1] == ("REQUEST_ID_REUSED")
    assert (await refused(stub.LeaveLounge(leave)))[0] == grpc.StatusCode.UNAUTHENTICATED
    lounge = (await stub.GetLounge(pb.GetLoungeRequest(lounge_id=lid), metadata=auth(bob))).lounge
    assert list(lounge.seats) == [] and lounge.free_seats == 4


async def test_a_leave_finished_by_the_lobby_after_the_table_service_was_down(
    lobby: Lobby,
) -> None:
    stub = await lobby.start()
    alice = await guest(stub, "Alice")
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=2, small_blind=5, big_blind=10)
    create = pb.CreateLoungeRequest(name="Hold'em", config=config, request_id=rid())
    lid = (await stub.CreateLounge(create, metadata=auth(alice))).lounge.lounge_id
    join = pb.JoinLoungeRequest(lounge_id=lid, buy_in=500, request_id=rid())
    await stub.JoinLounge(join, metadata=auth(alice))
    lobby.tables.unavailable = True
    leave = pb.LeaveLoungeRequest(lounge_id=lid, request_id=rid())
    assert await refused(stub.LeaveLounge(leave, metadata=auth(alice))) == (
        grpc.StatusCode.UNAVAILABLE,
        "TABLES_UNAVAILABLE",
    )
    await lobby.stop()
    lobby.tables.unavailable = False
    stub = await lobby.start()  # its start's recovery pass finishes the leave
    assert await balance(stub, alice) == 10_000
    done = await stub.LeaveLounge(leave, metadata=auth(alice))
    assert (done.state, done.stack, done.balance) == (pb.LEAVE_STATE_LEFT, 500, 10_000)
