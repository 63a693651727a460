"""Private lounges over real gRPC (issue #20): the lobby on PostgreSQL, a table service on
Redis, both on loopback. A private lounge's table, its live hand and its history are read
only by its seats, its owner and those who show its invite code; a stranger who knows the
table id gets the same NOT_FOUND as for no table or no hand. A public lounge is unchanged.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from argon2 import PasswordHasher

from felt.wire.tokens import WatchClaim, issue_watch_grant
from poker.events.v1 import events_pb2 as epb
from poker.v1 import history_service_pb2 as hpb
from poker.v1 import history_service_pb2_grpc as hrpc
from poker.v1 import lobby_pb2 as lpb
from poker.v1 import lobby_service_pb2 as pb
from poker.v1 import lobby_service_pb2_grpc as rpc
from poker.v1 import table_service_pb2 as tpb
from poker.v1 import table_service_pb2_grpc as trpc
from services.lobby.server import LobbyServerConfig, start_lobby_server
from services.lobby.tokens import Passwords
from services.table.auth import Secrets
from services.table.server import TableServerConfig, start_table_server
from tests.felt_command import run_felt

from .conftest import empty_pool
from .test_lobby_grpc import SECRETS, auth, refused, rid

ADMIN = "private-tests-table-admin-credential-0123456789"
TABLE_SECRET = b"private-tests-table-secret-0123456789"


@dataclass
class Stack:
    port: int  # the lobby's (and the history service's)
    lobby: rpc.LobbyServiceAsyncStub
    history: hrpc.HistoryServiceAsyncStub
    table: trpc.TableServiceAsyncStub


@pytest.fixture
async def stack(redis: Any, redis_url: str, lobby_dsn: str) -> AsyncIterator[Stack]:
    pool = await empty_pool(lobby_dsn)
    await pool.close()
    table = await start_table_server(
        TableServerConfig(
            redis_url=redis_url,
            address="127.0.0.1:0",
            secrets=Secrets(TABLE_SECRET, ADMIN, "private-tests-ai-token-credential-0123456789"),
            ai_stream=f"private-tests-ai-{hashlib.sha256(redis_url.encode()).hexdigest()[:6]}",
        )
    )
    lobby = await start_lobby_server(
        LobbyServerConfig(
            database_url=lobby_dsn,
            address="127.0.0.1:0",
            secrets=SECRETS,
            passwords=Passwords(PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)),
            grace_s=0.5,
            table_address=f"127.0.0.1:{table.port}",
            table_admin_token=ADMIN,
            redis_url=redis_url,
        )
    )
    try:
        async with (
            grpc.aio.insecure_channel(f"127.0.0.1:{lobby.port}") as lobby_channel,
            grpc.aio.insecure_channel(f"127.0.0.1:{table.port}") as table_channel,
        ):
            yield Stack(
                lobby.port,
                rpc.LobbyServiceStub(lobby_channel),
                hrpc.HistoryServiceStub(lobby_channel),
                trpc.TableServiceStub(table_channel),
            )
    finally:
        await lobby.stop()
        await table.stop()


async def guest(stub: rpc.LobbyServiceAsyncStub, name: str) -> lpb.Credentials:
    made = await stub.CreateGuest(pb.CreateGuestRequest(display_name=name, request_id=rid()))
    return made.credentials


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def lounge_with_a_hand(
    stack: Stack, owner: lpb.Credentials, player: lpb.Credentials, private: bool
) -> tuple[lpb.Lounge, pb.JoinLoungeResponse]:
    """A lounge with an AI seat; ``player`` joins, so a hand is dealt (and waits: no clock,
    no AI worker)."""
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=3, small_blind=5, big_blind=10)
    create = pb.CreateLoungeRequest(
        name="Back room" if private else "Front room",
        config=config,
        ai_seats=[lpb.AiSeat(seat=0, level=epb.AI_LEVEL_EASY)],
        private=private,
        request_id=rid(),
    )
    lounge = (await stack.lobby.CreateLounge(create, metadata=auth(owner))).lounge
    assert lounge.private is private and lounge.config.private is private
    join = pb.JoinLoungeRequest(
        lounge_id=lounge.lounge_id,
        seat=1,
        buy_in=500,
        invite_code=lounge.invite_code,
        request_id=rid(),
    )
    return lounge, await stack.lobby.JoinLounge(join, metadata=auth(player))


async def live_hand(stack: Stack, table_id: str, seat: int, token: str) -> str:
    """The public id of the hand in play, as the seat sees it (waits for the deal)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        view = await stack.table.GetTableView(
            tpb.GetTableViewRequest(table_id=table_id, seat=seat), metadata=bearer(token)
        )
        if view.view.hand.public_id:
            return str(view.view.hand.public_id)
    raise AssertionError("no hand was dealt")


