"""Benchmark of the hand archive and the projector (issue 12).

Not a test: run ``python bench/projector.py`` (``--help`` for options).

The workload: tables of three easy bots (Hold'em and Draw alternately) played by the
pure core in this process, stored as the table service stores them.

1. Archiving: ``PostgresHandArchive.write`` (the cursors' compare-and-set, then COPY of
   the hands, seats, pots and events, one transaction; building the rows included)
   against a plain COPY of the same rows (built beforehand) into tables of the same
   shape (``CREATE TABLE ... (LIKE ... INCLUDING ALL)``) in as many transactions of the
   same size, in alternating slices, in two shapes: bulk (writes of 10 tables x 5
   hands, a projector catching up) and live (writes of 4 tables x 1 hand, a projector
   keeping up). Target: >= 0.5x.
2. Keeping up: a ``felt projector`` process (pinned to CPU 1 with ``taskset`` when it
   exists) follows the tables while this process (pinned to CPU 0) appends the bots'
   hands to Redis at ``--rate`` hands per second (200), encoded beforehand so that the
   writer only appends. Lag per hand = ``archived_at`` (the archiving transaction's
   start, from PostgreSQL) - the time the writer appended its ``HandEnded``; also the
   projector's CPU seconds per hand. Target: lag p99 < 1 s.

On a 2-core machine real bot play (table service, AI workers) cannot also produce 200
hands/s, so the hands are played beforehand by the pure core with easy bots and replayed
into the streams at the target rate: the projector sees the same stream load.

Redis: ``$REDIS_URL``'s server (unset: a private one), database ``$FELT_BENCH_REDIS_DB``
(default 13), emptied before and after. PostgreSQL: ``$DATABASE_URL``'s server (unset: a
private one); a scratch database ``felt_bench_<hex>``, migrated and dropped.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import time
from collections.abc import Sequence
from datetime import UTC, datetime

import asyncpg
from _support import bench_redis_url, scratch_database, spawn
from redis.asyncio import Redis

from felt.core.rules.config import Variant
from felt.core.rules.legal import legal_actions
from felt.core.rules.views import redact_all, view_for
from felt.core.table.aggregate import (
    AddChips,
    CreateTable,
    PlayHand,
    SeatPlayer,
    SitIn,
    StartNextHand,
    TableState,
    execute_table,
)
from felt.core.table.events import AnyEvent, TableConfig
from felt.messages.events import EventMeta
from felt.players.bots import get_bot
from felt.storage.archive import ArchivedHand, Cursor, TableWrite
from felt.storage.archive.feed import projector_lease_key
from felt.storage.archive.postgres import COLUMNS, PostgresHandArchive, archive_rows
from felt.storage.archive.projection import TableProjection
from felt.storage.eventstore import RedisEventStore, StoredRecord
from felt.storage.eventstore.codec import encode_event
from felt.storage.migrations import migrate
from felt.storage.registry import RedisTableRegistry
from services.lobby.db_cli import MIGRATIONS
from services.table.stream import hand_ids

TABLES = ("archived_hands", "archived_seats", "archived_pots", "archived_events")


# ---------------------------------------------------------------------- workload


def _config(table_id: str, n: int) -> TableConfig:
    if n % 2 == 0:
        return TableConfig(table_id, Variant.NLHE, 6, small_blind=5, big_blind=10)
    return TableConfig(table_id, Variant.DRAW5, 5, ante=1, small_bet=10, big_bet=20)


def play(table_id: str, n: int, hands: int) -> list[list[AnyEvent]]:
    """A table's events in chunks: its set-up, then one chunk per hand (easy bots)."""
    rng = random.Random(f"{table_id}:{n}")
    bot = get_bot("easy")
    state, events = execute_table(None, CreateTable(_config(table_id, n)))
    chunks: list[list[AnyEvent]] = [list(events)]
    for seat in range(3):
        state, events = execute_table(
            state, SeatPlayer(seat, f"bot-{table_id}-{seat}", f"Bot {seat}", 2_000, "h" * 64)
        )
        chunks[0] += events
    for _ in range(hands):
        top_ups: list[AnyEvent] = []
        for p in state.players:  # the busted buy chips again and sit back in
            if p.stack < 200:
                state, events = execute_table(state, AddChips(p.seat, 2_000))
                top_ups += events
            if state.player(p.seat).sitting_out:  # type: ignore[union-attr]
                state, events = execute_table(state, SitIn(p.seat))
                top_ups += events
        state, hand = _hand(state, bot, rng)
        chunks.append(top_ups + hand)
    return chunks


