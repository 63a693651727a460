"""TopUp over gRPC on loopback against PostgreSQL (issue #20): chips parked at a table are the
player's, so a low balance beside them earns no free top-up, and the refusal changes nothing."""

from __future__ import annotations

import grpc

from poker.events.v1 import events_pb2 as epb
from poker.v1 import lobby_pb2 as lpb
from poker.v1 import lobby_service_pb2 as pb
from services.lobby.application import LobbySettings

from .test_join_lounge_grpc import Lobby, balance, guest
from .test_join_lounge_grpc import lobby as lobby  # the fixture: a lobby, tables a fake
from .test_lobby_grpc import auth, refused, rid


async def test_no_top_up_while_the_chips_sit_at_a_table(lobby: Lobby) -> None:
    stub = await lobby.start()
    owner, parker = await guest(stub, "Owner"), await guest(stub, "Parker")
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=4, small_blind=50, big_blind=100)
    create = pb.CreateLoungeRequest(name="Parking", config=config, request_id=rid())
    lounge = (await stub.CreateLounge(create, metadata=auth(owner))).lounge
    low = LobbySettings().starting_grant - LobbySettings().top_up_below + 100  # 400 left
    join = pb.JoinLoungeRequest(lounge_id=lounge.lounge_id, buy_in=low, request_id=rid())
    await stub.JoinLounge(join, metadata=auth(parker))
    assert await balance(stub, parker) == 400  # under the floor, but 9,600 are at the table
    top_up = pb.TopUpRequest(request_id=rid())
    assert await refused(stub.TopUp(top_up, metadata=auth(parker))) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_LOW",
    )
    assert await balance(stub, parker) == 400  # nothing changed by the refusal
    entries = await stub.ListLedgerEntries(pb.ListLedgerEntriesRequest(), metadata=auth(parker))
    assert [e.kind for e in entries.entries] == [
        lpb.LEDGER_ENTRY_KIND_BUY_IN,
        lpb.LEDGER_ENTRY_KIND_GRANT,
    ]
    shown = await stub.GetBalance(pb.GetBalanceRequest(), metadata=auth(parker))
    assert shown.balance == 400
