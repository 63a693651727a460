"""Memory and latency of the table service with many ``WatchTable`` streams (issue 9, item 7).

Not a test: run ``python bench/watchers.py`` (``--help`` for options).

One table-service process (``python -m services.table.server``, development
mode, watch caps raised to let N streams in) gets a table with a long history
(H events); then N spectators watch it from sequence 1, twice in a row (two
rounds), while a probe reads another table's view in a loop; after the last round's
replay, ``--live`` new events reach the caught-up watchers through the live
feed. Printed: the
service's resident memory (VmRSS) before, with N watchers caught up, and after
they left, for each round, the probe's worst and 99th-percentile latency
while the watchers replay, and the service's CPU time per watcher per event
(its CPU during the round over N x H); for the live events, delivery p50/p99
and the CPU per watcher per event (issue #23). The issue this answers measured 74 MB before and
390 MB after 300 watchers, which did not come back down, and 5.4 s of latency.

Redis: ``$REDIS_URL`` if set, else a private embedded server. The benchmark
uses database ``$FELT_BENCH_WATCH_REDIS_DB`` (default 10) of that server and
EMPTIES it before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from pathlib import Path

import grpc
from _support import bench_redis_url, cpu_seconds, spawn
from redis.asyncio import Redis

from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from services.table.auth import DEV_SERVICE_TOKEN, SEAT_TOKEN_HEADER

SERVICE = (("authorization", f"Bearer {DEV_SERVICE_TOKEN}"),)
PORT_LINE = r"listening on port (\d+)"


def rss_mb(pid: int) -> float:
    """Resident memory of a process in MB (Linux ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


Metadata = tuple[tuple[str, str], ...]


async def make_history(stub: rpc.TableServiceAsyncStub, table_id: str, events: int) -> Metadata:
    """A table of ``events`` events; the metadata with which its seat 0 adds chips."""
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=2, small_blind=5, big_blind=10)
    await stub.CreateTable(
        pb.CreateTableRequest(table_id=table_id, config=config, request_id=f"c-{table_id}"),
        metadata=SERVICE,
    )
    seated = await stub.SeatPlayer(
        pb.SeatPlayerRequest(
            table_id=table_id, seat=0, player_id="p0", stack=1000, request_id=f"s-{table_id}"
        ),
        metadata=SERVICE,
    )
    md = (*SERVICE, (SEAT_TOKEN_HEADER, seated.seat_token))  # AddChips is internal

    async def add() -> None:
        request = pb.AddChipsRequest(
            table_id=table_id, seat=0, amount=1, request_id=uuid.uuid4().hex
        )
        await stub.AddChips(request, metadata=md)

    done = 2  # created, seated
    while done < events:
        batch = min(32, events - done)
        await asyncio.gather(*(add() for _ in range(batch)))
        done += batch
    return md


