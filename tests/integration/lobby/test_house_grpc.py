"""The house account end to end over gRPC on loopback: the lobby on PostgreSQL, a real table
service on Redis and a real AI worker. A guest plays hands against an AI lounge, leaves, the
lounge closes, and the documented audit query holds with the AI's winnings or losses in the
house's result; ``felt audit`` prints it. A lounge the table service refuses ends FAILED."""

from __future__ import annotations

import asyncio
import hashlib
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import asyncpg
import grpc
import pytest
from argon2 import PasswordHasher

from felt.storage.idempotency import ClientRequest
from poker.events.v1 import events_pb2 as epb
from poker.v1 import lobby_pb2 as lpb
from poker.v1 import lobby_service_pb2 as pb
from poker.v1 import lobby_service_pb2_grpc as rpc
from poker.v1 import table_pb2 as tpb_table
from poker.v1 import table_service_pb2 as tpb
from poker.v1 import table_service_pb2_grpc as trpc
from services import cli
from services.ai_worker.config import WorkerConfig
from services.ai_worker.worker import AiWorker
from services.lobby.busted import busted_leave_request_id
from services.lobby.postgres import PgLedger
from services.lobby.server import LobbyServerConfig, RunningLobbyServer, start_lobby_server
from services.lobby.tokens import Passwords
from services.table.auth import Secrets
from services.table.server import RunningTableServer, TableServerConfig, start_table_server

from .conftest import empty_pool
from .test_join_lounge_grpc import balance, guest
from .test_lobby_grpc import SECRETS, auth, refused, rid

ADMIN = "house-tests-table-admin-credential-0123456789"
AI_TOKEN = "house-tests-ai-token-credential-0123456789"
WAIT_S = 90.0  # generous: the machine is shared


@dataclass
class Stack:
    table: RunningTableServer
    worker: AiWorker
    lobby: RunningLobbyServer
    stub: rpc.LobbyServiceAsyncStub
    tables: trpc.TableServiceAsyncStub
    dsn: str


@pytest.fixture
async def stack(lobby_dsn: str, redis: Any, redis_url: str) -> AsyncIterator[Stack]:
    pool = await empty_pool(lobby_dsn)
    await pool.close()
    stream = f"house-tests-ai-{uuid.uuid4().hex[:8]}"
    table = await start_table_server(
        TableServerConfig(
            redis_url=redis_url,
            address="127.0.0.1:0",
            secrets=Secrets(b"house-tests-table-secret-0123456789", ADMIN, AI_TOKEN),
            ai_stream=stream,
            between_hands_ms=100,  # hands follow each other quickly: busts come sooner
        )
    )
    target = f"127.0.0.1:{table.port}"
    worker = AiWorker(
        WorkerConfig(
            redis_url=redis_url,
            table_target=target,
            ai_token=AI_TOKEN,
            concurrency=2,
            claim_idle_ms=500,
            metrics_port=None,
            stream=stream,
            group=f"{stream}-group",
            trim_interval_s=0,
        )
    )
    await worker.start()
    lobby = await start_lobby_server(
        LobbyServerConfig(
            database_url=lobby_dsn,
            address="127.0.0.1:0",
            secrets=SECRETS,
            passwords=Passwords(PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)),
            grace_s=0.5,
            table_address=target,
            table_admin_token=ADMIN,
            recover_every_s=3_600,  # the test runs the recovery passes itself
        )
    )
    lobby_channel = grpc.aio.insecure_channel(f"127.0.0.1:{lobby.port}")
    table_channel = grpc.aio.insecure_channel(target)
    try:
        yield Stack(
            table,
            worker,
            lobby,
            rpc.LobbyServiceStub(lobby_channel),
            trpc.TableServiceStub(table_channel),
            lobby_dsn,
        )
    finally:
        await lobby_channel.close()
        await table_channel.close()
        await lobby.stop()
        await worker.stop()
        await table.stop()


async def audit_of(dsn: str) -> Any:
    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=2)
    try:
        return await PgLedger(pool).audit()
    finally:
        await pool.close()


