"""Benchmark of snapshots and trimming: rebuilding a long table, and what Redis holds of it.

Not a test: run ``python bench/snapshots.py`` (``--help`` for options).

For a Hold'em table (6 seats) and a Draw table (5 seats), each ``--hands``
hands long (2,000 by default) and played at random through the aggregate
(legal moves, seeded), the stream is appended to Redis one command per
append, as the table service does, with a snapshot as the first event of
every ``--every``-th deal (``TableRuntime`` writes it the same way). Then:

1. Rebuild time, best of 3: the whole stream (``read`` + ``rebuild``, what
   ``TableRuntime.load`` did before snapshots) against ``TableRuntime.load``
   from the latest snapshot (``read_tail``), and their ratio; both give the
   same state (checked).
2. Redis memory of the table (``MEMORY USAGE`` of its stream, request records
   and meta hash) before and after the projector's archived position reaches
   the table's version and the stream is trimmed below its latest snapshot.
3. What snapshots cost: their share of the stream's bytes, and the time to
   encode one against the time to encode the hand's own events.

Redis: ``$REDIS_URL`` if set, else a private embedded server. The benchmark
uses database ``$FELT_BENCH_REDIS_DB`` (default 13) of that server and EMPTIES
it before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from datetime import UTC, datetime, timedelta

from _support import bench_redis_url
from redis.asyncio import Redis

from felt.core.rules.commands import Act, ActionKind, Discard
from felt.core.rules.config import Variant
from felt.core.rules.legal import legal_actions
from felt.core.table.aggregate import (
    CreateTable,
    PlayHand,
    SeatPlayer,
    StartNextHand,
    TableCommand,
    TableState,
    execute_table,
    snapshot_of,
)
from felt.core.table.events import AnyEvent, TableConfig, TableSnapshotTaken
from felt.storage.eventstore import RedisEventStore, events_key, meta_key, requests_key
from felt.storage.eventstore.codec import decode_event, encode_stored
from services.table.runtime import TableRuntime
from services.table.stream import hand_ids, rebuild, timestamp, track


def _move(state: TableState, rng: random.Random) -> TableCommand:
    hand = state.hand
    assert hand is not None and hand.actor_seat is not None
    seat = hand.actor_seat
    legal = legal_actions(hand)
    assert legal is not None
    if legal.max_discard is not None:
        own = hand.seat_state(seat)
        assert own is not None
        return PlayHand(Discard(seat, tuple(rng.sample(own.hole, rng.randint(0, 2)))))
    roll = rng.random()
    if legal.min_raise_to is not None and roll < 0.15:
        kind = ActionKind.BET if legal.bet else ActionKind.RAISE
        return PlayHand(Act(seat, kind, legal.min_raise_to))
    if legal.can_fold and roll < 0.35:
        return PlayHand(Act(seat, ActionKind.FOLD))
    if legal.can_check:
        return PlayHand(Act(seat, ActionKind.CHECK))
    return PlayHand(Act(seat, ActionKind.CALL))


def long_table(
    config: TableConfig, hands: int, every: int, seed: int
) -> list[tuple[list[bytes], int]]:
    """The table's appends: (payloads, sequence of the snapshot among them or 0)."""
    rng = random.Random(seed)
    players = [
        SeatPlayer(s, f"p{s}", f"P{s}", 10_000_000, f"{s:064x}") for s in range(config.seat_count)
    ]
    pending: list[TableCommand] = [CreateTable(config), *players]
    state: TableState | None = None
    seated: dict[int, int] = {}
    appends: list[tuple[list[bytes], int]] = []
    version = 0
    at = datetime(2026, 1, 1, tzinfo=UTC)
    while True:
        if pending:
            command = pending.pop(0)
        else:
            assert state is not None
            if not state.hand_running:
                if state.hands_played >= hands:
                    return appends
                command = StartNextHand(rng.randbytes(32))
            else:
                command = _move(state, rng)
        after, events = execute_table(state, command)
        snapshot_at = 0
        if (
            isinstance(command, StartNextHand)
            and state is not None
            and state.hands_played
            and state.hands_played % every == 0
        ):
            events = [snapshot_of(state, seated), *events]
            snapshot_at = version + 1
        at += timedelta(seconds=1)
        recorded = timestamp(at)
        payloads = []
        for offset, (event, hand_id) in enumerate(
            zip(events, hand_ids(state, events), strict=True), start=1
        ):
            track(event, version + offset, [], {}, seated)
            payloads.append(
                encode_stored(event, config.table_id, version + offset, "", hand_id, recorded)
            )
        appends.append((payloads, snapshot_at))
        version += len(events)
        state = after


async def memory(redis: Redis, table_id: str) -> int:
    total = 0
    for key in (events_key(table_id), requests_key(table_id), meta_key(table_id)):
        used = await redis.memory_usage(key, samples=0)
        total += int(used or 0)
    return total


