"""Benchmark of the table service: SubmitAction against a bare gRPC ping, and table rebuilds.

Not a test: run ``python bench/table_service.py`` (``--help`` for options).

1. SubmitAction throughput and latency with N concurrent clients (1, 4, 16), each
   playing its own heads-up table against ONE table-service process (a
   subprocess, ``python -m services.table.server``), next to a bare grpc.aio
   unary ping server (also a subprocess) with as many clients, measured in the
   same run in alternating slices so that both see the same background load, and a
   third, the *floor* (``serve_floor``): the real ``SubmitAction`` method with only what
   any Python implementation pays (its messages, its metadata read, one Redis round trip
   through the event store's pipeline), so that what the table service costs beyond it
   is printed as Felt's own code per action. ``--floor-work-us N`` makes the floor's
   handler also spend N us of the CPU in plain Python (half before its Redis round trip,
   half after, as a use case works around its append): with N near what the use case
   costs in process (``bench/table_use_case.py``), it shows what that much Python costs
   inside a gRPC call, the wake-ups it causes included, with nothing of Felt's in it.
   Clients act whenever it is their turn, from the previous response's view
   (check if there is nothing to call, else call), so every request is a legal
   action that appends events; between hands (no pause) they poll the table
   until the next hand is dealt, 2 ms after the hand's end, then twice as long
   after each poll up to 32 ms (polls are not counted as requests, but their cost
   is in the server's CPU per request: polling every 2 ms, a loaded server got
   1.4 polls per action). Also shown: the server process's
   CPU time per request, which background load disturbs less than throughput.
   Targets: SubmitAction >= 0.5x the ping's throughput at 16 clients, p99 < 10 ms, and
   at most 2x the ping's server CPU per request. The servers run pinned to CPU 0 and
   this process (the clients) to CPU 1 (``taskset -a -p``; ``--no-pin`` to leave them
   be). The table service runs with its per-seat rate limit switched on, at the limits
   printed (``--seat-rate``, ``--seat-burst``); a client it refuses
   (``RESOURCE_EXHAUSTED``) counts the refusal, waits for a token and goes on.
2. Rebuilding a table from its stream: a long stream (100k events of heads-up
   hands decided in-process through the aggregate and the codec) is appended to
   Redis, then ``TableRuntime.load()`` is timed. Target: >= 50,000 events/s.

Redis: ``$REDIS_URL`` if set, else a private embedded server. The benchmark
uses database ``$FELT_BENCH_REDIS_DB`` (default 12) of that server and EMPTIES
it before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import grpc
from _support import Child, bench_redis_url, spawn
from redis.asyncio import Redis
from redis.utils import HIREDIS_AVAILABLE

from felt.core.rules.commands import Act, ActionKind
from felt.core.rules.config import Variant
from felt.core.table.aggregate import (
    CreateTable,
    PlayHand,
    SeatPlayer,
    StartNextHand,
    TableCommand,
    TableState,
    execute_table,
)
from felt.core.table.events import TableConfig
from felt.messages.events import EventMeta
from felt.storage.eventstore import RedisEventStore
from felt.storage.eventstore.codec import encode_event
from felt.storage.eventstore.pipeline import RedisPipeline
from felt.wire.convert import fill_table_view
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from services.grpc_server import aio_server, bind
from services.table.auth import DEV_SERVICE_TOKEN
from services.table.runtime import TableRuntime
from services.table.stream import hand_ids

PING_METHOD = "/bench.Ping/Ping"
FLOOR_SERVICE = "poker.v1.TableService"  # the floor answers the real method's path
SERVICE = (("authorization", f"Bearer {DEV_SERVICE_TOKEN}"),)
PORT_LINE = r"listening on port (\d+)"  # both servers' first line of output
CHECK = tpb.Action(check=tpb.Action.Check())
CALL = tpb.Action(call=tpb.Action.Call())
SERVER_CPU, CLIENT_CPU = "0", "1"
POLL_FIRST_S, POLL_MAX_S = 0.002, 0.032  # between hands: the first poll's wait, doubling to this


def pin(pid: int, cpu: str) -> None:
    """``taskset -a -p -c CPU PID``: every thread of the process (gRPC's too) on that CPU."""
    subprocess.run(["taskset", "-a", "-p", "-c", cpu, str(pid)], check=True, capture_output=True)


# ------------------------------------------------------------------ ping server


def serve_ping() -> None:
    """The bare baseline: a grpc.aio unary method that answers a fixed payload."""

    async def main() -> None:
        answer = b"x" * 600  # about the size of a SubmitActionResponse

        async def ping(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
            return answer

        server = aio_server()
        handler = grpc.method_handlers_generic_handler(
            "bench.Ping", {"Ping": grpc.unary_unary_rpc_method_handler(ping)}
        )
        server.add_generic_rpc_handlers((handler,))
        port = bind(server, "127.0.0.1:0")
        await server.start()
        print(f"ping listening on port {port}", flush=True)
        await server.wait_for_termination()

    asyncio.run(main())


def burn(ns: int) -> None:
    """Spend ``ns`` of this thread's CPU time in plain Python (the floor's stand-in work)."""
    end = time.thread_time_ns() + ns
    while time.thread_time_ns() < end:
        pass


def serve_floor(redis_url: str, work_us: float = 0.0) -> None:
    """The platform's floor for one action: what any SubmitAction in Python costs before
    Felt's own code runs.

    The real ``TableService``'s ``SubmitAction`` method alone: gRPC parses the
    real request message, the handler reads the call's metadata (the seat token) and makes
    one Redis round trip through the event store's own pipelined connection, and gRPC
    serializes a real heads-up ``SubmitActionResponse`` (built once). No interceptors, no
    rules, no events, no view building: everything the table service does beyond this is
    code Felt controls.
    """

    async def main() -> None:
        pipe = RedisPipeline.for_client(Redis.from_url(redis_url))
        assert pipe is not None, "a plain TCP Redis"
        state = first_decision()
        answer = pb.SubmitActionResponse(sequence=12345)
        fill_table_view(answer.view, state, 0, 12345, datetime.now(UTC))
        half = int(work_us * 1000 / 2)

        async def submit(
            request: pb.SubmitActionRequest, context: grpc.aio.ServicerContext[Any, Any]
        ) -> pb.SubmitActionResponse:
            dict(context.invocation_metadata() or ())  # the seat token, as auth reads it
            if half:
                burn(half)
            await pipe.call("PING")
            if half:
                burn(half)
            return answer

        # Registered as the generated code registers the real servicer's methods.
        handler = grpc.unary_unary_rpc_method_handler(
            submit,
            request_deserializer=pb.SubmitActionRequest.FromString,
            response_serializer=pb.SubmitActionResponse.SerializeToString,
        )
        server = aio_server()
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(FLOOR_SERVICE, {"SubmitAction": handler}),)
        )
        port = bind(server, "127.0.0.1:0")
        await server.start()
        print(f"floor listening on port {port}", flush=True)
        await server.wait_for_termination()

    asyncio.run(main())


