"""The whole stack as processes, driven through the gRPC API alone (issue #11, "done when").

``felt table-service``, ``felt ai-worker``, ``felt db migrate`` and ``felt lobby`` (all in
production mode, with real secrets and the service credential) on the test Redis DB and a
throw-away PostgreSQL database. A player registers, creates a Hold'em lounge and a Draw
lounge with AI seats, buys in at both, and plays hands: it acts through the table API with
the seat tokens the lobby gave it, the AI seats through the workers. It leaves the Hold'em
lounge with exactly the stack the table's ``PlayerLeft`` shows, and closes the Draw lounge,
whose seat comes home as a "table closed" entry. After every step the chips are conserved:
the balance plus the chips it holds at tables equals the chips it was granted.

The second test kills the lobby with SIGKILL in the middle of a buy-in and of a leave (the
table service is stopped with SIGSTOP so that the saga's table call hangs), restarts it,
and checks that the recovery pass and the client's retry finish each saga once.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import asyncpg
import grpc
import pytest
import redis.asyncio as redis_async_lib

from poker.events.v1 import events_pb2 as epb
from poker.v1 import lobby_pb2 as lpb
from poker.v1 import lobby_service_pb2 as lb
from poker.v1 import lobby_service_pb2_grpc as lrpc
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from tests.e2e.test_serve import REPO, Launcher, Proc
from tests.e2e.test_serve import launcher as launcher  # the fixture
from tests.integration.lobby.conftest import fresh_database as fresh_database  # the fixture

WAIT = 60.0  # generous: a loaded 2-core machine
HANDS = 3
SERVICE_TOKEN = "e2e-lobby-service-credential-0123456789"
TABLE_ENV = {
    "FELT_TOKEN_SECRET": "e2e-lobby-token-secret-0123456789abcdef",
    "FELT_ADMIN_TOKEN": SERVICE_TOKEN,
    "FELT_AI_TOKEN": "e2e-lobby-ai-token-credential-0123456789",
    "FELT_TABLE_ADDR": "127.0.0.1:0",
    "FELT_LEASE_TTL_MS": "2000",
}
LOBBY_ENV = {
    "FELT_LOBBY_ACCESS_SECRET": "e2e-lobby-access-secret-0123456789abcdef",
    "FELT_LOBBY_REFRESH_SECRET": "e2e-lobby-refresh-secret-0123456789abcdef",
    "FELT_ADMIN_TOKEN": SERVICE_TOKEN,
    "FELT_LOBBY_ADDR": "127.0.0.1:0",
}


def _port(proc: Proc, prefix: str) -> int:
    assert proc.first_line.startswith(prefix), (proc.first_line, proc.log.read_text())
    return int(proc.first_line.rsplit(" ", 1)[1])


@dataclass
class Stack:
    launcher: Launcher
    database_url: str
    table: Proc | None = None
    table_port: int = 0
    lobby: Proc | None = None
    lobby_port: int = 0
    channels: list[grpc.aio.Channel] = field(default_factory=list)

    async def start_tables(self, workers: int = 1) -> None:
        stream = f"e2e-lobby-ai-{uuid.uuid4().hex[:8]}"
        self.table = await self.launcher.start("table-service", FELT_AI_STREAM=stream, **TABLE_ENV)
        self.table_port = _port(self.table, "table service listening on port")
        for _ in range(workers):
            worker = await self.launcher.start(
                "ai-worker",
                FELT_AI_STREAM=stream,
                FELT_TABLE_TARGET=f"127.0.0.1:{self.table_port}",
                FELT_AI_TOKEN=TABLE_ENV["FELT_AI_TOKEN"],
                FELT_AI_METRICS_PORT="0",
            )
            assert worker.first_line.startswith("ai worker"), worker.log.read_text()

    async def migrate(self) -> None:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "services.cli",
            "db",
            "migrate",
            "--database-url",
            self.database_url,
            cwd=REPO,
            env=self.launcher.env(),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        out, _ = await process.communicate()
        assert process.returncode == 0, out.decode()

    async def start_lobby(self) -> None:
        """``felt lobby`` exactly as an operator starts it (see docs/operations.md)."""
        self.lobby = await self.launcher.start(
            "lobby",
            DATABASE_URL=self.database_url,
            FELT_TABLE_ADDR=f"127.0.0.1:{self.table_port}",
            **LOBBY_ENV,
        )
        self.lobby_port = _port(self.lobby, "lobby listening on port")

    def _channel(self, port: int) -> grpc.aio.Channel:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        self.channels.append(channel)
        return channel

    def lobby_stub(self) -> lrpc.LobbyServiceAsyncStub:
        stub: lrpc.LobbyServiceAsyncStub = lrpc.LobbyServiceStub(self._channel(self.lobby_port))
        return stub

    def table_stub(self) -> rpc.TableServiceAsyncStub:
        stub: rpc.TableServiceAsyncStub = rpc.TableServiceStub(self._channel(self.table_port))
        return stub

    async def close(self) -> None:
        for channel in self.channels:
            await channel.close()


@pytest.fixture
async def stack(
    launcher: Launcher, fresh_database: str, redis: redis_async_lib.Redis
) -> AsyncIterator[Stack]:
    running = Stack(launcher, fresh_database)
    try:
        yield running
    finally:
        if running.table is not None and running.table.process.returncode is None:
            running.table.process.send_signal(signal.SIGCONT)
        await running.close()


@dataclass
class Player:
    """A player as a front end sees it: its access token and the seat tokens it was given."""

    lobby: lrpc.LobbyServiceAsyncStub
    tables: rpc.TableServiceAsyncStub
    access: str
    held: dict[str, int] = field(default_factory=dict)  # lounge: the buy-in at its table

    @property
    def md(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.access}"),)

    async def balance(self) -> int:
        return (await self.lobby.GetBalance(lb.GetBalanceRequest(), metadata=self.md)).balance

    async def ledger(self) -> list[lpb.LedgerEntry]:
        entries: list[lpb.LedgerEntry] = []
        token = ""
        while True:
            page = await self.lobby.ListLedgerEntries(
                lb.ListLedgerEntriesRequest(page_size=100, page_token=token), metadata=self.md
            )
            entries.extend(page.entries)
            token = page.next_page_token
            if not token:
                return entries

    async def conserved(self) -> int:
        """Balances + chips on tables == chips granted, as this player can observe it: its
        ledger adds up to its balance, and the chips off the balance are the buy-ins still at
        tables. Returns the balance."""
        balance = await self.balance()
        entries = await self.ledger()
        granted = sum(
            e.amount
            for e in entries
            if e.kind in (lpb.LEDGER_ENTRY_KIND_GRANT, lpb.LEDGER_ENTRY_KIND_TOP_UP)
        )
        assert sum(e.amount for e in entries) == balance
        returned: Counter[str] = Counter()
        bought: Counter[str] = Counter()
        for e in entries:
            if e.kind in (lpb.LEDGER_ENTRY_KIND_CASH_OUT, lpb.LEDGER_ENTRY_KIND_TABLE_CLOSED):
                returned[e.table_id] += e.amount
            elif e.kind == lpb.LEDGER_ENTRY_KIND_BUY_IN:
                bought[e.table_id] -= e.amount
        # A seat that left with nothing (it lost its stack) comes home as no ledger entry at
        # all, so the tables left are the ones this player no longer holds, not the ones
        # with a cash-out.
        at_tables = sum(v for k, v in bought.items() if k in self.held)
        assert at_tables == sum(self.held.values())  # the buy-ins at tables it still sits at
        # What it was granted is its balance, plus what it holds at tables, less what it won
        # (or plus what it lost) at the tables it has left.
        won = sum(returned[k] - bought[k] for k in bought if k not in self.held)
        assert balance + at_tables == granted + won
        return balance


def _seat_md(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def _play(
    tables: rpc.TableServiceAsyncStub, table_id: str, seat: int, token: str, hands: int
) -> None:
    """Act for the seat (call or check, a raise now and then) until ``hands`` hands were
    played at the table; the AI seats act through the workers."""
    deadline = time.monotonic() + WAIT * 3
    step = 0
    while True:
        assert time.monotonic() < deadline, f"{table_id}: {hands} hands not played in time"
        mine = (
            await tables.GetTableView(
                pb.GetTableViewRequest(table_id=table_id, seat=seat), metadata=_seat_md(token)
            )
        ).view
        if mine.table.hands_played >= hands and not mine.hand.HasField("to_act"):
            return
        if not mine.hand.HasField("to_act") or mine.hand.to_act != seat:
            await asyncio.sleep(0.05)
            continue
        legal = {a.type: a for a in mine.hand.legal_actions}
        step += 1
        if tpb.ACTION_TYPE_DISCARD in legal:
            action = tpb.Action(discard=tpb.Action.Discard())  # stand pat
        elif step % 4 == 0 and tpb.ACTION_TYPE_RAISE in legal:
            action = tpb.Action(
                raise_to=tpb.Action.RaiseTo(amount=legal[tpb.ACTION_TYPE_RAISE].min_to)
            )
        elif tpb.ACTION_TYPE_CALL in legal:
            action = tpb.Action(call=tpb.Action.Call())
        else:
            action = tpb.Action(check=tpb.Action.Check())
        try:
            await tables.SubmitAction(
                pb.SubmitActionRequest(
                    table_id=table_id,
                    seat=seat,
                    request_id=uuid.uuid4().hex,
                    expected_sequence=mine.table.sequence,
                    action=action,
                ),
                metadata=_seat_md(token),
            )
        except grpc.aio.AioRpcError as err:  # ABORTED: the table moved on; look again
            assert err.code() == grpc.StatusCode.ABORTED, err.details()


async def _left_stack(tables: rpc.TableServiceAsyncStub, table_id: str, seat: int) -> int:
    """The stack of the seat's last ``PlayerLeft``, read from the table's events (spectator)."""
    watch = tables.WatchTable(pb.WatchTableRequest(table_id=table_id, from_sequence=1))
    found: int | None = None
    head = (await tables.GetTable(pb.GetTableRequest(table_id=table_id))).table.sequence
    try:
        async for item in watch:
            event = item.event
            if event.WhichOneof("event") == "player_left" and event.player_left.seat == seat:
                found = int(event.player_left.stack)
            if event.sequence >= head:
                break
    finally:
        watch.cancel()
    assert found is not None, f"no PlayerLeft for seat {seat} at {table_id}"
    return found


async def _until(check: object, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not await check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


async def test_a_player_signs_up_buys_in_plays_and_leaves_through_the_api(stack: Stack) -> None:
    await stack.start_tables()
    await stack.migrate()
    await stack.start_lobby()
    lobby, tables = stack.lobby_stub(), stack.table_stub()
    signed = await lobby.Register(
        lb.RegisterRequest(display_name="Ada", password="correct horse", request_id="sign-up-1")
    )
    ada = Player(lobby, tables, signed.credentials.access_token)
    start = await ada.conserved()
    assert start > 0  # the starting grant

    holdem = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=3, small_blind=5, big_blind=10)
    draw = epb.TableConfig(
        variant=epb.VARIANT_DRAW5, seat_count=3, ante=1, small_bet=10, big_bet=20
    )
    lounges = {}
    for name, config, levels in (
        ("Hold'em", holdem, (epb.AI_LEVEL_NORMAL, epb.AI_LEVEL_EASY)),
        ("Draw", draw, (epb.AI_LEVEL_HARD,)),
    ):
        created = await lobby.CreateLounge(
            lb.CreateLoungeRequest(
                name=name,
                config=config,
                ai_seats=[lpb.AiSeat(level=level) for level in levels],
                request_id=f"lounge-{name}",
            ),
            metadata=ada.md,
        )
        assert created.lounge.state == lpb.LOUNGE_STATE_OPEN
        assert sum(1 for s in created.lounge.seats if s.ai_level) == len(levels)
        lounges[name] = created.lounge
    await ada.conserved()

    seats = {}
    for name, lounge in lounges.items():
        buy_in = lounge.min_buy_in * 2
        joined = await lobby.JoinLounge(
            lb.JoinLoungeRequest(lounge_id=lounge.lounge_id, buy_in=buy_in, request_id=f"j-{name}"),
            metadata=ada.md,
        )
        assert joined.seat_token and joined.balance == await ada.balance()
        seats[name] = joined
        ada.held[lounge.lounge_id] = buy_in
        assert await ada.conserved() == start - sum(ada.held.values())
    # The seat token is the player's at the table; it cannot leave or top up there.
    token = seats["Hold'em"].seat_token
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await tables.AddChips(
            pb.AddChipsRequest(
                table_id=lounges["Hold'em"].lounge_id,
                seat=seats["Hold'em"].seat,
                amount=10_000,
                request_id="free-chips",
            ),
            metadata=_seat_md(token),
        )
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED

    await asyncio.gather(
        *(
            _play(tables, lounges[n].lounge_id, seats[n].seat, seats[n].seat_token, HANDS)
            for n in lounges
        )
    )
    await ada.conserved()

    # Leave Hold'em: the stack the table's PlayerLeft shows comes back, once.
    hid = lounges["Hold'em"].lounge_id
    before = await ada.balance()
    leave = lb.LeaveLoungeRequest(lounge_id=hid, request_id="leave-holdem")
    left = await lobby.LeaveLounge(leave, metadata=ada.md)

    async def left_done() -> bool:
        nonlocal left
        left = await lobby.LeaveLounge(leave, metadata=ada.md)  # a retry shows where it is
        return left.state == lb.LEAVE_STATE_LEFT

    await _until(left_done, "the Hold'em seat to be vacated")
    stack_left = await _left_stack(tables, hid, seats["Hold'em"].seat)
    assert left.stack == stack_left and left.balance == before + stack_left
    del ada.held[hid]
    await ada.conserved()

    # Close Draw (its owner): its seat comes home as "table closed", when its hand ends.
    did = lounges["Draw"].lounge_id
    before = await ada.balance()
    closing = await lobby.CloseLounge(
        lb.CloseLoungeRequest(lounge_id=did, request_id="close-draw"), metadata=ada.md
    )
    assert closing.lounge.state in (lpb.LOUNGE_STATE_CLOSING, lpb.LOUNGE_STATE_CLOSED)

    async def closed() -> bool:
        got = await lobby.GetLounge(lb.GetLoungeRequest(lounge_id=did), metadata=ada.md)
        return got.lounge.state == lpb.LOUNGE_STATE_CLOSED

    await _until(closed, "the Draw lounge to close")
    draw_stack = await _left_stack(tables, did, seats["Draw"].seat)
    entries = await ada.ledger()
    home = [e for e in entries if e.kind == lpb.LEDGER_ENTRY_KIND_TABLE_CLOSED]
    assert [(e.table_id, e.amount) for e in home] == [(did, draw_stack)]
    assert await ada.balance() == before + draw_stack
    del ada.held[did]
    final = await ada.conserved()
    bought = {n: lounges[n].min_buy_in * 2 for n in lounges}
    assert final == start + (left.stack - bought["Hold'em"]) + (draw_stack - bought["Draw"])
    table = (await tables.GetTable(pb.GetTableRequest(table_id=did))).table
    assert table.state == tpb.TABLE_STATE_CLOSED
    for proc in (stack.lobby, stack.table):
        assert proc is not None and "Traceback" not in proc.log.read_text()


async def test_the_lobby_killed_mid_saga_finishes_it_after_a_restart(stack: Stack) -> None:
    await stack.start_tables(workers=0)
    await stack.migrate()
    await stack.start_lobby()
    lobby = stack.lobby_stub()
    signed = await lobby.Register(
        lb.RegisterRequest(display_name="Bea", password="correct horse", request_id="sign-up-2")
    )
    bea = Player(lobby, stack.table_stub(), signed.credentials.access_token)
    start = await bea.conserved()
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=2, small_blind=5, big_blind=10)
    lounge = (
        await lobby.CreateLounge(
            lb.CreateLoungeRequest(name="Kill", config=config, request_id="lounge-kill"),
            metadata=bea.md,
        )
    ).lounge
    assert stack.table is not None and stack.lobby is not None
    join = lb.JoinLoungeRequest(lounge_id=lounge.lounge_id, buy_in=500, request_id="join-kill")

    async def kill_mid_saga(call: asyncio.Task[object], reserved: int) -> None:
        """Hang the saga's table call (SIGSTOP the table service), wait until the lobby has
        recorded its first step, SIGKILL the lobby, then let the table service go on."""
        assert stack.table is not None and stack.lobby is not None

        async def recorded() -> bool:
            return await bea.balance() == reserved

        await _until(recorded, "the saga's first step")
        stack.lobby.process.send_signal(signal.SIGKILL)
        assert await stack.lobby.process.wait() == -signal.SIGKILL
        with pytest.raises(grpc.aio.AioRpcError):
            await call
        stack.table.process.send_signal(signal.SIGCONT)

    stack.table.process.send_signal(signal.SIGSTOP)

    async def joining_call() -> object:
        return await lobby.JoinLounge(join, metadata=bea.md)

    await kill_mid_saga(asyncio.create_task(joining_call()), start - 500)
    await stack.start_lobby()  # its recovery pass finishes the buy-in
    lobby = bea.lobby = stack.lobby_stub()
    bea.held[lounge.lounge_id] = 500
    assert await bea.conserved() == start - 500
    joined = await lobby.JoinLounge(join, metadata=bea.md)  # the retry: the same seat
    assert joined.seat_token and joined.balance == start - 500
    assert await bea.conserved() == start - 500

    leave = lb.LeaveLoungeRequest(lounge_id=lounge.lounge_id, request_id="leave-kill")
    stack.table.process.send_signal(signal.SIGSTOP)

    async def leaving_call() -> object:
        return await lobby.LeaveLounge(leave, metadata=bea.md)

    leaving = asyncio.create_task(leaving_call())

    async def recorded() -> bool:  # the leave's first step, as the lobby's database holds it
        conn = await asyncpg.connect(stack.database_url)
        try:
            state = await conn.fetchval("SELECT state FROM buy_ins WHERE state = 'leaving'")
        finally:
            await conn.close()
        return bool(state)

    await _until(recorded, "the leave's first step")
    stack.lobby.process.send_signal(signal.SIGKILL)
    assert await stack.lobby.process.wait() == -signal.SIGKILL
    with pytest.raises(grpc.aio.AioRpcError):
        await leaving
    stack.table.process.send_signal(signal.SIGCONT)
    await stack.start_lobby()
    lobby = bea.lobby = stack.lobby_stub()
    # (the start's recovery pass may have finished the leave already: the retry shows it)
    left = await lobby.LeaveLounge(leave, metadata=bea.md)

    async def done() -> bool:
        nonlocal left
        left = await lobby.LeaveLounge(leave, metadata=bea.md)
        return left.state == lb.LEAVE_STATE_LEFT

    await _until(done, "the leave to finish")
    assert (left.stack, left.balance) == (500, start)  # alone at the table: no hand was dealt
    bea.held.clear()
    assert await bea.conserved() == start
    ledger = await bea.ledger()
    assert [e.kind for e in ledger].count(lpb.LEDGER_ENTRY_KIND_BUY_IN) == 1
    assert [e.kind for e in ledger].count(lpb.LEDGER_ENTRY_KIND_CASH_OUT) == 1
