"""The archive's done-when as a bot run (issue 12): ``python -m tests.archive_run --hands 2000``.

``felt serve --dev`` (table service and AI workers; its two demo tables) plus tables of AI
bots of both variants opened over gRPC, two ``felt projector`` processes, trimming on
(``FELT_TRIM_RETAIN_S`` small, the AI decision stream trimmed every second). A *tap* in this
process follows every table's stream from its first entry while the run goes on and keeps
what it read (the oracle: the streams as appended, before the table service trims them; a
gap in what it read fails the run). Once ``--hands`` hands are archived the table service
stops, the projectors catch up, and :func:`check` asserts:

- every finished hand of the tapped streams is in the archive exactly once (one row per
  ``(table, number)``, as many as the streams finished), equal to the projection of its
  stream (``HandArchive.hand`` compared whole), its archived events byte for byte the
  stream's entries of that hand, and folding those archived events again gives the same hand;
- each table's stream holds only what a live table needs: nothing at or below the archived
  mark was kept past the retention (the first entry left is no older than the newest snapshot
  at least ``retain`` + slack before the table's last deal), and nothing after the mark went;
  its latest snapshot is still there;
- the request records left all belong to entries still in the stream;
- the AI decision streams' periodic trims left only a tail (nothing older than the oldest
  request still owed or the run's last seconds), and one more trim leaves only what the group
  still owes (from the oldest pending request on);
- ``felt replay HAND --seat N`` of sampled archived hands of both variants (``felt lobby``
  serving the archive) shows each seat its own cards and no unshown card of another seat.

Then it prints the figures (hands, time, archive rows, stream entries and bytes appended vs
what is left, Redis memory at the start and the end, the AI stream, lag).
``tests/e2e/test_archive_run.py`` runs a shortened version.
Redis: ``$REDIS_URL`` with database ``$FELT_TEST_REDIS_DB`` (flushed); PostgreSQL:
``$DATABASE_URL``'s server, a throw-away database.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import tempfile
import time
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import cast

import asyncpg
import redis.asyncio as redis_async_lib

from felt.config.settings import FELT_DECISION_SHARDS
from felt.core.cards import card_str
from felt.core.rules.events import HoleCardsDealt
from felt.core.table.aggregate import replay_table
from felt.core.table.events import AnyEvent, TableSnapshotTaken
from felt.storage.archive import ArchivedHand
from felt.storage.archive.postgres import PostgresHandArchive
from felt.storage.archive.projection import TableProjection
from felt.storage.archive.values import Cursor
from felt.storage.decisions import RedisDecisionQueue, shard_streams
from felt.storage.decisions.base import AI_GROUP, AI_STREAM
from felt.storage.eventstore import RedisEventStore, StoredRecord, archived_key
from felt.storage.eventstore.base import events_key, meta_key, requests_key
from felt.storage.eventstore.codec import decode_event
from felt.storage.idempotency import KEPT_PREFIX
from felt.storage.registry import RedisTableRegistry
from poker.events.v1 import events_pb2 as epb
from tests.conftest import with_redis_db
from tests.e2e.own_redis import stable_port
from tests.e2e.test_projector_kill import _open_table, _start_projector, archive_database
from tests.e2e.test_serve import READY, Launcher
from tests.felt_command import run_felt
from tests.unit.archive.streams import archived
from tests.unit.test_history import CARD, _secret_cards

OPERATOR = "operator-token-of-the-archive-run-0123456789"
DECISION_SHARDS = FELT_DECISION_SHARDS.default  # what `felt serve` shards the requests over
LAG_SLACK_S = 10.0  # how far behind a loaded projector may be when a trim runs
# How far before the services stopped the AI workers' last trim may have run: one trim a
# second (FELT_AI_TRIM_INTERVAL_S=1 here), late on a loaded machine.
TRIM_SLACK_S = 3.0


@dataclass
class Tap:
    """Every table's stream as appended, read while the run goes on (before trimming)."""

    redis: redis_async_lib.Redis
    records: dict[str, list[StoredRecord]] = field(default_factory=dict)
    stopping: bool = False

    async def follow(self) -> None:
        store = RedisEventStore(self.redis)
        registry = RedisTableRegistry(self.redis)
        while not self.stopping:
            for t in await registry.table_ids():
                self.records.setdefault(t, [])
            moved = await self.read_once(store)
            if not moved:
                await asyncio.sleep(0.05)

    async def read_once(self, store: RedisEventStore) -> int:
        moved = 0
        for t, got in self.records.items():
            after = got[-1].sequence if got else 0
            new = await store.read(t, after, 2_000)
            if new and new[0].sequence != after + 1:
                raise AssertionError(f"the tap missed {t} {after + 1}..{new[0].sequence - 1}")
            got += new
            moved += len(new)
        return moved

    async def catch_up(self) -> None:
        store = RedisEventStore(self.redis)
        while await self.read_once(store):
            pass


