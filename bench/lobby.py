"""Benchmark of the lobby on PostgreSQL: the buy-in saga, and listing 10,000 open lounges.

Not a test: run ``python bench/lobby.py`` (``--help`` for options).

1. A buy-in: ``SeatingApp.join`` (the whole saga: session check, lounge, account,
   reserve, seat, commit) on the PostgreSQL adapters, with ``MemoryTables`` (an
   in-memory fake) as the table service, so only the lobby's own work is measured,
   against a bare asyncpg transaction of as many statements as one join runs
   (counted with asyncpg's query logger on every pooled connection, BEGIN/COMMIT
   not counted as statements), both with 16 concurrent clients on one pool, the
   lobby's own (``services.lobby.postgres.pool``), in alternating slices so that both
   see the same background load. A statement is what the lobby sends: a call of one of
   the saga's SQL functions (migration 0005) is one, as a CTE would be, though the
   server runs several inside (docs/benchmarks.md: what that means for the ratio). The
   baseline's statements are ``SELECT $1::int`` but for the last, an INSERT into a
   scratch table, so that its COMMIT flushes the WAL as a write does. Target: the
   saga >= 0.5x the baseline's throughput.
2. Listing lounges: 10,000 open lounges (NLHE and Draw, stakes and seat counts
   varied, some with AI seats, one in ten private), then ``LoungeApp.listing`` (the
   ``ListLounges`` use case without gRPC: session check, the ``Lounges`` port's
   PostgreSQL listing, page token) pages with and without filters, the first page
   and pages further on by their token, one at a time. Target: p99 < 20 ms.

PostgreSQL: ``$DATABASE_URL``'s server (unset: a private one, ``felt_dev.devserver``);
the benchmark creates a scratch database ``felt_bench_<hex>``, migrates it, and drops it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

import asyncpg
from _support import scratch_database
from argon2 import PasswordHasher

from felt.storage.idempotency import ClientRequest
from felt.storage.migrations import migrate
from poker.events.v1 import events_pb2 as epb
from services.lobby.application import LobbyApp, LobbySecrets, LobbySettings
from services.lobby.auth import Authenticator, Caller
from services.lobby.db_cli import MIGRATIONS
from services.lobby.lounges import AiSeat, LoungeApp
from services.lobby.memory import MemoryTables
from services.lobby.ports import LoungeFilter
from services.lobby.postgres import (
    PgBuyIns,
    PgLedger,
    PgLounges,
    PgPlayers,
    PgSessions,
    PgThrottle,
)
from services.lobby.postgres.pool import create_pool, keep_session
from services.lobby.seating import SeatingApp
from services.lobby.tokens import Passwords

CLIENTS = 16
TRANSACTION_CONTROL = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE")


def now() -> datetime:
    return datetime.now(UTC)


def percentile(ordered: list[float], p: float) -> float:
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))] if ordered else 0.0


@dataclass(eq=False)  # hashable: asyncpg keeps its loggers in a set
class Counter:
    """Statements and transactions the pooled connections ran while ``on``."""

    on: bool = False
    statements: int = 0
    transactions: int = 0
    releases: int = 0  # connections given back to the pool (each one acquired)
    seen: list[str] = field(default_factory=list)

    async def release(self, conn: asyncpg.Connection) -> None:
        """The pool's reset hook: counts, then resets as the lobby's pool does."""
        self.releases += self.on
        await keep_session(conn)

    def __call__(self, record: Any) -> None:
        if not self.on:
            return
        query = str(record.query).strip()
        word = query.split(None, 1)[0].rstrip(";").upper() if query else ""
        if query.startswith("SELECT pg_advisory_unlock_all()"):
            self.releases += 1  # asyncpg's own reset query (a pool that is not the lobby's)
        elif word == "BEGIN" or word.startswith("START"):
            self.transactions += 1
        elif word not in TRANSACTION_CONTROL:
            self.statements += 1
            self.seen.append(" ".join(query.split())[:70])


@dataclass
class Lobby:
    """The lobby's use cases on the PostgreSQL adapters and a fake table service."""

    pool: asyncpg.Pool
    app: LobbyApp
    lounges: LoungeApp
    seating: SeatingApp
    auth: Authenticator

    @classmethod
    def on(cls, pool: asyncpg.Pool) -> Lobby:
        secrets = LobbySecrets(os.urandom(32), os.urandom(32))
        app = LobbyApp(
            PgPlayers(pool),
            PgSessions(pool),
            PgThrottle(pool),
            PgLedger(pool),
            Passwords(PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)),
            secrets,
            LobbySettings(starting_grant=1_000_000, max_lounges_per_owner=1_000_000),
            now,
        )
        tables = MemoryTables()
        lounges = LoungeApp(app, PgLounges(pool), tables)
        return cls(
            pool,
            app,
            lounges,
            SeatingApp(lounges, PgBuyIns(pool), tables),
            Authenticator(secrets.access, now),
        )

    async def guest(self, name: str) -> Caller:
        signed = await self.app.create_guest(name, ClientRequest(f"guest-{uuid.uuid4()}", "g", b""))
        return self.auth.authenticate(signed.credentials.access_token)

    async def lounge(self, owner: Caller, config: epb.TableConfig, **kw: Any) -> str:
        request = ClientRequest(f"lounge-{uuid.uuid4()}", "c", b"")
        lounge = await self.lounges.create(
            owner, request, "Bench", config, 0, 0, kw.get("ai", []), kw.get("private", False)
        )
        return lounge.lounge_id


