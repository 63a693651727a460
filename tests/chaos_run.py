"""The chaos run (issue 24, item 7): ``python -m tests.chaos_run --hands 1000 --tables 20``.

A redis-server of its own (``tests/e2e/own_redis.py``: append-only, ``--fsync always`` by
default), a throw-away PostgreSQL database on ``$DATABASE_URL``'s server, and as processes
three ``felt table-service`` instances (fixed instance ids and ports, routed by their leases),
two ``felt ai-worker``, two ``felt projector`` and one ``felt lobby``. A house player opens
``--tables`` lounges through the lobby's public API, Hold'em and Draw in turn, three AI seats
each (the house's chips); ``--people`` simulated people (guests, each an asyncio task) join a
lounge, play a few hands through the table service's public API with the seat token the
lobby gave them (every action answered OK remembered by its request key and sequence), leave,
and join another. Meanwhile a chaos task SIGKILLs a random process of each kind
``--kills-per-kind`` times at random moments, restarting it right away with the same
settings (a table service under its own instance id, so it takes its leases back), and kills
Redis with SIGKILL ``--redis-restarts`` times, restarting it on the same directory.

Once ``--hands`` hands have ended and every kill is done, the people leave, the house closes
every lounge (the tables stop dealing and vacate their seats), the projectors catch up, and
the run checks (AssertionError if any fails):

* every stream gap-free and duplicate-free from sequence 1 (the tap, ``tests/archive_run.py``,
  read each as appended; what Redis keeps at the end is the tap's tail, byte for byte);
* every hand archived exactly once and equal to its stream (``archive_run.check_hands``);
* chips in the streams: each hand ends with the chips its seats started it with, each seat
  leaves with the stack the stream gave it, and every closed table paid out what was seated;
* chips in SQL: the audit query (``AUDIT_QUERY``, docs/operations.md) holds with nothing left
  at tables, no lounge overpaid or stranded, and each lounge's ledger matches its stream
  (buy-ins and AI funding less refunded buy-ins == chips seated; cash-outs, "table closed"
  and house returns less those refunds == chips that left);
* every action answered OK is in its stream at the sequence it was answered with;
* no saga in flight or stuck: no buy-in reserved, seated or leaving, no chip add reserved,
  no lounge creating or closing;
* every process the chaos task did not kill is the process it started as.

Then it prints the figures (docs/operations.md, "The chaos run").
``tests/e2e/test_chaos_run.py`` runs a shortened version.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TypeVar

import asyncpg
import grpc
import redis.asyncio as redis_async_lib

from felt.service.table_router import OwnerCalls, owner_calls
from felt.storage.eventstore import RedisEventStore, StoredRecord
from felt.storage.idempotency import client_key, seat_principal
from felt.storage.instances import INSTANCE_KEY_PREFIX
from felt.storage.redis_client import REDIS_ERRORS
from felt.wire.tokens import token_hash
from poker.events.v1 import events_pb2 as epb
from poker.v1 import lobby_pb2 as lpb
from poker.v1 import lobby_service_pb2 as lb
from poker.v1 import lobby_service_pb2_grpc as lrpc
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from services.lobby.ports.ledger import Audit
from services.lobby.postgres.ledger import AUDIT_QUERY
from tests.archive_run import Tap, _left, caught_up, check_hands
from tests.e2e.own_redis import OwnRedis, stable_port
from tests.e2e.test_lobby_stack import LOBBY_ENV, TABLE_ENV
from tests.e2e.test_projector_kill import archive_database
from tests.e2e.test_serve import Launcher, Proc

KINDS = ("table-service", "ai-worker", "projector", "lobby")
# Answered again for the same request id: an instance or the lobby coming back, a lease to
# wait out, or a seat's rate limit (the request not applied).
RETRIED = (
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
)
CALL_WAIT_S = 90.0  # how long one call may be retried (a restart, a lease to wait out)
LEASE_MS = "2000"
AI_SEATS = 3
HOLDEM = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=6, small_blind=5, big_blind=10)
DRAW = epb.TableConfig(variant=epb.VARIANT_DRAW5, seat_count=5, ante=1, small_bet=10, big_bet=20)
T = TypeVar("T")


@dataclass
class Service:
    """One process of a kind, started again with the same command and settings."""

    kind: str
    args: tuple[str, ...]
    env: dict[str, str]
    ready: str  # how its first line starts
    proc: Proc | None = None

    async def start(self, launcher: Launcher) -> None:
        self.proc = await launcher.start(*self.args, **self.env)
        assert self.proc.first_line.startswith(self.ready), (
            self.kind,
            self.proc.first_line,
            self.proc.log.read_text()[-3000:],
        )

    async def kill_and_restart(self, launcher: Launcher) -> None:
        assert self.proc is not None
        assert self.proc.process.returncode is None, (self.kind, "died by itself")
        self.proc.process.send_signal(signal.SIGKILL)
        await self.proc.process.wait()
        await self.start(launcher)


@dataclass
class Acked:
    table_id: str
    key: str  # the table's request key of the action
    sequence: int  # the sequence it was answered with


@dataclass
class Figures:
    hands: int = 0
    archived: int = 0
    tables: Counter[str] = field(default_factory=Counter)
    people: int = 0
    joins: int = 0
    leaves: int = 0
    refunded: int = 0
    kills: Counter[str] = field(default_factory=Counter)
    acknowledged: int = 0
    lost: int = 0
    retries: int = 0
    chips_created: int = 0
    chips_seated: int = 0
    chips_left: int = 0
    balances: int = 0
    house: int = 0
    on_tables: int = 0
    entries: int = 0
    seconds: float = 0.0

    def report(self) -> str:
        kills = ", ".join(f"{k} {self.kills[k]}" for k in (*KINDS, "redis"))
        tables = ", ".join(f"{v} {n}" for v, n in sorted(self.tables.items()))
        return "\n".join(
            [
                f"{self.hands:,} hands ended ({self.archived:,} archived, each once and equal"
                f" to its stream) at {sum(self.tables.values())} tables ({tables}),"
                f" {self.entries:,} stream entries, no gap or duplicate, in {self.seconds:.0f} s",
                f"SIGKILLs: {kills} (Redis restarted {self.kills['redis']} times)",
                f"{self.people} people: {self.joins} joins, {self.leaves} leaves,"
                f" {self.refunded} buy-ins refunded",
                f"actions answered OK {self.acknowledged:,}, lost {self.lost};"
                f" calls retried {self.retries:,}",
                f"chips: created {self.chips_created:,} = balances {self.balances:,} + at tables"
                f" {self.on_tables:,} + house {self.house:,}; through the tables' streams"
                f" {self.chips_seated:,} seated, {self.chips_left:,} left",
                "sagas in flight or stuck at the end: 0",
            ]
        )


@dataclass
class ChaosTap(Tap):
    """The archive run's tap, which also counts hands ended and outlives Redis restarts."""

    ended: int = 0
    # Per table, the records counted: a read cut short by Redis going away has kept some.
    counted: dict[str, int] = field(default_factory=dict)

    async def read_once(self, store: RedisEventStore) -> int:
        try:
            return await super().read_once(store)
        finally:
            for t, rs in self.records.items():
                for r in rs[self.counted.get(t, 0) :]:
                    self.ended += epb.StoredEvent.FromString(r.payload).HasField("hand_ended")
                self.counted[t] = len(rs)

    async def follow_through(self) -> None:
        while not self.stopping:
            try:
                await self.follow()
            except REDIS_ERRORS:
                await asyncio.sleep(0.2)


