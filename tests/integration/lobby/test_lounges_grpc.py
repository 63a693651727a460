"""Lounges over gRPC on loopback against PostgreSQL (the table service a fake): create, list,
get, as a client sees them (status codes, reasons, retries, the invite code)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest
from argon2 import PasswordHasher

from poker.events.v1 import events_pb2 as epb
from poker.v1 import lobby_pb2 as lpb
from poker.v1 import lobby_service_pb2 as pb
from poker.v1 import lobby_service_pb2_grpc as rpc
from services.lobby.memory import MemoryTables
from services.lobby.server import LobbyServerConfig, start_lobby_server
from services.lobby.tokens import Passwords

from .conftest import empty_pool
from .test_lobby_grpc import SECRETS, auth, refused, rid


@pytest.fixture
async def stub(lobby_dsn: str) -> AsyncIterator[rpc.LobbyServiceAsyncStub]:
    pool = await empty_pool(lobby_dsn)
    await pool.close()
    config = LobbyServerConfig(
        database_url=lobby_dsn,
        address="127.0.0.1:0",
        secrets=SECRETS,
        passwords=Passwords(PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)),
        grace_s=0.5,
        tables=MemoryTables(),
    )
    running = await start_lobby_server(config)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            yield rpc.LobbyServiceStub(channel)
    finally:
        await running.stop()


async def guest(stub: rpc.LobbyServiceAsyncStub, name: str) -> lpb.Credentials:
    made = await stub.CreateGuest(pb.CreateGuestRequest(display_name=name, request_id=rid()))
    return made.credentials


async def test_create_list_and_get_lounges(stub: rpc.LobbyServiceAsyncStub) -> None:
    alice, bob = await guest(stub, "Alice"), await guest(stub, "Bob")
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=6, small_blind=5, big_blind=10)
    create = pb.CreateLoungeRequest(
        name="Hold'em",
        config=config,
        ai_seats=[lpb.AiSeat(seat=4, level=epb.AI_LEVEL_HARD), lpb.AiSeat(level=epb.AI_LEVEL_EASY)],
        request_id=rid(),
    )
    made = (await stub.CreateLounge(create, metadata=auth(alice))).lounge
    assert made.open and made.free_seats == 4 and made.config == config
    assert [(s.seat, s.ai_level) for s in made.seats] == [
        (0, epb.AI_LEVEL_EASY),
        (4, epb.AI_LEVEL_HARD),
    ]
    assert (await stub.CreateLounge(create, metadata=auth(alice))).lounge == made
    draw = epb.TableConfig(variant=epb.VARIANT_DRAW5, seat_count=4, ante=1, small_bet=4)
    private = pb.CreateLoungeRequest(name="Draw", config=draw, private=True, request_id=rid())
    secret = (await stub.CreateLounge(private, metadata=auth(alice))).lounge
    assert secret.private and secret.invite_code
    listed = await stub.ListLounges(pb.ListLoungesRequest(), metadata=auth(bob))
    assert [x.lounge_id for x in listed.lounges] == [made.lounge_id]
    assert listed.next_page_token == ""
    got = await stub.GetLounge(pb.GetLoungeRequest(lounge_id=made.lounge_id), metadata=auth(bob))
    assert got.lounge == made
    hidden = stub.GetLounge(pb.GetLoungeRequest(lounge_id=secret.lounge_id), metadata=auth(bob))
    assert await refused(hidden) == (grpc.StatusCode.NOT_FOUND, "NO_LOUNGE")
    invited = await stub.GetLounge(
        pb.GetLoungeRequest(lounge_id=secret.lounge_id, invite_code=secret.invite_code),
        metadata=auth(bob),
    )
    assert invited.lounge.invite_code == "" and invited.lounge.lounge_id == secret.lounge_id
    bad = pb.CreateLoungeRequest(
        name="Too many",
        config=epb.TableConfig(variant=epb.VARIANT_DRAW5, seat_count=7, ante=1, small_bet=4),
        request_id=rid(),
    )
    assert await refused(stub.CreateLounge(bad, metadata=auth(alice))) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_CONFIG",
    )
    assert (await refused(stub.ListLounges(pb.ListLoungesRequest())))[0] == (
        grpc.StatusCode.UNAUTHENTICATED
    )
    drawn = await stub.ListLounges(
        pb.ListLoungesRequest(variant=epb.VARIANT_DRAW5), metadata=auth(bob)
    )
    assert list(drawn.lounges) == []
