"""Redis restarted under a running system (issue 24, item 3): the services reconnect by themselves.

A redis-server of the test's own (``tests/e2e/own_redis.py``: ``appendonly yes``,
``appendfsync always``, a temp dir) serves a table service, an AI worker and a projector,
each a real process. A person (this test, over gRPC) plays seat 0 against two AI seats.
Redis is stopped with SIGTERM and started again on the same port and directory, later
killed with SIGKILL and started again; the services are never restarted. After each
restart play goes on (the AI seats act again, hands end, the projector archives them), and
at the end every action the person was answered OK for is in the stream exactly once, the
stream has no gap, and no chip was created or lost.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import grpc
import pytest
import redis.asyncio as redis_async_lib

from felt.storage.eventstore import events_key
from felt.storage.idempotency import client_key, seat_principal
from felt.wire.tokens import token_hash
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from tests.e2e.own_redis import OwnRedis, free_port
from tests.e2e.test_projector_kill import archive_database
from tests.e2e.test_serve import Launcher, Proc

pytestmark = pytest.mark.timeout(300)

ADMIN_TOKEN = "e2e-admin-credential-0123456789abcdef"
AI_TOKEN = "e2e-ai-credential-0123456789abcdef0123"
ADMIN = (("authorization", f"Bearer {ADMIN_TOKEN}"),)
SECRETS = {
    "FELT_ADMIN_TOKEN": ADMIN_TOKEN,
    "FELT_AI_TOKEN": AI_TOKEN,
    "FELT_TOKEN_SECRET": "e2e-secret-0123456789abcdef0123456789",
}
STACK = 100_000  # deep: no seat busts (a table with one stack left deals no more)
SEATS = 3
PLAY_WAIT_S = 60.0
SEAT_ACTIONS = ("player_folded", "player_checked", "player_called", "bet_placed", "cards_drawn")
RETRIED = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


@dataclass
class System:
    """The table service, an AI worker and a projector on one (own) Redis."""

    redis: OwnRedis
    launcher: Launcher
    table_port: int
    procs: list[Proc] = field(default_factory=list)

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.table_port}"

    async def start(self, archive_dsn: str) -> None:
        table = await self.launcher.start(
            "table-service",
            FELT_TABLE_ADDR=self.target,
            FELT_LEASE_TTL_MS="2000",
            **SECRETS,
        )
        assert table.first_line.startswith("table service listening"), table.log.read_text()
        worker = await self.launcher.start(
            "ai-worker",
            "--metrics-port",
            "off",
            FELT_TABLE_TARGET=self.target,
            FELT_AI_TOKEN=AI_TOKEN,
            FELT_AI_CLAIM_IDLE_MS="2000",
        )
        assert worker.first_line.startswith("ai worker"), worker.log.read_text()
        projector = await self.launcher.start(
            "projector",
            "--metrics-port",
            "off",
            DATABASE_URL=archive_dsn,
            FELT_PROJECTOR_ID="p-restarts",
            FELT_PROJECTOR_SCAN_MS="200",
            FELT_PROJECTOR_LEASE_MS="2000",
        )
        assert projector.first_line.startswith("projector "), projector.log.read_text()
        self.procs = [table, worker, projector]

    def assert_alive(self) -> None:
        for proc in self.procs:
            assert proc.process.returncode is None, proc.log.read_text()[-4000:]


@dataclass
class Person:
    """Seat 0, played by the test: remembers the request key of every action answered OK."""

    stub: rpc.TableServiceAsyncStub
    table_id: str
    token: str
    acknowledged: list[str] = field(default_factory=list)
    refused: int = 0
    retries: int = 0

    @property
    def md(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),)

    async def view(self) -> tpb.TableView | None:
        try:
            request = pb.GetTableViewRequest(table_id=self.table_id, seat=0)
            return (await self.stub.GetTableView(request, metadata=self.md, timeout=5)).view
        except grpc.aio.AioRpcError as err:
            if err.code() in RETRIED:
                return None
            raise

    async def act(self, view: tpb.TableView) -> None:
        legal = {a.type for a in view.hand.legal_actions}
        action = (
            tpb.Action(check=tpb.Action.Check())
            if tpb.ACTION_TYPE_CHECK in legal
            else tpb.Action(call=tpb.Action.Call())
        )
        request = pb.SubmitActionRequest(
            table_id=self.table_id,
            seat=0,
            request_id=uuid.uuid4().hex,
            expected_sequence=view.table.sequence,
            action=action,
        )
        deadline = time.monotonic() + PLAY_WAIT_S
        while True:  # the same request id until it is answered: never two actions
            try:
                await self.stub.SubmitAction(request, metadata=self.md, timeout=5)
            except grpc.aio.AioRpcError as err:
                if err.code() in RETRIED and time.monotonic() < deadline:
                    self.retries += 1
                    await asyncio.sleep(0.1)
                    continue
                self.refused += 1  # a stale sequence (a timer moved first): not acknowledged
                return
            principal = seat_principal(0, token_hash(self.token))
            self.acknowledged.append(client_key(principal, request).key)
            return

    async def play_until_my_turn(self) -> None:
        """Wait (the AI seats playing) until seat 0 is to act."""
        deadline = time.monotonic() + PLAY_WAIT_S
        while True:
            view = await self.view()
            if view is not None and _my_turn(view):
                return
            assert time.monotonic() < deadline, f"seat 0 never got to act: {view}"
            await asyncio.sleep(0.05)

    async def play_until(self, hands: int) -> tpb.TableView:
        """Act whenever seat 0 is to act until ``hands`` hands have ended."""
        deadline = time.monotonic() + PLAY_WAIT_S
        while True:
            view = await self.view()
            if view is not None:
                if view.table.hands_played >= hands:
                    return view
                if _my_turn(view):
                    await self.act(view)
                    continue
            assert time.monotonic() < deadline, f"play stalled before hand {hands}: " + (
                "no view"
                if view is None
                else f"version {view.table.sequence}, hands {view.table.hands_played}, "
                f"street {view.hand.street}, to act {view.hand.to_act}"
            )
            await asyncio.sleep(0.05)


def _my_turn(view: tpb.TableView) -> bool:
    hand = view.hand
    return hand.HasField("to_act") and hand.to_act == 0 and hand.street != epb.STREET_COMPLETE


async def _open_table(stub: rpc.TableServiceAsyncStub, table_id: str) -> str:
    config = epb.TableConfig(
        variant=epb.VARIANT_NLHE, seat_count=SEATS, small_blind=5, big_blind=10
    )
    await stub.CreateTable(
        pb.CreateTableRequest(table_id=table_id, config=config, request_id="create"),
        metadata=ADMIN,
        timeout=10,
    )
    token = ""
    for seat in range(SEATS):
        seated = await stub.SeatPlayer(
            pb.SeatPlayerRequest(
                table_id=table_id,
                seat=seat,
                player_id=f"p{seat}",
                stack=STACK,
                ai_level=epb.AI_LEVEL_UNSPECIFIED if seat == 0 else epb.AI_LEVEL_EASY,
                request_id=f"seat-{seat}",
            ),
            metadata=ADMIN,
            timeout=10,
        )
        if seat == 0:
            token = seated.seat_token
    return token


async def _archived(dsn: str, table_id: str) -> int:
    connection = await asyncpg.connect(dsn)
    try:
        count = await connection.fetchval(
            "SELECT count(*) FROM archived_hands WHERE table_id=$1", table_id
        )
        return int(count)
    finally:
        await connection.close()


async def _archives_more(dsn: str, table_id: str, than: int) -> int:
    deadline = time.monotonic() + PLAY_WAIT_S
    while (count := await _archived(dsn, table_id)) <= than:
        assert time.monotonic() < deadline, f"the projector archived nothing after {than}"
        await asyncio.sleep(0.2)
    return count


@pytest.fixture
async def archive_dsn(database_url: str) -> AsyncIterator[str]:
    async with archive_database(database_url, "felt_restarts") as dsn:
        yield dsn


async def test_services_reconnect_after_redis_restarts_and_lose_no_acknowledged_action(
    own_redis: OwnRedis, archive_dsn: str, tmp_path: Path
) -> None:
    launcher = Launcher(own_redis.url, tmp_path)
    system = System(own_redis, launcher, free_port())
    try:
        await system.start(archive_dsn)
        table_id = f"restart-{uuid.uuid4().hex[:8]}"
        async with grpc.aio.insecure_channel(system.target) as channel:
            stub = rpc.TableServiceStub(channel)
            person = Person(stub, table_id, await _open_table(stub, table_id))
            played = (await person.play_until(2)).table.hands_played
            archived = await _archives_more(archive_dsn, table_id, 0)
            for sig in (signal.SIGTERM, signal.SIGKILL):
                # Redis goes away in the middle of play: the person's calls meet it gone.
                await person.play_until_my_turn()
                restart = asyncio.create_task(own_redis.restart(sig, down_s=1.0))
                played = (await person.play_until(played + 2)).table.hands_played
                await restart
                archived = await _archives_more(archive_dsn, table_id, archived)
                system.assert_alive()
        check = redis_async_lib.Redis.from_url(own_redis.url)
        try:
            entries: list[tuple[bytes, dict[bytes, bytes]]] = await check.xrange(  # type: ignore[assignment]
                events_key(table_id)
            )
        finally:
            await check.aclose()
        stored = [epb.StoredEvent.FromString(fields[b"e"]) for _, fields in entries]
        assert [e.sequence for e in stored] == list(range(1, len(stored) + 1))
        keys = [e.request_key for e in stored if e.WhichOneof("event") in SEAT_ACTIONS]
        for key in person.acknowledged:
            assert keys.count(key) == 1, "an acknowledged action was lost or doubled"
        for end in (e.hand_ended for e in stored if e.HasField("hand_ended")):
            assert sum(s.stack for s in end.stacks) == SEATS * STACK, end
        print(
            f"{played} hands, {len(person.acknowledged)} acknowledged actions, "
            f"{person.retries} retried calls, {person.refused} refused, {archived} archived",
            file=sys.stderr,
        )
    finally:
        for proc in system.procs:
            if proc.process.returncode is None:
                proc.process.send_signal(signal.SIGTERM)
                try:
                    await asyncio.wait_for(proc.process.wait(), 20)
                except TimeoutError:
                    proc.process.kill()
                    await proc.process.wait()
        await launcher.stop_all()