async def first_item(stack: Stack, table_id: str, metadata: Any) -> tpb.WatchTableResponse:
    call = stack.table.WatchTable(tpb.WatchTableRequest(table_id=table_id), metadata=metadata)
    try:
        async for item in call:
            return item
    finally:
        call.cancel()
    raise AssertionError("the stream ended without an item")


async def spectator_reads(
    stack: Stack, table_id: str, metadata: Any
) -> list[tuple[grpc.StatusCode, str]]:
    """Every spectator read of the table service, each one's status code and reason
    (``OK`` for a read that went through)."""
    calls: list[Callable[[], Awaitable[Any]]] = [
        lambda: stack.table.GetTable(tpb.GetTableRequest(table_id=table_id), metadata=metadata),
        lambda: stack.table.GetTableView(
            tpb.GetTableViewRequest(table_id=table_id), metadata=metadata
        ),
        lambda: first_item(stack, table_id, metadata),
        lambda: stack.table.GetHandHistory(
            tpb.GetHandHistoryRequest(table_id=table_id), metadata=metadata
        ),
    ]
    out = []
    for call in calls:
        try:
            await call()
            out.append((grpc.StatusCode.OK, ""))
        except grpc.aio.AioRpcError:
            out.append(await refused(call()))
    return out


OK = [(grpc.StatusCode.OK, "")] * 4


