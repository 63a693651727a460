"""The recovery pass's bookkeeping on a saga table (``buy_ins``, ``chip_adds``): one set of
statements for both, so the two kinds of saga are queued, claimed, backed off, marked stuck
and requeued the same way (``services.lobby.recovery``; columns of migrations 0011, 0014)."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import ClassVar, Generic, TypeVar

import asyncpg

S = TypeVar("S")
_DUE_AT = "COALESCE(next_attempt_at, created_at)"  # as the tables' *_due indexes are


class RecoveryRows(Generic[S]):
    """``due``, ``attempting``, ``attempt_failed``, ``stuck``, ``count_stuck``,
    ``count_by_state`` and ``requeue`` of the ``BuyIns`` and ``ChipAdds`` ports over
    ``_TABLE``, whose rows ``_row`` reads (``_SELECT``: its columns)."""

    _TABLE: ClassVar[str]
    _SELECT: ClassVar[str]
    _LIVE_STATES: ClassVar[tuple[enum.StrEnum, ...]]  # what ``count_by_state`` counts
    pool: asyncpg.Pool

    def _row(self, row: asyncpg.Record) -> S:
        raise NotImplementedError

    async def get(self, saga_id: str) -> S | None:
        row = await self.pool.fetchrow(
            f"SELECT {self._SELECT} FROM {self._TABLE} WHERE saga_id = $1", saga_id
        )
        return None if row is None else self._row(row)

    async def unfinished(self, limit: int) -> list[S]:
        rows = await self.pool.fetch(
            f"SELECT {self._SELECT} FROM {self._TABLE} WHERE state = 'reserved' "
            "ORDER BY created_at, saga_id LIMIT $1",
            limit,
        )
        return [self._row(r) for r in rows]

    async def due(self, now: datetime, limit: int) -> list[S]:
        rows = await self.pool.fetch(
            f"SELECT {self._SELECT} FROM {self._TABLE} WHERE state = 'reserved' "
            f"AND stuck_at IS NULL AND {_DUE_AT} <= $1 ORDER BY {_DUE_AT}, saga_id LIMIT $2",
            now,
            limit,
        )
        return [self._row(r) for r in rows]

    async def attempting(self, saga_id: str, at: datetime, next_at: datetime) -> S | None:
        row = await self.pool.fetchrow(
            f"UPDATE {self._TABLE} SET attempts = attempts + 1, last_attempt_at = $2, "
            "next_attempt_at = $3 WHERE saga_id = $1 AND state = 'reserved' "
            f"AND stuck_at IS NULL AND {_DUE_AT} <= $2 RETURNING {self._SELECT}",
            saga_id,
            at,
            next_at,
        )
        return None if row is None else self._row(row)

    async def attempt_failed(self, saga_id: str, error: str, stuck_at: datetime | None) -> S:
        return await self._update_reserved(
            saga_id,
            "last_error = $2, stuck_at = COALESCE($3, stuck_at)",
            error[:500],
            stuck_at,
        )

    async def requeue(self, saga_id: str) -> S:
        return await self._update_reserved(
            saga_id, "attempts = 0, next_attempt_at = NULL, stuck_at = NULL, last_error = NULL"
        )

    async def _update_reserved(self, saga_id: str, assignments: str, *args: object) -> S:
        """``assignments`` on the saga if it is RESERVED, one statement (the row lock the
        UPDATE takes orders it with the other transitions); else the saga as it is."""
        row = await self.pool.fetchrow(
            f"UPDATE {self._TABLE} SET {assignments} WHERE saga_id = $1 AND state = 'reserved' "
            f"RETURNING {self._SELECT}",
            saga_id,
            *args,
        )
        if row is not None:
            return self._row(row)
        saga = await self.get(saga_id)
        if saga is None:
            raise KeyError(saga_id)
        return saga

    async def stuck(self, limit: int) -> list[S]:
        rows = await self.pool.fetch(
            f"SELECT {self._SELECT} FROM {self._TABLE} WHERE state = 'reserved' "
            "AND stuck_at IS NOT NULL ORDER BY stuck_at, saga_id LIMIT $1",
            limit,
        )
        return [self._row(r) for r in rows]

    async def count_stuck(self) -> int:
        count = await self.pool.fetchval(
            f"SELECT count(*) FROM {self._TABLE} WHERE state = 'reserved' AND stuck_at IS NOT NULL"
        )
        return int(count)

    async def count_by_state(self) -> dict[str, int]:
        # The states as literals, not a parameter: the planner then sees the partial index
        # on exactly these states (never a scan of every saga ever, every pass).
        states = ", ".join(f"'{s.value}'" for s in self._LIVE_STATES)
        rows = await self.pool.fetch(
            f"SELECT state, count(*) AS n FROM {self._TABLE} WHERE state IN ({states})"
            " GROUP BY state"
        )
        return {str(r["state"]): int(r["n"]) for r in rows}
