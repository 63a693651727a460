"""The ``Ledger`` port on PostgreSQL: a movement locks its account row before it looks for its
key and writes (see :mod:`services.lobby.postgres._tx`)."""

from __future__ import annotations

from datetime import datetime, timedelta

import asyncpg

from felt.idempotency import RequestKey
from services.lobby.ports.ledger import (
    RETURNED_STATES,
    Account,
    InsufficientChips,
    Kind,
    Movement,
    Totals,
    check_top_up,
)
from services.lobby.postgres._tx import (
    MOVEMENT,
    first_movement,
    lock_account,
    movement,
    write_movement,
)

# The chips a player holds at tables: written as the partial index buy_ins_player_held
# (migration 0012) reads, with the states as literals so that the planner can use it.
_AT_TABLES = (
    "SELECT coalesce(sum(amount), 0) FROM buy_ins WHERE player_id = $1 AND state NOT IN ("
    + ", ".join(f"'{state}'" for state in RETURNED_STATES)
    + ")"
)


class PgLedger:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def open(self, player_id: str, grant: int, request: RequestKey, at: datetime) -> Movement:
        async with self.pool.acquire() as conn, conn.transaction():
            status = await conn.execute(
                "INSERT INTO accounts (player_id, balance) VALUES ($1, 0) "
                "ON CONFLICT (player_id) DO NOTHING",
                player_id,
            )
            account = await lock_account(conn, player_id)
            first = await first_movement(conn, request)
            if first is not None:
                return first
            if status != "INSERT 0 1":
                raise ValueError(f"{player_id} has an account already")
            return await write_movement(conn, account, Kind.GRANT, grant, request, at, None)

    async def move(
        self,
        player_id: str,
        kind: Kind,
        amount: int,
        request: RequestKey,
        at: datetime,
        table_id: str | None = None,
    ) -> Movement:
        if amount <= 0:
            raise ValueError("a movement moves at least one chip")
        async with self.pool.acquire() as conn, conn.transaction():
            account = await lock_account(conn, player_id)
            first = await first_movement(conn, request)
            if first is not None:
                return first
            delta = kind.sign * amount
            if account["balance"] + delta < 0:
                raise InsufficientChips(int(account["balance"]), amount)
            return await write_movement(conn, account, kind, delta, request, at, table_id)

    async def top_up(
        self,
        player_id: str,
        amount: int,
        below: int,
        cooldown: timedelta,
        request: RequestKey,
        at: datetime,
    ) -> Movement:
        async with self.pool.acquire() as conn, conn.transaction():
            account = await lock_account(conn, player_id)
            first = await first_movement(conn, request)
            if first is not None:
                return first
            # Under the account's lock, which every buy-in's reserve and return takes too:
            # the sum is what the player holds at tables at this point of the account's story.
            at_tables = await conn.fetchval(_AT_TABLES, player_id)
            check_top_up(Account(*account.values()), below, cooldown, at, int(at_tables))
            return await write_movement(conn, account, Kind.TOP_UP, amount, request, at, None)

    async def account(self, player_id: str) -> Account | None:
        row = await self.pool.fetchrow(
            "SELECT player_id, balance, last_top_up_at FROM accounts WHERE player_id = $1",
            player_id,
        )
        return None if row is None else Account(*row.values())

    async def entries(self, player_id: str, before: int | None, limit: int) -> list[Movement]:
        rows = await self.pool.fetch(
            f"SELECT {MOVEMENT} FROM ledger WHERE player_id = $1 "
            "AND ($2::bigint IS NULL OR entry_id < $2) ORDER BY entry_id DESC LIMIT $3",
            player_id,
            before,
            limit,
        )
        return [movement(r) for r in rows]

    async def totals(self) -> Totals:
        row = await self.pool.fetchrow(  # one statement: one snapshot
            "SELECT "
            "(SELECT coalesce(sum(amount), 0) FROM ledger WHERE kind IN ('grant', 'top_up')), "
            "(SELECT coalesce(sum(balance), 0) FROM accounts), "
            "(SELECT coalesce(-sum(amount), 0) FROM ledger "
            "  WHERE kind NOT IN ('grant', 'top_up')), "
            "(SELECT coalesce(sum(amount), 0) FROM ledger)"
        )
        assert row is not None
        return Totals(*(int(v) for v in row.values()))