async def retrying(call: Callable[[], Awaitable[T]], figures: Figures) -> T:
    """``call()`` (a request with its request id, or a read) until it is answered; the other
    refusals are raised. Redis and a service coming back take a few seconds."""
    deadline = time.monotonic() + CALL_WAIT_S
    while True:
        try:
            return await call()
        except grpc.aio.AioRpcError as err:
            if err.code() not in RETRIED or time.monotonic() > deadline:
                raise
        except REDIS_ERRORS:  # the router's look-up, Redis down
            if time.monotonic() > deadline:
                raise
        figures.retries += 1
        await asyncio.sleep(0.2)


def choose(view: tpb.TableView, step: int) -> tpb.Action:
    """Stand pat at the draw, a minimum raise now and then, else call or check."""
    legal = {a.type: a for a in view.hand.legal_actions}
    if tpb.ACTION_TYPE_DISCARD in legal:
        return tpb.Action(discard=tpb.Action.Discard())
    if step % 5 == 0 and tpb.ACTION_TYPE_RAISE in legal:
        return tpb.Action(raise_to=tpb.Action.RaiseTo(amount=legal[tpb.ACTION_TYPE_RAISE].min_to))
    if tpb.ACTION_TYPE_CALL in legal:
        return tpb.Action(call=tpb.Action.Call())
    return tpb.Action(check=tpb.Action.Check())