async def test_a_private_lounge_is_read_only_by_its_seats_owner_and_invitees(
    stack: Stack,
) -> None:
    alice, bob, carol, dave = [
        await guest(stack.lobby, n) for n in ("Alice", "Bob", "Carol", "Dave")
    ]
    lounge, bob_seat = await lounge_with_a_hand(stack, alice, bob, private=True)
    table_id = lounge.lounge_id
    hand = await live_hand(stack, table_id, bob_seat.seat, bob_seat.seat_token)

    # A stranger with the table id: every spectator read is NOT_FOUND, exactly as for a table
    # that does not exist (its message too), signed in to the lobby or not.
    nowhere = "l-no-such-table"
    missing = await spectator_reads(stack, nowhere, ())
    assert {code for code, _ in missing} == {grpc.StatusCode.NOT_FOUND}
    assert await spectator_reads(stack, table_id, ()) == missing
    assert await spectator_reads(stack, table_id, auth(carol)) == missing
    for metadata in ((), auth(carol)):
        with pytest.raises(grpc.aio.AioRpcError) as hidden:
            await stack.table.GetTableView(
                tpb.GetTableViewRequest(table_id=table_id), metadata=metadata
            )
        with pytest.raises(grpc.aio.AioRpcError) as absent:
            await stack.table.GetTableView(
                tpb.GetTableViewRequest(table_id=nowhere), metadata=metadata
            )
        assert hidden.value.details() == absent.value.details()

    # No watch grant without the invite code: as for no lounge at all.
    for code in ("", "wrong-code"):
        watch = pb.WatchLoungeRequest(lounge_id=table_id, invite_code=code)
        assert await refused(stack.lobby.WatchLounge(watch, metadata=auth(carol))) == (
            grpc.StatusCode.NOT_FOUND,
            "NO_LOUNGE",
        )
    assert (await refused(stack.lobby.WatchLounge(pb.WatchLoungeRequest(lounge_id=table_id))))[
        0
    ] == grpc.StatusCode.UNAUTHENTICATED

    # An invitee (the invite code), the owner and a seated player (no code) get a grant.
    invited = await stack.lobby.WatchLounge(
        pb.WatchLoungeRequest(lounge_id=table_id, invite_code=lounge.invite_code),
        metadata=auth(dave),
    )
    assert invited.watch_grant and invited.expire_time.seconds > time.time() + 60
    owners = await stack.lobby.WatchLounge(
        pb.WatchLoungeRequest(lounge_id=table_id), metadata=auth(alice)
    )
    seated = await stack.lobby.WatchLounge(
        pb.WatchLoungeRequest(lounge_id=table_id), metadata=auth(bob)
    )
    for grant in (invited.watch_grant, owners.watch_grant, seated.watch_grant):
        assert await spectator_reads(stack, table_id, bearer(grant)) == OK
    view = await stack.table.GetTableView(
        tpb.GetTableViewRequest(table_id=table_id), metadata=bearer(invited.watch_grant)
    )
    assert view.view.hand.public_id == hand  # the live hand, as a spectator sees it
    assert not view.view.HasField("viewer_seat") and all(
        c.hidden for s in view.view.hand.seats for c in s.cards
    )
    snapshot = await first_item(stack, table_id, bearer(invited.watch_grant))
    assert snapshot.WhichOneof("item") == "snapshot"

    # A seat reads with its seat token, as the seat and as a spectator.
    seat_md = bearer(bob_seat.seat_token)
    mine = await stack.table.GetTableView(
        tpb.GetTableViewRequest(table_id=table_id, seat=bob_seat.seat), metadata=seat_md
    )
    assert mine.view.viewer_seat == bob_seat.seat
    assert not any(
        c.hidden for s in mine.view.hand.seats if s.seat == bob_seat.seat for c in s.cards
    )
    assert await spectator_reads(stack, table_id, seat_md) == OK

    # A grant acts for no seat, names its table only, and expires.
    sit_out = tpb.SitOutRequest(table_id=table_id, seat=bob_seat.seat, request_id=rid())
    assert (await refused(stack.table.SitOut(sit_out, metadata=bearer(invited.watch_grant))))[
        0
    ] == grpc.StatusCode.PERMISSION_DENIED
    other, _ = await lounge_with_a_hand(stack, carol, dave, private=True)
    assert await spectator_reads(stack, other.lounge_id, bearer(invited.watch_grant)) == missing
    expired = issue_watch_grant(TABLE_SECRET, WatchClaim(table_id, int(time.time()) - 1))
    assert (await spectator_reads(stack, table_id, bearer(expired)))[0] == (
        grpc.StatusCode.UNAUTHENTICATED,
        "WATCH_GRANT_EXPIRED",
    )
    forged = issue_watch_grant(b"not-the-table-secret-0123456789", WatchClaim(table_id, 2**40))
    assert await spectator_reads(stack, table_id, bearer(forged)) == missing
    # The service credential still reads.
    assert await spectator_reads(stack, table_id, bearer(ADMIN)) == OK

    # Its hands' history: the same HAND_NOT_FOUND for strangers as for no hand at all.
    def get(**fields: Any) -> hpb.HistoryServiceGetHandHistoryRequest:
        return hpb.HistoryServiceGetHandHistoryRequest(hand_id=hand, table_id=table_id, **fields)

    no_hand = (grpc.StatusCode.NOT_FOUND, "HAND_NOT_FOUND")
    unknown = hpb.HistoryServiceGetHandHistoryRequest(hand_id="0" * 32, table_id=table_id)
    assert await refused(stack.history.GetHandHistory(unknown)) == no_hand
    for metadata in ((), auth(carol), auth(dave)):
        assert await refused(stack.history.GetHandHistory(get(), metadata=metadata)) == no_hand
        spectating = get(reader=hpb.HAND_READER_SPECTATOR)
        assert await refused(stack.history.GetHandHistory(spectating, metadata=metadata)) == (
            no_hand
        )
    wrong = get(invite_code="wrong-code")
    assert await refused(stack.history.GetHandHistory(wrong, metadata=auth(carol))) == no_hand
    as_invitee = await stack.history.GetHandHistory(
        get(invite_code=lounge.invite_code), metadata=auth(dave)
    )
    assert as_invitee.reader == hpb.HAND_READER_SPECTATOR and as_invitee.events
    as_owner = await stack.history.GetHandHistory(get(), metadata=auth(alice))
    assert as_owner.reader == hpb.HAND_READER_SPECTATOR
    as_player = await stack.history.GetHandHistory(get(), metadata=auth(bob))
    assert as_player.reader == hpb.HAND_READER_SEAT and as_player.seat == bob_seat.seat

    # `felt replay` sends the invite code from FELT_INVITE_CODE.
    replay = ("replay", hand, "--target", f"127.0.0.1:{stack.port}", "--table", table_id)
    status, _, err = await asyncio.to_thread(run_felt, *replay)
    assert status == 2 and "NOT_FOUND" in err
    assert lounge.invite_code not in err
    status, out, err = await asyncio.to_thread(
        run_felt, *replay, FELT_INVITE_CODE=lounge.invite_code
    )
    assert status == 0, err
    assert f"Hand {hand}" in out


