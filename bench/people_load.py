"""Load test at people's pace: tables per table-service core, through the gateway (issue #24).

Not a test: run ``python bench/people_load.py`` (``--help`` for options). Loopback only,
bounded by ``--max-tables``, ``--seconds`` per step and ``--budget`` in all.

Processes, on the benchmark's own Redis database (``$FELT_BENCH_PEOPLE_REDIS_DB``, default
8, EMPTIED before, between the parts and after): the table service (``python -m
services.table.server``, development mode), the gateway (``felt gateway``, which routes each
table's calls to its owner by the leases in Redis) and, in part 3, AI workers. On a 2-core
machine three parties cannot each have a core: the table service(s) run alone on CPU 0, the
gateway, the load generator (this process) and the AI workers share CPU 1 (``taskset -a``).

Each table is heads-up No-Limit Hold'em with two people seated (``SeatPlayer`` with the
service credential, as the lobby seats a buy-in; their seat tokens are what the lobby hands
a person). The load generator plays both seats through the gateway's public API (Connect,
binary protobuf, the web client's format): every ``--pace`` seconds (3) a table's seat to
act checks, or calls when it cannot check, at a phase of its own so that the tables do not
act together. It learns whose turn it is as the web client does, from the seats' own
``WatchTable`` streams with ``view_changes`` (no ``GetTableView`` per event). Six watchers
per table, all through the gateway: the two seated people's own streams and four
spectators (whose one upstream stream per table the gateway shares).

1. Growing load, one table-service instance: steps of ``--first`` tables doubling up to
   ``--max-tables`` (the tables of a step keep playing in the next); at each step, after its
   new tables have opened their streams and played one pace, a window of ``--seconds``:
   actions/s, watched events/s (items the watchers received), the CPU time (user + system,
   ``/proc/<pid>/stat``) of the table service, the gateway and the load generator per action
   and per watched event, action latency p50/p99 (a ``SubmitAction`` through the gateway,
   sent to answered: wall-clock), and the tables per table-service core derived from the
   CPU per action at the pace (``_pacing.tables_per_core``). It stops growing when the table
   service nears a core, p99 passes ``--max-p99-ms``, or the other core is saturated (the
   gateway and the generator use 0.9 of it, or turns are taken late;
   ``_pacing.stop_reason``). ``--flame PATH``: then a py-spy flame graph of the table service
   for ``--flame-seconds`` (and its collapsed stacks next to it, ``.txt``, of which the top
   frames are printed).
2. The same load at ``--split-tables`` tables (default: the last step's count) on two
   table-service instances, both on CPU 0 (the router spreads new tables over the announced
   instances by rendezvous hashing; the gateway finds each table's owner by its lease),
   against part 1's figures at that count.
3. AI seats: ``--ai-tables`` tables of one person (played by the generator at the pace) and
   one AI seat, answered by one AI worker, then by two: decisions/s (the workers' own
   ``/metrics``), worker CPU per decision, and the AI's turn as the person's stream sees it
   (its turn starting to its action arriving: wall-clock).

Wall-clock figures (actions/s and events/s, which the pace fixes while the generator keeps up;
latencies) move with other load on the machine; CPU per action and per event much less.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import random
import re
import resource
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from _pacing import StepFigures, percentile, plan_steps, stop_reason, tables_per_core
from _support import Child, bench_redis_url, cpu_seconds, spawn
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from redis.asyncio import Redis

from felt.service.table_router import OwnerCalls, owner_calls
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_connect as connect
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from services.gateway.codecs import BinaryCodec
from services.table.auth import DEV_SERVICE_TOKEN

SERVICE = (("authorization", f"Bearer {DEV_SERVICE_TOKEN}"),)
AI_TOKEN = "bench-people-ai-credential-0123456789abcdef"
TABLE_LINE = r"listening on port (\d+)"
GATEWAY_LINE = r"listening on http://127\.0\.0\.1:(\d+)"
WORKER_LINE = r"metrics port (\d+)"
SERVICE_CPU, FRONT_CPU = "0", "1"  # the table service alone; the gateway, this process, workers
SPECTATORS = 4  # with the two seats' own streams: six watchers per table
CHECK = tpb.Action(check=tpb.Action.Check())
CALL = tpb.Action(call=tpb.Action.Call())
FOLD = tpb.Action(fold=tpb.Action.Fold())
# WatchTableResponse's first field on the wire: 0x12 is field 2 (snapshot), 0x0a field 1.
SNAPSHOT_TAG = 0x12
LATE_S = 0.5  # a table's turn taken this late: the generator (or its core) is behind
MANY = "1000000"  # the watch and connection caps: one client address opens every stream here


def pin(pid: int, cpu: str) -> None:
    """``taskset -a -p -c CPU PID``: every thread of the process (gRPC's too) on that CPU."""
    if (os.cpu_count() or 1) > 1:
        subprocess.run(
            ["taskset", "-a", "-p", "-c", cpu, str(pid)], check=True, capture_output=True
        )


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def redis_cpu(redis: Redis) -> float:
    info = await redis.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


# ------------------------------------------------------------------ the people


class Counted:
    """A spectator's item, unparsed: the generator counts spectators' events, as a browser
    would draw them, without paying for protobuf in Python (it shares the gateway's core)."""

    __slots__ = ("snapshot",)

    def __init__(self, snapshot: bool) -> None:
        self.snapshot = snapshot


class CountingCodec(BinaryCodec[Any]):
    def decode(self, data: bytes | bytearray, message_class: type[Any]) -> Any:
        return Counted(bool(data) and data[0] == SNAPSHOT_TAG)


@dataclass
class Seat:
    """A seated person as its own stream shows the table."""

    seat: int
    token: str
    sequence: int = 0
    to_act: int | None = None
    legal: tuple[int, ...] = ()

    @property
    def headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.token}"}

    def fold_in(self, item: pb.WatchTableResponse) -> None:
        if item.HasField("snapshot"):
            hand = item.snapshot.hand
            self.sequence = item.snapshot.table.sequence
            self.to_act = hand.to_act if hand.HasField("to_act") else None
            self.legal = tuple(a.type for a in hand.legal_actions)
            return
        self.sequence = item.event.sequence
        if item.HasField("view_change"):
            change = item.view_change
            self.to_act = change.to_act if change.HasField("to_act") else None
            self.legal = tuple(a.type for a in change.legal_actions)