@dataclass
class Person:
    """A guest of the lobby who joins lounges, plays and leaves, through the public APIs."""

    name: str
    lobby: lrpc.LobbyServiceAsyncStub
    tables: OwnerCalls[rpc.TableServiceAsyncStub]
    figures: Figures
    acked: list[Acked]
    access: str = ""

    @property
    def md(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.access}"),)

    async def sign_up(self) -> None:
        request = lb.CreateGuestRequest(display_name=self.name, request_id=uuid.uuid4().hex)
        guest = await retrying(lambda: self.lobby.CreateGuest(request, timeout=10), self.figures)
        self.access = guest.credentials.access_token

    async def join(self, lounge: lpb.Lounge) -> lb.JoinLoungeResponse | None:
        request = lb.JoinLoungeRequest(
            lounge_id=lounge.lounge_id, buy_in=lounge.min_buy_in, request_id=uuid.uuid4().hex
        )
        try:
            joined = await retrying(
                lambda: self.lobby.JoinLounge(request, metadata=self.md, timeout=10),
                self.figures,
            )
        except grpc.aio.AioRpcError as err:  # full, closing, or too few chips: not seated
            assert err.code() == grpc.StatusCode.FAILED_PRECONDITION, (err.code(), err.details())
            return None
        self.figures.joins += 1
        return joined

    async def view(self, table_id: str, seat: int, token: str) -> tpb.TableView:
        request = pb.GetTableViewRequest(table_id=table_id, seat=seat)
        md = (("authorization", f"Bearer {token}"),)
        got = await retrying(
            lambda: self.tables.call(
                table_id, lambda s: s.GetTableView(request, metadata=md, timeout=5)
            ),
            self.figures,
        )
        return got.view

    async def act(
        self, table_id: str, seat: int, token: str, view: tpb.TableView, step: int, leaving: bool
    ) -> None:
        """One action, sent again with its request id until answered; remembered if OK. A
        seat leaving may be vacated between the view and the action (NOT_FOUND)."""
        request = pb.SubmitActionRequest(
            table_id=table_id,
            seat=seat,
            request_id=uuid.uuid4().hex,
            expected_sequence=view.table.sequence,
            action=choose(view, step),
        )
        md = (("authorization", f"Bearer {token}"),)
        try:
            answer = await retrying(
                lambda: self.tables.call(
                    table_id, lambda s: s.SubmitAction(request, metadata=md, timeout=5)
                ),
                self.figures,
            )
        except grpc.aio.AioRpcError as err:  # the table moved on first: not acknowledged
            refusals = [grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION]
            assert err.code() in refusals + [grpc.StatusCode.NOT_FOUND] * leaving, (
                err.code(),
                err.details(),
                table_id,
                seat,
                view.table.sequence,
            )
            return
        key = client_key(seat_principal(seat, token_hash(token)), request).key
        self.acked.append(Acked(table_id, key, answer.sequence))

    async def sit(
        self, joined: lb.JoinLoungeResponse, hands: int, leave_when: asyncio.Event
    ) -> None:
        """Play ``hands`` hands (or until ``leave_when``, or no hand for a while), then leave,
        acting meanwhile until the lobby says the seat is vacated."""
        table_id, seat, token = joined.lounge_id, joined.seat, joined.seat_token
        view = await self.view(table_id, seat, token)
        until = view.table.hands_played + hands
        moved_at, last, step = time.monotonic(), view.table.sequence, 0
        leave = lb.LeaveLoungeRequest(lounge_id=table_id, request_id=uuid.uuid4().hex)
        leaving = False
        while True:
            if not leaving and (
                view.table.hands_played >= until
                or leave_when.is_set()
                or time.monotonic() - moved_at > 20
            ):
                leaving = True
            if leaving:
                left = await retrying(
                    lambda: self.lobby.LeaveLounge(leave, metadata=self.md, timeout=10),
                    self.figures,
                )
                if left.state == lb.LEAVE_STATE_LEFT:
                    self.figures.leaves += 1
                    return
            hand = view.hand
            if (
                hand.HasField("to_act")
                and hand.to_act == seat
                and hand.street != epb.STREET_COMPLETE
            ):
                step += 1
                await self.act(table_id, seat, token, view, step, leaving)
            else:
                await asyncio.sleep(0.1)
            try:
                view = await self.view(table_id, seat, token)
            except grpc.aio.AioRpcError as err:  # the seat was vacated (its token refused)
                assert leaving, (err.code(), err.details())
                await asyncio.sleep(0.2)
                continue
            if view.table.sequence != last:
                moved_at, last = time.monotonic(), view.table.sequence

    async def live(
        self, lounges: list[lpb.Lounge], rng: random.Random, stop: asyncio.Event
    ) -> None:
        await self.sign_up()
        while not stop.is_set():
            joined = await self.join(rng.choice(lounges))
            if joined is None:
                await asyncio.sleep(0.5)
                continue
            await self.sit(joined, rng.randint(2, 6), stop)


