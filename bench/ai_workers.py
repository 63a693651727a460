"""Benchmark of the AI-worker pool: decisions/s with one worker process vs two, same run.

Not a test: run ``python bench/ai_workers.py`` (``--help`` for options).

Workers are separate processes (``python -m services.ai_worker``), as operators
run them, so two workers can use both cores. Two measurements:

1. End to end: ONE table-service process (``python -m services.table.server``)
   runs many AI-only tables (3 seats each, Hold'em and Draw, easy/normal/hard)
   with no pause between hands; the workers answer through it. Decisions/s are
   read from the workers' own ``/metrics`` over a fixed window after a warm-up.
   On a 2-core machine the table service, Redis and the workers share the same
   cores, so this figure is capped by the table service (see the CPU shares
   printed with it), not by the workers.
2. Worker side: the stream is pre-filled with N real decision requests (those
   the tables of step 1 produced, re-issued with fresh ids and no deadline) and
   the workers answer a lightweight SubmitAction sink (a grpc.aio server in this
   process that records answers and does nothing else). This is the pool's own
   throughput: the same pipeline (XREADGROUP, decode, bot, gRPC answer, XACK)
   minus the table service's work.

Target: two workers >= 1.8x one worker (step 2). Every process's CPU time over
each measurement is printed, so the bottleneck is visible rather than assumed.

Redis: ``$REDIS_URL`` if set, else a private embedded server. The benchmark
uses database ``$FELT_BENCH_AI_REDIS_DB`` (default 11) of that server and
EMPTIES it before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import threading
import time
import urllib.request
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import grpc
from _support import CLOCK_TICKS, Child, bench_redis_url, cpu_seconds, spawn
from redis.asyncio import Redis

from felt.storage.decisions import AI_GROUP, AI_STREAM, shard_stream
from poker.events.v1 import events_pb2 as epb
from poker.v1 import ai_pb2
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from services.grpc_server import bind, server_options

ADMIN_TOKEN = "bench-admin"
AI_TOKEN = "bench-ai"
# One decision shard (FELT_DECISION_SHARDS=1 for every process here), the table service's
# default base name: this DB is the benchmark's own.
SHARDS = "1"
STREAM = shard_stream(AI_STREAM, 0)
GROUP = AI_GROUP
LEVELS = (epb.AI_LEVEL_EASY, epb.AI_LEVEL_NORMAL, epb.AI_LEVEL_HARD)


def machine_busy_seconds() -> float:
    """CPU seconds all processes on the machine have used (``/proc/stat``), to show other load."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return (sum(values[:8]) - idle) / CLOCK_TICKS


async def redis_cpu(redis: Redis) -> float:
    info = await redis.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


# ------------------------------------------------------------------ processes


async def start_workers(count: int, redis_url: str, target: str, log_level: str) -> list[Child]:
    env = {
        "REDIS_URL": redis_url,
        "FELT_TABLE_TARGET": target,
        "FELT_AI_TOKEN": AI_TOKEN,
        "FELT_AI_METRICS_PORT": "0",
        "FELT_AI_METRICS_HOST": "127.0.0.1",
        "FELT_AI_CONCURRENCY": "8",
        "FELT_DECISION_SHARDS": SHARDS,
        "FELT_LOG_LEVEL": log_level,
    }
    return list(
        await asyncio.gather(
            *(
                spawn(f"worker-{i}", ["-m", "services.ai_worker"], env, r"metrics port (\d+)")
                for i in range(count)
            )
        )
    )


def _scrape(port: int) -> Counter[str]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    counts: Counter[str] = Counter()
    for match in re.finditer(
        r'^felt_ai_decisions_total\{outcome="(\w+)"\} ([0-9.e+]+)$', text, re.M
    ):
        counts[match.group(1)] += int(float(match.group(2)))
    return counts


async def decisions(workers: list[Child]) -> list[Counter[str]]:
    return list(await asyncio.gather(*(asyncio.to_thread(_scrape, w.port) for w in workers)))


# ------------------------------------------------------------------ the sink


