"""The table service as a real process: SIGKILL mid-hand and restart; SIGTERM shutdown.

``python -m services.table.server`` runs against the test Redis DB; it prints
``table service listening on port N`` on stdout once it serves (its JSON logs
go to stderr, kept in a file for the failure report). After a SIGKILL the
restarted process takes the table over when the dead one's lease expires and
the hand finishes with no chip lost and every action in the stream exactly
once, including the request in flight at the kill, retried with its id.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import grpc
import pytest
import redis.asyncio as redis_async_lib

from felt.storage.eventstore import events_key, lease_key
from felt.storage.idempotency import client_key, seat_principal
from felt.wire.tokens import token_hash
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc

REPO = Path(__file__).resolve().parents[2]
ADMIN = (("authorization", "Bearer e2e-admin-credential-0123456789abcdef"),)
LEASE_TTL_MS = 1000
WAIT = 30.0
SEAT_ACTIONS = ("player_folded", "player_checked", "player_called", "bet_placed", "cards_drawn")

T = TypeVar("T")


@dataclass
class Service:
    """One table-service process."""

    process: asyncio.subprocess.Process
    port: int
    log: Path

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"


@dataclass
class Processes:
    redis_url: str
    tmp: Path
    running: list[Service] = field(default_factory=list)

    async def start(self) -> Service:
        log = self.tmp / f"table-service-{len(self.running)}.log"
        env = {
            **os.environ,
            "REDIS_URL": self.redis_url,
            "FELT_TABLE_ADDR": "127.0.0.1:0",
            "FELT_ADMIN_TOKEN": "e2e-admin-credential-0123456789abcdef",
            "FELT_AI_TOKEN": "e2e-ai-credential-0123456789abcdef0123",
            "FELT_TOKEN_SECRET": "e2e-secret-0123456789abcdef0123456789",
            "FELT_LEASE_TTL_MS": str(LEASE_TTL_MS),
            "FELT_BETWEEN_HANDS_MS": "50",
            "FELT_TABLE_IDLE_GRACE_S": "0",  # its bot tables play on while it kills
        }
        with log.open("wb") as err:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "services.table.server",
                cwd=REPO,
                env=env,
                stdout=asyncio.subprocess.PIPE,
                stderr=err,
            )
        assert process.stdout is not None
        try:
            line = await asyncio.wait_for(process.stdout.readline(), WAIT)
        except TimeoutError:
            process.kill()
            raise AssertionError(f"no port announced; log:\n{log.read_text()}") from None
        text = line.decode()
        assert text.startswith("table service listening on port"), (text, log.read_text())
        service = Service(process, int(text.rsplit(" ", 1)[1]), log)
        self.running.append(service)
        return service

    async def stop_all(self) -> None:
        for service in self.running:
            if service.process.returncode is None:
                service.process.kill()
                await service.process.wait()


@pytest.fixture
async def processes(
    redis_url: str, redis: redis_async_lib.Redis, tmp_path: Path
) -> AsyncIterator[Processes]:
    procs = Processes(redis_url, tmp_path)
    try:
        yield procs
    finally:
        await procs.stop_all()


async def eventually(check: Callable[[], Awaitable[T | None]], what: str) -> T:
    deadline = time.monotonic() + WAIT
    while True:
        result = await check()
        if result is not None:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def served(call: Callable[[], Awaitable[T]]) -> T | None:
    """The call's answer, or None while no instance serves the table (UNAVAILABLE)."""
    try:
        return await call()
    except grpc.aio.AioRpcError as err:
        if err.code() == grpc.StatusCode.UNAVAILABLE:
            return None
        raise


@dataclass
class Player:
    seat: int
    token: str

    @property
    def md(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),)


def choose(view: tpb.TableView, rng: random.Random) -> tpb.Action:
    legal = {a.type: a for a in view.hand.legal_actions}
    raise_ = legal.get(tpb.ACTION_TYPE_RAISE)
    if raise_ is not None and rng.random() < 0.2 and raise_.min_to <= 40:
        return tpb.Action(raise_to=tpb.Action.RaiseTo(amount=raise_.min_to))
    if tpb.ACTION_TYPE_CHECK in legal:
        return tpb.Action(check=tpb.Action.Check())
    return tpb.Action(call=tpb.Action.Call())