async def _chaos(
    services: dict[str, list[Service]],
    own: OwnRedis,
    launcher: Launcher,
    rng: random.Random,
    kills_per_kind: int,
    redis_restarts: int,
    gap_s: tuple[float, float],
    figures: Figures,
) -> None:
    """Each kind killed ``kills_per_kind`` times and Redis ``redis_restarts`` times, in a
    random order at random moments."""
    plan = [k for k in KINDS for _ in range(kills_per_kind)] + ["redis"] * redis_restarts
    rng.shuffle(plan)
    for kind in plan:
        await asyncio.sleep(rng.uniform(*gap_s))
        if kind == "redis":
            await own.restart(signal.SIGKILL, down_s=rng.uniform(0.2, 1.0))
        else:
            await rng.choice(services[kind]).kill_and_restart(launcher)
        figures.kills[kind] += 1
        print(f"chaos: {kind} killed and restarted", flush=True)


def _stream_chips(table_id: str, records: list[StoredRecord]) -> tuple[int, int]:
    """Chips seated and chips that left the table by its stream, checked hand by hand: each
    hand starts with the stacks the stream gave its seats and ends with as many chips, and a
    seat leaves with its stack (a seat that folded may leave mid-hand with what it has behind:
    the hand's end must then show it with that stack)."""
    stacks: dict[int, int] = {}  # each seated seat's stack (a dealt-in one's at its hand's start)
    start: dict[int, int] = {}  # the hand in play's seats and stacks
    gone: dict[int, int] = {}  # dealt-in seats that left mid-hand, and the stacks they took
    seated = left = 0
    for r in records:
        e = epb.StoredEvent.FromString(r.payload)
        kind = e.WhichOneof("event")
        if kind == "player_seated":
            stacks[e.player_seated.seat] = e.player_seated.stack
            seated += e.player_seated.stack
        elif kind == "chips_added":
            stacks[e.chips_added.seat] += e.chips_added.amount
            seated += e.chips_added.amount
        elif kind == "hand_started":
            start = {s.seat: s.stack for s in e.hand_started.setup.seats}
            assert all(stacks[s] == c for s, c in start.items()), (table_id, e.sequence, stacks)
        elif kind == "hand_ended":
            ended = {s.seat: s.stack for s in e.hand_ended.stacks}
            before = sum(start[s] if s in start else stacks[s] for s in ended)
            assert sum(ended.values()) == before, (table_id, e.sequence, ended, start)
            for s, c in ended.items():
                if s in gone:
                    assert gone.pop(s) == c, (table_id, e.sequence, s, c)
                else:
                    stacks[s] = c
            assert not gone, (table_id, e.sequence, "left mid-hand, not at its end", gone)
            start = {}
        elif kind == "player_left":
            seat, stack = e.player_left.seat, e.player_left.stack
            held = stacks.pop(seat)
            if seat in start:
                gone[seat] = stack
            else:
                assert stack == held, (table_id, e.sequence, stack, held)
            left += stack
    assert not stacks, (table_id, "seats still held at a closed table", stacks)
    assert seated == left, (table_id, seated, left)
    return seated, left