def first_decision() -> TableState:
    """A heads-up table at its first decision (the floor's answer is its view)."""
    state, _ = execute_table(None, CreateTable(TableConfig("bench", Variant.NLHE, 2, 5, 10)))
    for seat in range(2):
        state, _ = execute_table(state, SeatPlayer(seat, f"p{seat}", "", 10_000_000, ""))
    state, _ = execute_table(state, StartNextHand(bytes(32), bytes(16)))
    return state


# ------------------------------------------------------------------ processes


# ------------------------------------------------------------------ measuring


@dataclass
class Stats:
    requests: int = 0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    polls: int = 0
    limited: int = 0  # refused RESOURCE_EXHAUSTED by the per-seat rate limit
    server_cpu: float = 0.0  # CPU seconds the server process used meanwhile

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def percentile(self, p: float) -> float:
        ordered = sorted(self.latencies)
        if not ordered:
            return 0.0
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] * 1e3

    @property
    def cpu_per_request(self) -> float:
        """Server CPU seconds per request (the polls between hands included)."""
        return self.server_cpu / self.requests if self.requests else 0.0

    def line(self, label: str) -> str:
        cpu = self.cpu_per_request * 1e6
        return (
            f"{label:<13} {self.rate:7,.0f} req/s   p50 {self.percentile(50):6.2f} ms"
            f"   p99 {self.percentile(99):6.2f} ms   server CPU {cpu:5.0f} us/req"
        )


