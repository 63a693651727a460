"""Buy-ins over gRPC on loopback against PostgreSQL (issue #20): a definite refusal of the
table service (a full table) compensates at once, the lobby refuses a full lounge before any
chips move, the recovery pass is fair and bounded with hundreds of sagas that cannot finish
(a fake table service failing for their lounge), and a stuck saga is settled by the operator's
``felt sagas`` against a real table service, seated or refunded by what it shows."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import json
import math
from collections import Counter, defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import grpc
import pytest
from argon2 import PasswordHasher

from poker.events.v1 import events_pb2 as epb
from poker.v1 import lobby_pb2 as lpb
from poker.v1 import lobby_service_pb2 as pb
from poker.v1 import lobby_service_pb2_grpc as rpc
from services.cli import main as felt
from services.lobby.application import LobbySettings
from services.lobby.memory import MemoryTables
from services.lobby.ports import (
    ChipsAdded,
    SeatGrant,
    TableRefused,
    Tables,
    TablesUnavailable,
)
from services.lobby.recovery import RecoveryPolicy
from services.lobby.server import LobbyServerConfig, RunningLobbyServer, start_lobby_server
from services.lobby.tables import GrpcTables
from services.lobby.tokens import Passwords
from services.table.auth import Secrets
from services.table.server import RunningTableServer, TableServerConfig, start_table_server

from .conftest import empty_pool
from .test_join_lounge_grpc import balance, guest
from .test_lobby_grpc import SECRETS, Clock, auth, refused, rid

ADMIN = "saga-tests-table-admin-credential-0123456789"
GRANT = 10_000
BUY_INS, CHIP_ADDS = {"kind": "buy_in"}, {"kind": "chip_add"}


@pytest.fixture
async def table_server(redis: Any, redis_url: str) -> AsyncIterator[RunningTableServer]:
    server = await start_table_server(
        TableServerConfig(
            redis_url=redis_url,
            address="127.0.0.1:0",
            secrets=Secrets(
                b"saga-tests-table-secret-0123456789",
                ADMIN,
                "saga-tests-ai-token-credential-0123456789",
            ),
            ai_stream=f"saga-tests-ai-{hashlib.sha256(redis_url.encode()).hexdigest()[:6]}",
        )
    )
    try:
        yield server
    finally:
        await server.stop()


@dataclass
class Lobby:
    running: RunningLobbyServer
    stub: rpc.LobbyServiceAsyncStub
    clock: Clock


@contextlib.asynccontextmanager
async def lobby_on(
    dsn: str,
    tables: Tables,
    policy: RecoveryPolicy,
    clock: Clock | None = None,
    settings: LobbySettings | None = None,
) -> AsyncIterator[Lobby]:
    """A lobby on ``dsn`` (emptied) calling ``tables``; the tests run its recovery passes."""
    pool = await empty_pool(dsn)
    await pool.close()
    clock = clock or Clock()
    running = await start_lobby_server(
        LobbyServerConfig(
            database_url=dsn,
            address="127.0.0.1:0",
            secrets=SECRETS,
            passwords=Passwords(PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)),
            clock=clock,
            grace_s=0.5,
            tables=tables,
            recover_every_s=3_600,
            recovery=policy,
            settings=settings or LobbySettings(),
        )
    )
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{running.port}")
    try:
        yield Lobby(running, rpc.LobbyServiceStub(channel), clock)
    finally:
        await channel.close()
        await running.stop()


async def lounge(
    stub: rpc.LobbyServiceAsyncStub, owner: lpb.Credentials, name: str, seats: int
) -> str:
    config = epb.TableConfig(
        variant=epb.VARIANT_NLHE, seat_count=seats, small_blind=5, big_blind=10
    )
    create = pb.CreateLoungeRequest(name=name, config=config, request_id=rid())
    return str((await stub.CreateLounge(create, metadata=auth(owner))).lounge.lounge_id)


async def reserved(lobby: Lobby) -> int:
    return int(
        await lobby.running.pool.fetchval("SELECT count(*) FROM buy_ins WHERE state = 'reserved'")
    )


async def test_a_full_table_refunds_at_once_and_a_full_lounge_moves_no_chips(
    lobby_dsn: str, table_server: RunningTableServer
) -> None:
    """Three players race for two seats at a real table service (all three past the lobby's
    checks and reserved when the table decides): the two seated keep their buy-ins, the
    third has every chip back at once (TABLE_FULL, nothing held); a fourth is refused by
    the lobby's free-seat check before anything is written."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{table_server.port}") as channel:
        tables = RacingTables(channel, 3)
        async with lobby_on(lobby_dsn, tables, RecoveryPolicy()) as lobby:
            stub = lobby.stub
            owner = await guest(stub, "Owner")
            lid = await lounge(stub, owner, "Two seats", 2)
            racers = [await guest(stub, n) for n in ("Bob", "Carol", "Dave")]
            answers = await asyncio.gather(
                *(
                    stub.JoinLounge(
                        pb.JoinLoungeRequest(lounge_id=lid, buy_in=1_000, request_id=rid()),
                        metadata=auth(who),
                    )
                    for who in racers
                ),
                return_exceptions=True,
            )
            seated = [a for a in answers if isinstance(a, pb.JoinLoungeResponse)]
            lost = [a for a in answers if isinstance(a, grpc.aio.AioRpcError)]
            assert sorted(a.seat for a in seated) == [0, 1] and len(lost) == 1
            loser = racers[answers.index(lost[0])]
            assert lost[0].code() == grpc.StatusCode.FAILED_PRECONDITION
            assert "TABLE_FULL" in str(lost[0].trailing_metadata())
            assert await balance(stub, loser) == GRANT  # back at once, not held
            assert await reserved(lobby) == 0
            for who, answer in zip(racers, answers, strict=True):
                if who is not loser:
                    assert isinstance(answer, pb.JoinLoungeResponse)
                    assert await balance(stub, who) == GRANT - 1_000

            # The table service's own answer to one more seat: a definite refusal, told
            # apart from the rate limiter's RESOURCE_EXHAUSTED by its reason.
            with pytest.raises(TableRefused) as info:
                await tables.seat(lid, None, "p-extra", "Extra", 1_000, 0, "extra-1")
            assert info.value.reason == "TABLE_FULL"

            # A full lounge in the lobby's view: refused before any chips move.
            erin = await guest(stub, "Erin")
            late = pb.JoinLoungeRequest(lounge_id=lid, buy_in=1_000, request_id=rid())
            assert await refused(stub.JoinLounge(late, metadata=auth(erin))) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "TABLE_FULL",
            )
            entries = await stub.ListLedgerEntries(
                pb.ListLedgerEntriesRequest(), metadata=auth(erin)
            )
            assert [e.amount for e in entries.entries] == [GRANT]
            rows = await lobby.running.pool.fetch("SELECT state, refusal FROM buy_ins")
            assert sorted((r["state"], r["refusal"]) for r in rows) == [
                ("compensated", "TABLE_FULL"),  # the loser's: the table service's refusal
                ("seated", None),
                ("seated", None),
            ]