async def check(
    redis: redis_async_lib.Redis,
    pool: asyncpg.Pool,
    tap: ChaosTap,
    acked: list[Acked],
    figures: Figures,
) -> None:
    """The run's assertions (the module docstring), filling in ``figures``."""
    store = RedisEventStore(redis)
    sql = {
        r["lounge_id"]: r
        for r in await pool.fetch(
            """
            WITH moves AS (
                SELECT table_id AS lounge_id, kind, amount FROM ledger WHERE table_id IS NOT NULL
                UNION ALL SELECT lounge_id, kind, amount FROM house_ledger
            ), refunds AS (
                SELECT lounge_id, sum(amount) AS chips FROM buy_ins
                WHERE state = 'compensated' GROUP BY lounge_id
            )
            SELECT lounge_id,
                coalesce(-sum(amount) FILTER (WHERE kind IN ('buy_in', 'house_seat')), 0) AS paid,
                coalesce(sum(amount) FILTER (WHERE kind IN ('cash_out', 'table_closed',
                    'house_return')), 0) AS returned,
                coalesce((SELECT chips FROM refunds r WHERE r.lounge_id = m.lounge_id), 0)
                    AS refunded
            FROM moves m GROUP BY lounge_id
            """
        )
    }
    for t, records in tap.records.items():
        assert [r.sequence for r in records] == list(range(1, len(records) + 1)), t
        kept = await _left(redis, store, t)  # what trimming left: the tap's tail
        if kept:
            first = kept[0].sequence
            assert [(r.sequence, r.payload) for r in kept] == [
                (r.sequence, r.payload) for r in records[first - 1 :]
            ], t
        seated, left = _stream_chips(t, records)
        figures.chips_seated += seated
        figures.chips_left += left
        row = sql[t]
        assert row["paid"] - row["refunded"] == seated, (t, dict(row), seated)
        assert row["returned"] - row["refunded"] == left, (t, dict(row), left)
        figures.entries += len(records)
        created = epb.StoredEvent.FromString(records[0].payload)
        assert created.HasField("table_created"), t
        figures.tables[epb.Variant.Name(created.table_created.config.variant)] += 1
    figures.refunded = int(
        await pool.fetchval("SELECT count(*) FROM buy_ins WHERE state = 'compensated'")
    )
    figures.hands = tap.ended
    figures.archived = await check_hands(pool, tap)
    assert figures.archived == figures.hands, (figures.archived, figures.hands)
    by_key = {
        (t, r.sequence): epb.StoredEvent.FromString(r.payload).request_key
        for t, rs in tap.records.items()
        for r in rs
    }
    figures.acknowledged = len(acked)
    figures.lost = sum(1 for a in acked if by_key.get((a.table_id, a.sequence)) != a.key)
    assert figures.lost == 0, f"{figures.lost} acknowledged actions lost"
    totals = await pool.fetchrow(AUDIT_QUERY)
    assert totals is not None
    audit = Audit(*(int(v) for v in totals.values()))
    assert audit.created == audit.balances + audit.on_tables + audit.house, audit
    assert audit.ledger_sum == audit.balances and audit.house_sum == audit.house, audit
    assert audit.overpaid == 0 and audit.stranded == 0 and audit.on_tables == 0, audit
    figures.chips_created, figures.balances = audit.created, audit.balances
    figures.house, figures.on_tables = audit.house, audit.on_tables
    in_flight = await pool.fetchval(
        "SELECT (SELECT count(*) FROM buy_ins WHERE state IN ('reserved', 'seated', 'leaving'))"
        " + (SELECT count(*) FROM chip_adds WHERE state = 'reserved')"
        " + (SELECT count(*) FROM lounges WHERE state IN ('creating', 'closing'))"
    )
    assert in_flight == 0, f"{in_flight} sagas or lounges left in flight"