class Client:
    """A client acting for every seat and remembering exactly what it submitted."""

    def __init__(self, target: str, table_id: str, players: dict[int, Player]) -> None:
        self.table_id = table_id
        self.players = players
        # The request keys (felt.storage.idempotency) of accepted actions, in order: what the stream
        # records as each action's request_key.
        self.submitted: list[str] = []
        self.rng = random.Random(11)
        self.connect(target)

    def connect(self, target: str) -> None:
        self.channel = grpc.aio.insecure_channel(target)
        self.stub = rpc.TableServiceStub(self.channel)

    async def next_request(self) -> pb.SubmitActionRequest | None:
        """The action for whoever is to act now, or None while nobody is."""
        view = (await self.stub.GetTableView(pb.GetTableViewRequest(table_id=self.table_id))).view
        if not view.hand.HasField("to_act") or view.hand.street == epb.STREET_COMPLETE:
            return None
        player = self.players[view.hand.to_act]
        mine = (
            await self.stub.GetTableView(
                pb.GetTableViewRequest(table_id=self.table_id, seat=player.seat),
                metadata=player.md,
            )
        ).view
        return pb.SubmitActionRequest(
            table_id=self.table_id,
            seat=player.seat,
            request_id=uuid.uuid4().hex,
            expected_sequence=mine.table.sequence,
            action=choose(mine, self.rng),
        )

    async def send(self, request: pb.SubmitActionRequest) -> pb.SubmitActionResponse:
        response = await self.stub.SubmitAction(request, metadata=self.players[request.seat].md)
        player = self.players[request.seat]
        principal = seat_principal(player.seat, token_hash(player.token))
        self.submitted.append(client_key(principal, request).key)
        return response

    async def act(self) -> pb.SubmitActionResponse:
        request = await eventually(self.next_request, "a seat to act")
        return await self.send(request)


async def test_sigkill_mid_hand_then_restart_finishes_the_hand(
    processes: Processes, redis: redis_async_lib.Redis
) -> None:
    first = await processes.start()
    channel = grpc.aio.insecure_channel(first.target)
    stub = rpc.TableServiceStub(channel)
    table_id = f"e2e-{uuid.uuid4().hex[:10]}"
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=3, small_blind=5, big_blind=10)
    await stub.CreateTable(
        pb.CreateTableRequest(table_id=table_id, config=config, request_id="create"),
        metadata=ADMIN,
    )
    players = {}
    for seat in range(3):
        seated = await stub.SeatPlayer(
            pb.SeatPlayerRequest(
                table_id=table_id,
                seat=seat,
                player_id=f"p{seat}",
                stack=1000,
                request_id=f"seat-{seat}",
            ),
            metadata=ADMIN,
        )
        players[seat] = Player(seat, seated.seat_token)
    await channel.close()
    client = Client(first.target, table_id, players)
    # A full hand, then two actions into the second.
    while True:
        response = await client.act()
        if response.view.table.hands_played >= 1 and response.view.hand.hand_id.endswith(":2"):
            break
    await client.act()

    # 1. An action is applied, but the process dies before its answer gets out.
    await client.act()
    service = await _kill_with_request_in_flight(processes, client, first, redis, applied=True)
    # 2. Mid-hand again: a request reaches a frozen process, which dies before reading it.
    await client.act()
    await _kill_with_request_in_flight(processes, client, service, redis, applied=False)
    # Play the hand (and the next) to the end through the new process.
    while (await client.act()).view.table.hands_played < 3:
        pass

    entries: list[tuple[bytes, dict[bytes, bytes]]] = await redis.xrange(  # type: ignore[assignment]
        events_key(table_id)
    )
    stored = [epb.StoredEvent.FromString(fields[b"e"]) for _, fields in entries]
    assert [e.sequence for e in stored] == list(range(1, len(stored) + 1))
    acted = [e.request_key for e in stored if e.WhichOneof("event") in SEAT_ACTIONS]
    assert acted == client.submitted, "an action was lost or doubled"
    hands = [e for e in stored if e.HasField("hand_ended")]
    assert len(hands) >= 3
    for end in hands:
        assert sum(s.stack for s in end.hand_ended.stacks) == 3000, end
    starts = [e.hand_started.setup for e in stored if e.HasField("hand_started")]
    for setup in starts:
        assert sum(s.stack for s in setup.seats) == 3000
    table = (await client.stub.GetTable(pb.GetTableRequest(table_id=table_id))).table
    assert sum(s.stack for s in table.seats) == 3000 or table.state == tpb.TABLE_STATE_PLAYING
    assert await redis.get(lease_key(table_id)) is not None
    await client.channel.close()