Loop = Callable[[int, Stats, float], Awaitable[None]]


async def measure(server: Child, clients: int, seconds: float, loop: Loop, stats: Stats) -> None:
    """Run ``clients`` loops for ``seconds`` and add what they saw (and the server's CPU)."""
    cpu = server.cpu_seconds()
    start = time.perf_counter()
    await asyncio.gather(*(loop(i, stats, start + seconds) for i in range(clients)))
    stats.seconds += time.perf_counter() - start
    stats.server_cpu += server.cpu_seconds() - cpu


async def compare(
    clients: int, seconds: float, slices: int, *servers: tuple[Child, Loop]
) -> list[Stats]:
    """Measure the servers in turns, slice by slice, so that all see the same background load."""
    for server, loop in servers:  # warm-up
        await measure(server, clients, 0.5, loop, Stats())
    stats = [Stats() for _ in servers]
    for _ in range(slices):
        for (server, loop), seen in zip(servers, stats, strict=True):
            await measure(server, clients, seconds / slices, loop, seen)
    return stats


class PingClients:
    def __init__(self, port: int, clients: int) -> None:
        self.channels = [grpc.aio.insecure_channel(f"127.0.0.1:{port}") for _ in range(clients)]
        self.calls: list[grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]] = [
            c.unary_unary(PING_METHOD) for c in self.channels
        ]
        self.payload = pb.SubmitActionRequest(
            table_id="t-0123456789ab",
            seat=1,
            request_id="0123456789abcdef0123456789abcdef",
            expected_sequence=12345,
            action=CALL,
        ).SerializeToString()

    async def run(self, index: int, stats: Stats, until: float) -> None:
        call = self.calls[index]
        while True:
            start = time.perf_counter()
            if start >= until:
                return
            await call(self.payload)
            stats.latencies.append(time.perf_counter() - start)
            stats.requests += 1

    async def close(self) -> None:
        for channel in self.channels:
            await channel.close()


@dataclass
class BenchTable:
    table_id: str
    tokens: dict[int, tuple[tuple[str, str], ...]]
    view: tpb.TableView | None = None


def next_action(table_id: str, view: tpb.TableView, request_id: str) -> pb.SubmitActionRequest:
    """The seat to act checks if there is nothing to call, else calls (always legal)."""
    hand = view.hand
    seat = hand.to_act
    bet = next(s.bet for s in hand.seats if s.seat == seat)
    return pb.SubmitActionRequest(
        table_id=table_id,
        seat=seat,
        request_id=request_id,
        expected_sequence=view.table.sequence,
        action=CHECK if bet == hand.current_bet else CALL,
    )