async def _open_lounges(
    lobby: lrpc.LobbyServiceAsyncStub, tables: int, figures: Figures
) -> tuple[tuple[tuple[str, str], ...], list[lpb.Lounge]]:
    """The house player and its lounges, Hold'em and Draw in turn, three AI seats each."""
    guest = await retrying(
        lambda: lobby.CreateGuest(
            lb.CreateGuestRequest(display_name="Owner", request_id=uuid.uuid4().hex)
        ),
        figures,
    )
    md = (("authorization", f"Bearer {guest.credentials.access_token}"),)
    lounges = []
    for n in range(tables):
        request = lb.CreateLoungeRequest(
            name=f"Chaos {n}",
            config=HOLDEM if n % 2 == 0 else DRAW,
            ai_seats=[lpb.AiSeat(level=epb.AI_LEVEL_EASY) for _ in range(AI_SEATS)],
            request_id=f"chaos-lounge-{n}",
        )
        created = await retrying(
            partial(lobby.CreateLounge, request, metadata=md, timeout=20), figures
        )
        assert created.lounge.state == lpb.LOUNGE_STATE_OPEN, created.lounge
        lounges.append(created.lounge)
    return md, lounges


async def _close_all(
    lobby: lrpc.LobbyServiceAsyncStub,
    md: tuple[tuple[str, str], ...],
    lounges: list[lpb.Lounge],
    figures: Figures,
) -> None:
    for lounge in lounges:
        request = lb.CloseLoungeRequest(
            lounge_id=lounge.lounge_id, request_id=f"close-{lounge.lounge_id}"
        )
        await retrying(partial(lobby.CloseLounge, request, metadata=md, timeout=10), figures)
    deadline = time.monotonic() + CALL_WAIT_S * 2
    for lounge in lounges:
        while True:
            got = await retrying(
                partial(
                    lobby.GetLounge, lb.GetLoungeRequest(lounge_id=lounge.lounge_id), metadata=md
                ),
                figures,
            )
            if got.lounge.state == lpb.LOUNGE_STATE_CLOSED:
                break
            assert time.monotonic() < deadline, f"{lounge.lounge_id} did not close"
            await asyncio.sleep(0.3)


def _services(dsn: str, ai_stream: str) -> dict[str, list[Service]]:
    """Three table services on fixed ports and ids (below the ephemeral range, so that no
    outgoing connection takes one while its instance is down), the others pointed at the
    first (their routers find the others)."""
    table_env = {**TABLE_ENV, "FELT_LEASE_TTL_MS": LEASE_MS, "FELT_AI_STREAM": ai_stream}
    tables, internals = [], []
    for n in range(3):
        public, internal = f"127.0.0.1:{stable_port()}", f"127.0.0.1:{stable_port()}"
        internals.append(internal)
        env = {
            **table_env,
            "FELT_TABLE_ADDR": public,
            "FELT_TABLE_INTERNAL_ADDR": internal,
            "FELT_INSTANCE_ID": f"chaos-table-{n}",
        }
        tables.append(Service("table-service", ("table-service",), env, "table service listening"))
    workers = [
        Service(
            "ai-worker",
            ("ai-worker",),
            {
                "FELT_AI_STREAM": ai_stream,
                "FELT_TABLE_TARGET": internals[0],
                "FELT_AI_TOKEN": TABLE_ENV["FELT_AI_TOKEN"],
                "FELT_AI_METRICS_PORT": "0",
                "FELT_AI_CLAIM_IDLE_MS": "1000",
            },
            "ai worker",
        )
        for _ in range(2)
    ]
    projectors = [
        Service(
            "projector",
            ("projector", "--metrics-port", "off"),
            {
                "DATABASE_URL": dsn,
                "FELT_PROJECTOR_ID": f"chaos-{m}",
                "FELT_PROJECTOR_SCAN_MS": "200",
                "FELT_PROJECTOR_LEASE_MS": "1000",
            },
            "projector ",
        )
        for m in ("a", "b")
    ]
    lobby_env = {
        **LOBBY_ENV,
        "DATABASE_URL": dsn,
        "FELT_TABLE_ADDR": internals[0],
        "FELT_LOBBY_ADDR": f"127.0.0.1:{stable_port()}",
        "FELT_LOBBY_MAX_LOUNGES": "1000",
    }
    lobby = Service("lobby", ("lobby",), lobby_env, "lobby listening")
    return {
        "table-service": tables,
        "ai-worker": workers,
        "projector": projectors,
        "lobby": [lobby],
    }