def _hand(state: TableState, bot: object, rng: random.Random) -> tuple[TableState, list[AnyEvent]]:
    state, out = execute_table(state, StartNextHand(rng.randbytes(32), rng.randbytes(16)))
    history = list(state.hand_events)
    while state.hand_running:
        assert state.hand is not None
        legal = legal_actions(state.hand)
        assert legal is not None
        seat = legal.seat
        decision = bot.decide(  # type: ignore[attr-defined]
            view_for(state.hand, seat), redact_all(history, seat), legal, rng
        )
        state, events = execute_table(state, PlayHand(decision))
        out += events
        history = list(state.hand_events)
    return state, list(out)


def stored(
    table_id: str, events: Sequence[AnyEvent], hands: Sequence[str], first: int, at: datetime
) -> list[bytes]:
    """``events`` (of hands ``hands``) as appended after sequence ``first - 1`` at time ``at``."""
    return [
        encode_event(e, EventMeta(table_id, first + i, at, hand_id=h))
        for i, (e, h) in enumerate(zip(events, hands, strict=True))
    ]


def projected(table_id: str, chunks: list[list[AnyEvent]]) -> list[ArchivedHand]:
    """The hands of a table's whole stream, as the projector archives them."""
    events = [e for chunk in chunks for e in chunk]
    at = datetime.now(UTC)
    records = [
        StoredRecord(i, encode_event(e, EventMeta(table_id, i, at, hand_id=h)))
        for i, (e, h) in enumerate(zip(events, hand_ids(None, events), strict=True), start=1)
    ]
    projection = TableProjection(table_id, Cursor())
    for r in records:
        projection.feed(r)
    return list(projection.take().hands)


# ---------------------------------------------------------------------- 1. archiving


async def _truncate(pool: asyncpg.Pool) -> None:
    mirrors = ", ".join(f"bench_{t}" for t in TABLES)
    await pool.execute(f"TRUNCATE {', '.join(TABLES)}, {mirrors}, archive_cursors")


async def _mirror(pool: asyncpg.Pool) -> None:
    """Tables like the archive's (columns, defaults, indexes) for the COPY baseline."""
    for t in TABLES:
        await pool.execute(f"CREATE TABLE IF NOT EXISTS bench_{t} (LIKE {t} INCLUDING ALL)")


async def _archive_slice(archive: PostgresHandArchive, writes: list[list[TableWrite]]) -> float:
    started = time.perf_counter()
    for w in writes:
        await archive.write(w)
    return time.perf_counter() - started


async def _copy_slice(pool: asyncpg.Pool, rows: list[dict[str, list[tuple[object, ...]]]]) -> float:
    started = time.perf_counter()
    for batch in rows:  # as the archive: a pooled connection and a transaction per write
        async with pool.acquire() as conn, conn.transaction():
            for table, records in batch.items():
                if records:
                    await conn.copy_records_to_table(
                        f"bench_{table}", records=records, columns=COLUMNS[table]
                    )
    return time.perf_counter() - started


def _shape(hands: dict[str, list[ArchivedHand]], tables: int, per: int) -> list[list[TableWrite]]:
    """Writes of ``tables`` tables with ``per`` hands each, positions chained per table."""
    queues = {t: list(h) for t, h in hands.items()}
    positions = dict.fromkeys(hands, 0)
    writes = []
    ids = sorted(queues)
    while any(queues.values()):
        live = [t for t in ids if queues[t]]
        for start in range(0, len(live), tables):
            group = []
            for t in live[start : start + tables]:
                mine, queues[t] = queues[t][:per], queues[t][per:]
                end = mine[-1].last_sequence
                group.append(TableWrite(t, positions[t], Cursor(end), tuple(mine)))
                positions[t] = end
            writes.append(group)
    return writes