class TableClients:
    """One heads-up table per client; each client acts for both seats of its table."""

    def __init__(self, port: int, clients: int, seat_rate: float = 10_000) -> None:
        self.channels = [grpc.aio.insecure_channel(f"127.0.0.1:{port}") for _ in range(clients)]
        self.stubs = [rpc.TableServiceStub(c) for c in self.channels]
        self.tables: list[BenchTable] = []
        self.request_number = 0
        self.refill_s = 1.0 / seat_rate  # how long a refused seat waits for its next token

    async def create(self, run_id: str) -> None:
        stub = self.stubs[0]
        config = epb.TableConfig(
            variant=epb.VARIANT_NLHE, seat_count=2, small_blind=5, big_blind=10
        )
        for i in range(len(self.stubs)):
            table_id = f"bench-{run_id}-{i}"
            await stub.CreateTable(
                pb.CreateTableRequest(table_id=table_id, config=config, request_id=table_id),
                metadata=SERVICE,
            )
            tokens: dict[int, tuple[tuple[str, str], ...]] = {}
            for seat in range(2):
                seated = await stub.SeatPlayer(
                    pb.SeatPlayerRequest(
                        table_id=table_id,
                        seat=seat,
                        player_id=f"p{seat}",
                        stack=10_000_000,
                        request_id=f"{table_id}-{seat}",
                    ),
                    metadata=SERVICE,
                )
                tokens[seat] = (("authorization", f"Bearer {seated.seat_token}"),)
            self.tables.append(BenchTable(table_id, tokens))

    async def run(self, index: int, stats: Stats, until: float) -> None:
        stub = self.stubs[index]
        table = self.tables[index]
        wait = POLL_FIRST_S
        while time.perf_counter() < until:
            view = table.view
            if view is None or not view.hand.HasField("to_act"):
                stats.polls += 1
                view = (
                    await stub.GetTableView(pb.GetTableViewRequest(table_id=table.table_id))
                ).view
                table.view = view
                if not view.hand.HasField("to_act"):
                    # The next deal is a timer away, later the busier the server: each poll
                    # costs it a call, so poll less and less often (they were 1.4 a request).
                    await asyncio.sleep(wait)
                    wait = min(2 * wait, POLL_MAX_S)
                continue
            wait = POLL_FIRST_S
            self.request_number += 1
            request = next_action(table.table_id, view, f"{table.table_id}:{self.request_number}")
            start = time.perf_counter()
            try:
                response = await stub.SubmitAction(request, metadata=table.tokens[request.seat])
            except grpc.aio.AioRpcError as err:
                if err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                    stats.limited += 1  # the seat's rate limit: wait for a token, act again
                    await asyncio.sleep(self.refill_s)
                    continue
                if err.code() != grpc.StatusCode.ABORTED:
                    raise
                table.view = None  # a timer dealt in between: re-read
                continue
            stats.latencies.append(time.perf_counter() - start)
            stats.requests += 1
            table.view = response.view
            if not response.view.hand.HasField("to_act"):
                await asyncio.sleep(POLL_FIRST_S)  # the hand is over: the deal is a timer away

    async def close(self) -> None:
        for channel in self.channels:
            await channel.close()


class FloorClients:
    """The tables' clients, sending the same requests with the same seat tokens to the floor
    server (whose answer is always a turn to act): the same work on the clients' side."""

    def __init__(self, port: int, tables: TableClients) -> None:
        self.channels = [grpc.aio.insecure_channel(f"127.0.0.1:{port}") for _ in tables.tables]
        self.stubs = [rpc.TableServiceStub(c) for c in self.channels]
        self.tables = tables.tables
        self.request_number = 0

    async def run(self, index: int, stats: Stats, until: float) -> None:
        stub = self.stubs[index]
        table = self.tables[index]
        view: tpb.TableView | None = None
        while time.perf_counter() < until:
            self.request_number += 1
            request = (
                next_action(table.table_id, view, f"floor:{self.request_number}")
                if view is not None
                else pb.SubmitActionRequest(table_id=table.table_id, seat=0, action=CALL)
            )
            start = time.perf_counter()
            response = await stub.SubmitAction(request, metadata=table.tokens[request.seat])
            stats.latencies.append(time.perf_counter() - start)
            stats.requests += 1
            view = response.view

    async def close(self) -> None:
        for channel in self.channels:
            await channel.close()


# ------------------------------------------------------------------ rebuild


def long_stream(table_id: str, target: int) -> list[list[bytes]]:
    """Heads-up hands (check/call to the showdown) decided through the aggregate, encoded."""
    config = TableConfig(table_id, Variant.NLHE, 2, small_blind=5, big_blind=10)
    commands: list[TableCommand] = [
        CreateTable(config),
        SeatPlayer(0, "p0", "P0", 10_000_000, "0" * 64),
        SeatPlayer(1, "p1", "P1", 10_000_000, "1" * 64),
    ]
    state: TableState | None = None
    batches: list[list[bytes]] = []
    sequence = 0
    now = datetime.now(UTC)
    hand = 0
    while sequence < target:
        if not commands:
            assert state is not None
            running = state.hand
            if running is None or running.ended:
                hand += 1
                commands.append(StartNextHand(hand.to_bytes(32, "big")))
            else:
                seat = running.actor_seat
                assert seat is not None
                x = running.seat_state(seat)
                assert x is not None
                kind = ActionKind.CHECK if x.bet == running.current_bet else ActionKind.CALL
                commands.append(PlayHand(Act(seat, kind)))
        command = commands.pop(0)
        batch = []
        after, events = execute_table(state, command)
        for event, hand_id in zip(events, hand_ids(state, events), strict=True):
            sequence += 1
            meta = EventMeta(table_id, sequence, now, f"r{sequence}", hand_id)
            batch.append(encode_event(event, meta))
        batches.append(batch)
        state = after
    return batches


