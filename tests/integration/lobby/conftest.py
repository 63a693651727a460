"""PostgreSQL for the lobby's tests: a throw-away database per test session.

``fresh_database`` (function) makes an empty database and drops it afterwards
(for migration tests); ``lobby_dsn`` (session) is one migrated database the
contract suites share, emptied before each test by ``lobby_pool``.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from felt.storage.migrations import migrate
from services.lobby.db_cli import MIGRATIONS
from services.lobby.memory import (
    MemoryBuyIns,
    MemoryCloses,
    MemoryLedger,
    MemoryLounges,
    MemoryPlayers,
    MemorySessions,
    MemoryThrottle,
)
from services.lobby.ports import BuyIns, Closes, Ledger, Lounges, Players, Sessions, Throttle
from services.lobby.postgres import (
    PgBuyIns,
    PgCloses,
    PgLedger,
    PgLounges,
    PgPlayers,
    PgSessions,
    PgThrottle,
)

T = TypeVar("T")
LOBBY_TABLES = (
    "ai_refills",
    "house_ledger",
    "house_account",
    "leave_requests",
    "buy_ins",
    "lounge_seats",
    "lounges",
    "ledger",
    "accounts",
    "sign_in_failures",
    "refresh_tokens",
    "sessions",
    "players",
)


def with_database(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


async def _create(url: str, name: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()


async def _drop(url: str, name: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to its end in a thread of its own (a session fixture may be set up while a
    test's event loop runs)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


@pytest.fixture
async def fresh_database(database_url: str) -> AsyncIterator[str]:
    name = f"felt_lobby_{uuid.uuid4().hex[:12]}"
    await _create(database_url, name)
    try:
        yield with_database(database_url, name)
    finally:
        await _drop(database_url, name)


@pytest.fixture(scope="session")
def lobby_dsn(database_url: str) -> Iterator[str]:
    name = f"felt_lobby_{uuid.uuid4().hex[:12]}"
    _run(_create(database_url, name))
    dsn = with_database(database_url, name)
    try:
        _run(migrate(dsn, MIGRATIONS))
        yield dsn
    finally:
        _run(_drop(database_url, name))


async def empty_pool(dsn: str) -> asyncpg.Pool:
    """A pool on the migrated ``dsn``, every lobby table emptied first."""
    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=20)
    await pool.execute(f"TRUNCATE {', '.join(LOBBY_TABLES)} RESTART IDENTITY CASCADE")
    return pool


@pytest.fixture
async def lobby_pool(lobby_dsn: str) -> AsyncIterator[asyncpg.Pool]:
    pool = await empty_pool(lobby_dsn)
    try:
        yield pool
    finally:
        await pool.close()


@dataclass
class Stores:
    """One implementation of each of the lobby's ports."""

    kind: str
    players: Players
    sessions: Sessions
    throttle: Throttle
    ledger: Ledger
    lounges: Lounges
    buy_ins: BuyIns
    closes: Closes


@pytest.fixture(params=["memory", "postgres"])
async def stores(request: pytest.FixtureRequest) -> AsyncIterator[Stores]:
    """The ports on the in-memory fakes, then on PostgreSQL: every contract test runs on both."""
    if request.param == "memory":
        ledger, lounges, players = MemoryLedger(), MemoryLounges(), MemoryPlayers()
        buy_ins = MemoryBuyIns(ledger, lounges, players)
        yield Stores(
            "memory",
            players,
            MemorySessions(),
            MemoryThrottle(),
            ledger,
            lounges,
            buy_ins,
            MemoryCloses(buy_ins),
        )
        return
    pool = await empty_pool(request.getfixturevalue("lobby_dsn"))
    try:
        yield pg_stores(pool)
    finally:
        await pool.close()


def pg_stores(pool: asyncpg.Pool) -> Stores:
    """Every port on PostgreSQL, on ``pool``."""
    return Stores(
        "postgres",
        PgPlayers(pool),
        PgSessions(pool),
        PgThrottle(pool),
        PgLedger(pool),
        PgLounges(pool),
        PgBuyIns(pool),
        PgCloses(pool),
    )