async def bench_archive(
    pool: asyncpg.Pool, hands: dict[str, list[ArchivedHand]], slices: int
) -> None:
    """Each shape's writes in ``slices`` slices, the archive's and COPY's in turn, so that
    both see the same background load; the COPY goes to mirror tables of the same shape."""
    total = sum(len(h) for h in hands.values())
    print(f"{total} hands, {sum(len(x.events) for h in hands.values() for x in h)} events")
    print(f"{'shape':<26} {'archive h/s':>12} {'COPY h/s':>10} {'ratio':>6}")
    await _mirror(pool)
    archive = PostgresHandArchive(pool)
    for name, tables, per in (("bulk (10 tables x 5)", 10, 5), ("live (4 tables x 1)", 4, 1)):
        await _truncate(pool)
        writes = _shape(hands, tables, per)
        step = max(1, len(writes) // slices)
        a_time = c_time = 0.0
        for start in range(0, len(writes), step):
            part = writes[start : start + step]
            rows = [archive_rows([h for t in w for h in t.hands]) for w in part]
            a_time += await _archive_slice(archive, part)
            c_time += await _copy_slice(pool, rows)
        a_rate, c_rate = total / a_time, total / c_time
        print(f"{name:<26} {a_rate:>12.0f} {c_rate:>10.0f} {a_rate / c_rate:>5.2f}x")
    await _truncate(pool)


# ---------------------------------------------------------------------- 2. keeping up


def _pinned() -> bool:
    """Whether this process and the projector get a CPU each (Linux, two or more CPUs)."""
    return hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1


async def bench_keep_up(
    redis_url: str, dsn: str, plays: dict[str, list[list[AnyEvent]]], rate: float
) -> None:
    redis = Redis.from_url(redis_url)
    store = RedisEventStore(redis)
    await redis.flushdb()
    registry = RedisTableRegistry(redis)
    for t in plays:
        await registry.add(t)
    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=2)
    await _truncate(pool)
    at = datetime.now(UTC)
    encoded: dict[str, list[list[bytes]]] = {}
    for t, chunks in plays.items():
        hands = hand_ids(None, [e for c in chunks for e in c])
        first, out = 1, []
        for chunk in chunks:
            out.append(stored(t, chunk, hands[first - 1 : first - 1 + len(chunk)], first, at))
            first += len(chunk)
        encoded[t] = out
    child = await spawn(
        "projector",
        ["-m", "services.cli", "projector", "--metrics-port", "0"],
        {"DATABASE_URL": dsn, "REDIS_URL": redis_url, "FELT_PROJECTOR_ID": "bench"},
        r"metrics port (\d+)",
    )
    if _pinned():  # what taskset -c does, for this process (0) and the projector (1)
        os.sched_setaffinity(0, {0})
        os.sched_setaffinity(child.pid, {1})
    try:
        deadline = time.monotonic() + 30
        while await redis.exists(*(projector_lease_key(t) for t in plays)) < len(plays):
            assert time.monotonic() < deadline, "the projector did not adopt the tables"
            await asyncio.sleep(0.1)
        cpu0 = child.cpu_seconds()
        versions = dict.fromkeys(plays, 0)
        appended: dict[str, float] = {}
        # The set-up of every table first, then hands round-robin at the rate.
        for t, payloads in encoded.items():
            await store.append(t, payloads[0], 0)
            versions[t] = len(payloads[0])
        longest = max(len(c) for c in encoded.values())
        schedule = [(t, i) for i in range(1, longest) for t in encoded if i < len(encoded[t])]
        started = time.monotonic()
        for n, (t, i) in enumerate(schedule):
            delay = started + n / rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            await store.append(t, encoded[t][i], versions[t])
            versions[t] += len(encoded[t][i])
            appended[f"{t}:{i}"] = time.time()
        elapsed = time.monotonic() - started
        total = len(schedule)
        deadline = time.monotonic() + 60
        while await pool.fetchval("SELECT count(*) FROM archived_hands") < total:
            assert time.monotonic() < deadline, "the projector did not catch up"
            await asyncio.sleep(0.2)
        cpu = child.cpu_seconds() - cpu0
        rows = await pool.fetch(
            "SELECT table_hand_id, extract(epoch FROM archived_at)::float8 AS at"
            " FROM archived_hands"
        )
        lags = sorted(r["at"] - appended[r["table_hand_id"]] for r in rows)

        def p(q: float) -> float:
            return float(lags[min(len(lags) - 1, int(q * len(lags)))])

        print(
            f"{total} hands at {len(plays)} tables in {elapsed:.1f} s ="
            f" {total / elapsed:.0f} hands/s appended (target {rate:.0f})"
        )
        print(
            f"lag p50 {p(0.5) * 1000:.0f} ms, p99 {p(0.99) * 1000:.0f} ms,"
            f" max {lags[-1] * 1000:.0f} ms"
        )
        print(
            f"projector CPU {cpu:.2f} s = {cpu / total * 1000:.2f} ms per hand"
            f" ({total / cpu if cpu else 0:.0f} hands/s per core at most)"
        )
        m = await _metrics(child.port)
        writes = m.get("felt_projector_writes_total", 0.0)
        if writes:
            busy = m.get("felt_projector_write_seconds_sum", 0.0)
            print(
                f"{writes:.0f} writes, {m.get('felt_projector_hands_total', 0.0) / writes:.1f}"
                f" hands per write, {busy / writes * 1000:.0f} ms per transaction (its commit"
                f" included), the database busy {busy / elapsed:.0%} of the run"
            )
    finally:
        await child.stop()
        await pool.close()
        await redis.flushdb()
        await store.aclose()
        await redis.aclose()