async def play(stack: Stack, lid: str, seat: int, token: str, hands: int) -> None:
    """Play ``seat`` all-in whenever it is to act (else check or call), until ``hands`` hands
    were dealt and the last ended, or a seat has no chips left between hands."""
    me = (("authorization", f"Bearer {token}"),)
    seen: set[str] = set()
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        view = (
            await stack.tables.GetTableView(tpb.GetTableViewRequest(table_id=lid), metadata=me)
        ).view
        hand = view.hand
        if hand.hand_id:
            seen.add(hand.hand_id)
        over = not hand.hand_id or hand.street == epb.STREET_COMPLETE
        broke = any(s.player_id and s.stack == 0 for s in view.table.seats)
        if over and (len(seen) >= hands or (seen and broke)):
            return
        if hand.HasField("to_act") and hand.to_act == seat and not over:
            for action in (
                tpb_table.Action(all_in=tpb_table.Action.AllIn()),
                tpb_table.Action(call=tpb_table.Action.Call()),
                tpb_table.Action(check=tpb_table.Action.Check()),
            ):
                try:
                    await stack.tables.SubmitAction(
                        tpb.SubmitActionRequest(
                            table_id=lid, seat=seat, request_id=rid(), action=action
                        ),
                        metadata=me,
                    )
                    break
                except grpc.aio.AioRpcError:
                    continue
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out after {WAIT_S} s playing {hands} hands at {lid}")


async def leave_and_close(stack: Stack, owner: Any, lid: str) -> None:
    """The owner leaves its seat and closes the lounge; the recovery passes run until it is
    CLOSED (the hand in play ends, then every seat home)."""
    stub = stack.stub
    leave = pb.LeaveLoungeRequest(lounge_id=lid, request_id=rid())
    await stub.LeaveLounge(leave, metadata=auth(owner))
    close = pb.CloseLoungeRequest(lounge_id=lid, request_id=rid())
    state = (await stub.CloseLounge(close, metadata=auth(owner))).lounge.state
    deadline = time.monotonic() + WAIT_S
    while state != lpb.LOUNGE_STATE_CLOSED:
        assert time.monotonic() < deadline, "the lounge did not close"
        await asyncio.sleep(0.1)
        await stack.lobby.seating.recover_leaves()
        await stack.lobby.closing.recover()
        got = await stub.GetLounge(pb.GetLoungeRequest(lounge_id=lid), metadata=auth(owner))
        state = got.lounge.state


async def test_a_guest_plays_an_ai_lounge_and_the_house_accounts_for_it(
    stack: Stack, capsys: pytest.CaptureFixture[str]
) -> None:
    stub = stack.stub
    alice = await guest(stub, "Alice")
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=2, small_blind=5, big_blind=10)
    create = pb.CreateLoungeRequest(
        name="Against the house",
        config=config,
        min_buy_in=200,
        max_buy_in=10**12,  # the creator's top of range does not become the AI's stack
        ai_seats=[lpb.AiSeat(seat=1, level=epb.AI_LEVEL_EASY)],
        request_id=rid(),
    )
    lounge = (await stub.CreateLounge(create, metadata=auth(alice))).lounge
    lid = lounge.lounge_id
    assert lounge.state == lpb.LOUNGE_STATE_OPEN
    assert [(s.seat, s.stack) for s in lounge.seats] == [(1, 1_000)]  # 100 big blinds
    table = (await stack.tables.GetTable(tpb.GetTableRequest(table_id=lid))).table
    assert [s.stack for s in table.seats if s.player_id] == [1_000]
    opened = await audit_of(stack.dsn)
    assert opened.holds and (opened.house, opened.on_tables) == (-1_000, 1_000)

    join = pb.JoinLoungeRequest(lounge_id=lid, seat=0, buy_in=1_000, request_id=rid())
    joined = await stub.JoinLounge(join, metadata=auth(alice))
    assert (await audit_of(stack.dsn)).on_tables == 2_000
    await play(stack, lid, 0, joined.seat_token, hands=3)

    await leave_and_close(stack, alice, lid)

    won = await balance(stub, alice) - 10_000  # what Alice won (or lost) from the house
    audit = await audit_of(stack.dsn)
    assert audit.holds, audit
    assert (audit.on_tables, audit.balances, audit.created) == (0, 10_000 + won, 10_000)
    assert audit.house == -won  # the AI's result is the house's
    table = (await stack.tables.GetTable(tpb.GetTableRequest(table_id=lid))).table
    assert not any(s.player_id for s in table.seats)

    command = ["audit", "--database-url", stack.dsn, "--top", "5"]
    assert await asyncio.to_thread(cli.main, command) == 0  # `felt audit`: its own loop
    out = capsys.readouterr().out
    assert "created == balances + at tables + house: holds" in out
    assert f"house's result   {-won:+,}" in out
    assert f"{'house':<16} {-won:>20,}" in out
    winners = out.split("top winners from the house (ever)")[1]
    if won > 0:
        assert f"{won:>+16,}" in winners and "Alice" in winners
    else:
        assert "none" in winners