async def test_a_public_lounge_is_read_by_anyone_as_before(stack: Stack) -> None:
    alice, bob = await guest(stack.lobby, "Alice"), await guest(stack.lobby, "Bob")
    lounge, bob_seat = await lounge_with_a_hand(stack, alice, bob, private=False)
    table_id = lounge.lounge_id
    hand = await live_hand(stack, table_id, bob_seat.seat, bob_seat.seat_token)
    assert await spectator_reads(stack, table_id, ()) == OK
    history = await stack.history.GetHandHistory(
        hpb.HistoryServiceGetHandHistoryRequest(hand_id=hand, table_id=table_id)
    )
    assert history.reader == hpb.HAND_READER_SPECTATOR and history.events
    # A grant is given for a public lounge too (to anyone signed in), though none is needed.
    grant = await stack.lobby.WatchLounge(
        pb.WatchLoungeRequest(lounge_id=table_id), metadata=auth(bob)
    )
    assert await spectator_reads(stack, table_id, bearer(grant.watch_grant)) == OK


async def test_a_seat_token_no_longer_reads_a_private_table_once_its_seat_is_left(
    stack: Stack,
) -> None:
    """A seat token is a private table's key only while its holder sits there: after the
    leave, every spectator read with it (the stream included) is PERMISSION_DENIED
    ``NOT_OCCUPANT``, a clear reason; a watch grant from the lobby still reads."""
    alice, bob = await guest(stack.lobby, "Alice"), await guest(stack.lobby, "Bob")
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=3, small_blind=5, big_blind=10)
    create = pb.CreateLoungeRequest(name="Back room", config=config, private=True, request_id=rid())
    lounge = (await stack.lobby.CreateLounge(create, metadata=auth(alice))).lounge
    join = pb.JoinLoungeRequest(
        lounge_id=lounge.lounge_id,
        seat=1,
        buy_in=500,
        invite_code=lounge.invite_code,
        request_id=rid(),
    )
    seat = await stack.lobby.JoinLounge(join, metadata=auth(bob))
    token = bearer(seat.seat_token)
    no_hand_yet = (grpc.StatusCode.NOT_FOUND, "")  # GetHandHistory: no hand was dealt
    seated = await spectator_reads(stack, lounge.lounge_id, token)
    assert seated == [*OK[:3], no_hand_yet]  # seated: it reads
    leave = pb.LeaveLoungeRequest(lounge_id=lounge.lounge_id, request_id=rid())
    left = await stack.lobby.LeaveLounge(leave, metadata=auth(bob))
    assert left.state == pb.LEAVE_STATE_LEFT  # alone at the table: no hand, gone at once
    assert (
        await spectator_reads(stack, lounge.lounge_id, token)
        == [(grpc.StatusCode.PERMISSION_DENIED, "NOT_OCCUPANT")] * 4
    )
    grant = await stack.lobby.WatchLounge(
        pb.WatchLoungeRequest(lounge_id=lounge.lounge_id, invite_code=lounge.invite_code),
        metadata=auth(bob),
    )
    assert await spectator_reads(stack, lounge.lounge_id, bearer(grant.watch_grant)) == seated