@dataclass
class Table:
    table_id: str
    seats: list[Seat]  # the people's seats (the generator plays them)
    phase: float  # seconds after the pace's start at which this table acts
    ai_seat: int | None = None
    ai_turn_since: float | None = None


@dataclass
class Counts:
    """What the generator saw; a window is the difference of two copies (``snapshot``)."""

    actions: int = 0
    watched: int = 0  # items (events) received by all watchers, snapshots not counted
    stale: int = 0  # ABORTED / FAILED_PRECONDITION: the table moved since the seat's view
    limited: int = 0  # RESOURCE_EXHAUSTED
    errors: int = 0
    dropped: int = 0  # streams that ended and were opened again
    idle_ticks: int = 0  # a table's turn came with no person to act (a deal, the AI's turn)
    late_ticks: int = 0  # turns taken more than LATE_S late: the generator is behind
    opened: int = 0  # streams that got their first item

    def snapshot(self) -> Counts:
        return Counts(**vars(self))

    def since(self, before: Counts) -> Counts:
        return Counts(**{k: v - getattr(before, k) for k, v in vars(self).items()})


@dataclass
class Load:
    """The people: their tables, their streams, their actions, what they saw."""

    url: str
    pace: float
    clients: int = 16
    counts: Counts = field(default_factory=Counts)
    latencies: list[float] = field(default_factory=list)
    ai_waits: list[float] = field(default_factory=list)
    first_error: str = ""
    tables: list[Table] = field(default_factory=list)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    closing: bool = False
    _requests: itertools.count[int] = field(default_factory=itertools.count)

    def __post_init__(self) -> None:
        self.seat_clients = [
            connect.TableServiceClient(self.url, send_compression=None) for _ in range(self.clients)
        ]
        self.spectator_clients = [
            connect.TableServiceClient(self.url, codec=CountingCodec(), send_compression=None)
            for _ in range(self.clients)
        ]

    def start(self, table: Table) -> None:
        """The table's watchers and its players, as tasks."""
        n = len(self.tables)
        self.tables.append(table)
        client = self.seat_clients[n % self.clients]
        for seat in table.seats:
            self.tasks.append(asyncio.create_task(self.follow_seat(client, table, seat)))
        spectators = self.spectator_clients[n % self.clients]
        watchers = SPECTATORS + (2 - len(table.seats))  # six in all
        for _ in range(watchers):
            self.tasks.append(asyncio.create_task(self.spectate(spectators, table.table_id)))
        self.tasks.append(asyncio.create_task(self.play(client, table)))

    def note(self, error: BaseException) -> None:
        self.counts.errors += 1
        if not self.first_error:
            self.first_error = repr(error)

    async def follow_seat(
        self, client: connect.TableServiceClient, table: Table, seat: Seat
    ) -> None:
        """A person's own stream, resumed after its last event if it ends."""
        first = True
        while not self.closing:
            request = pb.WatchTableRequest(
                table_id=table.table_id,
                seat=seat.seat,
                view_changes=True,
                from_sequence=seat.sequence,
            )
            try:
                async for item in client.watch_table(request, headers=seat.headers):
                    if first:
                        first = False
                        self.counts.opened += 1
                    if item.HasField("event"):
                        self.counts.watched += 1
                    seat.fold_in(item)
                    if table.ai_seat is not None:
                        self.time_ai(table, seat.to_act)
            except ConnectError:
                pass
            if self.closing:
                return
            self.counts.dropped += 1
            await asyncio.sleep(1.0)

    def time_ai(self, table: Table, to_act: int | None) -> None:
        """The AI's turn as the person's stream sees it: from its start to the next item
        that passes the turn on (its action, with the next turn's change)."""
        now = time.perf_counter()
        if to_act == table.ai_seat:
            if table.ai_turn_since is None:
                table.ai_turn_since = now
        elif table.ai_turn_since is not None:
            self.ai_waits.append(now - table.ai_turn_since)
            table.ai_turn_since = None

    async def spectate(self, client: connect.TableServiceClient, table_id: str) -> None:
        first = True
        while not self.closing:
            request = pb.WatchTableRequest(table_id=table_id, view_changes=True)
            try:
                async for item in client.watch_table(request):
                    if cast(Counted, item).snapshot:
                        if first:
                            first = False
                            self.counts.opened += 1
                        continue
                    self.counts.watched += 1
            except ConnectError:
                pass
            if self.closing:
                return
            self.counts.dropped += 1
            await asyncio.sleep(1.0)

    async def play(self, client: connect.TableServiceClient, table: Table) -> None:
        """Every ``pace`` seconds, at the table's phase, the seat to act acts."""
        loop = asyncio.get_running_loop()
        next_at = loop.time() + table.phase
        while not self.closing:
            await asyncio.sleep(max(0.0, next_at - loop.time()))
            now = loop.time()
            if now - next_at > LATE_S:
                self.counts.late_ticks += 1
                next_at = now
            next_at += self.pace
            seat = next((s for s in table.seats if s.to_act == s.seat and s.legal), None)
            if seat is None:
                self.counts.idle_ticks += 1
                continue
            await self.act(client, table, seat)

    async def act(self, client: connect.TableServiceClient, table: Table, seat: Seat) -> None:
        if tpb.ACTION_TYPE_CHECK in seat.legal:
            action = CHECK
        elif tpb.ACTION_TYPE_CALL in seat.legal:
            action = CALL
        else:
            action = FOLD
        request = pb.SubmitActionRequest(
            table_id=table.table_id,
            seat=seat.seat,
            request_id=f"{table.table_id}:{next(self._requests)}",
            expected_sequence=seat.sequence,
            action=action,
        )
        started = time.perf_counter()
        try:
            await client.submit_action(request, headers=seat.headers, timeout_ms=30_000)
        except ConnectError as err:
            if err.code in (Code.ABORTED, Code.FAILED_PRECONDITION):
                self.counts.stale += 1
            elif err.code is Code.RESOURCE_EXHAUSTED:
                self.counts.limited += 1
            else:
                self.note(err)
            return
        self.latencies.append(time.perf_counter() - started)
        self.counts.actions += 1
        seat.to_act = None  # until the stream shows the next turn: never the same turn twice

    async def close(self) -> None:
        self.closing = True
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        for c in (*self.seat_clients, *self.spectator_clients):
            with contextlib.suppress(Exception):
                await c.close()