async def test_a_busted_ai_seat_is_refilled_by_the_house_and_play_goes_on(stack: Stack) -> None:
    """RULES.md: a busted AI seat adds chips from the house between hands. The AI workers are
    down, so the AI's clock runs out at each of its turns and it folds (or checks); Alice
    moves all in whenever she acts (adding chips if she busts first), until the AI is broke:
    then the table deals no hand (nobody to play her). The lobby's refill pass funds the AI's
    stack from the house and adds it at the table, once; hands go on; the audit holds
    throughout, and the close brings the house's chips home."""
    await stack.worker.stop()
    stub = stack.stub
    alice = await guest(stub, "Alice")
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=2, small_blind=5, big_blind=10)
    config.action_clock.FromMilliseconds(100)
    config.max_consecutive_timeouts = 0  # the AI seat is never sat out for its timeouts
    create = pb.CreateLoungeRequest(
        name="Refilled",
        config=config,
        min_buy_in=200,
        max_buy_in=200,  # 20 big blinds: the AI's stack too
        ai_seats=[lpb.AiSeat(seat=1, level=epb.AI_LEVEL_EASY)],
        request_id=rid(),
    )
    lid = (await stub.CreateLounge(create, metadata=auth(alice))).lounge.lounge_id
    join = pb.JoinLoungeRequest(lounge_id=lid, seat=0, buy_in=200, request_id=rid())
    joined = await stub.JoinLounge(join, metadata=auth(alice))
    busted_seats = stack.lobby.busted
    assert busted_seats is not None
    deadline = time.monotonic() + 2 * WAIT_S
    while True:
        assert time.monotonic() < deadline, "the AI did not bust"
        await play(stack, lid, 0, joined.seat_token, hands=10_000)  # until a seat is broke
        table = (await stack.tables.GetTable(tpb.GetTableRequest(table_id=lid))).table
        stacks = {s.seat: s.stack for s in table.seats if s.player_id}
        if stacks[1] == 0:
            break
        # Alice lost an all-in of the AI's last chips (posted as a blind): she adds chips.
        add = pb.AddSeatChipsRequest(lounge_id=lid, request_id=rid())
        await stub.AddSeatChips(add, metadata=auth(alice))
    busted = await audit_of(stack.dsn)
    assert busted.holds and busted.house == -200, busted
    assert await busted_seats.recover() == 1
    assert await busted_seats.recover() == 0  # the seat holds chips again: once
    table = (await stack.tables.GetTable(tpb.GetTableRequest(table_id=lid))).table
    assert next(s.stack for s in table.seats if s.seat == 1) == 200
    refilled = await audit_of(stack.dsn)
    assert refilled.holds and refilled.house == -400, refilled
    played = table.hands_played
    while table.hands_played <= played:  # the table deals again: play goes on
        assert time.monotonic() < deadline, "no hand after the refill"
        await asyncio.sleep(0.05)
        table = (await stack.tables.GetTable(tpb.GetTableRequest(table_id=lid))).table

    await leave_and_close(stack, alice, lid)
    won = await balance(stub, alice) - 10_000
    audit = await audit_of(stack.dsn)
    assert audit.holds and audit.on_tables == 0, audit
    assert audit.house == -won  # both of the AI's stacks, net, are the house's result


