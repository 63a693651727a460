"""The saga unit of work on PostgreSQL (``services.lobby.domain.unit``): one transaction on
one connection, the player's account row locked before the saga's (the order a reservation
takes), so of two drivers of one saga one makes the transition and the other sees it made."""

from __future__ import annotations

import enum
from collections.abc import Callable
from datetime import datetime
from types import TracebackType
from typing import Generic, TypeVar

import asyncpg

from services.lobby.domain.sagas import Credit, FreedSeat
from services.lobby.ports.buy_ins import BuyIn
from services.lobby.ports.chip_adds import ChipAdd
from services.lobby.postgres._tx import Conn, first_movement, lock_account, write_movement

S = TypeVar("S", BuyIn, ChipAdd)


class PgSagaUnit(Generic[S]):
    """A :class:`~services.lobby.domain.unit.SagaUnit` over ``table`` (its ``columns``, in
    the order ``row`` reads them; each is the saga's field of that name)."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        table: str,
        columns: list[str],
        row: Callable[[asyncpg.Record], S],
    ) -> None:
        self.pool, self.table, self.columns = pool, table, columns
        self.row: Callable[[asyncpg.Record], S] = row
        self._select = ", ".join(columns)
        self._conn: Conn | None = None
        self._tx: asyncpg.transaction.Transaction | None = None
        self._account: asyncpg.Record | None = None

    async def __aenter__(self) -> PgSagaUnit[S]:
        self._conn = await self.pool.acquire()
        self._tx = self._conn.transaction()
        await self._tx.start()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        assert self._conn is not None and self._tx is not None
        try:
            if kind is None:
                await self._tx.commit()
            else:
                await self._tx.rollback()
        finally:
            await self.pool.release(self._conn)
            self._conn = self._tx = self._account = None

    @property
    def conn(self) -> Conn:
        assert self._conn is not None, "outside its unit of work"
        return self._conn

    async def locked(self, saga_id: str) -> S:
        found = await self.conn.fetchrow(
            f"SELECT player_id FROM {self.table} WHERE saga_id = $1", saga_id
        )
        if found is None:
            raise KeyError(saga_id)
        self._account = await lock_account(self.conn, found["player_id"])
        row = await self.conn.fetchrow(
            f"SELECT {self._select} FROM {self.table} WHERE saga_id = $1 FOR UPDATE", saga_id
        )
        assert row is not None  # a saga's row outlives its player's account only by cascade
        return self.row(row)

    async def credit(self, credit: Credit, at: datetime) -> None:
        assert self._account is not None and self._account["player_id"] == credit.player_id
        if await first_movement(self.conn, credit.key) is None:
            await write_movement(
                self.conn,
                self._account,
                credit.kind,
                credit.amount,
                credit.key,
                at,
                credit.lounge_id,
            )

    async def free_seat(self, seat: FreedSeat) -> None:
        freed = await self.conn.execute(
            "DELETE FROM lounge_seats WHERE lounge_id = $1 AND seat = $2 AND player_id = $3",
            seat.lounge_id,
            seat.seat,
            seat.player_id,
        )
        if freed == "DELETE 1":
            await self.conn.execute(
                "UPDATE lounges SET seats_taken = seats_taken - 1 WHERE lounge_id = $1",
                seat.lounge_id,
            )

    async def save(self, saga: S) -> S:
        changed = self.columns[1:]  # all but saga_id: the row is the saga as it is now
        values = [_stored(getattr(saga, c)) for c in changed]
        assignments = ", ".join(f"{c} = ${n}" for n, c in enumerate(changed, start=2))
        row = await self.conn.fetchrow(
            f"UPDATE {self.table} SET {assignments} WHERE saga_id = $1 RETURNING {self._select}",
            saga.saga_id,
            *values,
        )
        assert row is not None
        return self.row(row)


def _stored(value: object) -> object:
    return value.value if isinstance(value, enum.Enum) else value