class RacingTables(GrpcTables):
    """The real table service, with the first ``racers`` ``SeatPlayer`` calls held until
    all of them have been reserved and sent, so the race is at the table, every time."""

    def __init__(self, channel: grpc.aio.Channel, racers: int) -> None:
        super().__init__(channel, ADMIN)
        self.barrier = asyncio.Barrier(racers)
        self.racers = racers

    async def seat(
        self,
        table_id: str,
        seat: int | None,
        player_id: str,
        display_name: str,
        stack: int,
        ai_level: int,
        request_id: str,
        *,
        wait_for_big_blind: bool = False,
    ) -> SeatGrant:
        if self.racers > 0:
            self.racers -= 1
            await self.barrier.wait()
        return await super().seat(
            table_id,
            seat,
            player_id,
            display_name,
            stack,
            ai_level,
            request_id,
            wait_for_big_blind=wait_for_big_blind,
        )


class FailingTables(MemoryTables):
    """A fake table service whose ``SeatPlayer`` for the lounges in ``down`` fails as a call
    past its deadline does; every seat call is recorded (lounge, request id, the lobby's
    clock) for the test to count."""

    def __init__(self, clock: Clock) -> None:
        super().__init__()
        self.clock = clock
        self.down: set[str] = set()
        self.hang_close: set[str] = set()  # CloseTable for these never answers
        self.seat_calls: list[tuple[str, str, datetime]] = []

    async def close(self, table_id: str, request_id: str) -> bool:
        if table_id in self.hang_close:
            await asyncio.Event().wait()
        return await super().close(table_id, request_id)

    async def seat(
        self,
        table_id: str,
        seat: int | None,
        player_id: str,
        display_name: str,
        stack: int,
        ai_level: int,
        request_id: str,
        *,
        wait_for_big_blind: bool = False,
    ) -> SeatGrant:
        if not request_id.startswith("lounge/"):  # the lounges' own AI seats are not counted
            self.seat_calls.append((table_id, request_id, self.clock()))
        if table_id in self.down:
            raise TablesUnavailable("DEADLINE_EXCEEDED: Deadline Exceeded")
        return await super().seat(
            table_id,
            seat,
            player_id,
            display_name,
            stack,
            ai_level,
            request_id,
            wait_for_big_blind=wait_for_big_blind,
        )


