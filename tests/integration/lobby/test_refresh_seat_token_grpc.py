"""RefreshSeatToken over gRPC on loopback against PostgreSQL (the table service a fake): a
fresh token for the caller's own seat only, stored so that a later leave names the seat by it,
the same token for a retry, and refusals."""

from __future__ import annotations

import grpc

from poker.events.v1 import events_pb2 as epb
from poker.v1 import lobby_service_pb2 as pb

from . import test_join_lounge_grpc as joining
from .test_join_lounge_grpc import Lobby, guest
from .test_lobby_grpc import auth, refused, rid

lobby = joining.lobby  # the fixture: a lobby server on PostgreSQL with a fake table service


async def test_refresh_seat_token(lobby: Lobby) -> None:
    stub = await lobby.start()
    alice, bob = await guest(stub, "Alice"), await guest(stub, "Bob")
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=4, small_blind=5, big_blind=10)
    create = pb.CreateLoungeRequest(name="Hold'em", config=config, request_id=rid())
    lid = (await stub.CreateLounge(create, metadata=auth(alice))).lounge.lounge_id
    join = pb.JoinLoungeRequest(lounge_id=lid, seat=2, buy_in=500, request_id=rid())
    joined = await stub.JoinLounge(join, metadata=auth(alice))

    refresh = pb.RefreshSeatTokenRequest(lounge_id=lid, request_id=rid())
    fresh = await stub.RefreshSeatToken(refresh, metadata=auth(alice))
    assert (fresh.lounge_id, fresh.seat) == (lid, 2)
    assert fresh.seat_token and fresh.seat_token != joined.seat_token
    assert await stub.RefreshSeatToken(refresh, metadata=auth(alice)) == fresh  # a retry

    # Bob has no seat there; nobody at all without signing in.
    other = pb.RefreshSeatTokenRequest(lounge_id=lid, request_id=rid())
    assert await refused(stub.RefreshSeatToken(other, metadata=auth(bob))) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_SEATED",
    )
    assert (await refused(stub.RefreshSeatToken(other)))[0] == grpc.StatusCode.UNAUTHENTICATED

    # The lobby stored the new token: its leave names the seat by it (the fake refuses the
    # old one, as the table service does) and the chips come home.
    leave = pb.LeaveLoungeRequest(lounge_id=lid, request_id=rid())
    left = await stub.LeaveLounge(leave, metadata=auth(alice))
    assert (left.state, left.stack) == (pb.LEAVE_STATE_LEFT, 500)
    again = pb.RefreshSeatTokenRequest(lounge_id=lid, request_id=rid())
    assert (await refused(stub.RefreshSeatToken(again, metadata=auth(alice))))[1] == "NOT_SEATED"
