"""The hand archive on both implementations: the fake, and PostgreSQL migrated by `felt db migrate`.

``archive_dsn`` (session) is one throw-away migrated database (the lobby tests' own);
``empty_archive`` empties the archive's tables before each test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest

from felt.storage.archive import HandArchive, MemoryHandArchive
from felt.storage.archive.postgres import PostgresHandArchive
from tests.integration.lobby.conftest import lobby_dsn  # noqa: F401 - the fixture

ARCHIVE_TABLES = (
    "archived_hands",
    "archived_seats",
    "archived_pots",
    "archived_events",
    "archived_table_events",
    "archive_cursors",
)


@pytest.fixture(scope="session")
def archive_dsn(request: pytest.FixtureRequest) -> str:
    """The lobby's migrated throw-away database: the archive's tables are among its migrations."""
    return str(request.getfixturevalue("lobby_dsn"))


async def empty_archive(dsn: str) -> asyncpg.Pool:
    """A pool on the migrated ``dsn``, the archive's tables emptied first."""
    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=10)
    await pool.execute(f"TRUNCATE {', '.join(ARCHIVE_TABLES)}")
    return pool


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