async def test_hundreds_of_sagas_that_cannot_finish_do_not_starve_another(
    lobby_dsn: str,
) -> None:
    """300 buy-ins at lounges whose table never answers (30 accounts at 10 lounges: one
    buy-in under way per player and lounge), then a victim's buy-in reserved during a real
    outage of its own table: once that table is back, the victim is seated within the
    passes it takes to go once through the sagas due before it; no pass calls the table
    service more than its batch; each doomed saga is tried with growing waits, a bounded
    number of times, then stuck (the gauge shows them) and never called again."""
    clock = Clock()
    tables = FailingTables(clock)
    policy = RecoveryPolicy(max_attempts=4, batch=32)
    settings = LobbySettings(sign_up_max_per_client=100, max_lounges_per_owner=20)
    async with lobby_on(lobby_dsn, tables, policy, clock, settings) as lobby:
        stub = lobby.stub
        owner = await guest(stub, "Owner")
        doomed = [await lounge(stub, owner, f"Doomed {n}", 9) for n in range(10)]
        victims = await lounge(stub, owner, "Victims", 9)
        tables.down |= {*doomed, victims}
        attackers = [await guest(stub, f"Attacker {n}") for n in range(30)]
        ids = [(who, lid, rid()) for who in attackers for lid in doomed]
        for start in range(0, len(ids), 25):
            joins = [
                refused(
                    stub.JoinLounge(
                        pb.JoinLoungeRequest(lounge_id=lid, buy_in=200, request_id=r),
                        metadata=auth(who),
                    )
                )
                for who, lid, r in ids[start : start + 25]
            ]
            for answer in await asyncio.gather(*joins):
                assert answer == (grpc.StatusCode.UNAVAILABLE, "TABLES_UNAVAILABLE")
        # A second buy-in of one player at one lounge (a new request id) is not held.
        who, lid, first = ids[0]
        again = pb.JoinLoungeRequest(lounge_id=lid, buy_in=200, request_id=rid())
        assert await refused(stub.JoinLounge(again, metadata=auth(who))) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "BUY_IN_PENDING",
        )
        assert await balance(stub, who) == GRANT - 200 * len(doomed)
        victim = await guest(stub, "Victim")
        join = pb.JoinLoungeRequest(lounge_id=victims, buy_in=1_000, request_id=rid())
        assert await refused(stub.JoinLounge(join, metadata=auth(victim))) == (
            grpc.StatusCode.UNAVAILABLE,
            "TABLES_UNAVAILABLE",
        )
        assert await reserved(lobby) == 301
        tables.down.discard(victims)  # the outage is over; the doomed lounges' never is
        tables.seat_calls.clear()

        bound = math.ceil(301 / policy.batch) + 1
        passes = 0
        per_pass: list[int] = []
        while await victim_state(lobby) == "reserved":
            assert passes < bound, f"the victim waited more than {bound} passes"
            before = len(tables.seat_calls)
            clock.offset += policy.base
            await lobby.running.seating.recover()
            per_pass.append(len(tables.seat_calls) - before)
            passes += 1
        assert await victim_state(lobby) == "seated" and passes <= bound
        assert await balance(stub, victim) == GRANT - 1_000

        # On until every doomed saga is stuck; then the table service is left alone.
        for _ in range(400):
            if await lobby.running.seating.recovery.buy_ins.count_stuck() == 300:
                break
            before = len(tables.seat_calls)
            clock.offset += policy.base
            await lobby.running.seating.recover()
            per_pass.append(len(tables.seat_calls) - before)
        assert max(per_pass) <= policy.batch
        assert await lobby.running.seating.recovery.buy_ins.count_stuck() == 300
        metrics = lobby.running.seating.recovery.metrics
        assert metrics.registry.get_sample_value("felt_lobby_sagas_stuck", BUY_INS) == 300
        assert (
            metrics.registry.get_sample_value("felt_lobby_sagas_turned_stuck_total", BUY_INS) == 300
        )
        by_saga: dict[str, list[datetime]] = defaultdict(list)
        for table_id, request_id, at in tables.seat_calls:
            if table_id in doomed:
                by_saga[request_id].append(at)
        assert len(by_saga) == 300
        assert Counter(len(times) for times in by_saga.values()) == {policy.max_attempts: 300}
        for times in by_saga.values():  # each wait at least the doubled base
            for n, (a, b) in enumerate(itertools.pairwise(times)):
                assert b - a >= policy.base * 2**n
        calls = len(tables.seat_calls)
        # The player's own retry of a stuck join does not drive it (the operator settles it).
        retry = pb.JoinLoungeRequest(lounge_id=lid, buy_in=200, request_id=first)
        assert await refused(stub.JoinLounge(retry, metadata=auth(who))) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "BUY_IN_STUCK",
        )
        for _ in range(5):
            clock.offset += timedelta(hours=1)
            await lobby.running.seating.recover()
        assert len(tables.seat_calls) == calls  # stuck: never called again