async def _kill_with_request_in_flight(
    processes: Processes,
    client: Client,
    service: Service,
    redis: redis_async_lib.Redis,
    applied: bool,
) -> Service:
    """SIGKILL ``service`` with a SubmitAction in flight, restart, retry it: exactly once."""
    key = events_key(client.table_id)
    request = await eventually(client.next_request, "a seat to act")
    before = int(await redis.xlen(key))
    if not applied:
        service.process.send_signal(signal.SIGSTOP)
    call = asyncio.ensure_future(
        client.stub.SubmitAction(request, metadata=client.players[request.seat].md)
    )
    if applied:

        async def appended() -> bool | None:
            return True if int(await redis.xlen(key)) > before else None

        await eventually(appended, "the in-flight action to be appended")
    else:
        await asyncio.sleep(0.2)  # the request sits in the frozen process's socket
    service.process.send_signal(signal.SIGKILL)
    assert await service.process.wait() == -signal.SIGKILL
    first_answer: pb.SubmitActionResponse | None = None
    with contextlib.suppress(grpc.aio.AioRpcError):
        first_answer = await call
    await client.channel.close()
    length = int(await redis.xlen(key))
    assert (length > before) == applied

    restarted = await processes.start()
    client.connect(restarted.target)
    # Retried with the same id once the dead process's lease has expired: answered from
    # the log if it went through before the kill, else decided now; never twice.
    retried = await eventually(lambda: served(lambda: client.send(request)), "the takeover")
    if applied:
        assert int(await redis.xlen(key)) == length
        if first_answer is not None:
            assert retried.SerializeToString() == first_answer.SerializeToString()
    else:
        assert first_answer is None
        assert int(await redis.xlen(key)) > length
    again = await client.stub.SubmitAction(request, metadata=client.players[request.seat].md)
    assert again.SerializeToString() == retried.SerializeToString()
    return restarted


async def test_sigterm_shuts_down_gracefully_and_releases_leases(
    processes: Processes, redis: redis_async_lib.Redis
) -> None:
    service = await processes.start()
    channel = grpc.aio.insecure_channel(service.target)
    stub = rpc.TableServiceStub(channel)
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=2, small_blind=5, big_blind=10)
    await stub.CreateTable(
        pb.CreateTableRequest(table_id="e2e-term", config=config, request_id="c"), metadata=ADMIN
    )
    for seat in range(2):
        await stub.SeatPlayer(
            pb.SeatPlayerRequest(
                table_id="e2e-term",
                seat=seat,
                player_id=f"p{seat}",
                stack=100,
                request_id=f"s{seat}",
            ),
            metadata=ADMIN,
        )
    await channel.close()
    assert await redis.get(lease_key("e2e-term")) is not None

    service.process.send_signal(signal.SIGTERM)
    code = await asyncio.wait_for(service.process.wait(), WAIT)
    assert code == 0, service.log.read_text()
    assert await redis.get(lease_key("e2e-term")) is None
    assert "table_service_stopped" in service.log.read_text()
    # Another instance takes the table at once (no lease to wait for).
    other = await processes.start()
    async with grpc.aio.insecure_channel(other.target) as channel:
        stub = rpc.TableServiceStub(channel)
        table = (await stub.GetTable(pb.GetTableRequest(table_id="e2e-term"), timeout=5)).table
        assert table.hands_played >= 0 and len(table.seats) == 2
