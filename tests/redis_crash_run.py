"""What a Redis crash costs (issue 24, item 3): Redis killed under play, again and again.

``python -m tests.redis_crash_run --kills 10 --fsync everysec`` starts a redis-server of
its own (``tests/e2e/own_redis.py``: append-only, ``appendfsync`` as asked, a temp dir),
the table service, an AI worker and a projector as processes
(``tests/e2e/test_redis_restart.py``), opens a Hold'em table where a person (this
script, over gRPC) plays seat 0 against two AI seats, and then, while the person keeps
acting, kills Redis with SIGKILL every few seconds and starts it again on the same
directory. It never restarts a service. At the end it prints, per run:

* the person's actions answered OK, and how many of them the stream no longer has;
* the longest time from a restart to the table's next event (play going on by itself);
* the stream's shape (no gap), the chips of every ended hand (none created or lost);
* the archive against the stream: hands archived twice under one hand number, and
  hands archived that the stream lost (the archive ahead of the stream);
* whether every service is still the process it was (no crash loop).

PostgreSQL is ``$DATABASE_URL``'s server (a throw-away database). Figures go to
docs/operations.md, "What a Redis crash costs".
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import random
import signal
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import grpc
import redis.asyncio as redis_async_lib

from felt.storage.eventstore import events_key
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_service_pb2_grpc as rpc
from tests.e2e.own_redis import OwnRedis, free_port
from tests.e2e.test_projector_kill import archive_database
from tests.e2e.test_redis_restart import (
    SEAT_ACTIONS,
    SEATS,
    STACK,
    Person,
    System,
    _my_turn,
    _open_table,
)
from tests.e2e.test_serve import Launcher


@dataclass
class Figures:
    fsync: str
    kills: int
    host_crash: bool
    bytes_cut: int = 0
    acknowledged: int = 0
    lost: int = 0
    recoveries_s: list[float] = field(default_factory=list)
    hands: int = 0
    gaps: int = 0
    chips_wrong: int = 0
    archived: int = 0
    archived_twice: int = 0
    archived_not_in_stream: int = 0
    services_alive: bool = True
    errors: int = 0

    def report(self) -> str:
        worst = max(self.recoveries_s, default=0.0)
        mean = sum(self.recoveries_s) / max(1, len(self.recoveries_s))
        return (
            f"appendfsync {self.fsync}: {self.kills} "
            + ("host crashes (SIGKILL, AOF cut by 1 s)" if self.host_crash else "SIGKILLs")
            + f", {self.bytes_cut} AOF bytes cut, {self.hands} hands, "
            f"{self.acknowledged} acknowledged actions, {self.lost} lost; "
            f"play resumed {mean:.1f} s after a restart on average, {worst:.1f} s at worst; "
            f"stream gaps {self.gaps}, hands with chips created or lost {self.chips_wrong}; "
            f"{self.archived} hands archived, {self.archived_twice} twice, "
            f"{self.archived_not_in_stream} no longer in the stream; "
            f"services alive {self.services_alive}; person's call errors {self.errors}"
        )


async def _keep_playing(person: Person, stop: asyncio.Event, errors: list[int]) -> None:
    while not stop.is_set():
        try:
            view = await person.view()
            if view is not None and _my_turn(view):
                await person.act(view)
                continue
        except grpc.aio.AioRpcError:
            errors[0] += 1
        await asyncio.sleep(0.05)


async def _sample(own: OwnRedis, sizes: list[tuple[float, int]], stop: asyncio.Event) -> None:
    """The AOF's size every 50 ms: where a host crash ``lose_s`` ago would have cut it."""
    while not stop.is_set():
        with contextlib.suppress(OSError, RuntimeError):
            sizes.append((time.monotonic(), own.aof_tail().stat().st_size))
        await asyncio.sleep(0.05)


async def _version(url: str, table_id: str) -> int:
    client = redis_async_lib.Redis.from_url(url)
    try:
        return int(await client.xlen(events_key(table_id)))
    except (redis_async_lib.RedisError, OSError):
        return -1
    finally:
        await client.aclose()