@dataclass
class Figures:
    hands: int = 0
    tables: int = 0
    seconds: float = 0.0
    rows: dict[str, int] = field(default_factory=dict)
    redis_start: int = 0
    redis_end: int = 0
    bytes_appended: int = 0
    table_keys_end: int = 0
    entries_appended: int = 0
    entries_left: int = 0
    ai_added: int = 0
    ai_left: int = 0
    lag_p50: float = 0.0
    replayed: int = 0
    lag_p99: float = 0.0
    # Wall-clock ms when the services were told to stop: the AI workers' last trims ran before.
    stopped_ms: int = 0

    def report(self) -> str:
        rows = ", ".join(f"{k} {v:,}" for k, v in self.rows.items())
        return "\n".join(
            [
                f"{self.hands:,} hands at {self.tables} tables in {self.seconds:.0f} s",
                f"archive rows: {rows}",
                f"stream entries: {self.entries_appended:,} appended, {self.entries_left:,} left",
                f"Redis used_memory {self.redis_start / 2**20:.1f} MiB at the start,"
                f" {self.redis_end / 2**20:.1f} MiB at the end; events appended"
                f" {self.bytes_appended / 2**20:.1f} MiB, the tables' keys (streams, request"
                f" records, meta) {self.table_keys_end / 2**10:.0f} KiB at the end",
                f"AI decision streams: {self.ai_added:,} added, {self.ai_left:,} left",
                f"lag (HandEnded to archived_at): p50 {self.lag_p50 * 1000:.0f} ms,"
                f" p99 {self.lag_p99 * 1000:.0f} ms",
                f"felt replay --seat N: {self.replayed} seats of archived hands checked",
            ]
        )


async def _table_bytes(redis: redis_async_lib.Redis, tables: set[str]) -> int:
    total = 0
    for t in tables:
        for key in (events_key(t), requests_key(t), meta_key(t)):
            total += int(await redis.memory_usage(key) or 0)
    return total