async def victim_state(lobby: Lobby) -> str:
    return str(
        await lobby.running.pool.fetchval(
            "SELECT b.state FROM buy_ins b JOIN players p USING (player_id) "
            "WHERE p.display_name = 'Victim'"
        )
    )


class LossyTables(GrpcTables):
    """The real table service, with ``SeatPlayer`` (and ``AddChips``) for the lounges in
    ``lose`` (``lose_adds``) answered and the answer lost, and for those in ``drop``
    (``drop_adds``) never sent: both an unknown outcome. ``add_calls``: each ``AddChips``
    asked for (request id, when)."""

    def __init__(self, channel: grpc.aio.Channel, clock: Clock | None = None) -> None:
        super().__init__(channel, ADMIN)
        self.lose: set[str] = set()
        self.drop: set[str] = set()
        self.lose_adds: set[str] = set()
        self.drop_adds: set[str] = set()
        self.clock = clock or Clock()
        self.add_calls: list[tuple[str, datetime]] = []

    async def add_chips(
        self,
        table_id: str,
        seat: int,
        seat_token: str,
        amount: int,
        max_stack: int,
        request_id: str,
    ) -> ChipsAdded:
        self.add_calls.append((request_id, self.clock()))
        if table_id in self.drop_adds:
            raise TablesUnavailable("UNAVAILABLE: failed to connect to all addresses")
        added = await super().add_chips(table_id, seat, seat_token, amount, max_stack, request_id)
        if table_id in self.lose_adds:
            raise TablesUnavailable("DEADLINE_EXCEEDED: Deadline Exceeded")
        return added

    async def seat(
        self,
        table_id: str,
        seat: int | None,
        player_id: str,
        display_name: str,
        stack: int,
        ai_level: int,
        request_id: str,
        *,
        wait_for_big_blind: bool = False,
    ) -> SeatGrant:
        if table_id in self.drop:
            raise TablesUnavailable("UNAVAILABLE: failed to connect to all addresses")
        grant = await super().seat(
            table_id,
            seat,
            player_id,
            display_name,
            stack,
            ai_level,
            request_id,
            wait_for_big_blind=wait_for_big_blind,
        )
        if table_id in self.lose:
            raise TablesUnavailable("DEADLINE_EXCEEDED: Deadline Exceeded")
        return grant


async def sagas(*argv: str) -> tuple[int, str, str]:
    """``felt sagas ...`` as an operator runs it (its own event loop: in a thread here)."""
    import contextlib as _c
    import io

    out, err = io.StringIO(), io.StringIO()

    def run() -> int:
        with _c.redirect_stdout(out), _c.redirect_stderr(err):
            return felt(["sagas", *argv])

    status = await asyncio.to_thread(run)
    return status, out.getvalue(), err.getvalue()