async def live(
    stub: rpc.TableServiceAsyncStub,
    calls: list[grpc.aio.UnaryStreamCall[pb.WatchTableRequest, pb.WatchTableResponse]],
    table_id: str,
    md: Metadata,
    events: int,
    rate: float,
    pid: int,
) -> None:
    """``events`` new events at ``rate`` a second to the caught-up watchers: each must get
    every one, in order; the delivery latency and the service's CPU per watcher per event."""
    appended: dict[int, float] = {}
    delays: list[float] = []
    first = (await stub.GetTable(pb.GetTableRequest(table_id=table_id))).table.sequence + 1
    last = first + events - 1
    in_order = [0]

    async def read(
        call: grpc.aio.UnaryStreamCall[pb.WatchTableRequest, pb.WatchTableResponse],
    ) -> None:
        expected = first
        while expected <= last:
            item = await call.read()
            assert isinstance(item, pb.WatchTableResponse), "a watch ended"
            sequence = item.event.sequence
            if sequence < first:
                continue
            at = appended.get(sequence)
            if at is not None:
                delays.append(time.perf_counter() - at)
            if sequence != expected:
                return
            expected += 1
        in_order[0] += 1

    readers = asyncio.ensure_future(asyncio.gather(*(read(c) for c in calls)))
    cpu_before = cpu_seconds(pid)
    for n in range(events):
        sent = time.perf_counter()
        added = await stub.AddChips(
            pb.AddChipsRequest(
                table_id=table_id, seat=0, amount=1, request_id=f"live-{uuid.uuid4().hex}-{n}"
            ),
            metadata=md,
        )
        appended[added.sequence] = sent
        await asyncio.sleep(max(0.0, 1 / rate - (time.perf_counter() - sent)))
    await asyncio.wait_for(readers, 120)
    cpu_used = cpu_seconds(pid) - cpu_before
    delays.sort()
    p50 = delays[len(delays) // 2] * 1e3 if delays else 0.0
    p99 = delays[min(len(delays) - 1, int(0.99 * len(delays)))] * 1e3 if delays else 0.0
    print(
        f"live: {events} events at {rate:.0f}/s to {len(calls)} caught-up watchers: "
        f"{in_order[0]}/{len(calls)} got every one in order; delivery p50 {p50:.1f} ms, "
        f"p99 {p99:.1f} ms; service CPU per watcher per event "
        f"{cpu_used / (events * len(calls)) * 1e6:.1f} us"
    )


async def watch_round(
    stub: rpc.TableServiceAsyncStub, probe: rpc.TableServiceAsyncStub, table_id: str, n: int
) -> tuple[
    list[grpc.aio.UnaryStreamCall[pb.WatchTableRequest, pb.WatchTableResponse]], list[float]
]:
    """Open ``n`` watchers from sequence 1 and wait until each has the whole history; the
    probe's latencies meanwhile."""
    version = (await stub.GetTable(pb.GetTableRequest(table_id=table_id))).table.sequence
    calls = [
        stub.WatchTable(pb.WatchTableRequest(table_id=table_id, from_sequence=1)) for _ in range(n)
    ]

    async def caught_up(
        call: grpc.aio.UnaryStreamCall[pb.WatchTableRequest, pb.WatchTableResponse],
    ) -> None:
        while True:
            item = await call.read()
            assert isinstance(item, pb.WatchTableResponse), "a watch ended"
            if item.event.sequence >= version:
                return

    latencies: list[float] = []
    waiting = asyncio.ensure_future(asyncio.gather(*(caught_up(c) for c in calls)))
    while not waiting.done():
        started = time.perf_counter()
        await probe.GetTableView(pb.GetTableViewRequest(table_id="probe"))
        latencies.append(time.perf_counter() - started)
        await asyncio.sleep(0.01)
    await waiting
    return calls, latencies


async def main(args: argparse.Namespace) -> None:
    url = bench_redis_url("FELT_BENCH_WATCH_REDIS_DB", "10")
    redis = Redis.from_url(url)
    await redis.flushdb()
    service = await spawn(
        "table service",
        ["-m", "services.table.server"],
        {
            "REDIS_URL": url,
            "FELT_TABLE_ADDR": "127.0.0.1:0",
            "FELT_DEV_MODE": "1",  # a throw-away bench: the public service credential
            "FELT_LOG_FORMAT": "json",  # logs as in production (development mode: console)
            "FELT_WATCH_MAX_PER_PEER": str(args.watchers),
            "FELT_WATCH_MAX_STREAMS": str(args.watchers + 10),
            "FELT_WATCH_SEAT_RESERVE": "5",  # spectators only here (the default keeps 100)
        },
        PORT_LINE,
    )
    target = f"127.0.0.1:{service.port}"
    try:
        async with (
            grpc.aio.insecure_channel(target) as channel,
            grpc.aio.insecure_channel(
                target, options=[("grpc.use_local_subchannel_pool", 1)]
            ) as probe_channel,
        ):
            stub = rpc.TableServiceStub(channel)
            probe = rpc.TableServiceStub(probe_channel)
            md = await make_history(stub, "history", args.history)
            await make_history(probe, "probe", 2)
            await asyncio.sleep(1)
            print(
                f"{args.watchers} watchers from sequence 1 of a {args.history}-event table, "
                f"{args.rounds} rounds; table-service RSS in MB"
            )
            baseline = rss_mb(service.pid)
            print(f"baseline: {baseline:.1f}")
            for round_no in range(1, args.rounds + 1):
                cpu_before = cpu_seconds(service.pid)
                calls, latencies = await watch_round(stub, probe, "history", args.watchers)
                cpu_used = cpu_seconds(service.pid) - cpu_before
                with_watchers = rss_mb(service.pid)
                if round_no == args.rounds and args.live:
                    await live(stub, calls, "history", md, args.live, args.rate, service.pid)
                for call in calls:
                    call.cancel()
                del calls
                await asyncio.sleep(2)  # the server notices the cancellations
                after = rss_mb(service.pid)
                latencies.sort()
                p99 = latencies[int(len(latencies) * 0.99)] if latencies else 0.0
                print(
                    f"round {round_no}: with watchers {with_watchers:.1f}, after {after:.1f}; "
                    f"another table's GetTableView during the replay: "
                    f"{len(latencies)} calls, p99 {p99 * 1000:.1f} ms, "
                    f"worst {max(latencies, default=0) * 1000:.1f} ms; service CPU per "
                    f"watcher per event {cpu_used / (args.watchers * args.history) * 1e6:.1f} us"
                )
    finally:
        await service.stop()
        await redis.flushdb()
        await redis.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--watchers", type=int, default=300)
    parser.add_argument("--history", type=int, default=3000, help="events in the watched table")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--live", type=int, default=100, help="events appended after the last round's replay"
    )
    parser.add_argument("--rate", type=float, default=2.0, help="live events per second")
    asyncio.run(main(parser.parse_args()))