class Sink:
    """A TableService that only accepts answers: counts them, per worker, and nothing else.

    A synchronous grpc server (its handlers run in a small thread pool): of the
    Python gRPC servers it costs the least CPU per call, and every bit of CPU it
    uses is taken from the workers on a 2-core machine.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.answered: set[str] = set()
        self.by_worker: Counter[str] = Counter()
        self.target = 0
        self.done = threading.Event()

    def expect(self, count: int) -> None:
        with self.lock:
            self.answered.clear()
            self.by_worker.clear()
            self.target = count
            self.done.clear()

    def handler(self) -> grpc.GenericRpcHandler:
        """``poker.v1.TableService/SubmitAction`` only."""
        method = grpc.unary_unary_rpc_method_handler(
            self.submit_action,
            request_deserializer=pb.SubmitActionRequest.FromString,
            response_serializer=pb.SubmitActionResponse.SerializeToString,
        )
        return grpc.method_handlers_generic_handler(
            "poker.v1.TableService", {"SubmitAction": method}
        )

    def submit_action(
        self, request: pb.SubmitActionRequest, context: grpc.ServicerContext
    ) -> pb.SubmitActionResponse:
        agent = next((v for k, v in context.invocation_metadata() or () if k == "user-agent"), "")
        with self.lock:
            self.by_worker[str(agent).split(" ", 1)[0]] += 1
            self.answered.add(request.request_id)
            if len(self.answered) >= self.target:
                self.done.set()
        return pb.SubmitActionResponse(sequence=request.expected_sequence + 1)


# ------------------------------------------------------------------ the two measurements


@dataclass
class Result:
    workers: int
    rate: float
    per_worker: list[int]
    cpu: dict[str, float]  # cores used, by process kind, over the measurement


async def create_tables(stub: rpc.TableServiceAsyncStub, count: int) -> None:
    admin = (("authorization", f"Bearer {ADMIN_TOKEN}"),)
    for n in range(count):
        table_id = f"bench-{n}-{uuid.uuid4().hex[:6]}"
        if n % 2 == 0:
            config = epb.TableConfig(
                variant=epb.VARIANT_NLHE, seat_count=3, small_blind=5, big_blind=10
            )
        else:
            config = epb.TableConfig(
                variant=epb.VARIANT_DRAW5, seat_count=3, ante=5, small_bet=10, big_bet=20
            )
        config.action_clock.FromSeconds(600)  # the benchmark, not the clock, paces the play
        await stub.CreateTable(
            pb.CreateTableRequest(table_id=table_id, config=config, request_id=uuid.uuid4().hex),
            metadata=admin,
        )
        for seat in range(3):
            await stub.SeatPlayer(
                pb.SeatPlayerRequest(
                    table_id=table_id,
                    seat=seat,
                    player_id=f"bot-{seat}",
                    stack=1_000_000,
                    ai_level=LEVELS[(n + seat) % 3],
                    request_id=uuid.uuid4().hex,
                ),
                metadata=admin,
            )


async def end_to_end(
    redis: Redis, redis_url: str, args: argparse.Namespace
) -> tuple[list[Result], int]:
    """Step 1: workers answering a real table service; returns results and the table pid."""
    await redis.xgroup_create(STREAM, GROUP, id="$", mkstream=True)
    table = await spawn(
        "table-service",
        ["-m", "services.table.server"],
        {
            "REDIS_URL": redis_url,
            "FELT_TABLE_ADDR": "127.0.0.1:0",
            "FELT_ADMIN_TOKEN": ADMIN_TOKEN,
            "FELT_AI_TOKEN": AI_TOKEN,
            "FELT_BETWEEN_HANDS_MS": "0",
            "FELT_DECISION_SHARDS": SHARDS,
            "FELT_TOKEN_SECRET": "bench-secret-0123456789abcdef0123456789",
        },
        r"port (\d+)",
    )
    results = []
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{table.port}") as channel:
            await create_tables(rpc.TableServiceStub(channel), args.tables)
        for count in (1, 2):
            workers = await start_workers(
                count, redis_url, f"127.0.0.1:{table.port}", args.log_level
            )
            try:
                await asyncio.sleep(args.warmup)
                results.append(
                    await measure_window(redis, workers, {"table service": table.pid}, args.seconds)
                )
            finally:
                for w in workers:
                    await w.stop()
    finally:
        await table.stop()
    return results, table.pid


async def measure_window(
    redis: Redis, workers: list[Child], others: dict[str, int], seconds: float
) -> Result:
    before = await decisions(workers)
    cpu0 = {w.pid: cpu_seconds(w.pid) for w in workers} | {
        p: cpu_seconds(p) for p in others.values()
    }
    redis0 = await redis_cpu(redis)
    busy0 = machine_busy_seconds()
    t0 = time.perf_counter()
    await asyncio.sleep(seconds)
    elapsed = time.perf_counter() - t0
    busy = machine_busy_seconds() - busy0
    after = await decisions(workers)
    cpu1 = {w.pid: cpu_seconds(w.pid) for w in workers} | {
        p: cpu_seconds(p) for p in others.values()
    }
    redis1 = await redis_cpu(redis)
    made = [a["accepted"] - b["accepted"] for a, b in zip(after, before, strict=True)]
    cpu = {"workers": sum(cpu1[w.pid] - cpu0[w.pid] for w in workers) / elapsed}
    for name, pid in others.items():
        cpu[name] = (cpu1[pid] - cpu0[pid]) / elapsed
    cpu["redis"] = (redis1 - redis0) / elapsed
    cpu["other processes"] = max(0.0, busy / elapsed - sum(cpu.values()))
    return Result(len(workers), sum(made) / elapsed, made, cpu)


async def corpus(redis: Redis, size: int) -> list[bytes]:
    """Real decision requests from step 1, as payloads."""
    entries: list[tuple[bytes, dict[bytes, bytes]]] = await redis.xrange(  # type: ignore[assignment]
        STREAM, count=max(size, 1)
    )
    payloads = [fields[b"payload"] for _, fields in entries]
    if not payloads:
        raise RuntimeError("step 1 produced no decision requests")
    return payloads


async def worker_side(
    redis: Redis, redis_url: str, payloads: list[bytes], args: argparse.Namespace
) -> list[Result]:
    """Step 2 (one round: 1 worker, then 2): the pipeline against the sink, pre-filled stream."""
    sink = Sink()
    server = grpc.server(ThreadPoolExecutor(4), options=server_options())
    server.add_generic_rpc_handlers((sink.handler(),))
    port = bind(server, "127.0.0.1:0")
    server.start()
    results = []
    try:
        for count in (1, 2):
            await redis.delete(STREAM)
            await redis.xgroup_create(STREAM, GROUP, id="$", mkstream=True)
            workers = await start_workers(count, redis_url, f"127.0.0.1:{port}", args.log_level)
            try:
                sink.expect(args.requests)
                batch = []
                for n in range(args.requests):
                    request = ai_pb2.DecisionRequest.FromString(payloads[n % len(payloads)])
                    request.request_id = f"bench:{count}:{n}"
                    request.ClearField("deadline")
                    batch.append(request.SerializeToString())
                cpu0 = {w.pid: cpu_seconds(w.pid) for w in workers}
                self0 = time.process_time()
                redis0 = await redis_cpu(redis)
                busy0 = machine_busy_seconds()
                t0 = time.perf_counter()
                async with redis.pipeline(transaction=False) as pipe:
                    for payload in batch:
                        pipe.xadd(STREAM, {"payload": payload, "request_id": "bench"})
                    await pipe.execute()
                if not await asyncio.to_thread(sink.done.wait, 600):
                    raise RuntimeError("the workers did not answer every request in 600 s")
                elapsed = time.perf_counter() - t0
                cpu = {
                    "workers": sum(cpu_seconds(w.pid) - cpu0[w.pid] for w in workers) / elapsed,
                    "sink (+ bench)": (time.process_time() - self0) / elapsed,
                    "redis": (await redis_cpu(redis) - redis0) / elapsed,
                }
                ours = sum(cpu.values())
                cpu["other processes"] = max(0.0, (machine_busy_seconds() - busy0) / elapsed - ours)
                per_worker = [n for _, n in sorted(sink.by_worker.items())]
                results.append(Result(count, args.requests / elapsed, per_worker, cpu))
            finally:
                for w in workers:
                    await w.stop()
    finally:
        server.stop(1)
    return results


# ------------------------------------------------------------------ report


def best_result(results: list[Result]) -> Result:
    """The fastest round: other load on the machine only ever slows a round down."""
    return max(results, key=lambda r: r.rate)


def report(title: str, rounds: list[list[Result]], note: str) -> tuple[float, float]:
    """Print a step's results; returns (throughput ratio 2/1, worker CPU-efficiency ratio)."""
    print(f"\n{title}")
    medians = []
    for count in (1, 2):
        runs = [r for round_ in rounds for r in round_ if r.workers == count]
        r = best_result(runs)
        medians.append(r)
        rates = ", ".join(f"{x.rate:.0f}" for x in runs)
        cores = ", ".join(f"{k} {v:.2f}" for k, v in r.cpu.items())
        cost = 1000 * r.cpu["workers"] / r.rate if r.rate else 0.0
        print(
            f"  {count} worker{'s' if count > 1 else ' '}: {r.rate:7.1f} decisions/s "
            f"(best of {rates})  split {r.per_worker}\n"
            f"             CPU cores used: {cores}\n"
            f"             worker CPU per decision {cost:.2f} ms"
        )
    one, two = medians
    ratio = two.rate / one.rate if one.rate else 0.0
    per_cpu_one = one.rate / one.cpu["workers"] if one.cpu["workers"] else 0.0
    per_cpu_two = two.rate / two.cpu["workers"] if two.cpu["workers"] else 0.0
    efficiency = per_cpu_two / per_cpu_one if per_cpu_one else 0.0
    # What even perfect scaling could reach here: every decision also costs the
    # non-worker processes CPU on the same cores.
    per_decision = sum(v for k, v in one.cpu.items() if k != "other processes") / one.rate
    ceiling = (os.cpu_count() or 1) / per_decision / one.rate if one.rate else 0.0
    print(
        f"  ratio 2/1: {ratio:.2f}x  {note}\n"
        f"  ceiling on this machine: {os.cpu_count()} cores / {1000 * per_decision:.2f} ms CPU per "
        f"decision (all our processes, 1-worker run) = {ceiling:.2f}x of one worker\n"
        f"  decisions per worker-CPU-second: {per_cpu_one:.0f} (1 worker) vs {per_cpu_two:.0f} "
        f"(2 workers) = {efficiency:.2f} (1.00 = workers do not slow each other down);\n"
        f"  projected 2/1 with a core per worker and nothing else on them: "
        f"{2 * efficiency:.2f}x (derived, not measured)"
    )
    return ratio, efficiency