async def test_stuck_sagas_are_listed_and_resolved_by_what_the_table_shows(
    lobby_dsn: str, table_server: RunningTableServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two buy-ins stuck after their bounded attempts: one the table service seated (its
    answers lost), one it never heard of. ``felt sagas list`` shows both; ``resolve`` seats
    the first (a reissued token that works: its leave brings the chips back) and refunds the
    second, each once; ``--retry`` puts a third back in the queue, which then seats it."""
    monkeypatch.setenv("DATABASE_URL", lobby_dsn)
    monkeypatch.setenv("FELT_TABLE_ADDR", f"127.0.0.1:{table_server.port}")
    monkeypatch.setenv("FELT_ADMIN_TOKEN", ADMIN)
    clock = Clock()
    clock.offset = -timedelta(hours=1)  # the lobby's attempts are long past for the operator
    async with grpc.aio.insecure_channel(f"127.0.0.1:{table_server.port}") as channel:
        tables = LossyTables(channel)
        policy = RecoveryPolicy(max_attempts=2)
        async with lobby_on(lobby_dsn, tables, policy, clock) as lobby:
            stub = lobby.stub
            owner = await guest(stub, "Owner")
            lost, dropped = (
                await lounge(stub, owner, "Lost", 6),
                await lounge(stub, owner, "Dropped", 6),
            )
            tables.lose.add(lost)
            tables.drop.add(dropped)
            bob, carol, dave = [await guest(stub, n) for n in ("Bob", "Carol", "Dave")]
            joins = {}
            for who, lid in ((bob, lost), (carol, dropped), (dave, dropped)):
                join = pb.JoinLoungeRequest(lounge_id=lid, buy_in=1_000, request_id=rid())
                joins[who.access_token] = join
                assert (await refused(stub.JoinLounge(join, metadata=auth(who))))[1] == (
                    "TABLES_UNAVAILABLE"
                )
            carols = joins[carol.access_token]
            for _ in range(policy.max_attempts):
                clock.offset += timedelta(seconds=10)  # past the first backoff (2-2.5 s)
                await lobby.running.seating.recover()
            assert await lobby.running.seating.recovery.buy_ins.count_stuck() == 3

            status, out, _ = await sagas("list")
            assert status == 0 and out.startswith("3 stuck, 0 in flight")
            # The player's new join at the lounge: stuck too, nothing more held.
            again = pb.JoinLoungeRequest(lounge_id=dropped, buy_in=1_000, request_id=rid())
            assert await refused(stub.JoinLounge(again, metadata=auth(carol))) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "BUY_IN_STUCK",
            )
            assert await balance(stub, carol) == GRANT - 1_000
            status, out, _ = await sagas("list", "--json")
            assert status == 0
            rows = [json.loads(line) for line in out.splitlines()]
            assert [r["status"] for r in rows] == ["stuck"] * 3
            assert {r["attempts"] for r in rows} == {policy.max_attempts}
            assert all(r["last_error"] for r in rows)
            assert "seat_token" not in out
            names = {
                row["display_name"]: row["saga_id"]
                for row in await lobby.running.pool.fetch(
                    "SELECT display_name, saga_id FROM buy_ins"
                )
            }
            assert {r["saga_id"] for r in rows} == set(names.values())

            # Bob's: seated at the table by its lost SeatPlayer.
            status, out, err = await sagas("resolve", names["Bob"])
            assert (status, err) == (0, "") and "seated" in out
            assert await balance(stub, bob) == GRANT - 1_000
            leave = pb.LeaveLoungeRequest(lounge_id=lost, request_id=rid())
            left = await stub.LeaveLounge(leave, metadata=auth(bob))
            assert left.balance == GRANT  # the reissued token named the seat: chips back

            # Carol's: the table never heard of it: refunded, once.
            status, out, err = await sagas("resolve", names["Carol"])
            assert (status, err) == (0, "") and "refunded" in out
            assert await balance(stub, carol) == GRANT
            status, out, _ = await sagas("resolve", names["Carol"])
            assert status == 0 and "finished" in out
            assert await balance(stub, carol) == GRANT
            assert await refused(stub.JoinLounge(carols, metadata=auth(carol))) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "RESOLVED_NOT_SEATED",  # her retry: told, nothing moved
            )
            assert await balance(stub, carol) == GRANT

            # Dave's: back in the queue once the table is reachable; the pass seats it.
            status, out, _ = await sagas("resolve", names["Dave"], "--retry")
            assert status == 0 and "requeued" in out
            tables.drop.clear()
            await lobby.running.seating.recover()
            assert await balance(stub, dave) == GRANT - 1_000
            state = await lobby.running.pool.fetchval(
                "SELECT state FROM buy_ins WHERE saga_id = $1", names["Dave"]
            )
            assert state == "seated"

            status, _, err = await sagas("resolve", "b-none")
            assert status == 1 and "no buy-in saga" in err
            assert await lobby.running.seating.recovery.buy_ins.count_stuck() == 0


async def test_stuck_chip_adds_are_listed_and_resolved_by_the_tables_answer(
    lobby_dsn: str, table_server: RunningTableServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two adds of chips whose outcome stays unknown (issue #20): one the table service
    added (its answers lost), one it never heard of. The recovery pass tries each with
    doubling waits, a bounded number of times, then they are stuck (the gauge by kind, the
    player's retry refused, never called again); ``felt sagas list`` shows them;
    ``resolve`` settles each by the table's answer to the add's own request: the first
    ADDED (the seat's chips come home with its leave), the second, whose seat was left
    meanwhile, refunded; each once; the audit holds throughout."""
    monkeypatch.setenv("DATABASE_URL", lobby_dsn)
    monkeypatch.setenv("FELT_TABLE_ADDR", f"127.0.0.1:{table_server.port}")
    monkeypatch.setenv("FELT_ADMIN_TOKEN", ADMIN)
    clock = Clock()
    clock.offset = -timedelta(hours=2)  # the lobby's attempts are long past for the operator
    async with grpc.aio.insecure_channel(f"127.0.0.1:{table_server.port}") as channel:
        tables = LossyTables(channel, clock)
        policy = RecoveryPolicy(max_attempts=3)
        async with lobby_on(lobby_dsn, tables, policy, clock) as lobby:
            stub = lobby.stub
            owner = await guest(stub, "Owner")
            lost, dropped = (
                await lounge(stub, owner, "Lost", 6),
                await lounge(stub, owner, "Dropped", 6),
            )
            bob, carol = await guest(stub, "Bob"), await guest(stub, "Carol")
            for who, lid in ((bob, lost), (carol, dropped)):  # alone: no hand is dealt
                join = pb.JoinLoungeRequest(lounge_id=lid, buy_in=500, request_id=rid())
                await stub.JoinLounge(join, metadata=auth(who))
            tables.lose_adds.add(lost)
            tables.drop_adds.add(dropped)
            adds = {}
            for who, lid in ((bob, lost), (carol, dropped)):
                add = pb.AddSeatChipsRequest(lounge_id=lid, amount=200, request_id=rid())
                adds[who.access_token] = add
                assert await refused(stub.AddSeatChips(add, metadata=auth(who))) == (
                    grpc.StatusCode.UNAVAILABLE,
                    "TABLES_UNAVAILABLE",
                )
            assert [await balance(stub, who) for who in (bob, carol)] == [GRANT - 700] * 2
            chips = lobby.running.chips
            assert chips is not None
            assert await chips.recover() == (0, 0)  # their own calls may still be under way
            tables.add_calls.clear()
            for _ in range(policy.max_attempts + 3):
                clock.offset += timedelta(seconds=30)  # past the grace, and each backoff
                assert await chips.recover() == (0, 0)
            assert await chips.chip_adds.count_stuck() == 2
            by_saga: dict[str, list[datetime]] = defaultdict(list)
            for request_id, at in tables.add_calls:
                by_saga[request_id].append(at)
            assert [len(times) for times in by_saga.values()] == [policy.max_attempts] * 2
            for times in by_saga.values():  # each wait at least the doubled base
                for n, (a, b) in enumerate(itertools.pairwise(times)):
                    assert b - a >= policy.base * 2**n
            metrics = chips.recovery.metrics
            assert metrics.registry.get_sample_value("felt_lobby_sagas_stuck", CHIP_ADDS) == 2
            assert metrics.registry.get_sample_value("felt_lobby_sagas_stuck", BUY_INS) == 0
            await chips.recovery.count_states()  # the server's loop of its own
            reserved = {**CHIP_ADDS, "state": "reserved"}
            assert metrics.registry.get_sample_value("felt_lobby_sagas", reserved) == 2
            added = {**CHIP_ADDS, "state": "added"}  # finished: not counted (every saga ever)
            assert metrics.registry.get_sample_value("felt_lobby_sagas", added) is None
            assert (
                metrics.registry.get_sample_value("felt_lobby_sagas_turned_stuck_total", CHIP_ADDS)
                == 2
            )
            calls = len(tables.add_calls)
            # The player's retry of a stuck add does not drive it (the operator settles it).
            assert await refused(stub.AddSeatChips(adds[bob.access_token], metadata=auth(bob))) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "CHIP_ADD_STUCK",
            )
            clock.offset += timedelta(minutes=5)  # (within the access tokens' lifetime)
            await chips.recover()
            assert len(tables.add_calls) == calls  # stuck: never called again

            status, out, _ = await sagas("list")
            assert status == 0 and out.startswith("2 stuck, 0 in flight")
            status, out, _ = await sagas("list", "--json")
            rows = [json.loads(line) for line in out.splitlines()]
            assert [(r["kind"], r["status"]) for r in rows] == [("chip_add", "stuck")] * 2
            assert {r["attempts"] for r in rows} == {policy.max_attempts}
            assert all(r["last_error"] for r in rows) and "seat_token" not in out
            ids = {
                row["display_name"]: row["saga_id"]
                for row in await lobby.running.pool.fetch(
                    "SELECT p.display_name, c.saga_id FROM chip_adds c JOIN players p "
                    "USING (player_id)"
                )
            }
            tables.lose_adds.clear()
            tables.drop_adds.clear()

            # Bob's: the table added it (its answer lost): the table's record of the request
            # says so; the seat is credited, and the chips come home with the seat.
            status, out, err = await sagas("resolve", ids["Bob"])
            assert (status, err) == (0, "") and "added" in out
            assert await balance(stub, bob) == GRANT - 700
            leave = pb.LeaveLoungeRequest(lounge_id=lost, request_id=rid())
            assert (await stub.LeaveLounge(leave, metadata=auth(bob))).balance == GRANT

            # Carol's: never sent; she left her seat meanwhile (her 500 back, the 200 held):
            # the table refuses the add now, so it is refunded, once.
            leave = pb.LeaveLoungeRequest(lounge_id=dropped, request_id=rid())
            assert (await stub.LeaveLounge(leave, metadata=auth(carol))).balance == GRANT - 200
            status, out, err = await sagas("resolve", ids["Carol"])
            assert (status, err) == (0, "") and "refunded" in out
            assert await balance(stub, carol) == GRANT
            status, out, _ = await sagas("resolve", ids["Carol"])
            assert status == 0 and "finished" in out
            assert await balance(stub, carol) == GRANT
            status, _, err = await sagas("resolve", "c-none")
            assert status == 1 and "no chip-add saga" in err
            assert await chips.chip_adds.count_stuck() == 0
            assert await audit_holds(lobby)


