"""The hand archive on both implementations: the fake, and PostgreSQL migrated by `felt db migrate`.

``archive_dsn`` (session) is one throw-away migrated database; ``archive_pool`` empties the
archive's tables before each test.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import asyncpg
import pytest

from felt.archive import HandArchive, MemoryHandArchive
from felt.archive.postgres import PostgresHandArchive
from felt.migrations import migrate
from services.lobby.db_cli import MIGRATIONS
from tests.integration.lobby.conftest import _create, _drop, _run, with_database

ARCHIVE_TABLES = (
    "archived_hands",
    "archived_seats",
    "archived_pots",
    "archived_events",
    "archive_cursors",
)


@pytest.fixture(scope="session")
def archive_dsn(database_url: str) -> Iterator[str]:
    name = f"felt_archive_{uuid.uuid4().hex[:12]}"
    _run(_create(database_url, name))
    dsn = with_database(database_url, name)
    try:
        _run(migrate(dsn, MIGRATIONS))
        yield dsn
    finally:
        _run(_drop(database_url, name))


async def empty_archive(dsn: str) -> asyncpg.Pool:
    """A pool on the migrated ``dsn``, the archive's tables emptied first."""
    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=10)
    await pool.execute(f"TRUNCATE {', '.join(ARCHIVE_TABLES)}")
    return pool


@pytest.fixture
async def archive_pool(archive_dsn: str) -> AsyncIterator[asyncpg.Pool]:
    pool = await empty_archive(archive_dsn)
    try:
        yield pool
    finally:
        await pool.close()


@pytest.fixture(params=["memory", "postgres"])
async def archive(request: pytest.FixtureRequest) -> AsyncIterator[HandArchive]:
    """The archive on the fake, then on PostgreSQL: every contract test runs on both."""
    if request.param == "memory":
        yield MemoryHandArchive()
        return
    pool = await empty_archive(request.getfixturevalue("archive_dsn"))
    try:
        yield PostgresHandArchive(pool)
    finally:
        await pool.close()