async def main(args: argparse.Namespace) -> int:
    url = bench_redis_url("FELT_BENCH_AI_REDIS_DB", "11")
    redis = Redis.from_url(url)
    await redis.flushdb()
    print(
        f"Redis {url}; {os.cpu_count()} CPUs; workers log at {args.log_level}; "
        f"step 1: {args.tables} AI tables; "
        f"step 2: {args.requests} pre-filled requests x {args.rounds} rounds"
    )
    try:
        e2e, _ = await end_to_end(redis, url, args)
        payloads = await corpus(redis, args.requests)
        side = [await worker_side(redis, url, payloads, args) for _ in range(args.rounds)]
    finally:
        await redis.flushdb()
        await redis.aclose()

    report(
        f"1. End to end through ONE table-service process ({args.seconds:.0f} s window "
        f"after {args.warmup:.0f} s warm-up)",
        [e2e],
        "(capped by the table service and the shared cores, not by the workers)",
    )
    ratio, efficiency = report(
        f"2. Worker side: {args.requests} real requests pre-filled, answered to a SubmitAction "
        "sink (no table service)",
        side,
        "(target >= 1.8x)",
    )
    print(
        "\nCPU cores are per process kind over each measurement ('other processes': the rest "
        "of the machine).\nOn 2 cores, two busy workers share them with the sink, Redis and "
        "anything else running,\nso the throughput ratio is capped below 2x by those; the "
        "per-worker-CPU figure shows\nwhether the workers themselves scale (no shared lock, "
        "no single consumer)."
    )
    print(
        f"target (2 workers >= 1.8x one worker): {'met' if ratio >= 1.8 else 'NOT met'} "
        f"({ratio:.2f}x; per-worker-CPU scaling {efficiency:.2f})"
    )
    return 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--tables", type=int, default=24, help="AI tables in step 1")
    parser.add_argument("--seconds", type=float, default=6.0, help="step 1 window")
    parser.add_argument("--warmup", type=float, default=2.0, help="step 1 warm-up")
    parser.add_argument("--requests", type=int, default=1500, help="step 2 requests per run")
    parser.add_argument("--rounds", type=int, default=3, help="step 2 rounds (1 then 2 workers)")
    parser.add_argument("--log-level", default="INFO", help="workers' log level (INFO)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse_args())))
