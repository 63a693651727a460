"""PostgreSQL for the lobby's tests: a throw-away database per test session.

``fresh_database`` (function) makes an empty database and drops it afterwards
(for migration tests); ``lobby_dsn`` (session) is one migrated database the
contract suites share, emptied before each test by ``lobby_pool``.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from felt.migrations import migrate
from services.lobby.db_cli import MIGRATIONS

LOBBY_TABLES = ("ledger", "accounts", "sign_in_failures", "refresh_tokens", "sessions", "players")


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
    import asyncio

    name = f"felt_lobby_{uuid.uuid4().hex[:12]}"
    asyncio.run(_create(database_url, name))
    dsn = with_database(database_url, name)
    try:
        asyncio.run(migrate(dsn, MIGRATIONS))
        yield dsn
    finally:
        asyncio.run(_drop(database_url, name))


@pytest.fixture
async def lobby_pool(lobby_dsn: str) -> AsyncIterator[asyncpg.Pool]:
    pool = await asyncpg.create_pool(lobby_dsn, min_size=1, max_size=20)
    try:
        await pool.execute(f"TRUNCATE {', '.join(LOBBY_TABLES)} RESTART IDENTITY CASCADE")
        yield pool
    finally:
        await pool.close()
