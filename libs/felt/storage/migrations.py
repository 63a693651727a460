"""Versioned SQL migrations for PostgreSQL: a small runner that keeps a version table.

A migration is a file ``<version>_<name>.sql`` (``0001_initial.sql``) in a
directory the caller names (the library names no service). :func:`migrate`
applies the pending ones in version order, each in one transaction together
with the row that records it in ``schema_migrations``, so a migration is
either wholly applied and recorded or not at all. Running it again applies
nothing. Two runners at once (two instances starting together) are
serialised by a session advisory lock: the second waits, then finds nothing
left to do.

An applied migration must never be edited: its SHA-256 is recorded, and a
file that no longer matches what was applied stops the runner
(:class:`MigrationError`) instead of leaving databases that differ silently.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import asyncpg

ADVISORY_LOCK_KEY = 0x66656C74  # "felt": the runner's advisory lock, one per database
_FILE = re.compile(r"(\d{4,})_([a-z0-9_]+)\.sql")

_VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    sha256     text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)
"""


class MigrationError(Exception):
    """The migrations directory or the database's record of it is inconsistent."""


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def load(directory: Path) -> list[Migration]:
    """The migrations in ``directory``, in version order (refuses gaps, duplicates, strays)."""
    found: list[Migration] = []
    for path in sorted(directory.glob("*.sql")):
        match = _FILE.fullmatch(path.name)
        if match is None:
            raise MigrationError(f"{path.name}: a migration is named <version>_<name>.sql")
        found.append(Migration(int(match[1]), match[2], path.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    for expected, migration in enumerate(found, start=1):
        if migration.version != expected:
            raise MigrationError(
                f"migration versions must run 1, 2, 3, ... without gaps or duplicates; "
                f"expected {expected}, found {migration.version} ({migration.name})"
            )
    return found


async def migrate(dsn: str, directory: Path) -> list[Migration]:
    """Apply the pending migrations of ``directory`` to ``dsn``; returns those applied now."""
    migrations = load(directory)
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute("SELECT pg_advisory_lock($1)", ADVISORY_LOCK_KEY)
        try:
            return await _apply(conn, migrations)
        finally:
            await conn.execute("SELECT pg_advisory_unlock($1)", ADVISORY_LOCK_KEY)
    finally:
        await conn.close()


async def applied_versions(dsn: str) -> list[int]:
    """The versions recorded as applied in ``dsn`` (empty when none or no version table)."""
    conn = await asyncpg.connect(dsn)
    try:
        exists = await conn.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL")
        if not exists:
            return []
        rows = await conn.fetch("SELECT version FROM schema_migrations ORDER BY version")
        return [int(r["version"]) for r in rows]
    finally:
        await conn.close()


async def _apply(conn: asyncpg.Connection, migrations: list[Migration]) -> list[Migration]:
    await conn.execute(_VERSION_TABLE)
    rows = await conn.fetch("SELECT version, name, sha256 FROM schema_migrations")
    done = {int(r["version"]): str(r["sha256"]) for r in rows}
    known = {m.version for m in migrations}
    unknown = sorted(set(done) - known)
    if unknown:
        raise MigrationError(
            f"the database has migrations this code does not know ({unknown}): "
            "it was migrated by a newer release"
        )
    applied: list[Migration] = []
    for migration in migrations:
        recorded = done.get(migration.version)
        if recorded is not None:
            if recorded != migration.sha256:
                raise MigrationError(
                    f"migration {migration.version} ({migration.name}) was edited after it "
                    "was applied; add a new migration instead"
                )
            continue
        async with conn.transaction():
            await conn.execute(migration.sql)
            await conn.execute(
                "INSERT INTO schema_migrations (version, name, sha256) VALUES ($1, $2, $3)",
                migration.version,
                migration.name,
                migration.sha256,
            )
        applied.append(migration)
    return applied
