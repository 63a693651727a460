"""Benchmark of the HTTP gateway: SubmitAction through it, and one table watched by many streams.

Not a test: run ``python bench/gateway.py`` (``--help`` for options).

1. SubmitAction through the gateway (Connect protocol, JSON, the generated
   ``connectrpc`` client) against the same call straight to the table service
   over gRPC, in the same run, in alternating slices so that both see the same
   background load. N clients (default 16) each play their own heads-up table
   (acting for both seats from the previous answer's view; polls between
   hands are not counted). The table service (a subprocess) and this process
   (the clients) are pinned to CPU 0, the gateway (a subprocess) to CPU 1
   (``taskset -a``, on a 2-core machine), the same for both. Printed: requests
   per second, latency, and the CPU time per request of the table service,
   the gateway and the clients. Target: through the gateway >= 0.5x direct.
2. One table watched by W Connect streams (default 1,000, JSON) through the
   gateway (spectators: one upstream gRPC stream for them all), the gateway
   alone on CPU 1, the table service and the watchers' clients on CPU 0
   (``--clients-on-gateway-cpu``: the clients on the gateway's CPU, as this
   benchmark ran before issue #23): events are appended at a steady rate (2/s:
   a lively table) by a seat adding chips; every watcher must receive every
   event, in order; the delivery latency (event appended -> received by a
   watcher) is measured for every event and watcher. Printed: p50/p99, the
   gateway's memory per watcher (its resident set with the streams open, less
   before) and its CPU time per watcher per event (its CPU while the events
   are appended and delivered, over events x watchers).
   Targets: all delivered, p99 < 200 ms.

Redis: ``$REDIS_URL`` if set, else a private embedded server; database
``$FELT_BENCH_REDIS_DB`` (default 13) is EMPTIED before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

from _support import Child, bench_redis_url, cpu_seconds, spawn
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from redis.asyncio import Redis
from table_service import SERVICE, Stats, TableClients, next_action

from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_service_connect as connect
from poker.v1 import table_service_pb2 as pb
from services.gateway.codecs import BinaryCodec, CompactJsonCodec

PORT_LINE = r"listening on (?:port |http://127\.0\.0\.1:)(\d+)"
# The table service and the clients share CPU 0 and the gateway has CPU 1, in both cases: the
# baseline's clients are as pinned as the gateway's (the clients' own CPU is printed too).
TABLE_CPU, GATEWAY_CPU, CLIENT_CPU = "0", "1", "0"


def pin(pid: int, cpu: str) -> None:
    """``taskset -a -p -c CPU PID``: every thread of the process (gRPC's too) on that CPU."""
    if (os.cpu_count() or 1) > 1:
        subprocess.run(
            ["taskset", "-a", "-p", "-c", cpu, str(pid)], check=True, capture_output=True
        )


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


# ------------------------------------------------------------------ SubmitAction


Caller = Callable[[int, Stats, float], Awaitable[None]]


class ConnectTables:
    """The same tables as ``tables`` (made over gRPC), played through the gateway in JSON."""

    def __init__(self, url: str, tables: TableClients, binary: bool = False) -> None:
        self.tables = tables
        self.clients = [
            connect.TableServiceClient(
                url,
                codec=BinaryCodec() if binary else CompactJsonCodec(),
                send_compression=None,
            )
            for _ in tables.tables
        ]
        self.request_number = 0

    async def run(self, index: int, stats: Stats, until: float) -> None:
        client = self.clients[index]
        table = self.tables.tables[index]
        headers = {seat: dict(meta) for seat, meta in table.tokens.items()}
        while time.perf_counter() < until:
            view = table.view
            if view is None or not view.hand.HasField("to_act"):
                stats.polls += 1
                got = await client.get_table_view(pb.GetTableViewRequest(table_id=table.table_id))
                table.view = view = got.view
                if not view.hand.HasField("to_act"):
                    await asyncio.sleep(0.002)
                continue
            self.request_number += 1
            request = next_action(table.table_id, view, f"{table.table_id}:gw{self.request_number}")
            start = time.perf_counter()
            try:
                response = await client.submit_action(request, headers=headers[request.seat])
            except ConnectError as err:
                if err.code is not Code.ABORTED:
                    raise
                table.view = None
                continue
            stats.latencies.append(time.perf_counter() - start)
            stats.requests += 1
            table.view = response.view
            if not response.view.hand.HasField("to_act"):
                await asyncio.sleep(0.002)

    async def close(self) -> None:
        for client in self.clients:
            await client.close()


class Cpu:
    """CPU seconds of the processes measured, over a slice."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.used = dict.fromkeys(pids, 0.0)

    def now(self) -> dict[str, float]:
        own = resource.getrusage(resource.RUSAGE_SELF)
        return {
            name: (own.ru_utime + own.ru_stime) if pid == os.getpid() else cpu_seconds(pid)
            for name, pid in self.pids.items()
        }

    def add(self, before: dict[str, float]) -> None:
        after = self.now()
        for name in self.pids:
            self.used[name] += after[name] - before[name]

    def per_request(self, requests: int) -> str:
        return "  ".join(
            f"{name} {seconds / max(requests, 1) * 1e6:4.0f}" for name, seconds in self.used.items()
        )


async def slice_of(clients: int, seconds: float, run: Caller, stats: Stats, cpu: Cpu) -> None:
    before = cpu.now()
    start = time.perf_counter()
    await asyncio.gather(*(run(i, stats, start + seconds) for i in range(clients)))
    stats.seconds += time.perf_counter() - start
    cpu.add(before)


async def submit_action(
    service: Child, gateway: Child, clients: int, seconds: float, slices: int, binary: bool
) -> float:
    direct = TableClients(service.port, clients)
    await direct.create(f"gw{int(time.time())}")
    via = ConnectTables(f"http://127.0.0.1:{gateway.port}", direct, binary)
    pids = {"table service": service.pid, "gateway": gateway.pid, "clients": os.getpid()}
    cpu_direct, cpu_via = Cpu(pids), Cpu(pids)
    await slice_of(clients, 0.5, direct.run, Stats(), Cpu(pids))  # warm-up
    await slice_of(clients, 0.5, via.run, Stats(), Cpu(pids))
    grpc_stats, connect_stats = Stats(), Stats()
    for _ in range(slices):
        await slice_of(clients, seconds / slices, direct.run, grpc_stats, cpu_direct)
        await slice_of(clients, seconds / slices, via.run, connect_stats, cpu_via)
    await via.close()
    await direct.close()
    print(f"{clients} clients, each its own heads-up table; CPU us per request:")
    print(
        "  "
        + _line("gRPC direct", grpc_stats)
        + "   "
        + cpu_direct.per_request(grpc_stats.requests)
    )
    print(
        "  "
        + _line("via gateway", connect_stats)
        + "   "
        + cpu_via.per_request(connect_stats.requests)
    )
    ratio = connect_stats.rate / grpc_stats.rate
    kind = "binary" if binary else "JSON"
    print(f"  ratio gateway (Connect {kind}) / direct gRPC: {ratio:.2f}x (target >= 0.5x)")
    return ratio


def _line(label: str, stats: Stats) -> str:
    return (
        f"{label:<12} {stats.rate:7,.0f} req/s  p50 {stats.percentile(50):6.2f} ms"
        f"  p99 {stats.percentile(99):6.2f} ms"
    )


# ------------------------------------------------------------------ watchers


class Seen:
    """What a watcher needs of a stream item: whether it is the snapshot, an event's sequence."""

    __slots__ = ("sequence", "snapshot")

    def __init__(self, snapshot: bool, sequence: int) -> None:
        self.snapshot = snapshot
        self.sequence = sequence


class SeenCodec(CompactJsonCodec[Any]):
    """The watchers' client reads the JSON with ``json.loads``: a browser's JSON.parse, not
    ``json_format`` (which costs a millisecond a message, and would measure the client)."""

    def decode(self, data: bytes | bytearray, message_class: type[Any]) -> Any:
        item = json.loads(data)
        event = item.get("event")
        return Seen(event is None, int(event["sequence"]) if event else 0)


class Watcher:
    def __init__(self) -> None:
        self.sequences: list[int] = []
        self.delays: list[float] = []
        self.error: BaseException | None = None


async def watch(
    client: connect.TableServiceClient,
    table_id: str,
    watcher: Watcher,
    appended: dict[int, float],
    opened: asyncio.Event,
    until: int,
    counter: list[int],
    total: int,
) -> None:
    try:
        async for item in client.watch_table(pb.WatchTableRequest(table_id=table_id)):
            seen = cast(Seen, item)
            if seen.snapshot:
                counter[0] += 1
                if counter[0] == total:
                    opened.set()
                continue
            now = time.perf_counter()
            sequence = seen.sequence
            watcher.sequences.append(sequence)
            at = appended.get(sequence)
            if at is not None:
                watcher.delays.append(now - at)
            if sequence >= until:
                return
    except BaseException as exc:  # recorded, reported by the caller
        watcher.error = exc


async def watchers(
    service: Child, gateway: Child, count: int, events: int, rate: float, clients: int
) -> tuple[bool, float]:
    tables = TableClients(service.port, 1)
    table_id = f"watched-{int(time.time())}"
    stub = tables.stubs[0]
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=2, small_blind=5, big_blind=10)
    await stub.CreateTable(
        pb.CreateTableRequest(table_id=table_id, config=config, request_id=table_id),
        metadata=SERVICE,
    )
    seated = await stub.SeatPlayer(
        pb.SeatPlayerRequest(
            table_id=table_id, seat=0, player_id="p0", stack=1_000, request_id=f"{table_id}-s"
        ),
        metadata=SERVICE,
    )
    assert seated.seat_token
    token = SERVICE  # AddChips is the lobby's call (its service credential)
    url = f"http://127.0.0.1:{gateway.port}"
    # Several HTTP clients (connection pools) share the streams, as many browsers would.
    pool = [connect.TableServiceClient(url, codec=SeenCodec()) for _ in range(clients)]
    before_kib = rss_kib(gateway.pid)
    appended: dict[int, float] = {}
    opened = asyncio.Event()
    counter = [0]
    start_sequence = (await stub.GetTable(pb.GetTableRequest(table_id=table_id))).table.sequence
    last = start_sequence + events
    crowd = [Watcher() for _ in range(count)]
    tasks = [
        asyncio.create_task(
            watch(pool[i % clients], table_id, w, appended, opened, last, counter, count)
        )
        for i, w in enumerate(crowd)
    ]
    await asyncio.wait_for(opened.wait(), 120)
    with_kib = rss_kib(gateway.pid)
    print(
        f"{count:,} Connect streams open on one table (after {counter[0]:,} snapshots); "
        f"gateway RSS {before_kib / 1024:.0f} -> {with_kib / 1024:.0f} MiB: "
        f"{(with_kib - before_kib) / count:.1f} KiB per watcher"
    )
    # Append events at `rate` per second, one a call: the seated player adds a chip (no hand
    # runs with one player, so nothing else is appended).
    sequence = start_sequence
    cpu = Cpu({"table service": service.pid, "gateway": gateway.pid, "clients": os.getpid()})
    cpu_before = cpu.now()
    while sequence < last:
        sent = time.perf_counter()
        added = await stub.AddChips(
            pb.AddChipsRequest(
                table_id=table_id, seat=0, amount=1, request_id=f"{table_id}-add-{sequence}"
            ),
            metadata=token,
        )
        sequence = added.sequence
        appended[sequence] = sent  # from before the call: the append's own time counts
        await asyncio.sleep(max(0.0, 1 / rate - (time.perf_counter() - sent)))
    _, pending = await asyncio.wait(tasks, timeout=60)
    cpu.add(cpu_before)
    for task in pending:
        task.cancel()
    for client in pool:
        await client.close()
    await tables.close()
    expected = list(range(start_sequence + 1, last + 1))
    complete = sum(1 for w in crowd if w.sequences[: len(expected)] == expected)
    errors = [w.error for w in crowd if w.error is not None]
    delays = sorted(d for w in crowd for d in w.delays)
    p50 = delays[len(delays) // 2] * 1e3 if delays else 0.0
    p99 = delays[min(len(delays) - 1, int(0.99 * len(delays)))] * 1e3 if delays else 0.0
    print(
        f"  {last - start_sequence} events at {rate:.0f}/s: {complete:,}/{count:,} watchers got "
        f"every event in order ({len(errors)} errors, {len(pending)} unfinished); delivery "
        f"p50 {p50:.1f} ms, p99 {p99:.1f} ms (target < 200 ms)"
    )
    if errors:
        print(f"  first error: {errors[0]!r}")
    per_event = "  ".join(
        f"{name} {seconds / events * 1e3:.1f}" for name, seconds in cpu.used.items()
    )
    print(f"  CPU ms per event (its {count:,} deliveries): {per_event}")
    print(
        f"  gateway CPU per watcher per event: "
        f"{cpu.used['gateway'] / (events * count) * 1e6:.1f} us"
    )
    return complete == count, p99


# ------------------------------------------------------------------ main


async def main(args: argparse.Namespace) -> None:
    url = bench_redis_url("FELT_BENCH_REDIS_DB", "13")
    redis = Redis.from_url(url)
    await redis.flushdb()
    print(
        f"Redis {url}; {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}; "
        f"table service and clients on CPU {TABLE_CPU}, gateway on CPU {GATEWAY_CPU}"
    )
    env = {
        "REDIS_URL": url,
        "FELT_TABLE_ADDR": "127.0.0.1:0",
        "FELT_BETWEEN_HANDS_MS": "0",
        "FELT_DEV_MODE": "1",  # the development secret, admin calls open: a throw-away bench
        "FELT_LOG_FORMAT": "json",  # logs as in production (development mode: console)
        "FELT_SEAT_RATE_PER_S": "10000",
        "FELT_SEAT_RATE_BURST": "100000",
        "FELT_WATCH_MAX_STREAMS": str(args.watchers + 200),
        "FELT_WATCH_MAX_PER_PEER": str(args.watchers + 200),
        "FELT_WATCH_SEAT_RESERVE": "100",
    }
    service = await spawn("table service", ["-m", "services.table.server"], env, PORT_LINE)
    gateway = await spawn(
        "gateway",
        ["-m", "services.cli", "gateway"],
        {
            "REDIS_URL": url,
            "FELT_GATEWAY_ADDR": "127.0.0.1:0",
            "FELT_TABLE_TARGET": f"127.0.0.1:{service.port}",
            "FELT_GATEWAY_WATCH_PER_ADDRESS": str(args.watchers + 10),
        },
        PORT_LINE,
    )
    pin(service.pid, TABLE_CPU)
    pin(gateway.pid, GATEWAY_CPU)
    pin(os.getpid(), CLIENT_CPU)
    try:
        ratio = 1.0
        if args.clients:
            print(
                f"\nSubmitAction: through the gateway (Connect, "
                f"{'binary' if args.binary else 'JSON'}) vs straight to the table service (gRPC)"
            )
            ratio = await submit_action(
                service, gateway, args.clients, args.seconds, args.slices, args.binary
            )
        # The gateway has a core of its own (issue #23); the watchers' clients, which decode
        # every message, share the table service's (it sends the gateway one stream).
        if args.clients_on_gateway_cpu:
            pin(os.getpid(), GATEWAY_CPU)
        print(f"\nWatchTable: one table, {args.watchers:,} streams through the gateway")
        delivered, p99 = await watchers(
            service, gateway, args.watchers, args.events, args.rate, args.http_clients
        )
    finally:
        await gateway.stop()
        await service.stop()
        await redis.flushdb()
        await redis.aclose()
    met = ratio >= 0.5 and delivered and p99 < 200
    print(f"\ntargets {'met' if met else 'NOT met'}")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="per SubmitAction measurement")
    parser.add_argument("--slices", type=int, default=5, help="alternating slices")
    parser.add_argument(
        "--clients", type=int, default=16, help="SubmitAction clients (0: skip that part)"
    )
    parser.add_argument("--watchers", type=int, default=1000, help="WatchTable streams")
    parser.add_argument("--events", type=int, default=100, help="events the watchers must get")
    parser.add_argument(
        "--rate", type=float, default=2.0, help="events appended per second (a lively table)"
    )
    parser.add_argument(
        "--http-clients", type=int, default=20, help="HTTP clients the streams share"
    )
    parser.add_argument(
        "--binary",
        action="store_true",
        help="SubmitAction through the gateway in binary protobuf (the web client's), not JSON",
    )
    parser.add_argument(
        "--clients-on-gateway-cpu",
        action="store_true",
        help="the watchers' clients on the gateway's CPU (before issue #23), not the service's",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse(sys.argv[1:])))
