"""Migration 0012 and ``felt db migrate``'s backfill: players named before it get their
name's skeleton, oldest first; a younger look-alike keeps its name without one."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import pytest

from felt.storage.migrations import migrate
from services.cli import main
from services.lobby.db_cli import MIGRATIONS
from services.lobby.names import skeleton
from services.lobby.postgres.skeletons import backfill_skeletons

T0 = datetime(2026, 1, 1, tzinfo=UTC)
OLD = ["Alice", "Bob", "\u0410lice", "ALICE\u200d", "Carol"]  # older first


async def _before_0012(dsn: str, tmp_path: Path) -> None:
    """The schema as it was before 0012, with players named under the old rules."""
    for path in sorted(MIGRATIONS.glob("*.sql")):
        if int(path.name[:4]) < 12:
            shutil.copy(path, tmp_path / path.name)
    await migrate(dsn, tmp_path)
    conn = await asyncpg.connect(dsn)
    try:
        for i, name in enumerate(OLD):
            await conn.execute(
                "INSERT INTO players (player_id, display_name, name_key, request_key, "
                "fingerprint, created_at) VALUES ($1, $2, $3, $4, '\\x00', $5)",
                f"p{i}",
                name,
                name.casefold() + str(i),  # the old key told U+0410 "Alice" and "Alice" apart
                f"r{i}",
                T0 + timedelta(minutes=i),
            )
    finally:
        await conn.close()


async def _skeletons(dsn: str) -> dict[str, str | None]:
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch("SELECT player_id, name_skeleton FROM players")
        return {r["player_id"]: r["name_skeleton"] for r in rows}
    finally:
        await conn.close()


async def test_the_backfill_gives_the_oldest_look_alike_the_skeleton(
    fresh_database: str, tmp_path: Path
) -> None:
    await _before_0012(fresh_database, tmp_path)
    assert 12 in [m.version for m in await migrate(fresh_database, MIGRATIONS)]
    assert set((await _skeletons(fresh_database)).values()) == {None}
    done = await backfill_skeletons(fresh_database)
    assert (done.filled, done.look_alikes) == (3, 2)
    assert await _skeletons(fresh_database) == {
        "p0": skeleton("Alice"),
        "p1": skeleton("Bob"),
        "p2": None,  # looks like p0's
        "p3": None,
        "p4": skeleton("Carol"),
    }
    again = await backfill_skeletons(fresh_database)  # idempotent: nothing new to fill
    assert (again.filled, again.look_alikes) == (0, 2)


def test_felt_db_migrate_fills_the_skeletons_in(
    fresh_database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import asyncio

    asyncio.run(_before_0012(fresh_database, tmp_path))
    assert main(["db", "migrate", "--database-url", fresh_database]) == 0
    out = capsys.readouterr().out
    assert "applied 0012_name_skeleton" in out
    assert "name skeletons filled in for 3 players" in out
    assert "2 players keep names that look like an older player's" in out
    assert asyncio.run(_skeletons(fresh_database))["p0"] == skeleton("Alice")
