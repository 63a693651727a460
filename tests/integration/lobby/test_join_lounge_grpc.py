"""JoinLounge over gRPC on loopback against PostgreSQL (the table service a fake): a seat and
its token, retries, refusals with the chips back, an unreachable table service, and a
half-done buy-in finished by the next lobby process at start."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
import pytest
from argon2 import PasswordHasher

from poker.events.v1 import events_pb2 as epb
from poker.v1 import lobby_pb2 as lpb
from poker.v1 import lobby_service_pb2 as pb
from poker.v1 import lobby_service_pb2_grpc as rpc
from services.lobby.memory import MemoryTables
from services.lobby.server import LobbyServerConfig, RunningLobbyServer, start_lobby_server
from services.lobby.tokens import Passwords

from .conftest import empty_pool
from .test_lobby_grpc import SECRETS, auth, refused, rid


@dataclass
class Lobby:
    dsn: str
    tables: MemoryTables
    running: RunningLobbyServer | None = None

    async def start(self) -> rpc.LobbyServiceAsyncStub:
        config = LobbyServerConfig(
            database_url=self.dsn,
            address="127.0.0.1:0",
            secrets=SECRETS,
            passwords=Passwords(PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)),
            grace_s=0.5,
            tables=self.tables,
            recover_every_s=3_600,  # the tests run the recovery pass themselves
        )
        self.running = await start_lobby_server(config)
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{self.running.port}")
        return rpc.LobbyServiceStub(self.channel)

    async def stop(self) -> None:
        if self.running is not None:
            await self.channel.close()
            await self.running.stop()
            self.running = None


@pytest.fixture
async def lobby(lobby_dsn: str) -> AsyncIterator[Lobby]:
    pool = await empty_pool(lobby_dsn)
    await pool.close()
    lobby = Lobby(lobby_dsn, MemoryTables())
    try:
        yield lobby
    finally:
        await lobby.stop()


async def guest(stub: rpc.LobbyServiceAsyncStub, name: str) -> lpb.Credentials:
    made = await stub.CreateGuest(pb.CreateGuestRequest(display_name=name, request_id=rid()))
    return made.credentials


async def balance(stub: rpc.LobbyServiceAsyncStub, who: lpb.Credentials) -> int:
    return (await stub.GetBalance(pb.GetBalanceRequest(), metadata=auth(who))).balance


async def test_join_lounge(lobby: Lobby) -> None:
    stub = await lobby.start()
    alice, bob, carol = [await guest(stub, n) for n in ("Alice", "Bob", "Carol")]
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=4, small_blind=5, big_blind=10)
    create = pb.CreateLoungeRequest(name="Hold'em", config=config, request_id=rid())
    lounge = (await stub.CreateLounge(create, metadata=auth(alice))).lounge

    join = pb.JoinLoungeRequest(lounge_id=lounge.lounge_id, seat=2, buy_in=500, request_id=rid())
    joined = await stub.JoinLounge(join, metadata=auth(bob))
    assert (joined.lounge_id, joined.seat, joined.balance) == (lounge.lounge_id, 2, 9_500)
    assert joined.seat_token
    assert await stub.JoinLounge(join, metadata=auth(bob)) == joined  # a retry: the same seat
    assert await balance(stub, bob) == 9_500
    entries = await stub.ListLedgerEntries(pb.ListLedgerEntriesRequest(), metadata=auth(bob))
    assert [e.amount for e in entries.entries] == [-500, 10_000]

    taken = pb.JoinLoungeRequest(lounge_id=lounge.lounge_id, seat=2, buy_in=500, request_id=rid())
    assert await refused(stub.JoinLounge(taken, metadata=auth(carol))) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "SEAT_TAKEN",
    )
    assert await balance(stub, carol) == 10_000  # the chips came back
    for bad, answer in [
        (
            pb.JoinLoungeRequest(lounge_id=lounge.lounge_id, buy_in=50, request_id=rid()),
            (grpc.StatusCode.INVALID_ARGUMENT, "BAD_BUY_IN"),
        ),
        (
            pb.JoinLoungeRequest(lounge_id=lounge.lounge_id, seat=4, buy_in=500, request_id=rid()),
            (grpc.StatusCode.INVALID_ARGUMENT, "BAD_SEAT"),
        ),
        (
            pb.JoinLoungeRequest(lounge_id="l-none", buy_in=500, request_id=rid()),
            (grpc.StatusCode.NOT_FOUND, "NO_LOUNGE"),
        ),
        (
            pb.JoinLoungeRequest(lounge_id=lounge.lounge_id, buy_in=500, request_id=rid()),
            (grpc.StatusCode.FAILED_PRECONDITION, "ALREADY_SEATED"),
        ),
    ]:
        assert await refused(stub.JoinLounge(bad, metadata=auth(bob))) == answer
    assert (await refused(stub.JoinLounge(join)))[0] == grpc.StatusCode.UNAUTHENTICATED

    # The table service unreachable: the chips are held, and the retry finishes the buy-in.
    lobby.tables.unavailable = True
    free = pb.JoinLoungeRequest(lounge_id=lounge.lounge_id, buy_in=1_000, request_id=rid())
    assert await refused(stub.JoinLounge(free, metadata=auth(carol))) == (
        grpc.StatusCode.UNAVAILABLE,
        "TABLES_UNAVAILABLE",
    )
    assert await balance(stub, carol) == 9_000
    lobby.tables.unavailable = False
    seated = await stub.JoinLounge(free, metadata=auth(carol))
    assert (seated.seat, seated.balance) == (0, 9_000)
    got = await stub.GetLounge(
        pb.GetLoungeRequest(lounge_id=lounge.lounge_id), metadata=auth(alice)
    )
    assert [(s.seat, s.display_name, s.stack) for s in got.lounge.seats] == [
        (0, "Carol", 1_000),
        (2, "Bob", 500),
    ]
    assert got.lounge.free_seats == 2


async def test_a_half_done_buy_in_is_finished_at_start(lobby: Lobby) -> None:
    stub = await lobby.start()
    alice = await guest(stub, "Alice")
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=2, small_blind=5, big_blind=10)
    create = pb.CreateLoungeRequest(name="Heads-up", config=config, request_id=rid())
    lounge = (await stub.CreateLounge(create, metadata=auth(alice))).lounge
    lobby.tables.unavailable = lobby.tables.lost_answers = True  # seated, the answer lost
    join = pb.JoinLoungeRequest(lounge_id=lounge.lounge_id, buy_in=300, request_id=rid())
    assert (await refused(stub.JoinLounge(join, metadata=auth(alice))))[1] == "TABLES_UNAVAILABLE"
    await lobby.stop()
    lobby.tables.unavailable = False
    stub = await lobby.start()  # the recovery pass at start commits it
    got = await stub.GetLounge(
        pb.GetLoungeRequest(lounge_id=lounge.lounge_id), metadata=auth(alice)
    )
    assert [(s.seat, s.display_name, s.stack) for s in got.lounge.seats] == [(0, "Alice", 300)]
    calls = lobby.tables.calls
    joined = await stub.JoinLounge(join, metadata=auth(alice))
    assert (joined.seat, joined.balance) == (0, 9_700) and lobby.tables.calls == calls


async def test_close_lounge(lobby: Lobby) -> None:
    """CloseLounge over gRPC: its owner only (NOT_OWNER, NO_LOUNGE), a seat dealt in sent home
    as "table closed" when its hand ends (the recovery pass of a restarted lobby), joins
    refused from the close on, the closed lounge still shown (not listed), a retry unchanged."""
    stub = await lobby.start()
    alice, bob = await guest(stub, "Alice"), await guest(stub, "Bob")
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=3, small_blind=5, big_blind=10)
    create = pb.CreateLoungeRequest(name="Closing", config=config, request_id=rid())
    lounge = (await stub.CreateLounge(create, metadata=auth(alice))).lounge
    lid = lounge.lounge_id
    start = await balance(stub, bob)
    join = pb.JoinLoungeRequest(lounge_id=lid, seat=1, buy_in=500, request_id=rid())
    await stub.JoinLounge(join, metadata=auth(bob))
    lobby.tables.deal(lid)
    close = pb.CloseLoungeRequest(lounge_id=lid, request_id=rid())
    assert await refused(stub.CloseLounge(close, metadata=auth(bob))) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_OWNER",
    )
    nowhere = pb.CloseLoungeRequest(lounge_id="l-nowhere", request_id=rid())
    assert await refused(stub.CloseLounge(nowhere, metadata=auth(alice))) == (
        grpc.StatusCode.NOT_FOUND,
        "NO_LOUNGE",
    )
    assert await refused(stub.CloseLounge(close)) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "TOKEN_MISSING",
    )
    closing = (await stub.CloseLounge(close, metadata=auth(alice))).lounge
    assert closing.state == lpb.LOUNGE_STATE_CLOSING and not closing.open  # the hand first
    assert await balance(stub, bob) == start - 500
    late = pb.JoinLoungeRequest(lounge_id=lid, buy_in=500, request_id=rid())
    assert await refused(stub.JoinLounge(late, metadata=auth(alice))) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "LOUNGE_NOT_OPEN",
    )
    listed = await stub.ListLounges(pb.ListLoungesRequest(), metadata=auth(bob))
    assert lid not in [x.lounge_id for x in listed.lounges]
    lobby.tables.end_hand(lid)
    await lobby.stop()
    stub = await lobby.start()  # a new lobby: its start's recovery pass finishes the close
    seen = (await stub.GetLounge(pb.GetLoungeRequest(lounge_id=lid), metadata=auth(bob))).lounge
    assert seen.state == lpb.LOUNGE_STATE_CLOSED and not seen.seats
    assert await balance(stub, bob) == start
    entries = (
        await stub.ListLedgerEntries(pb.ListLedgerEntriesRequest(), metadata=auth(bob))
    ).entries
    assert (entries[0].kind, entries[0].amount, entries[0].table_id) == (
        lpb.LEDGER_ENTRY_KIND_TABLE_CLOSED,
        500,
        lid,
    )
    again = (await stub.CloseLounge(close, metadata=auth(alice))).lounge
    assert again.state == lpb.LOUNGE_STATE_CLOSED
    assert await balance(stub, bob) == start


async def test_wait_for_the_big_blind_is_seated_as_asked_and_refused_at_draw(
    lobby: Lobby,
) -> None:
    """JoinLoungeRequest.wait_for_big_blind reaches the table's SeatPlayer (Hold'em); a Draw
    lounge refuses it with the table's reason before any chip moves."""
    stub = await lobby.start()
    alice = await guest(stub, "Alice")
    holdem = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=4, small_blind=5, big_blind=10)
    draw = epb.TableConfig(variant=epb.VARIANT_DRAW5, seat_count=4, ante=1, small_bet=4)
    made = [
        (
            await stub.CreateLounge(
                pb.CreateLoungeRequest(name=name, config=config, request_id=rid()),
                metadata=auth(alice),
            )
        ).lounge
        for name, config in (("Hold'em", holdem), ("Draw", draw))
    ]
    before = await balance(stub, alice)
    at_draw = pb.JoinLoungeRequest(
        lounge_id=made[1].lounge_id, buy_in=100, request_id=rid(), wait_for_big_blind=True
    )
    assert await refused(stub.JoinLounge(at_draw, metadata=auth(alice))) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "NO_BIG_BLIND",
    )
    assert await balance(stub, alice) == before  # no chip moved
    assert lobby.tables.tables[made[1].lounge_id].seats == {}
    waiting = pb.JoinLoungeRequest(
        lounge_id=made[0].lounge_id, buy_in=500, request_id=rid(), wait_for_big_blind=True
    )
    joined = await stub.JoinLounge(waiting, metadata=auth(alice))
    assert lobby.tables.tables[made[0].lounge_id].waiting == {joined.seat}
    assert await balance(stub, alice) == before - 500