async def rebuild(store: RedisEventStore, events: int) -> tuple[int, float, float]:
    table_id = "bench-rebuild"
    started = time.perf_counter()
    batches = long_stream(table_id, events)
    made = time.perf_counter() - started
    version = 0
    chunk: list[bytes] = []
    for batch in batches:  # appended in chunks of whole commands (one Lua call each)
        chunk.extend(batch)
        if len(chunk) >= 500:
            await store.append(table_id, chunk, version, f"chunk-{version}")
            version += len(chunk)
            chunk = []
    if chunk:
        await store.append(table_id, chunk, version, f"chunk-{version}")
        version += len(chunk)
    print(f"  generated {version:,} events in {made:.1f} s ({len(batches):,} commands)")
    best = float("inf")
    read_best = float("inf")
    for _ in range(3):
        runtime = TableRuntime(table_id, store)
        start = time.perf_counter()
        await runtime.load()
        best = min(best, time.perf_counter() - start)
        assert runtime.version == version and runtime.state is not None
        start = time.perf_counter()
        await store.read(table_id)
        read_best = min(read_best, time.perf_counter() - start)
    return version, best, read_best


# ------------------------------------------------------------------ main


async def main(args: argparse.Namespace) -> None:
    url = bench_redis_url("FELT_BENCH_REDIS_DB", "12")
    redis = Redis.from_url(url)
    await redis.flushdb()
    counts = [int(c) for c in args.clients.split(",")]
    parser = "hiredis" if HIREDIS_AVAILABLE else "pure-Python (no hiredis)"
    print(
        f"Redis {url}; {os.cpu_count()} CPUs; {args.seconds:.0f} s per measurement "
        f"in {args.slices} slices alternating with the ping"
    )
    print(f"redis-py reply parser: {parser}; load average {os.getloadavg()[0]:.2f}")
    print(
        f"per-seat rate limit of the table service: {args.seat_rate:g} changes/s, "
        f"bursts of {args.seat_burst:g} (FELT_SEAT_RATE_PER_S, FELT_SEAT_RATE_BURST)"
    )
    ping = await spawn("ping server", [__file__, "--ping-server"], {}, PORT_LINE)
    service = await spawn(
        "table service",
        ["-m", "services.table.server"],
        {
            "REDIS_URL": url,
            "FELT_TABLE_ADDR": "127.0.0.1:0",
            "FELT_BETWEEN_HANDS_MS": "0",
            "FELT_TOKEN_SECRET": "bench-secret",
            "FELT_DEV_MODE": "1",  # short secret, the public service credential: a throw-away bench
            "FELT_LOG_FORMAT": "json",  # logs as in production (development mode: console)
            # the clients act as fast as they can, far past a person's rate limit
            "FELT_SEAT_RATE_PER_S": f"{args.seat_rate:g}",
            "FELT_SEAT_RATE_BURST": str(args.seat_burst),
        },
        PORT_LINE,
    )
    floor = await spawn(
        "floor server",
        [__file__, "--floor-server", "--floor-work-us", f"{args.floor_work_us:g}"],
        {"REDIS_URL": url},
        PORT_LINE,
    )
    if args.floor_work_us:
        print(f"the floor's handler spends {args.floor_work_us:g} us of plain Python a call")
    print(
        f"table service pid {service.pid}, ping server pid {ping.pid}, floor pid {floor.pid}",
        flush=True,
    )
    pinned = args.pin and (os.cpu_count() or 1) > 1
    if pinned:
        for child in (ping, service, floor):
            pin(child.pid, SERVER_CPU)
        pin(os.getpid(), CLIENT_CPU)
        print(f"servers pinned to CPU {SERVER_CPU}, the clients to CPU {CLIENT_CPU}")
    ratios: dict[int, tuple[float, float, float]] = {}
    try:
        print("\nSubmitAction (one table per client, heads-up) vs bare grpc.aio unary ping")
        for n in counts:
            pings = PingClients(ping.port, n)
            tables = TableClients(service.port, n, args.seat_rate)
            await tables.create(f"{n}-{int(time.time())}")
            floors = FloorClients(floor.port, tables)
            base, actions, least = await compare(
                n,
                args.seconds,
                args.slices,
                (ping, pings.run),
                (service, tables.run),
                (floor, floors.run),
            )
            await pings.close()
            await tables.close()
            await floors.close()
            print(f"{n:>3} client(s)")
            print("  " + base.line("ping"))
            print("  " + least.line("floor"))
            print("  " + actions.line("SubmitAction"))
            ratio = actions.rate / base.rate
            cpu = actions.cpu_per_request / base.cpu_per_request if base.requests else 0.0
            ratios[n] = (ratio, actions.percentile(99), cpu)
            polls = f"{actions.polls:,} polls between hands"
            limited = f"{actions.limited:,} refused by the rate limit"
            print(f"  ratio SubmitAction/ping {ratio:.2f}x, server CPU per request {cpu:.2f}x")
            print(f"  ({polls}; {limited})")
            own = actions.cpu_per_request - least.cpu_per_request
            print(
                f"  server CPU per request: floor/ping "
                f"{least.cpu_per_request / base.cpu_per_request:.2f}x, SubmitAction/floor "
                f"{actions.cpu_per_request / least.cpu_per_request:.2f}x; Felt's own code "
                f"{own * 1e6:.0f} us per action ({own / actions.cpu_per_request:.0%})"
            )
    finally:
        await service.stop()
        await ping.stop()
        await floor.stop()

    rate = 0.0
    if args.rebuild:
        print(f"\nRebuilding a table from its stream ({args.events:,} events)")
        store = RedisEventStore(redis)
        count, load_s, read_s = await rebuild(store, args.events)
        rate = count / load_s
        print(f"  TableRuntime.load(): {load_s:.2f} s = {rate:,.0f} events/s (best of 3)")
        print(f"    reading the stream alone: {read_s:.2f} s ({count / read_s:,.0f} events/s)")
        fold_s = max(load_s - read_s, 1e-9)
        print(f"    so decoding and folding: {fold_s:.2f} s ({count / fold_s:,.0f} events/s)")
        await store.aclose()
    await redis.flushdb()
    await redis.aclose()

    top = max(counts)
    ratio, p99, cpu = ratios[top]
    print("\nTargets")
    print(f"  SubmitAction/ping at {top} clients {ratio:.2f}x (target >= 0.5x)")
    print(f"  server CPU per request, SubmitAction/ping {cpu:.2f}x (target <= 2x)")
    print(f"  SubmitAction p99 at {top} clients {p99:.2f} ms (target < 10 ms)")
    if args.rebuild:
        print(f"  rebuild {rate:,.0f} events/s (target >= 50,000)")
    met = ratio >= 0.5 and cpu <= 2 and p99 < 10 and (rate >= 50_000 or not args.rebuild)
    print(f"targets {'met' if met else 'NOT met'}")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="per measurement")
    parser.add_argument(
        "--slices", type=int, default=5, help="alternating ping/SubmitAction slices per measurement"
    )
    parser.add_argument("--clients", default="1,4,16", help="concurrent clients, e.g. 1,4,16")
    parser.add_argument("--events", type=int, default=100_000, help="stream length to rebuild")
    parser.add_argument(
        "--seat-rate", type=float, default=10_000, help="the per-seat rate limit, changes/s"
    )
    parser.add_argument(
        "--seat-burst", type=int, default=100_000, help="the per-seat rate limit's burst"
    )
    parser.add_argument(
        "--no-pin",
        dest="pin",
        action="store_false",
        help="leave the processes unpinned (else servers on CPU 0, clients on CPU 1)",
    )
    parser.add_argument(
        "--no-rebuild", dest="rebuild", action="store_false", help="skip the rebuild part"
    )
    parser.add_argument("--ping-server", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--floor-server", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--floor-work-us",
        type=float,
        default=0.0,
        help="CPU time the floor's handler spends in plain Python a call (default 0)",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    options = parse(sys.argv[1:])
    if options.ping_server:
        serve_ping()
    elif options.floor_server:
        serve_floor(bench_redis_url("FELT_BENCH_REDIS_DB", "12"), options.floor_work_us)
    else:
        asyncio.run(main(options))