async def _metrics(port: int) -> dict[str, float]:
    """The projector's unlabelled Prometheus samples (``/metrics``)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /metrics HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")
    await writer.drain()
    body = (await reader.read()).decode()
    writer.close()
    out = {}
    for line in body.splitlines():
        name, _, value = line.partition(" ")
        if name.startswith("felt_projector_") and "{" not in name and value:
            out[name] = float(value)
    return out


# ---------------------------------------------------------------------- main


async def main(args: argparse.Namespace) -> None:
    async with scratch_database() as scratch:
        print(f"load average {os.getloadavg()[0]:.2f}")
        started = time.monotonic()
        plays = {f"b-{n}": play(f"b-{n}", n, args.hands) for n in range(args.tables)}
        took = time.monotonic() - started
        print(f"played {args.tables} tables x {args.hands} hands in {took:.1f} s")
        await migrate(scratch.dsn, MIGRATIONS)
        pool = await asyncpg.create_pool(scratch.dsn, min_size=1, max_size=2)
        try:
            await _mirror(pool)
            if args.part in ("all", "archive"):
                print("\n1. Archiving into PostgreSQL: PostgresHandArchive.write vs plain COPY")
                hands = {t: projected(t, chunks) for t, chunks in plays.items()}
                await bench_archive(pool, hands, args.slices)
        finally:
            await pool.close()
        if args.part == "archive":
            return
        print(f"\n2. A projector process keeping up with {args.rate:.0f} hands/s")
        redis_url = bench_redis_url("FELT_BENCH_REDIS_DB", "13")
        await bench_keep_up(redis_url, scratch.dsn, plays, args.rate)


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--hands", type=int, default=50, help="hands per table")
    parser.add_argument("--slices", type=int, default=20, help="alternating slices of each")
    parser.add_argument("--rate", type=float, default=200.0, help="hands per second appended")
    parser.add_argument("--part", choices=("all", "archive", "keep-up"), default="all")
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(parse()))