async def audit_holds(lobby: Lobby) -> bool:
    """``felt audit``'s query (``AUDIT_QUERY``) holds: chips created == balances + chips at
    tables + the house, no lounge overpaid, none stranded."""
    from services.lobby.postgres import PgLedger

    return (await PgLedger(lobby.running.pool).audit()).holds


async def test_the_lobby_serves_its_recovery_metrics_when_asked(lobby_dsn: str) -> None:
    """``FELT_LOBBY_METRICS_PORT``: ``/metrics`` with the stuck gauge and the attempts by
    outcome; ``/healthz`` live while passes complete. Off by default."""
    env = {"DATABASE_URL": lobby_dsn, "FELT_DEV_MODE": "1"}
    assert LobbyServerConfig.from_env(env).metrics_port is None
    config = LobbyServerConfig.from_env({**env, "FELT_LOBBY_METRICS_PORT": "0"})
    assert config.metrics_port == 0 and config.metrics_host == "127.0.0.1"
    assert LobbyServerConfig.from_env({**env, "FELT_LOBBY_RECOVERY_ATTEMPTS": "3"}).recovery == (
        RecoveryPolicy(max_attempts=3)
    )
    pool = await empty_pool(lobby_dsn)
    await pool.close()
    clock = Clock()
    tables = FailingTables(clock)
    config.tables, config.clock, config.secrets = tables, clock, SECRETS
    config.passwords = Passwords(PasswordHasher(time_cost=1, memory_cost=64, parallelism=1))
    config.address, config.recover_every_s, config.recovery = (
        "127.0.0.1:0",
        0.05,
        RecoveryPolicy(max_attempts=1),
    )
    running = await start_lobby_server(config)
    try:
        assert running.metrics is not None
        async with grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            stub: rpc.LobbyServiceAsyncStub = rpc.LobbyServiceStub(channel)
            owner = await guest(stub, "Owner")
            lid = await lounge(stub, owner, "Down", 6)
            tables.down.add(lid)
            join = pb.JoinLoungeRequest(lounge_id=lid, buy_in=1_000, request_id=rid())
            assert (await refused(stub.JoinLounge(join, metadata=auth(owner))))[1] == (
                "TABLES_UNAVAILABLE"
            )
            text = ""
            for _ in range(200):  # the server's own passes (every 0.05 s) make it stuck
                text = await http_get(running.metrics.port, "/metrics")
                if 'felt_lobby_sagas_stuck{kind="buy_in"} 1.0' in text:
                    break
                await asyncio.sleep(0.05)
            assert 'felt_lobby_sagas_stuck{kind="buy_in"} 1.0' in text
            assert 'felt_lobby_sagas_stuck{kind="chip_add"} 0.0' in text
            assert (
                'felt_lobby_saga_recovery_attempts_total{kind="buy_in",outcome="unknown"} 1.0'
                in text
            )
            assert 'felt_lobby_sagas_turned_stuck_total{kind="buy_in"} 1.0' in text
            assert '"ok": true' in await http_get(running.metrics.port, "/healthz")
    finally:
        await running.stop()