async def run(
    own: OwnRedis,
    launcher: Launcher,
    dsn: str,
    *,
    hands: int,
    tables: int,
    people: int,
    kills_per_kind: int,
    redis_restarts: int,
    seed: int,
    gap_s: tuple[float, float] = (2.0, 6.0),
    limit_s: float = 1_500.0,
) -> Figures:
    """The run (see the module docstring); raises AssertionError if a check fails."""
    rng, figures = random.Random(seed), Figures(people=people)
    started = time.monotonic()
    services = _services(dsn, f"chaos-ai-{uuid.uuid4().hex[:8]}")
    for kind in KINDS:
        for service in services[kind]:
            await service.start(launcher)
    redis = redis_async_lib.Redis.from_url(own.url)
    tap = ChaosTap(redis)
    tapping = asyncio.create_task(tap.follow_through())
    router_redis = redis_async_lib.Redis.from_url(own.url)
    table_calls = owner_calls(
        services["table-service"][0].env["FELT_TABLE_ADDR"],
        router_redis,
        rpc.TableServiceStub,
        directory=INSTANCE_KEY_PREFIX,
    )
    lobby_addr = services["lobby"][0].env["FELT_LOBBY_ADDR"]
    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=4)
    acked: list[Acked] = []
    tasks: list[asyncio.Task[None]] = []  # the people and the chaos, cancelled if a check fails
    try:
        async with grpc.aio.insecure_channel(lobby_addr) as channel:
            lobby: lrpc.LobbyServiceAsyncStub = lrpc.LobbyServiceStub(channel)
            house, lounges = await _open_lounges(lobby, tables, figures)
            stop = asyncio.Event()
            crowd = [
                asyncio.create_task(
                    Person(f"Person {n}", lobby, table_calls, figures, acked).live(
                        lounges, random.Random(rng.random()), stop
                    )
                )
                for n in range(people)
            ]
            chaos = asyncio.create_task(
                _chaos(services, own, launcher, rng, kills_per_kind, redis_restarts, gap_s, figures)
            )
            tasks += [*crowd, chaos]
            while not (chaos.done() and tap.ended >= hands):
                assert time.monotonic() - started < limit_s, f"{tap.ended} hands in {limit_s} s"
                for task in (tapping, *crowd):
                    if task.done():
                        task.result()
                        raise AssertionError("a task ended early")
                if chaos.done():
                    chaos.result()
                await asyncio.sleep(0.5)
            await chaos
            stop.set()
            await asyncio.gather(*crowd)
            await _close_all(lobby, house, lounges, figures)
        tap.stopping = True
        await tapping
        await tap.catch_up()
        await caught_up(pool, tap)
        figures.seconds = time.monotonic() - started
        for kind in KINDS:
            for service in services[kind]:
                assert service.proc is not None
                assert service.proc.process.returncode is None, (
                    kind,
                    service.proc.log.read_text()[-3000:],
                )
        await check(redis, pool, tap, acked, figures)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        tap.stopping = True
        with suppress(BaseException):
            await tapping
        await table_calls.close()
        await pool.close()
        await redis.aclose()
    return figures


async def main(args: argparse.Namespace) -> None:
    database_url = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(args.keep or scratch)  # --keep: the services' logs and Redis's files stay
        own = OwnRedis(tmp / "redis", fsync=args.fsync)
        await own.start()
        launcher = Launcher(own.url, tmp)
        try:
            async with archive_database(database_url, "felt_chaos_run") as dsn:
                figures = await run(
                    own,
                    launcher,
                    dsn,
                    hands=args.hands,
                    tables=args.tables,
                    people=args.people,
                    kills_per_kind=args.kills_per_kind,
                    redis_restarts=args.redis_restarts,
                    seed=args.seed,
                )
                print(f"appendfsync {args.fsync}, seed {args.seed}", flush=True)
                print(figures.report(), flush=True)
        finally:
            await launcher.stop_all()
            await own.close()


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--hands", type=int, default=1_000)
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--people", type=int, default=8)
    parser.add_argument("--kills-per-kind", type=int, default=2)
    parser.add_argument("--redis-restarts", type=int, default=2)
    parser.add_argument("--fsync", choices=("always", "everysec"), default="always")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", default="", help="a directory for the logs, kept")
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(parse()))