async def run(
    launcher: Launcher,
    redis: redis_async_lib.Redis,
    dsn: str,
    *,
    hands: int,
    tables_per_variant: int = 3,
    retain_s: int = 2,
    limit_s: float = 1_800.0,
    replays: int = 2,
) -> Figures:
    """The run (see the module docstring); raises AssertionError if a check fails."""
    figures = Figures(redis_start=int((await redis.info("memory"))["used_memory"]))
    # Below the ephemeral range, picked now: fixed ones in it were, now and then, another
    # connection's local port ("cannot listen on 127.0.0.1:52960").
    table_port, lobby_port = stable_port(), stable_port()
    serve = await launcher.start(
        "serve",
        "--dev",
        "--workers",
        "2",
        FELT_TABLE_ADDR=f"127.0.0.1:{table_port}",
        FELT_TRIM_RETAIN_S=str(retain_s),
        FELT_AI_TRIM_INTERVAL_S="1",
    )
    assert serve.first_line.startswith(READY), (serve.first_line, serve.log.read_text())
    tap = Tap(redis)
    tapping = asyncio.create_task(tap.follow())
    projectors = [await _start_projector(launcher, dsn, m) for m in ("run-a", "run-b")]
    lobby = await launcher.start(
        "lobby",
        "--dev",
        DATABASE_URL=dsn,
        FELT_LOBBY_ADDR=f"127.0.0.1:{lobby_port}",
        FELT_TABLE_ADDR=f"127.0.0.1:{table_port}",
        FELT_ADMIN_TOKEN=OPERATOR,
    )
    assert "listening" in lobby.first_line, (lobby.first_line, lobby.log.read_text())
    for n in range(tables_per_variant):
        await _open_table(f"bots-holdem-{n}", epb.VARIANT_NLHE, table_port)
        await _open_table(f"bots-draw-{n}", epb.VARIANT_DRAW5, table_port)
    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=4)
    started = time.monotonic()
    try:
        while (count := await pool.fetchval("SELECT count(*) FROM archived_hands")) < hands:
            assert time.monotonic() - started < limit_s, f"only {count} hands in {limit_s} s"
            assert not tapping.done(), tapping.exception()
            assert serve.process.returncode is None, serve.log.read_text()[-3000:]
            await asyncio.sleep(0.5)
        figures.seconds = time.monotonic() - started
        figures.stopped_ms = int(time.time() * 1000)
        serve.process.send_signal(signal.SIGTERM)
        assert await serve.process.wait() == 0, serve.log.read_text()[-3000:]
        tap.stopping = True
        await tapping
        await tap.catch_up()
        table_ids = await RedisTableRegistry(redis).table_ids()
        await caught_up(pool, tap)
        await asyncio.sleep(1.0)  # the last marks
        for p in projectors:
            p.process.send_signal(signal.SIGTERM)
            assert await p.process.wait() == 0, p.log.read_text()[-3000:]
            assert "Traceback" not in p.log.read_text(), p.log.read_text()[-3000:]
        await check(redis, pool, tap, timedelta(seconds=retain_s), figures)
        figures.replayed = await check_replays(pool, tap, replays, lobby_port)
        figures.redis_end = int((await redis.info("memory"))["used_memory"])
        figures.table_keys_end = await _table_bytes(redis, table_ids)
        figures.bytes_appended = sum(len(r.payload) for rs in tap.records.values() for r in rs)
    finally:
        tap.stopping = True
        with suppress(Exception):
            await tapping
        await pool.close()
    return figures


async def caught_up(pool: asyncpg.Pool, tap: Tap) -> None:
    want = {t: len(archived(t, records)) for t, records in tap.records.items()}
    deadline = time.monotonic() + 120
    while True:
        rows = await pool.fetch("SELECT table_id, count(*) AS n FROM archived_hands GROUP BY 1")
        have = {r["table_id"]: r["n"] for r in rows}
        if all(have.get(t, 0) >= n for t, n in want.items()):
            return
        assert time.monotonic() < deadline, (have, want)
        await asyncio.sleep(0.5)


def _stream_id(entry_id: object) -> tuple[int, int]:
    """A Redis stream entry id (``ms-seq``, bytes from this client) as a comparable pair."""
    text = entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)
    ms, _, seq = text.partition("-")
    return int(ms), int(seq or 0)


async def check_hands(pool: asyncpg.Pool, tap: Tap) -> int:
    """Every finished hand of the tapped streams is in the archive exactly once (one row per
    ``(table, number)``, as many as the streams finished), equal to the projection of its
    stream, its archived events byte for byte the stream's, and folding them again gives the
    same hand. The hands checked."""
    archive = PostgresHandArchive(pool)
    total = 0
    for t, records in tap.records.items():
        expected = archived(t, records)
        by_sequence = {r.sequence: r.payload for r in records}
        numbers = [
            r["number"]
            for r in await pool.fetch(
                "SELECT number FROM archived_hands WHERE table_id = $1 ORDER BY number", t
            )
        ]
        assert numbers == sorted(h.number for h in expected), (t, len(numbers), len(expected))
        for hand in expected:
            stored = await archive.hand(hand.hand_id)
            assert stored == hand, (t, hand.table_hand_id)
            assert all(by_sequence[e.sequence] == e.payload for e in stored.events)
            assert _refold(t, stored) == hand, (t, hand.table_hand_id, "refold")
        total += len(expected)
    return total