async def test_a_lounge_the_table_service_refuses_fails_and_frees_its_slot(
    stack: Stack,
) -> None:
    """The table service refuses a table whose id it has already (made beforehand here with
    another config): the lounge is FAILED, the house whole, and the owner may create more."""
    stub = stack.stub
    alice = await guest(stub, "Alice")
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=3, small_blind=5, big_blind=10)
    first = pb.CreateLoungeRequest(name="First", config=config, request_id=rid())
    owner = (await stub.CreateLounge(first, metadata=auth(alice))).lounge.owner_id
    create = pb.CreateLoungeRequest(
        name="Refused",
        config=config,
        ai_seats=[lpb.AiSeat(level=epb.AI_LEVEL_NORMAL)],
        request_id=rid(),
    )
    # the lounge's id, as the lobby derives it from Alice's request; a table squats on it
    key = ClientRequest.of(create).key(f"lounge/{owner}").key
    lid = "l-" + hashlib.sha256(key.encode()).hexdigest()[:20]
    other = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=2, small_blind=5, big_blind=10)
    squatter = tpb.CreateTableRequest(table_id=lid, config=other, request_id="squat")
    admin = (("authorization", f"Bearer {ADMIN}"),)
    await stack.tables.CreateTable(squatter, metadata=admin)
    code, reason = await refused(stub.CreateLounge(create, metadata=auth(alice)))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "TABLE_REFUSED")
    got = await stub.GetLounge(pb.GetLoungeRequest(lounge_id=lid), metadata=auth(alice))
    assert got.lounge.state == lpb.LOUNGE_STATE_FAILED and not got.lounge.seats
    assert await stub.CreateLounge(create, metadata=auth(alice)) == pb.CreateLoungeResponse(
        lounge=got.lounge
    )  # a retry finds it failed and moves nothing
    audit = await audit_of(stack.dsn)
    assert audit.holds and (audit.house, audit.on_tables) == (0, 0)
    squatted = (await stack.tables.GetTable(tpb.GetTableRequest(table_id=lid))).table
    assert squatted.state != tpb_table.TABLE_STATE_CLOSED  # not the lobby's: left alone
    assert squatted.config.seat_count == 2
    for _ in range(2):  # 3 lounges per owner by default: the failed one is not counted
        more = pb.CreateLoungeRequest(name="More", config=config, request_id=rid())
        made = await stub.CreateLounge(more, metadata=auth(alice))
        assert made.lounge.state == lpb.LOUNGE_STATE_OPEN
    over = pb.CreateLoungeRequest(name="Over", config=config, request_id=rid())
    assert await refused(stub.CreateLounge(over, metadata=auth(alice))) == (
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "TOO_MANY_LOUNGES",
    )


