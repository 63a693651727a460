"""``felt db migrate``: on an empty database, twice, by two runners at once; edits refused."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg
import pytest

from felt.storage.migrations import MigrationError, applied_versions, load, migrate
from services.cli import main
from services.lobby.db_cli import MIGRATIONS


async def _tables(dsn: str) -> set[str]:
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return {str(r["tablename"]) for r in rows}
    finally:
        await conn.close()


async def test_migrate_an_empty_database_twice(fresh_database: str) -> None:
    everything = load(MIGRATIONS)
    assert await applied_versions(fresh_database) == []
    first = await migrate(fresh_database, MIGRATIONS)
    assert [m.version for m in first] == [m.version for m in everything]
    tables = await _tables(fresh_database)
    assert {"schema_migrations", "players", "sessions", "ledger", "accounts"} <= tables
    assert await migrate(fresh_database, MIGRATIONS) == []  # the second run applies nothing
    assert await _tables(fresh_database) == tables
    assert await applied_versions(fresh_database) == [m.version for m in everything]


async def test_two_runners_at_once_apply_each_migration_once(fresh_database: str) -> None:
    a, b = await asyncio.gather(
        migrate(fresh_database, MIGRATIONS), migrate(fresh_database, MIGRATIONS)
    )
    assert sorted(m.version for m in [*a, *b]) == [m.version for m in load(MIGRATIONS)]
    assert not (a and b)  # one did the work, the other found nothing left


async def test_a_failing_migration_leaves_nothing_behind(
    fresh_database: str, tmp_path: Path
) -> None:
    (tmp_path / "0001_good.sql").write_text("CREATE TABLE good (x int);")
    (tmp_path / "0002_bad.sql").write_text("CREATE TABLE half (x int); SELECT * FROM nowhere;")
    with pytest.raises(asyncpg.PostgresError):
        await migrate(fresh_database, tmp_path)
    assert await applied_versions(fresh_database) == [1]
    assert "half" not in await _tables(fresh_database)  # its transaction rolled back whole
    (tmp_path / "0002_bad.sql").write_text("CREATE TABLE half (x int);")
    assert [m.version for m in await migrate(fresh_database, tmp_path)] == [2]


async def test_an_applied_migration_edited_is_refused(fresh_database: str, tmp_path: Path) -> None:
    (tmp_path / "0001_one.sql").write_text("CREATE TABLE one (x int);")
    await migrate(fresh_database, tmp_path)
    (tmp_path / "0001_one.sql").write_text("CREATE TABLE one (x bigint);")
    with pytest.raises(MigrationError, match="edited"):
        await migrate(fresh_database, tmp_path)


def test_gaps_and_stray_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "0001_one.sql").write_text("")
    (tmp_path / "0003_three.sql").write_text("")
    with pytest.raises(MigrationError, match="without gaps"):
        load(tmp_path)
    (tmp_path / "0003_three.sql").unlink()
    (tmp_path / "notes.sql").write_text("")
    with pytest.raises(MigrationError, match="named"):
        load(tmp_path)


def test_felt_db_migrate_command(fresh_database: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "migrate", "--database-url", fresh_database]) == 0
    assert "applied 0001_initial" in capsys.readouterr().out
    assert main(["db", "migrate", "--database-url", fresh_database]) == 0
    assert "up to date" in capsys.readouterr().out