async def run(
    own: OwnRedis,
    launcher: Launcher,
    dsn: str,
    kills: int,
    seed: int,
    host_crash: bool = False,
    lose_s: float = 1.0,
) -> Figures:
    rng = random.Random(seed)
    figures = Figures(own.fsync, kills, host_crash)
    system = System(own, launcher, free_port())
    await system.start(dsn)
    table_id = f"crash-{uuid.uuid4().hex[:8]}"
    async with grpc.aio.insecure_channel(system.target) as channel:
        stub = rpc.TableServiceStub(channel)
        person = Person(stub, table_id, await _open_table(stub, table_id))
        await person.play_until(1)
        stop, errors = asyncio.Event(), [0]
        player = asyncio.create_task(_keep_playing(person, stop, errors))
        sizes: list[tuple[float, int]] = []
        sampler = asyncio.create_task(_sample(own, sizes, stop))
        for _ in range(kills):
            await asyncio.sleep(rng.uniform(1.0, 4.0))
            if host_crash:
                figures.bytes_cut += await own.crash_host(lose_s, sizes)
                await asyncio.sleep(rng.uniform(0.2, 1.5))
                await own.start()
                sizes.clear()
            else:
                await own.restart(signal.SIGKILL, down_s=rng.uniform(0.2, 1.5))
            restarted, before = time.monotonic(), await _version(own.url, table_id)
            while await _version(own.url, table_id) <= before:
                if time.monotonic() - restarted > 60:
                    break
                await asyncio.sleep(0.05)
            figures.recoveries_s.append(time.monotonic() - restarted)
        await asyncio.sleep(3.0)
        stop.set()
        await player
        await sampler
        figures.errors = errors[0]
        figures.acknowledged = len(person.acknowledged)
    await asyncio.sleep(3.0)  # the projector catches up
    figures.services_alive = all(p.process.returncode is None for p in system.procs)
    client = redis_async_lib.Redis.from_url(own.url)
    try:
        entries: list[tuple[bytes, dict[bytes, bytes]]] = await client.xrange(  # type: ignore[assignment]
            events_key(table_id)
        )
    finally:
        await client.aclose()
    stored = [epb.StoredEvent.FromString(fields[b"e"]) for _, fields in entries]
    sequences = [e.sequence for e in stored]
    figures.gaps = sum(1 for a, b in itertools.pairwise(sequences) if b != a + 1)
    keys = {e.request_key for e in stored if e.WhichOneof("event") in SEAT_ACTIONS}
    figures.lost = sum(1 for k in person.acknowledged if k not in keys)
    ends = [e.hand_ended for e in stored if e.HasField("hand_ended")]
    figures.hands = len(ends)
    figures.chips_wrong = sum(
        1 for end in ends if sum(s.stack for s in end.stacks) != SEATS * STACK
    )
    in_stream = {e.hand_started.setup.public_id for e in stored if e.HasField("hand_started")}
    connection = await asyncpg.connect(dsn)
    try:
        rows = await connection.fetch(
            "SELECT hand_id, number FROM archived_hands WHERE table_id=$1", table_id
        )
    finally:
        await connection.close()
    figures.archived = len(rows)
    numbers = [r["number"] for r in rows]
    figures.archived_twice = len(numbers) - len(set(numbers))
    figures.archived_not_in_stream = sum(1 for r in rows if r["hand_id"] not in in_stream)
    for proc in system.procs:
        with contextlib.suppress(ProcessLookupError):
            proc.process.send_signal(signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.process.wait(), 20)
    return figures


async def main(args: argparse.Namespace) -> None:
    database_url = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep or scratch  # --keep: the services' logs and Redis's files stay there
        own = OwnRedis(Path(tmp) / "redis", fsync=args.fsync)
        await own.start()
        launcher = Launcher(own.url, Path(tmp))
        try:
            async with archive_database(database_url, "felt_crash_run") as dsn:
                figures = await run(
                    own, launcher, dsn, args.kills, args.seed, args.host_crash, args.lose_s
                )
                print(figures.report(), flush=True)
        finally:
            await launcher.stop_all()
            await own.close()


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--fsync", choices=("always", "everysec", "no"), default="everysec")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--host-crash",
        action="store_true",
        help="after each SIGKILL cut the AOF back by --lose-s seconds (a host crash)",
    )
    parser.add_argument("--lose-s", type=float, default=1.0)
    parser.add_argument("--keep", default="", help="a directory for the logs, kept")
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(parse()))