async def test_a_busted_person_is_freed_after_the_lounges_grace(stack: Stack) -> None:
    """RULES.md: a player left with no chips after a hand is not dealt in until chips are
    added; after the lounge's grace the seat is freed and the player leaves the table. Two
    guests shove into each other until one is broke; the table records the hand that left the
    seat at 0 (``Seat.busted_hand``); the lobby's busted seats' pass frees it only once the
    grace has passed since it first saw that bust (its clock moved on here), with the table's
    conditional leave; the buy-in is closed with 0 chips, the seat is free, and the audit
    holds; a second pass does nothing."""
    await stack.worker.stop()
    stub = stack.stub
    alice, bob = await guest(stub, "Alice"), await guest(stub, "Bob")
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=2, small_blind=5, big_blind=10)
    create = pb.CreateLoungeRequest(
        name="Grace",
        config=config,
        min_buy_in=200,
        max_buy_in=200,
        request_id=rid(),
        busted_grace_s=60,
    )
    lounge = (await stub.CreateLounge(create, metadata=auth(alice))).lounge
    lid = lounge.lounge_id
    assert lounge.busted_grace_s == 60
    tokens = {}
    for seat, who in ((0, alice), (1, bob)):
        join = pb.JoinLoungeRequest(lounge_id=lid, seat=seat, buy_in=200, request_id=rid())
        tokens[seat] = (await stub.JoinLounge(join, metadata=auth(who))).seat_token
    await asyncio.gather(*(play(stack, lid, s, tokens[s], hands=10_000) for s in (0, 1)))
    view = (
        await stack.tables.GetTableView(
            tpb.GetTableViewRequest(table_id=lid), metadata=(("authorization", f"Bearer {ADMIN}"),)
        )
    ).view
    (loser,) = [s for s in view.table.seats if s.player_id and s.stack == 0]
    assert loser.busted_hand == view.table.hands_played > 0
    assert all(s.busted_hand == 0 for s in view.table.seats if s.stack)
    quitter = alice if loser.seat == 0 else bob
    service = (("authorization", f"Bearer {ADMIN}"), ("x-felt-seat-token", tokens[loser.seat]))
    stale = tpb.LeaveSeatRequest(
        table_id=lid, seat=loser.seat, request_id=rid(), busted_hand=loser.busted_hand + 1
    )  # another bust than the table's: refused, nothing changes
    assert await refused(stack.tables.LeaveSeat(stale, metadata=service)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_BUSTED",
    )
    busted = stack.lobby.busted
    assert busted is not None
    lobby = busted.refills.lobby
    real = lobby.clock
    start = real()
    try:
        lobby.clock = lambda: start
        assert await busted.recover() == 0  # seen busted: the grace starts
        lobby.clock = lambda: start + timedelta(seconds=59)
        assert await busted.recover() == 0  # not yet
        table = (await stack.tables.GetTable(tpb.GetTableRequest(table_id=lid))).table
        assert any(s.seat == loser.seat and s.player_id for s in table.seats)
        lobby.clock = lambda: start + timedelta(seconds=61)
        before = (await stack.tables.GetTable(tpb.GetTableRequest(table_id=lid))).table.sequence
        assert await busted.recover() == 1
        assert await busted.recover() == 0  # done once
    finally:
        lobby.clock = real
    table = (await stack.tables.GetTable(tpb.GetTableRequest(table_id=lid))).table
    assert not any(s.seat == loser.seat and s.player_id for s in table.seats)
    assert table.sequence == before + 1  # one event: the seat's PlayerLeft
    # The same conditional leave again (a lost answer's retry) gets the table's first answer.
    pool = await asyncpg.create_pool(stack.dsn, min_size=1, max_size=1)
    try:
        saga_id = await pool.fetchval(
            "SELECT saga_id FROM busted_seats JOIN buy_ins USING (saga_id) WHERE lounge_id = $1",
            lid,
        )
    finally:
        await pool.close()
    again = tpb.LeaveSeatRequest(
        table_id=lid,
        seat=loser.seat,
        request_id=busted_leave_request_id(saga_id, loser.busted_hand),
        busted_hand=loser.busted_hand,
    )
    answer = await stack.tables.LeaveSeat(again, metadata=service)
    assert (answer.stack, answer.sequence) == (0, before + 1)
    got = await stub.GetLounge(pb.GetLoungeRequest(lounge_id=lid), metadata=auth(alice))
    assert [s.seat for s in got.lounge.seats] == [1 - loser.seat]
    leave = pb.LeaveLoungeRequest(lounge_id=lid, request_id=rid())
    assert await refused(stub.LeaveLounge(leave, metadata=auth(quitter))) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_SEATED",
    )
    audit = await audit_of(stack.dsn)
    assert audit.holds and audit.on_tables == 400, audit  # both buy-ins: the winner's stack
    assert await balance(stub, quitter) == 10_000 - 200  # nothing came back: nothing was left