async def gather_in(n: int, jobs: list[Callable[[], Awaitable[None]]]) -> None:
    """Run ``jobs`` with at most ``n`` at once."""
    queue = list(reversed(jobs))

    async def worker() -> None:
        while queue:
            await queue.pop()()

    await asyncio.gather(*(worker() for _ in range(n)))


# ------------------------------------------------------------------ 1. buy-in


async def bench_buy_in(
    lobby: Lobby, counter: Counter, joins: int, rounds: int, baseline: int | None = None
) -> float:
    """The saga vs a bare transaction of as many statements: prints both; the ratio."""
    holdem = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=9, small_blind=1, big_blind=2)
    owner = await lobby.guest("Bench owner")
    players = [await lobby.guest(f"Bench player {n}") for n in range(CLIENTS)]
    groups = 2  # two groups of 8 players, each group's players joining the same 9-seat lounges
    needed = (rounds * joins + 1) * groups
    ids: list[str] = []

    async def make() -> None:
        ids.append(await lobby.lounge(owner, holdem))

    await gather_in(CLIENTS, [make for _ in range(needed)])
    per_group = [ids[g::groups] for g in range(groups)]
    position = [0] * CLIENTS

    async def join(client: int) -> None:
        lounge = per_group[client % groups][position[client]]
        position[client] += 1
        request = ClientRequest(f"join-{uuid.uuid4()}", "j", b"")
        await lobby.seating.join(players[client], request, lounge, None, 40, "")

    # One join alone, its statements counted (every lounge's first join, as all are).
    counter.on = True
    await join(0)
    counter.on = False
    statements, transactions = counter.statements, counter.transactions
    position = [1] * CLIENTS
    print(
        f"one buy-in runs {statements} statements in {transactions} transaction(s) "
        f"(the rest in autocommit), {counter.releases} pool acquire/release(s):"
    )
    for query in counter.seen:
        print(f"    {query}")
    if baseline is not None:
        print(f"the baseline runs {baseline} statements (--baseline-statements), not {statements}")
        statements = baseline
    await lobby.pool.execute("CREATE TABLE bench_baseline (client int, n int)")

    async def bare(client: int) -> None:
        async with lobby.pool.acquire() as conn, conn.transaction():
            for n in range(statements - 1):
                await conn.fetchval("SELECT $1::int", n)
            await conn.execute("INSERT INTO bench_baseline VALUES ($1, $2)", client, statements)

    async def timed(op: Callable[[int], Awaitable[None]], latencies: list[float]) -> float:
        async def client(c: int) -> None:
            for _ in range(joins):
                start = time.perf_counter()
                await op(c)
                latencies.append(time.perf_counter() - start)

        start = time.perf_counter()
        await asyncio.gather(*(client(c) for c in range(CLIENTS)))
        return time.perf_counter() - start

    walls = {"saga": 0.0, "bare": 0.0}
    cpus = {"saga": 0.0, "bare": 0.0}
    lat: dict[str, list[float]] = {"saga": [], "bare": []}
    await timed(bare, [])  # warm both up (prepared statements on every connection)
    for _ in range(rounds):
        for name, op in (("saga", join), ("bare", bare)):
            cpu = time.process_time()
            walls[name] += await timed(op, lat[name])
            cpus[name] += time.process_time() - cpu
    ops = CLIENTS * joins * rounds
    rates = {name: ops / walls[name] for name in walls}
    print(f"{CLIENTS} concurrent clients, {ops} operations of each, {rounds} alternating slices")
    for name, label in (("bare", "bare transaction"), ("saga", "buy-in saga")):
        ordered = sorted(lat[name])
        print(
            f"  {label:<17} {rates[name]:8.0f}/s  p50 {percentile(ordered, 50) * 1e3:5.1f} ms  "
            f"p99 {percentile(ordered, 99) * 1e3:5.1f} ms  "
            f"bench CPU {cpus[name] / ops * 1e6:6.0f} us/op"
        )
    ratio = rates["saga"] / rates["bare"]
    verdict = "met" if ratio >= 0.5 else "NOT met"
    print(f"  ratio saga / bare: {ratio:.2f}x (target >= 0.5x: {verdict})")
    return ratio


# ------------------------------------------------------------------ 2. listing


