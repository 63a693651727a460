"""The ``Throttle`` port on PostgreSQL (table ``sign_in_failures``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

import asyncpg


class _OverLimit(Exception):
    """Rolls a refused reservation back."""


class PgThrottle:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def failures(self, scopes: Sequence[str], since: datetime) -> int:
        count = await self.pool.fetchval(
            "SELECT coalesce(max(failures), 0) FROM sign_in_failures "
            "WHERE scope = ANY($1::text[]) AND window_start > $2",
            list(scopes),
            since,
        )
        return int(count)

    async def reserve(self, limits: Mapping[str, int], at: datetime, window: timedelta) -> bool:
        """One UPSERT ... RETURNING counts the attempt in every scope and locks their rows
        (in one order, so two reservations never deadlock); if any count is then over its
        limit the transaction is rolled back, so a refused attempt counts nothing."""
        scopes = sorted(limits)
        try:
            async with self.pool.acquire() as conn, conn.transaction():
                rows = await conn.fetch(
                    "INSERT INTO sign_in_failures AS f (scope, failures, window_start) "
                    "SELECT unnest($1::text[]), 1, $2 "
                    "ON CONFLICT (scope) DO UPDATE SET "
                    "failures = CASE WHEN f.window_start <= $2 - $3::interval THEN 1 "
                    "ELSE f.failures + 1 END, "
                    "window_start = CASE WHEN f.window_start <= $2 - $3::interval THEN $2 "
                    "ELSE f.window_start END "
                    "RETURNING scope, failures",
                    scopes,
                    at,
                    window,
                )
                if any(row["failures"] > limits[row["scope"]] for row in rows):
                    raise _OverLimit()
        except _OverLimit:
            return False
        return True

    async def clear(self, scopes: Sequence[str]) -> None:
        await self.pool.execute(
            "DELETE FROM sign_in_failures WHERE scope = ANY($1::text[])", list(scopes)
        )

    async def refund(self, scopes: Sequence[str]) -> None:
        await self.pool.execute(  # one statement, one snapshot: each row is changed once
            "WITH gone AS (DELETE FROM sign_in_failures "
            "WHERE scope = ANY($1::text[]) AND failures <= 1) "
            "UPDATE sign_in_failures SET failures = failures - 1 "
            "WHERE scope = ANY($1::text[]) AND failures > 1",
            sorted(set(scopes)),
        )

    async def prune(self, before: datetime) -> int:
        status = await self.pool.execute(  # by the index sign_in_failures_window
            "DELETE FROM sign_in_failures WHERE window_start <= $1", before
        )
        return int(status.split()[-1])
