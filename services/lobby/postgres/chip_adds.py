"""The ``ChipAdds`` port on PostgreSQL: each saga transition one transaction with its chips.

Every transition locks the player's account row first (the order a buy-in's takes), then
the saga's row, so of two drivers of one saga (a client's retry and the recovery pass) one
makes the transition and the other sees it made.
"""

from __future__ import annotations

import asyncpg

from felt.storage.idempotency import RequestKey, RequestReused
from services.lobby.domain import ledger as rules
from services.lobby.domain.transitions import ChipAddTransitions
from services.lobby.ports.chip_adds import (
    CHIP_ADD_LIVE_STATES,
    ChipAdd,
    ChipAddState,
    ChipReservation,
    NewChipAdd,
    add_key,
)
from services.lobby.ports.ledger import Kind
from services.lobby.postgres._recovery import RecoveryRows
from services.lobby.postgres._tx import Conn, lock_account, write_movement
from services.lobby.postgres._unit import PgSagaUnit

_COLUMNS = [
    "saga_id",
    "player_id",
    "lounge_id",
    "buy_in_id",
    "seat",
    "seat_token",
    "amount",
    "max_stack",
    "state",
    "stack_after",
    "refusal",
    "created_at",
    "attempts",
    "last_attempt_at",
    "next_attempt_at",
    "stuck_at",
    "last_error",
]
_CHIP_ADD = ", ".join(_COLUMNS)


def _chip_add(row: asyncpg.Record) -> ChipAdd:
    values = [row[c] for c in _COLUMNS]
    values[8] = ChipAddState(values[8])
    return ChipAdd(*values)


class PgChipAdds(ChipAddTransitions, RecoveryRows[ChipAdd]):
    _TABLE = "chip_adds"
    _SELECT = _CHIP_ADD
    _LIVE_STATES = CHIP_ADD_LIVE_STATES

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    def _row(self, row: asyncpg.Record) -> ChipAdd:
        return _chip_add(row)

    @staticmethod
    async def _first(conn: Conn | asyncpg.Pool, request: RequestKey) -> ChipAdd | None:
        row = await conn.fetchrow(
            f"SELECT fingerprint, {_CHIP_ADD} FROM chip_adds WHERE request_key = $1", request.key
        )
        if row is None:
            return None
        if bytes(row["fingerprint"]) != request.fingerprint:
            raise RequestReused()
        return _chip_add(row)

    async def reserve(self, new: NewChipAdd) -> ChipReservation:
        async with self.pool.acquire() as conn, conn.transaction():
            account = await lock_account(conn, new.player_id)
            first = await self._first(conn, new.request)
            if first is not None:
                return ChipReservation(first, int(account["balance"]))
            delta = rules.movement(Kind.BUY_IN, new.amount)
            rules.balance_after(int(account["balance"]), delta)
            moved = await write_movement(
                conn,
                account,
                Kind.BUY_IN,
                delta,
                add_key(new.saga_id),
                new.at,
                new.lounge_id,
            )
            row = await conn.fetchrow(
                "INSERT INTO chip_adds (saga_id, player_id, lounge_id, buy_in_id, seat, "
                "seat_token, amount, max_stack, state, request_key, fingerprint, created_at) "
                "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'reserved', $9, $10, $11) "
                f"RETURNING {_CHIP_ADD}",
                new.saga_id,
                new.player_id,
                new.lounge_id,
                new.buy_in_id,
                new.seat,
                new.seat_token,
                new.amount,
                new.max_stack,
                new.request.key,
                new.request.fingerprint,
                new.at,
            )
            assert row is not None
            return ChipReservation(_chip_add(row), moved.balance_after)

    async def first(self, request: RequestKey) -> ChipAdd | None:
        return await self._first(self.pool, request)

    def _unit(self) -> PgSagaUnit[ChipAdd]:
        return PgSagaUnit(self.pool, "chip_adds", _COLUMNS, _chip_add)

    async def reserved_at(self, lounge_id: str) -> list[ChipAdd]:
        rows = await self.pool.fetch(
            f"SELECT {_CHIP_ADD} FROM chip_adds WHERE lounge_id = $1 AND state = 'reserved' "
            "ORDER BY created_at, saga_id",
            lounge_id,
        )
        return [_chip_add(r) for r in rows]

    async def held(self, player_id: str) -> int:
        held = await self.pool.fetchval(
            "SELECT coalesce(sum(amount), 0) FROM chip_adds "
            "WHERE player_id = $1 AND state = 'reserved'",
            player_id,
        )
        return int(held)
