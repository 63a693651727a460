"""Benchmark of the event store on a Redis Cluster against one Redis server.

Not a test: run ``python bench/cluster.py`` (``--help`` for options).

Starts its own servers (``felt_dev``): one redis-server and a Redis Cluster of three
masters on loopback, all without persistence, and runs on each, in the same run:

1. appends: ``--tables`` tables, each a client appending one event at a time with its
   version (what the table service does per action), for ``--seconds``;
2. rebuild: a ``--events``-event stream read whole (``EventStore.read``, what a table's
   rebuild reads).

Stores: ``single`` (one server, the store's own pipelined connection: the baseline),
``single-redis-py`` (one server through redis-py), ``cluster`` (``redis+cluster://``: the
pipelined connection to each table's master, ``cluster_pipeline``) and ``cluster-redis-py``
(everything through redis-py's ``RedisCluster``). Printed: appends/s and events read/s,
each as a ratio to the baseline, and this process's CPU per append (the client side,
which a table service pays).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid

from felt.storage.eventstore import RedisEventStore
from felt.storage.redis_client import connect_redis
from felt_dev.devserver import EmbeddedRedis
from felt_dev.redis_cluster import EmbeddedRedisCluster

PAYLOAD = b"x" * 120  # about an action's event


async def appends(store: RedisEventStore, tables: int, seconds: float) -> tuple[float, float]:
    """Appends per second and this process's CPU seconds per append."""
    prefix = uuid.uuid4().hex[:8]
    stop = time.monotonic() + seconds
    done = [0] * tables

    async def client(n: int) -> None:
        table_id = f"bench-{prefix}-{n}"
        version = 0
        while time.monotonic() < stop:
            await store.append(table_id, [PAYLOAD], version)
            version += 1
        done[n] = version

    cpu0, t0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(client(n) for n in range(tables)))
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    total = sum(done)
    return total / elapsed, cpu / max(total, 1)


async def rebuild(store: RedisEventStore, events: int) -> float:
    """Events read per second, a whole stream of ``events`` (best of three)."""
    table_id = f"bench-rebuild-{uuid.uuid4().hex[:8]}"
    version = 0
    while version < events:
        batch = min(500, events - version)
        await store.append(table_id, [PAYLOAD] * batch, version)
        version += batch
    best = 0.0
    for _ in range(3):
        t0 = time.perf_counter()
        records = await store.read(table_id)
        best = max(best, len(records) / (time.perf_counter() - t0))
    return best


async def main(args: argparse.Namespace) -> None:
    with EmbeddedRedis() as single, EmbeddedRedisCluster() as cluster:
        setups = {
            "single": (single.url, True),
            "single-redis-py": (single.url, False),
            "cluster": (cluster.url, True),
            "cluster-redis-py": (cluster.url, False),
        }
        rows: dict[str, tuple[float, float, float]] = {}
        for _round in range(args.rounds):  # interleaved: a slow spell hits every store
            for name, (url, pipelined) in setups.items():
                client = await connect_redis(url)
                store = RedisEventStore(client, pipeline=pipelined)
                try:
                    rate, cpu = await appends(store, args.tables, args.seconds)
                    read = await rebuild(store, args.events)
                finally:
                    await store.aclose()
                    await client.aclose()
                best = rows.get(name, (0.0, 1.0, 0.0))
                rows[name] = (max(best[0], rate), min(best[1], cpu), max(best[2], read))
    base_rate, _, base_read = rows["single"]
    print(
        f"{args.tables} tables appending one event at a time, {args.seconds} s, best of "
        f"{args.rounds}; a {args.events:,}-event stream read whole"
    )
    print(
        f"{'store':<16} {'appends/s':>10} {'ratio':>6} {'CPU/append':>11} "
        f"{'read ev/s':>10} {'ratio':>6}"
    )
    for name, (rate, cpu, read) in rows.items():
        print(
            f"{name:<16} {rate:>10,.0f} {rate / base_rate:>6.2f} {cpu * 1e6:>9.0f}us "
            f"{read:>10,.0f} {read / base_read:>6.2f}"
        )


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=16, help="concurrent appending tables")
    parser.add_argument("--seconds", type=float, default=3.0, help="per append measurement")
    parser.add_argument("--events", type=int, default=20_000, help="stream length to read")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (best kept)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse(sys.argv[1:])))