async def http_get(port: int, path: str) -> str:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: lobby\r\n\r\n".encode())
    await writer.drain()
    body = (await reader.read()).decode()
    writer.close()
    await writer.wait_closed()
    return body


async def test_a_close_whose_table_hangs_does_not_hold_up_a_buy_in(lobby_dsn: str) -> None:
    """The server's own recovery loops (every 0.05 s here): a closing lounge whose table's
    CloseTable never answers does not keep a buy-in waiting (the closes and the buy-ins
    are recovered by loops of their own)."""
    clock = Clock()
    tables = FailingTables(clock)
    pool = await empty_pool(lobby_dsn)
    await pool.close()
    running = await start_lobby_server(
        LobbyServerConfig(
            database_url=lobby_dsn,
            address="127.0.0.1:0",
            secrets=SECRETS,
            passwords=Passwords(PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)),
            clock=clock,
            grace_s=0.5,
            tables=tables,
            recover_every_s=0.05,
        )
    )
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            stub: rpc.LobbyServiceAsyncStub = rpc.LobbyServiceStub(channel)
            owner = await guest(stub, "Owner")
            hung, open_ = await lounge(stub, owner, "Hung", 6), await lounge(stub, owner, "Open", 6)
            tables.hang_close.add(hung)
            close = pb.CloseLoungeRequest(lounge_id=hung, request_id=rid())
            with pytest.raises(grpc.aio.AioRpcError):  # the owner's call waits on the table
                await stub.CloseLounge(close, metadata=auth(owner), timeout=0.5)
            player = await guest(stub, "Player")
            tables.down.add(open_)
            join = pb.JoinLoungeRequest(lounge_id=open_, buy_in=1_000, request_id=rid())
            assert (await refused(stub.JoinLounge(join, metadata=auth(player))))[1] == (
                "TABLES_UNAVAILABLE"
            )
            tables.down.clear()
            clock.offset += timedelta(seconds=3)  # past its first backoff, if it had one
            state = ""
            for _ in range(400):  # generous: passes run every 0.05 s
                state = str(
                    await running.pool.fetchval(
                        "SELECT state FROM buy_ins WHERE lounge_id = $1", open_
                    )
                )
                if state == "seated":
                    break
                await asyncio.sleep(0.05)
            assert state == "seated"
            lounge_state = await running.pool.fetchval(
                "SELECT state FROM lounges WHERE lounge_id = $1", hung
            )
            assert lounge_state == "closing"  # still waiting on its table
    finally:
        await running.stop()