# ------------------------------------------------------------------ tables


def _seat_call(
    request: pb.SeatPlayerRequest,
) -> Callable[[rpc.TableServiceAsyncStub], Awaitable[pb.SeatPlayerResponse]]:
    def call(stub: rpc.TableServiceAsyncStub) -> Awaitable[pb.SeatPlayerResponse]:
        return stub.SeatPlayer(request, metadata=SERVICE)

    return call


async def create_tables(
    calls: OwnerCalls[rpc.TableServiceAsyncStub],
    prefix: str,
    first: int,
    count: int,
    pace: float,
    ai: bool,
) -> list[Table]:
    """``count`` heads-up tables, two people (or a person and an AI seat) at each, created
    at the instance the router names for each (16 at a time)."""
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=2, small_blind=5, big_blind=10)
    config.action_clock.FromSeconds(30)  # a person's clock; the generator acts well within it

    async def one(n: int) -> Table:
        table_id = f"{prefix}-{n}"
        await calls.call(
            table_id,
            lambda stub: stub.CreateTable(
                pb.CreateTableRequest(table_id=table_id, config=config, request_id=table_id),
                metadata=SERVICE,
            ),
        )
        seats = []
        for seat in range(2):
            request = pb.SeatPlayerRequest(
                table_id=table_id,
                seat=seat,
                player_id=f"p{seat}",
                stack=10_000_000,
                request_id=f"{table_id}-{seat}",
            )
            if ai and seat == 1:
                request.ai_level = epb.AI_LEVEL_NORMAL
            seated = await calls.call(table_id, _seat_call(request))
            if not (ai and seat == 1):
                seats.append(Seat(seat, seated.seat_token))
        return Table(table_id, seats, random.uniform(0, pace), 1 if ai else None)

    made: list[Table] = []
    numbers = list(range(first, first + count))
    for at in range(0, len(numbers), 16):
        made.extend(await asyncio.gather(*(one(n) for n in numbers[at : at + 16])))
    return made


