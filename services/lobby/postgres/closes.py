"""The ``Closes`` port on PostgreSQL (migration ``0008_closes.sql``)."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from services.lobby.domain import house
from services.lobby.domain.transitions import CloseTransitions
from services.lobby.ports.buy_ins import BuyIn
from services.lobby.ports.ledger import HouseKind, house_return_key, house_seat_key
from services.lobby.ports.lounges import Lounge, LoungeState
from services.lobby.postgres._tx import write_house
from services.lobby.postgres.buy_ins import _BUY_IN, PgBuyIns, _buy_in
from services.lobby.postgres.lounges import _LOUNGE, PgLounges


class PgCloses(CloseTransitions):
    """Settling is a leave's cash-out with another kind (``PgBuyIns.vacated``): the player's
    account, then the saga's row locked (``FOR UPDATE``) and its state checked under those
    locks, so of a close and a leave of one seat, one credits it and the other finds it LEFT."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool
        self.lounges = PgLounges(pool)
        self.buy_ins = PgBuyIns(pool)

    async def mark_closing(self, lounge_id: str) -> Lounge:
        return await self.lounges.move(lounge_id, LoungeState.CLOSING)

    async def mark_closed(self, lounge_id: str) -> Lounge:
        return await self.lounges.move(lounge_id, LoungeState.CLOSED)

    async def unsettled(self, lounge_id: str) -> list[BuyIn]:
        rows = await self.pool.fetch(
            f"SELECT {_BUY_IN} FROM buy_ins WHERE lounge_id = $1 "
            "AND state IN ('reserved', 'seated', 'leaving') ORDER BY created_at",
            lounge_id,
        )
        return [_buy_in(r) for r in rows]

    async def ai_seen_seated(self, lounge_id: str, seat: int, sequence: int) -> None:
        await self.pool.execute(
            "UPDATE lounge_seats SET leave_sequence = $3 WHERE lounge_id = $1 AND seat = $2 "
            "AND ai_level > 0 AND leave_sequence IS NULL",
            lounge_id,
            seat,
            sequence,
        )

    async def settle_ai(self, lounge_id: str, seat: int, stack: int, at: datetime) -> bool:
        """The AI seat's row is locked first: of two passes settling it, one credits it."""
        async with self.pool.acquire() as conn, conn.transaction():
            held = await conn.fetchval(
                "SELECT 1 FROM lounge_seats WHERE lounge_id = $1 AND seat = $2 AND ai_level > 0 "
                "FOR UPDATE",
                lounge_id,
                seat,
            )
            funded = held is not None and (
                await conn.fetchval(
                    "SELECT 1 FROM house_ledger WHERE movement_key = $1",
                    house_seat_key(lounge_id, seat, 0).key,
                )
                is not None
            )
            settled = house.settle_ai(held is not None, funded, stack)
            if settled is None:
                return False
            if settled.returned:
                await write_house(
                    conn,
                    HouseKind.HOUSE_RETURN,
                    settled.returned,
                    lounge_id,
                    seat,
                    house_return_key(lounge_id, seat, settled.returned),
                    at,
                )
            await conn.execute(
                "DELETE FROM lounge_seats WHERE lounge_id = $1 AND seat = $2", lounge_id, seat
            )
            await conn.execute(
                "UPDATE lounges SET seats_taken = seats_taken - 1 WHERE lounge_id = $1",
                lounge_id,
            )
            return True

    async def closing(self, limit: int) -> list[Lounge]:
        rows = await self.pool.fetch(
            f"SELECT {_LOUNGE} FROM lounges WHERE state = 'closing' ORDER BY created_at LIMIT $1",
            limit,
        )
        return await self.lounges._lounges(self.pool, list(rows))

    async def ending(self, after: int, limit: int) -> list[Lounge]:
        rows = await self.pool.fetch(
            f"SELECT {_LOUNGE} FROM lounges WHERE state = 'open' AND ends_by_itself "
            "AND listing_id > $1 ORDER BY listing_id LIMIT $2",
            after,
            limit,
        )
        return await self.lounges._lounges(self.pool, list(rows))