async def bench_listing(lobby: Lobby, count: int, pages: int, page_size: int) -> float:
    """``count`` open lounges, then ``pages`` listing pages timed; prints p50/p99; the p99."""
    rng = random.Random(11)
    owner = await lobby.guest("Lounge owner")
    blinds = [(1, 2), (5, 10), (25, 50), (100, 200), (500, 1_000)]

    async def make() -> None:
        if rng.random() < 0.7:
            small, big = rng.choice(blinds)
            seats = rng.randint(2, 9)
            config = epb.TableConfig(
                variant=epb.VARIANT_NLHE, seat_count=seats, small_blind=small, big_blind=big
            )
        else:
            small, _ = rng.choice(blinds)
            seats = rng.randint(2, 6)
            config = epb.TableConfig(
                variant=epb.VARIANT_DRAW5, seat_count=seats, ante=1, small_bet=small * 2
            )
        ai = [AiSeat(None, epb.AI_LEVEL_EASY) for _ in range(rng.randint(0, seats - 1))]
        await lobby.lounge(owner, config, ai=ai, private=rng.random() < 0.1)

    start = time.perf_counter()
    await gather_in(CLIENTS, [make for _ in range(count)])
    print(f"{count:,} lounges created in {time.perf_counter() - start:.1f} s")
    await lobby.pool.execute("ANALYZE")
    row = await lobby.pool.fetchrow(
        "SELECT count(*) FILTER (WHERE state = 'open') AS open, "
        "count(*) FILTER (WHERE state = 'open' AND NOT private) AS listed FROM lounges"
    )
    assert row is not None
    print(f"  {row['open']:,} open, {row['listed']:,} of them public (listed)")
    filters = [
        LoungeFilter(),
        LoungeFilter(variant=epb.VARIANT_NLHE),
        LoungeFilter(variant=epb.VARIANT_DRAW5, min_free_seats=2),
        LoungeFilter(min_stake=10, max_stake=200),
        LoungeFilter(variant=epb.VARIANT_NLHE, min_stake=1_000, min_free_seats=5),
        LoungeFilter(min_free_seats=9),
    ]
    reader = await lobby.guest("Lounge reader")
    latencies: list[float] = []
    rows = 0
    for n in range(pages):
        where = filters[n % len(filters)]
        token = ""
        for _ in range(n // len(filters) % 5 + 1):  # the first page, or one further on
            start = time.perf_counter()
            page = await lobby.lounges.listing(reader, where, page_size, token)
            latencies.append(time.perf_counter() - start)
            rows += len(page.lounges)
            token = page.next_page_token
            if not token:
                break
    ordered = sorted(latencies)
    p50, p99 = percentile(ordered, 50), percentile(ordered, 99)
    print(
        f"  {len(ordered):,} pages of up to {page_size} ({rows:,} lounges, "
        f"{len(filters)} filters, pages 1-5 by token)"
    )
    verdict = "met" if p99 < 0.020 else "NOT met"
    print(
        f"  p50 {p50 * 1e3:.2f} ms  p99 {p99 * 1e3:.2f} ms  worst {ordered[-1] * 1e3:.2f} ms "
        f"(target p99 < 20 ms: {verdict})"
    )
    return p99


# ------------------------------------------------------------------ main


async def main(args: argparse.Namespace) -> None:
    async with scratch_database() as scratch:
        dsn = scratch.dsn
        print(f"load average {os.getloadavg()[0]:.2f}; {date.today()}")
        print("the table service is MemoryTables (in memory): only the lobby's own work counts")
        await migrate(dsn, MIGRATIONS)
        counter = Counter()

        async def init(conn: asyncpg.Connection) -> None:
            conn.add_query_logger(counter)

        pool = await create_pool(
            dsn, min_size=CLIENTS, max_size=CLIENTS, init=init, reset=counter.release
        )
        try:
            lobby = Lobby.on(pool)
            if args.part in ("all", "buy-in"):
                print("\n1. Buy-in: SeatingApp.join (the whole saga) vs a bare transaction")
                await bench_buy_in(
                    lobby, counter, args.joins, args.rounds, args.baseline_statements
                )
            if args.part in ("all", "listing"):
                print(f"\n2. ListLounges pages (LoungeApp.listing, PgLounges), {args.lounges:,}")
                await bench_listing(lobby, args.lounges, args.pages, args.page_size)
        finally:
            await pool.close()


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--joins", type=int, default=25, help="buy-ins per client per slice")
    parser.add_argument("--rounds", type=int, default=4, help="alternating slices of each")
    parser.add_argument("--lounges", type=int, default=10_000, help="open lounges to list")
    parser.add_argument("--pages", type=int, default=600, help="listings timed")
    parser.add_argument("--page-size", type=int, default=50)
    parser.add_argument("--part", choices=("all", "buy-in", "listing"), default="all")
    parser.add_argument(
        "--baseline-statements",
        type=int,
        help="the baseline's statements (default: as many as one buy-in sends); e.g. 18, "
        "what the saga sent before its steps became SQL functions",
    )
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(parse()))