# ------------------------------------------------------------------ the stack


@dataclass
class Stack:
    """The processes of a part: table-service instances, the gateway, AI workers."""

    redis_url: str
    services: list[Child] = field(default_factory=list)
    gateway: Child | None = None
    workers: list[Child] = field(default_factory=list)
    logs: str = ""  # a folder for the processes' logs (stderr), else dropped

    def log(self, name: str) -> Path | None:
        return Path(self.logs) / f"{name}.log" if self.logs else None

    async def _spawn(
        self, name: str, args: list[str], env: dict[str, str], line: str, cpu: str
    ) -> Child:
        """``python ARGS`` started with its log named ``name``, pinned to ``cpu``."""
        child = await spawn(name, args, env, line, self.log(name))
        pin(child.pid, cpu)
        return child

    async def start(self, instances: int) -> None:
        env = {
            "REDIS_URL": self.redis_url,
            "FELT_TABLE_ADDR": "127.0.0.1:0",
            "FELT_DEV_MODE": "1",  # the public service credential: a throw-away bench
            "FELT_LOG_FORMAT": "json",  # logs as in production (development mode: console)
            "FELT_AI_TOKEN": AI_TOKEN,
            "FELT_WATCH_MAX_STREAMS": MANY,
            "FELT_WATCH_MAX_PER_PEER": MANY,  # the gateway is one peer for every stream
        }
        for _ in range(instances):
            name = f"table-service-{len(self.services)}"
            args = ["-m", "services.table.server"]
            self.services.append(await self._spawn(name, args, env, TABLE_LINE, SERVICE_CPU))
        self.gateway = await self._spawn(
            "gateway",
            ["-m", "services.cli", "gateway"],
            {
                "REDIS_URL": self.redis_url,
                "FELT_GATEWAY_ADDR": "127.0.0.1:0",
                "FELT_TABLE_TARGET": f"127.0.0.1:{self.services[0].port}",
                "FELT_LOG_FORMAT": "json",
                "FELT_GATEWAY_WATCH_PER_ADDRESS": MANY,
                "FELT_GATEWAY_WATCH_MAX": MANY,
                "FELT_GATEWAY_CONNECTIONS_PER_ADDRESS": MANY,
                "FELT_GATEWAY_CONNECTIONS_MAX": MANY,
            },
            GATEWAY_LINE,
            FRONT_CPU,
        )

    async def start_workers(self, count: int) -> None:
        env = {
            "REDIS_URL": self.redis_url,
            "FELT_TABLE_TARGET": f"127.0.0.1:{self.services[0].port}",
            "FELT_AI_TOKEN": AI_TOKEN,
            "FELT_AI_METRICS_PORT": "0",
            "FELT_AI_METRICS_HOST": "127.0.0.1",
            "FELT_LOG_LEVEL": "WARNING",
        }
        for n in range(count):
            args = ["-m", "services.ai_worker"]
            self.workers.append(await self._spawn(f"worker-{n}", args, env, WORKER_LINE, FRONT_CPU))

    async def stop_workers(self) -> None:
        for worker in self.workers:
            await worker.stop()
        self.workers = []

    async def stop(self) -> None:
        await self.stop_workers()
        if self.gateway is not None:
            await self.gateway.stop()
        for service in self.services:
            await service.stop()

    def pids(self) -> dict[str, int]:
        pids = {f"table service {n}": s.pid for n, s in enumerate(self.services)}
        assert self.gateway is not None
        pids["gateway"] = self.gateway.pid
        for n, worker in enumerate(self.workers):
            pids[f"worker {n}"] = worker.pid
        return pids