async def bench_table(
    redis: Redis, store: RedisEventStore, config: TableConfig, hands: int, every: int
) -> None:
    t = config.table_id
    started = time.perf_counter()
    appends = long_table(config, hands, every, seed=7)
    made = time.perf_counter() - started
    version = 0
    for n, (payloads, snapshot_at) in enumerate(appends):
        await store.append(t, payloads, version, f"c/{t}/{n}", b"answer", snapshot_at=snapshot_at)
        version += len(payloads)
    print(f"{config.variant.value}, {config.seat_count} seats, {hands:,} hands:")
    print(f"  {version:,} events in {len(appends):,} appends (generated in {made:.1f} s)")

    whole_s, tail_s = [], []
    for _ in range(3):
        start = time.perf_counter()
        full = rebuild(await store.read(t))
        whole_s.append(time.perf_counter() - start)
        runtime = TableRuntime(t, store)
        start = time.perf_counter()
        await runtime.load()
        tail_s.append(time.perf_counter() - start)
        assert runtime.state == full.state and runtime.version == full.version == version
        assert runtime.seated_at == full.seated_at
    tail_events = version - runtime.loaded_from + 1
    print(
        f"  rebuild: whole stream {min(whole_s) * 1000:,.1f} ms ({version:,} events), "
        f"snapshot + tail {min(tail_s) * 1000:,.2f} ms ({tail_events} events): "
        f"{min(whole_s) / min(tail_s):,.0f}x faster"
    )

    before = await memory(redis, t)
    await store.record_archived(t, version)
    latest = await store.latest_snapshot(t)
    dropped = await store.trim_archived(t, latest)
    after = await memory(redis, t)
    kept = await store.read(t, latest - 1)
    print(
        f"  Redis: {before / 1024:,.0f} KiB before trimming, {after / 1024:,.1f} KiB after "
        f"({dropped:,} events and their request records dropped, {len(kept)} kept): "
        f"{before / max(after, 1):,.0f}x smaller"
    )
    reloaded = TableRuntime(t, store)
    await reloaded.load()
    assert reloaded.state == full.state

    # What the snapshots cost.
    stream = [p for payloads, _ in appends for p in payloads]
    snapshots = [payloads[0] for payloads, at in appends if at]
    share = sum(map(len, snapshots)) / sum(map(len, stream))
    each = sum(map(len, snapshots)) / max(len(snapshots), 1)
    print(f"  snapshots: {len(snapshots):,} of {each:,.0f} bytes each, {share:.1%} of the stream")
    await snapshot_cost(config)


async def snapshot_cost(config: TableConfig) -> None:
    """Encoding a snapshot against encoding one hand's events (the same table, mid-game)."""
    appends = long_table(config, 3, 1, seed=11)
    # Rebuild the state before the last deal and its snapshot.
    events: list[AnyEvent] = [decode_event(p)[0] for payloads, _ in appends for p in payloads]
    snapshot = next(e for e in reversed(events) if isinstance(e, TableSnapshotTaken))
    last_deal = max(i for i, (_, at) in enumerate(appends) if at)
    hand_events = [decode_event(p)[0] for payloads, _ in appends[last_deal:] for p in payloads][1:]
    rounds = 2000
    start = time.perf_counter()
    for n in range(rounds):
        encode_stored(snapshot, config.table_id, n, "", "", None)
    snap_s = (time.perf_counter() - start) / rounds
    start = time.perf_counter()
    for n in range(rounds // 10):
        for event in hand_events:
            encode_stored(event, config.table_id, n, "", "h", None)
    hand_s = (time.perf_counter() - start) / (rounds // 10)
    print(
        f"  encoding a snapshot {snap_s * 1e6:,.0f} us, the hand's {len(hand_events)} events "
        f"{hand_s * 1e6:,.0f} us: a snapshot per hand adds {snap_s / hand_s:.0%} to the encoding"
    )


async def main(args: argparse.Namespace) -> None:
    url = bench_redis_url("FELT_BENCH_REDIS_DB", "13")
    redis = Redis.from_url(url)
    await redis.flushdb()
    store = RedisEventStore(redis)
    try:
        configs = [
            TableConfig("bench-nlhe", Variant.NLHE, 6, small_blind=5, big_blind=10),
            TableConfig("bench-draw", Variant.DRAW5, 5, ante=1, small_bet=10, big_bet=20),
        ]
        for config in configs:
            await bench_table(redis, store, config, args.hands, args.every)
    finally:
        await redis.flushdb()
        await store.aclose()
        await redis.aclose()


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=2000, help="hands per table")
    parser.add_argument("--every", type=int, default=1, help="hands between snapshots")
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse(sys.argv[1:])))