async def check(
    redis: redis_async_lib.Redis,
    pool: asyncpg.Pool,
    tap: Tap,
    retain: timedelta,
    figures: Figures,
) -> None:
    """The done-when's assertions (the module docstring), filling in ``figures``."""
    store = RedisEventStore(redis)
    total = await check_hands(pool, tap)
    for t, records in tap.records.items():
        left = await _left(redis, store, t)
        _check_stream(t, records, left, await _mark(redis, t), retain)
        await _check_requests(redis, t, left[0].sequence)
        figures.entries_appended += len(records)
        figures.entries_left += int(await redis.xlen(events_key(t)))
    figures.hands, figures.tables = total, len(tap.records)
    for table in ("archived_hands", "archived_seats", "archived_pots", "archived_events"):
        figures.rows[table] = int(await pool.fetchval(f"SELECT count(*) FROM {table}"))
    assert figures.rows["archived_hands"] == total
    assert figures.rows["archived_events"] == sum(
        len(h.events) for t, rs in tap.records.items() for h in archived(t, rs)
    )
    # The decision streams: FELT_DECISION_SHARDS shards (felt serve's default), each trimmed
    # by the workers on its own; a shard no table hashed to was never made.
    shards = [s for s in shard_streams(AI_STREAM, DECISION_SHARDS) if await redis.exists(s)]
    assert shards, "no decision stream at all"
    for stream in shards:
        info = await redis.xinfo_stream(stream)
        figures.ai_added += int(info["entries-added"])
        figures.ai_left += int(info["length"])
    # Trimmed every second up to the oldest request pending then. A request whose answer
    # failed for a moment (the table service slow under load: DEADLINE_EXCEEDED) is not
    # acknowledged and stays pending until a worker claims it again (FELT_AI_CLAIM_IDLE_MS),
    # holding the trim back meanwhile: on a loaded machine the tail spans seconds (302 of
    # 1,495 left once; 2,395 of 4,496 in a 17 s run once). So: the periodic trims ran...
    assert figures.ai_left < figures.ai_added, "the decision streams were never trimmed"
    for stream in shards:
        await _check_periodic_trims(redis, stream, figures)
    # ...and one more trim leaves exactly what the group still owes: from the oldest request
    # pending on, or (none pending) only requests never delivered.
    for stream in shards:
        await RedisDecisionQueue(redis, stream).trim_acknowledged()
        owed = await redis.xpending(stream, AI_GROUP)
        first = [entry_id for entry_id, _ in await redis.xrange(stream, count=1) or []]
        if int(owed["pending"]):
            assert first == [owed["min"]], (stream, first, owed)
        else:
            group = next(
                g for g in await redis.xinfo_groups(stream) if g["name"] == AI_GROUP.encode()
            )
            delivered = _stream_id(group["last-delivered-id"])
            assert not first or _stream_id(first[0]) > delivered, (stream, first, delivered)
    lags = sorted(
        r["lag"]
        for r in await pool.fetch(
            "SELECT extract(epoch FROM archived_at - ended_at)::float8 AS lag FROM archived_hands"
        )
    )
    figures.lag_p50 = lags[len(lags) // 2]
    figures.lag_p99 = lags[min(len(lags) - 1, int(0.99 * len(lags)))]


async def _check_periodic_trims(
    redis: redis_async_lib.Redis, stream: str, figures: Figures
) -> None:
    """What the AI workers' trims left of a decision stream is a tail: it starts no earlier
    than the oldest request still owed (pending), or than the last few seconds before the
    services stopped (``TRIM_SLACK_S``).
    Failing, it prints the oldest pending requests: who held them, how long, how often
    delivered."""
    first = [entry_id for entry_id, _ in await redis.xrange(stream, count=1) or []]
    if not first:
        return
    owed = await redis.xpending(stream, AI_GROUP)
    bound = figures.stopped_ms - int(TRIM_SLACK_S * 1000)
    if int(owed["pending"]):
        bound = min(bound, _stream_id(owed["min"])[0])
    if _stream_id(first[0])[0] >= bound:
        return
    oldest = await redis.xpending_range(stream, AI_GROUP, min="-", max="+", count=5)
    raise AssertionError(
        f"{stream}: {await redis.xlen(stream)} entries left from {first[0]!r}, before the"
        f" oldest owed request and the run's last {TRIM_SLACK_S:.0f} s (stopped at"
        f" {figures.stopped_ms}); pending: {owed};"
        f" oldest pending: {oldest}"
    )


async def check_replays(pool: asyncpg.Pool, tap: Tap, per_variant: int, lobby_port: int) -> int:
    """``felt replay HAND --seat N`` (text, as a person reads it) of the last ``per_variant``
    archived hands of each variant, every seat: its own cards are there and no card of
    another seat that was never shown (the oracle: the tapped raw events). Seats checked."""
    checked = 0
    for variant in ("NLHE", "DRAW5"):
        rows = await pool.fetch(
            "SELECT hand_id, table_id, first_sequence, last_sequence FROM archived_hands"
            " WHERE variant = $1 ORDER BY ended_at DESC LIMIT $2",
            variant,
            per_variant,
        )
        assert len(rows) == per_variant, (variant, len(rows))
        for r in rows:
            by_sequence = {x.sequence: x.payload for x in tap.records[r["table_id"]]}
            events = [
                decode_event(by_sequence[n])[0]
                for n in range(r["first_sequence"], r["last_sequence"] + 1)
                if n in by_sequence
            ]
            seats = {e.seat for e in events if isinstance(e, HoleCardsDealt)}
            for seat in sorted(seats):
                checked += await asyncio.to_thread(
                    _check_replay, r["hand_id"], r["table_id"], seat, events, lobby_port
                )
    return checked


def _check_replay(
    hand_id: str, table_id: str, seat: int, events: list[AnyEvent], lobby_port: int
) -> int:
    status, out, err = run_felt(
        "replay", hand_id, "--target", f"127.0.0.1:{lobby_port}", "--table", table_id,
        "--operator", "--seat", str(seat), FELT_ADMIN_TOKEN=OPERATOR,
    )  # fmt: skip
    assert status == 0, err
    shown = set(CARD.findall(out))
    own = {
        card_str(c)
        for e in events
        if isinstance(e, HoleCardsDealt) and e.seat == seat
        for c in e.cards
        if c is not None
    }
    assert own and own <= shown, (hand_id, seat, own, out)
    leaked = {card_str(c) for c in _secret_cards(events, seat)} & shown
    assert not leaked, f"seat {seat} of {hand_id} saw {leaked}"
    return 1


def _refold(table_id: str, stored: ArchivedHand) -> ArchivedHand:
    """The hand folded again from its archived events alone (the seated players, which the
    stream told long before the hand, from its seats), late shows joined in."""
    players = tuple(
        (s.summary.seat, s.summary.player_id, s.display_name, s.ai_level) for s in stored.seats
    )
    projection = TableProjection(table_id, Cursor(stored.events[0].sequence - 1, players))
    hands: list[ArchivedHand] = []
    for e in stored.events:
        projection.feed(StoredRecord(e.sequence, e.payload))
        batch = projection.take()
        hands += batch.hands
        for late in batch.late:
            hands[-1] = hands[-1].with_late(late)
    assert len(hands) == 1, (table_id, stored.table_hand_id, len(hands))
    return hands[0]


async def _left(
    redis: redis_async_lib.Redis, store: RedisEventStore, table_id: str
) -> list[StoredRecord]:
    """What trimming left of the table's stream."""
    oldest = cast("list[tuple[bytes, object]]", await redis.xrange(events_key(table_id), count=1))
    if not oldest:
        return []
    return await store.read(table_id, int(oldest[0][0].split(b"-")[0]) - 1)


async def _mark(redis: redis_async_lib.Redis, table_id: str) -> int:
    return int(await redis.get(archived_key(table_id)) or 0)


def _check_stream(
    table_id: str,
    records: list[StoredRecord],
    left: list[StoredRecord],
    mark: int,
    retain: timedelta,
) -> None:
    """What trimming left of a table's stream is its tail: nothing unarchived went, nothing
    archived and older than the retention (plus a loaded projector's lag) stayed."""
    assert left, f"{table_id}: its stream was emptied"
    first = left[0].sequence
    assert [r.payload for r in left] == [r.payload for r in records[first - 1 :]]
    assert first - 1 <= mark, f"{table_id}: {first - 1} trimmed beyond the archived mark {mark}"
    snapshots = [
        (r.sequence, meta.recorded_at)
        for r in records
        for event, meta in (decode_event(r.payload),)
        if isinstance(event, TableSnapshotTaken) and meta.recorded_at is not None
    ]
    if not snapshots:
        # A snapshot rides on a table's second deal and later ones, so a table that dealt one
        # hand wrote none (three easy bots at 100 big blinds: two bust in the first hand about
        # once in 150). Then nothing may have been trimmed, and the table must have stopped for
        # want of players, not stalled.
        assert first == 1, f"{table_id}: trimmed from {first} with no snapshot written"
        table = replay_table(decode_event(r.payload)[0] for r in records)
        assert len(table.active_seats()) < 2, f"{table_id}: dealt no second hand"
        return
    assert snapshots[-1][0] >= first, f"{table_id}: its latest snapshot went"
    # The trim after the last deal runs in the background and may not have run when the
    # service stopped: the one after the deal before it did.
    trimmed_at = snapshots[max(0, len(snapshots) - 2)][1]
    limit = trimmed_at - retain - timedelta(seconds=LAG_SLACK_S)
    ripe = [s for s, at in snapshots if at <= limit]
    if ripe:
        assert first >= ripe[-1], f"{table_id}: {first}..{ripe[-1] - 1} archived and kept"


async def _check_requests(redis: redis_async_lib.Redis, table_id: str, first: int) -> None:
    """A request record left belongs to an entry still in the stream (``first`` on), unless
    it is one trimming keeps on purpose: the admin calls the lobby retries (``k/`` keys)."""
    records = cast("dict[bytes, bytes]", await redis.hgetall(requests_key(table_id)))
    for key, value in records.items():
        if key.decode().startswith(KEPT_PREFIX):
            continue
        start = int(value.split(b":", 1)[0])
        assert start >= first, f"{table_id}: the request record of trimmed entry {start}"


async def main(args: argparse.Namespace) -> None:
    redis_url = with_redis_db(
        os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
        int(os.environ.get("FELT_TEST_REDIS_DB", "9")),
    )
    database_url = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
    redis = redis_async_lib.Redis.from_url(redis_url)
    await redis.flushdb()
    with tempfile.TemporaryDirectory() as tmp:
        launcher = Launcher(redis_url, Path(tmp))
        try:
            async with archive_database(database_url, "felt_archive_run") as dsn:
                print(f"load average {os.getloadavg()[0]:.2f}", flush=True)
                figures = await run(
                    launcher,
                    redis,
                    dsn,
                    hands=args.hands,
                    tables_per_variant=args.tables,
                    replays=args.replays,
                )
                print(figures.report())
                print(f"load average {os.getloadavg()[0]:.2f}")
        finally:
            await launcher.stop_all()
            await redis.flushdb()
            await redis.aclose()


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hands", type=int, default=2_000, help="archived hands to play")
    parser.add_argument("--tables", type=int, default=3, help="bot tables per variant (+ demo)")
    parser.add_argument("--replays", type=int, default=10, help="hands replayed per variant")
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(parse()))