def decisions(port: int) -> int:
    """Accepted decisions so far, from an AI worker's ``/metrics``."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    found = re.search(r'^felt_ai_decisions_total\{outcome="accepted"\} ([0-9.e+]+)$', text, re.M)
    return int(float(found.group(1))) if found else 0


# ------------------------------------------------------------------ measuring


@dataclass
class Window:
    """One measurement: what the generator saw and the CPU each process used."""

    tables: int
    seconds: float
    counts: Counts
    latencies: list[float]
    ai_waits: list[float]
    cpu: dict[str, float]  # CPU seconds over the window, by process
    decisions: int = 0

    @property
    def actions_per_s(self) -> float:
        return self.counts.actions / self.seconds

    @property
    def service_cpu(self) -> float:
        return sum(v for k, v in self.cpu.items() if k.startswith("table service"))

    def per_action_us(self, seconds: float) -> float:
        return seconds / max(self.counts.actions, 1) * 1e6

    def per_event_us(self, seconds: float) -> float:
        return seconds / max(self.counts.watched, 1) * 1e6

    @property
    def front_cpu(self) -> float:
        """The CPU seconds of the processes on the other core (all but the table service's
        and Redis's)."""
        return sum(v for k, v in self.cpu.items() if not k.startswith(("table service", "redis")))

    def figures(self, pace: float) -> StepFigures:
        turns = self.tables * self.seconds / pace
        return StepFigures(
            self.tables,
            self.service_cpu / self.seconds,
            self.front_cpu / self.seconds,
            percentile(self.latencies, 99) * 1e3,
            self.counts.late_ticks / max(turns, 1.0),
        )


async def measure(load: Load, stack: Stack, redis: Redis, seconds: float) -> Window:
    pids = stack.pids()
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    before["load generator"] = own_cpu()
    before["redis"] = await redis_cpu(redis)
    decided = sum(decisions(w.port) for w in stack.workers)
    counts = load.counts.snapshot()
    load.latencies, load.ai_waits = [], []
    started = time.perf_counter()
    await asyncio.sleep(seconds)
    elapsed = time.perf_counter() - started
    after = {name: cpu_seconds(pid) for name, pid in pids.items()}
    after["load generator"] = own_cpu()
    after["redis"] = await redis_cpu(redis)
    made = sum(decisions(w.port) for w in stack.workers) - decided
    latencies, ai_waits = load.latencies, load.ai_waits
    load.latencies, load.ai_waits = [], []  # the window's own: nothing after it is added
    return Window(
        len(load.tables),
        elapsed,
        load.counts.since(counts),
        latencies,
        ai_waits,
        {name: after[name] - before[name] for name in after},
        made,
    )


async def grow(
    load: Load,
    calls: OwnerCalls[rpc.TableServiceAsyncStub],
    prefix: str,
    target: int,
    ai: bool,
    timeout: float,
) -> None:
    """Tables up to ``target``; returns once their streams are open (or ``timeout``)."""
    have = len(load.tables)
    if target <= have:
        return
    opened = load.counts.opened
    for table in await create_tables(calls, prefix, have, target - have, load.pace, ai):
        load.start(table)
    expected = opened + (target - have) * (SPECTATORS + 2)  # six streams a table
    deadline = time.monotonic() + timeout
    while load.counts.opened < expected and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    await asyncio.sleep(load.pace)  # every new table has had its first turn


def print_header() -> None:
    print(
        f"{'tables':>6} {'act/s':>6} {'ev/s':>7} {'TS cores':>8} "
        f"{'TS us/act':>9} {'TS us/ev':>8} {'GW us/act':>9} {'GW us/ev':>8} "
        f"{'gen us/act':>10} {'p50 ms':>7} {'p99 ms':>7} {'tables/core':>11} {'(as run)':>8}"
    )


def print_window(w: Window, pace: float) -> float:
    """One line of figures; returns the derived tables per table-service core.

    ``tables/core``: from the CPU per action at exactly one action per pace and table;
    ``(as run)``: the tables over the cores the service used, at the actions the tables made
    (fewer than one a pace: a turn between hands finds nobody to act)."""
    per_core = tables_per_core(w.service_cpu / max(w.counts.actions, 1), pace)
    gateway = w.cpu.get("gateway", 0.0)
    print(
        f"{w.tables:>6} {w.actions_per_s:>6.1f} {w.counts.watched / w.seconds:>7.1f} "
        f"{w.service_cpu / w.seconds:>8.2f} "
        f"{w.per_action_us(w.service_cpu):>9.0f} {w.per_event_us(w.service_cpu):>8.0f} "
        f"{w.per_action_us(gateway):>9.0f} {w.per_event_us(gateway):>8.0f} "
        f"{w.per_action_us(w.cpu['load generator']):>10.0f} "
        f"{percentile(w.latencies, 50) * 1e3:>7.1f} {percentile(w.latencies, 99) * 1e3:>7.1f} "
        f"{per_core:>11,.0f} {w.tables / max(w.service_cpu / w.seconds, 1e-9):>8,.0f}"
    )
    c = w.counts
    print(
        f"       ({c.stale} stale, {c.limited} rate-limited, {c.errors} errors, "
        f"{c.dropped} streams reopened, {c.late_ticks} late ticks, {c.idle_ticks} ticks with "
        f"nobody to act; cores used: "
        + ", ".join(f"{k} {v / w.seconds:.2f}" for k, v in w.cpu.items())
        + ")",
        flush=True,
    )
    return per_core


# ------------------------------------------------------------------ the flame graph


async def flame(pid: int, path: Path, seconds: float) -> None:
    """py-spy's flame graph of ``pid`` into ``path``, then its collapsed stacks for as long
    into ``path`` with ``.txt``; prints the functions with the most samples on top."""
    spy = Path(sys.executable).with_name("py-spy")
    raw = path.with_suffix(".txt")
    for fmt, out in (("flamegraph", path), ("raw", raw)):
        process = await asyncio.create_subprocess_exec(
            str(spy),
            "record",
            "--pid",
            str(pid),
            "--duration",
            str(int(seconds)),
            "--rate",
            "100",
            "--nonblocking",
            "--format",
            fmt,
            "--output",
            str(out),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        pin(process.pid, FRONT_CPU)  # its sampling off the table service's core
        await process.wait()
    if not raw.exists():
        print("  py-spy wrote nothing (is it installed, may it attach?)")
        return
    on_top: Counter[str] = Counter()
    below: Counter[str] = Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        frames = stack.split(";")
        total += int(count)
        on_top[frames[-1]] += int(count)
        for name in set(frames):
            below[name] += int(count)
    print(f"  {total} samples; on top of the stack (self):")
    for name, n in on_top.most_common(12):
        print(f"    {n / total:6.1%}  {name}")
    print("  in the stack (inclusive), the service's own frames:")
    own = [(n, c) for n, c in below.items() if "services/" in n or "felt/" in n]
    for name, n in sorted(own, key=lambda x: -x[1])[:12]:
        print(f"    {n / total:6.1%}  {name}")


# ------------------------------------------------------------------ the parts


async def part_growing(args: argparse.Namespace, redis: Redis, url: str) -> list[Window]:
    print(
        f"\n1. Growing load, one table-service instance (CPU {SERVICE_CPU}); the gateway and "
        f"the load generator on CPU {FRONT_CPU}; one action per table every {args.pace:g} s, "
        f"6 watchers per table; windows of {args.seconds:g} s"
    )
    stack = Stack(url, logs=args.logs)
    windows: list[Window] = []
    await stack.start(1)
    assert stack.gateway is not None
    load = Load(f"http://127.0.0.1:{stack.gateway.port}", args.pace, args.http_clients)
    calls = owner_calls(f"127.0.0.1:{stack.services[0].port}", redis, rpc.TableServiceStub)
    try:
        print_header()
        for target in plan_steps(args.first, args.max_tables):
            if time.monotonic() > args.deadline:
                print(f"(time budget spent: no step of {target} tables)")
                break
            await grow(load, calls, "people", target, False, args.open_timeout)
            window = await measure(load, stack, redis, args.seconds)
            windows.append(window)
            print_window(window, args.pace)
            reason = stop_reason(window.figures(args.pace), max_p99_ms=args.max_p99_ms)
            if reason:
                print(f"stopped growing: {reason}")
                break
        if args.flame:
            print(f"\npy-spy of the table service at {len(load.tables)} tables:")
            await flame(stack.services[0].pid, Path(args.flame), args.flame_seconds)
    finally:
        await load.close()
        await calls.close()
        await stack.stop()
        if load.first_error:
            print(f"first error: {load.first_error}")
    return windows


async def part_split(
    args: argparse.Namespace, redis: Redis, url: str, tables: int, one: Window | None
) -> None:
    print(f"\n2. {tables} tables on two table-service instances (both on CPU {SERVICE_CPU})")
    stack = Stack(url, logs=args.logs)
    await stack.start(2)
    assert stack.gateway is not None
    load = Load(f"http://127.0.0.1:{stack.gateway.port}", args.pace, args.http_clients)
    calls = owner_calls(f"127.0.0.1:{stack.services[0].port}", redis, rpc.TableServiceStub)
    try:
        while len(await calls.router.instances.announced()) < 2:  # type: ignore[union-attr]
            await asyncio.sleep(0.2)
        await grow(load, calls, "split", tables, False, args.open_timeout)
        owners = Counter(
            [await calls.router.address(t.table_id) for t in load.tables]  # the leases
        )
        window = await measure(load, stack, redis, args.seconds)
        print_header()
        if one is not None:
            print_window(one, args.pace)
        print_window(window, args.pace)
        print(
            "  tables by instance: "
            + ", ".join(f"{address} {n}" for address, n in sorted(owners.items()))
        )
        for n in range(2):
            name = f"table service {n}"
            print(
                f"  instance {n}: {window.cpu[name] / window.seconds:.2f} cores, "
                f"{window.per_action_us(window.cpu[name]):.0f} us per action of all"
            )
        if one is not None:
            ratio = window.per_action_us(window.service_cpu) / one.per_action_us(one.service_cpu)
            print(f"  table-service CPU per action, two instances / one: {ratio:.2f}x")
    finally:
        await load.close()
        await calls.close()
        await stack.stop()
        if load.first_error:
            print(f"first error: {load.first_error}")


async def part_ai(args: argparse.Namespace, redis: Redis, url: str) -> None:
    print(
        f"\n3. {args.ai_tables} tables of a person (the generator, one action every "
        f"{args.pace:g} s when it is its turn) and an AI seat; one AI worker, then two "
        f"(on CPU {FRONT_CPU})"
    )
    stack = Stack(url, logs=args.logs)
    await stack.start(1)
    assert stack.gateway is not None
    load = Load(f"http://127.0.0.1:{stack.gateway.port}", args.pace, args.http_clients)
    calls = owner_calls(f"127.0.0.1:{stack.services[0].port}", redis, rpc.TableServiceStub)
    try:
        await stack.start_workers(1)
        await grow(load, calls, "ai", args.ai_tables, True, args.open_timeout)
        for count in (1, 2):
            if count == 2:
                await stack.stop_workers()
                await stack.start_workers(2)
                await asyncio.sleep(args.pace)
            window = await measure(load, stack, redis, args.seconds)
            workers = sum(v for k, v in window.cpu.items() if k.startswith("worker"))
            rate = window.decisions / window.seconds
            print(
                f"  {count} worker{'s' if count > 1 else ''}: {rate:.1f} decisions/s, "
                f"{window.actions_per_s:.1f} person actions/s; worker CPU "
                f"{workers / max(window.decisions, 1) * 1e3:.2f} ms per decision "
                f"({workers / window.seconds:.2f} cores); the AI's turn p50 "
                f"{percentile(window.ai_waits, 50) * 1e3:.0f} ms, p99 "
                f"{percentile(window.ai_waits, 99) * 1e3:.0f} ms; table service "
                f"{window.service_cpu / max(window.counts.actions + window.decisions, 1) * 1e6:.0f}"
                f" us per action (person's and AI's)"
            )
            print(
                "       cores used: "
                + ", ".join(f"{k} {v / window.seconds:.2f}" for k, v in window.cpu.items())
            )
    finally:
        await load.close()
        await calls.close()
        await stack.stop()
        if load.first_error:
            print(f"first error: {load.first_error}")


async def main(args: argparse.Namespace) -> None:
    args.deadline = time.monotonic() + args.budget
    url = bench_redis_url("FELT_BENCH_PEOPLE_REDIS_DB", "8")
    redis = Redis.from_url(url)
    pin(os.getpid(), FRONT_CPU)
    print(
        f"Redis {url}; {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}; "
        f"table service on CPU {SERVICE_CPU}, gateway + load generator on CPU {FRONT_CPU}"
    )
    try:
        await redis.flushdb()
        windows = await part_growing(args, redis, url)
        if args.split and windows:
            await redis.flushdb()
            tables = args.split_tables or windows[-1].tables
            same = next((w for w in windows if w.tables == tables), None)
            await part_split(args, redis, url, tables, same)
        if args.ai_tables:
            await redis.flushdb()
            await part_ai(args, redis, url)
    finally:
        await redis.flushdb()
        await redis.aclose()
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pace", type=float, default=3.0, help="seconds between a table's actions")
    parser.add_argument("--first", type=int, default=25, help="tables in the first step")
    parser.add_argument("--max-tables", type=int, default=800, help="tables in the last step")
    parser.add_argument("--seconds", type=float, default=20.0, help="measurement per step")
    parser.add_argument("--budget", type=float, default=900.0, help="seconds for part 1's steps")
    parser.add_argument("--max-p99-ms", type=float, default=1000.0, help="stop growing past it")
    parser.add_argument(
        "--open-timeout", type=float, default=120.0, help="for a step's streams to open"
    )
    parser.add_argument("--http-clients", type=int, default=16, help="Connect clients shared")
    parser.add_argument(
        "--no-split", dest="split", action="store_false", help="skip part 2 (two instances)"
    )
    parser.add_argument(
        "--split-tables", type=int, default=0, help="part 2's tables (0: part 1's last step)"
    )
    parser.add_argument(
        "--ai-tables", type=int, default=50, help="part 3's tables with an AI seat (0: skip)"
    )
    parser.add_argument("--flame", default="", help="a py-spy flame graph of part 1's top step")
    parser.add_argument("--flame-seconds", type=float, default=20.0)
    parser.add_argument("--logs", default="", help="a folder for the services' logs (stderr)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse(sys.argv[1:])))
