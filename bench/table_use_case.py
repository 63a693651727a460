"""CPU per action of the table service's use case, in this process, without gRPC.

Not a test: run ``python bench/table_use_case.py`` (``--help`` for options).

``bench/table_service.py`` measures a whole ``SubmitAction`` (gRPC, interceptors, the use
case, Redis) against a bare ping and the *floor*. This one takes the gRPC layer away to show
how that cost splits: ``TableApp.submit_action`` is called directly, heads-up, each seat
checking or calling (so hands run to showdown and the table deals the next one at once), on
the in-memory event store and registry and then on Redis (the real ``RedisEventStore``:
its pipelined appends, the trims after snapshots), alternately, ``--rounds`` times. It
prints the process's CPU time per action, the deals included (one every few actions).

What it leaves out is what the service adds around the use case: the gRPC call, the
interceptors, the request's conversion and the answer's serialization, and the asyncio task
steps and wake-ups of a call arriving from a socket. ``--profile`` prints cProfile's top
functions of one more in-memory round (cProfile's own cost roughly doubles the times).

Redis: ``$REDIS_URL`` if set, else a private embedded server; database
``$FELT_BENCH_REDIS_DB`` (default 12), EMPTIED before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import time
from datetime import timedelta

from _support import bench_redis_url
from redis.asyncio import Redis

from felt.core.rules.commands import Act, ActionKind
from felt.storage.decisions import MemoryDecisionQueue
from felt.storage.eventstore import MemoryEventStore, RedisEventStore
from felt.storage.eventstore.base import EventStore
from felt.storage.idempotency import ClientRequest
from felt.storage.registry import MemoryTableRegistry, RedisTableRegistry, TableRegistry
from poker.events.v1 import events_pb2 as epb
from services.table.admin import TableAdmin
from services.table.application import TableApp
from services.table.auth import Authenticator, Caller, Secrets
from services.table.manager import TableManager
from services.table.ratelimit import RateLimiter, RateLimits
from services.table.runtime import Timing

TABLE = "use-case-bench"
SECRETS = Secrets(b"s" * 32, "admin-token-of-the-bench", "ai-token-of-the-bench")
WARM_UP = 300  # actions before the clock starts: caches, the first snapshots and trims


def request(request_id: str) -> ClientRequest:
    return ClientRequest(request_id, "poker.v1.SubmitActionRequest", request_id.encode())


async def next_action(app: TableApp) -> Act:
    """The check or call of the seat to act, once the next hand is dealt."""
    runtime = app.manager.runtimes[TABLE]
    while (hand := runtime.state.hand if runtime.state else None) is None or hand.ended:
        # Idle, not spinning: on Redis the deal waits for its append's answer, and a spin
        # (``sleep(0)``) would count that wait as this process's CPU.
        await asyncio.sleep(0.0002)
    seat = hand.actor_seat
    mine = hand.seat_state(seat) if seat is not None else None
    assert seat is not None and mine is not None
    return Act(seat, ActionKind.CHECK if mine.bet == hand.current_bet else ActionKind.CALL)


async def measure(
    store: EventStore, registry: TableRegistry, actions: int, profile: bool, tag: str
) -> float:
    """CPU seconds per action of ``actions`` actions at a fresh heads-up table."""
    manager = TableManager(
        store,
        registry,
        MemoryDecisionQueue(),
        adopt=False,
        timing=Timing(between_hands=timedelta(0)),
    )
    app = TableApp(manager, RateLimiter(RateLimits(per_second=10**9, burst=10**9)))
    auth = Authenticator(SECRETS)
    admin = TableAdmin(app, SECRETS)
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=2, small_blind=5, big_blind=10)
    config.action_clock.FromMilliseconds(60_000)  # every action re-arms the clock, as in play
    lobby = auth.authenticate(SECRETS.admin_token)
    await admin.create_table(lobby, request(f"create-{tag}"), TABLE, "", config)
    callers: list[Caller] = []
    for seat in range(2):
        seated = await admin.seat_player(
            lobby, request(f"seat-{tag}-{seat}"), TABLE, seat, f"p{seat}", "", 10**11, 0
        )
        callers.append(auth.authenticate(seated.seat_token))
    try:
        for n in range(WARM_UP + actions):
            if n == WARM_UP:
                profiler = cProfile.Profile() if profile else None
                if profiler is not None:
                    profiler.enable()
                started = time.process_time()
            action = await next_action(app)
            await app.submit_action(
                callers[action.seat], request(f"{tag}-{n}"), TABLE, action, None
            )
        spent = time.process_time() - started
        if profiler is not None:
            profiler.disable()
            pstats.Stats(profiler).sort_stats("tottime").print_stats(30)
        return spent / actions
    finally:
        await manager.stop()


async def main(args: argparse.Namespace) -> None:
    url = bench_redis_url("FELT_BENCH_REDIS_DB", "12")
    redis = Redis.from_url(url)
    await redis.flushdb()
    print(f"{args.actions:,} actions a measurement, heads-up, check or call; Redis {url}")
    memory: list[float] = []
    on_redis: list[float] = []
    try:
        for r in range(args.rounds):
            memory.append(
                await measure(MemoryEventStore(), MemoryTableRegistry(), args.actions, False, "m")
            )
            await redis.flushdb()
            store = RedisEventStore(redis)
            on_redis.append(
                await measure(store, RedisTableRegistry(redis), args.actions, False, f"r{r}")
            )
            await store.aclose()
            await redis.flushdb()
            print(
                f"  round {r + 1}: in-memory ports {memory[-1] * 1e6:,.0f} us,"
                f" Redis {on_redis[-1] * 1e6:,.0f} us CPU per action"
            )
        memory.sort()
        on_redis.sort()
        mid = len(memory) // 2
        print(
            f"median CPU per action: in-memory ports {memory[mid] * 1e6:,.0f} us, Redis"
            f" {on_redis[mid] * 1e6:,.0f} us, {on_redis[mid] / memory[mid]:.2f}x (the Redis"
            f" adapter's share {(on_redis[mid] - memory[mid]) * 1e6:,.0f} us)"
        )
        if args.profile:
            await measure(MemoryEventStore(), MemoryTableRegistry(), args.actions, True, "p")
    finally:
        await redis.flushdb()
        await redis.aclose()


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--actions", type=int, default=3_000, help="actions a measurement")
    parser.add_argument("--rounds", type=int, default=3, help="alternating measurements")
    parser.add_argument("--profile", action="store_true", help="cProfile one more round")
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(parse()))
