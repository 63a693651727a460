"""The ``Ledger`` port on PostgreSQL: a movement locks its account row before it looks for its
key and writes (see :mod:`services.lobby.postgres._tx`)."""

from __future__ import annotations

from datetime import datetime, timedelta

import asyncpg

from felt.storage.idempotency import RequestKey
from services.lobby.domain import house
from services.lobby.domain import ledger as rules
from services.lobby.ports.ledger import (
    RETURNED_STATES,
    Account,
    AiRefill,
    Audit,
    HouseKind,
    HouseMovement,
    Kind,
    Movement,
    RefillState,
    Totals,
    Winner,
    house_return_key,
    house_seat_key,
    refill_key,
    refill_return_key,
)
from services.lobby.postgres._tx import (
    MOVEMENT,
    Conn,
    first_movement,
    lock_account,
    movement,
    write_house,
    write_movement,
)

AUDIT_QUERY = """
WITH at_lounge AS (
    SELECT table_id AS lounge_id, -sum(amount) AS chips FROM ledger
    WHERE kind NOT IN ('grant', 'top_up') AND table_id IS NOT NULL GROUP BY table_id
    UNION ALL
    SELECT lounge_id, -sum(amount) FROM house_ledger GROUP BY lounge_id
), per_lounge AS (
    SELECT lounge_id, sum(chips) AS chips FROM at_lounge GROUP BY lounge_id
)
SELECT
    (SELECT coalesce(sum(amount), 0) FROM ledger WHERE kind IN ('grant', 'top_up'))
        AS created,
    (SELECT coalesce(sum(balance), 0) FROM accounts) AS balances,
    (SELECT coalesce(-sum(amount), 0) FROM ledger WHERE kind NOT IN ('grant', 'top_up'))
        + (SELECT coalesce(-sum(amount), 0) FROM house_ledger) AS on_tables,
    (SELECT coalesce(sum(balance), 0) FROM house_account) AS house,
    (SELECT coalesce(sum(amount), 0) FROM ledger) AS ledger_sum,
    (SELECT coalesce(sum(amount), 0) FROM house_ledger) AS house_sum,
    (SELECT count(*) FROM per_lounge p JOIN lounges l USING (lounge_id)
        WHERE l.audited AND p.chips < 0) AS overpaid,
    (SELECT count(*) FROM per_lounge p JOIN lounges l USING (lounge_id)
        WHERE l.audited AND l.state IN ('closed', 'failed') AND p.chips <> 0) AS stranded
"""
"""The chips audit (docs/operations.md): one statement, so one snapshot."""
# The chips a player holds at tables: written as the partial index buy_ins_player_held
# (migration 0012) reads, with the states as literals so that the planner can use it.
_RETURNED = "(" + ", ".join(f"'{state}'" for state in RETURNED_STATES) + ")"
_AT_TABLES = (
    "SELECT (SELECT coalesce(sum(amount), 0) FROM buy_ins WHERE player_id = $1 AND state NOT IN "
    + _RETURNED
    + ") + (SELECT coalesce(sum(c.amount), 0) FROM chip_adds c JOIN buy_ins b "
    "ON b.saga_id = c.buy_in_id WHERE c.player_id = $1 AND c.state <> 'compensated' "
    "AND b.state NOT IN " + _RETURNED + ")"
)
"""Its buy-ins not come home, and the chips added to those seats (``chip_adds``, not refunded)."""


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
        delta = rules.movement(kind, amount)
        async with self.pool.acquire() as conn, conn.transaction():
            account = await lock_account(conn, player_id)
            first = await first_movement(conn, request)
            if first is not None:
                return first
            rules.balance_after(int(account["balance"]), delta)
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
            rules.top_up(Account(*account.values()), amount, below, cooldown, at, int(at_tables))
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

    async def fund_ai_seat(
        self, lounge_id: str, seat: int, amount: int, at: datetime
    ) -> HouseMovement:
        delta = house.funding(amount)
        async with self.pool.acquire() as conn, conn.transaction():
            return await write_house(
                conn,
                HouseKind.HOUSE_SEAT,
                delta,
                lounge_id,
                seat,
                house_seat_key(lounge_id, seat, amount),
                at,
            )

    async def refund_ai_seats(self, lounge_id: str, at: datetime) -> int:
        async with self.pool.acquire() as conn, conn.transaction():
            rows = await conn.fetch(
                "SELECT seat, -amount AS amount FROM house_ledger f "
                "WHERE lounge_id = $1 AND kind = 'house_seat' AND NOT EXISTS (SELECT 1 FROM "
                "house_ledger r WHERE r.lounge_id = f.lounge_id AND r.seat = f.seat "
                "AND r.kind = 'house_return') ORDER BY seat",
                lounge_id,
            )
            for r in rows:
                await write_house(
                    conn,
                    HouseKind.HOUSE_RETURN,
                    int(r["amount"]),
                    lounge_id,
                    r["seat"],
                    house_return_key(lounge_id, r["seat"], int(r["amount"])),
                    at,
                )
            return sum(int(r["amount"]) for r in rows)

    async def fund_ai_refill(
        self, lounge_id: str, seat: int, amount: int, at: datetime, since: datetime, most: int
    ) -> AiRefill | None:
        delta = house.funding(amount)
        async with self.pool.acquire() as conn, conn.transaction():
            # The AI seat's row locked first (one refill of a seat at a time; a close's
            # settle_ai takes it first too), its lounge's row shared: the lounge cannot turn
            # CLOSING until this refill is committed, so a close always sees it FUNDED.
            held = await conn.fetchval(
                "SELECT l.state FROM lounge_seats s JOIN lounges l USING (lounge_id) "
                "WHERE s.lounge_id = $1 AND s.seat = $2 AND s.ai_level > 0 "
                "FOR UPDATE OF s FOR SHARE OF l",
                lounge_id,
                seat,
            )
            if held != "open":
                return None
            row = await conn.fetchrow(
                f"SELECT {_REFILL} FROM ai_refills WHERE lounge_id = $1 AND seat = $2 "
                "AND state = 'funded'",
                lounge_id,
                seat,
            )
            if row is not None:
                return _refill(row)
            done = await conn.fetchval(
                "SELECT count(*) FROM ai_refills WHERE lounge_id = $1 AND seat = $2 "
                "AND created_at >= $3 AND state = 'added'",
                lounge_id,
                seat,
                since,
            )
            if done >= most:
                return None
            n = await conn.fetchval(
                "SELECT coalesce(max(n), 0) + 1 FROM ai_refills WHERE lounge_id = $1 AND seat = $2",
                lounge_id,
                seat,
            )
            await write_house(
                conn,
                HouseKind.HOUSE_SEAT,
                delta,
                lounge_id,
                seat,
                refill_key(lounge_id, seat, n, amount),
                at,
            )
            row = await conn.fetchrow(
                "INSERT INTO ai_refills (lounge_id, seat, n, amount, state, created_at) "
                f"VALUES ($1, $2, $3, $4, 'funded', $5) RETURNING {_REFILL}",
                lounge_id,
                seat,
                n,
                amount,
                at,
            )
            assert row is not None
            return _refill(row)

    async def ai_refill_added(self, lounge_id: str, seat: int, n: int) -> AiRefill:
        async with self.pool.acquire() as conn, conn.transaction():
            refill = await _locked_refill(conn, lounge_id, seat, n)
            if refill.state is RefillState.RETURNED:
                raise ValueError(f"refill {n} of seat {seat} was returned to the house")
            row = await conn.fetchrow(
                f"UPDATE ai_refills SET state = 'added' WHERE lounge_id = $1 AND seat = $2 "
                f"AND n = $3 RETURNING {_REFILL}",
                lounge_id,
                seat,
                n,
            )
            assert row is not None
            return _refill(row)

    async def return_ai_refill(self, lounge_id: str, seat: int, n: int, at: datetime) -> AiRefill:
        async with self.pool.acquire() as conn, conn.transaction():
            refill = await _locked_refill(conn, lounge_id, seat, n)
            if refill.state is RefillState.ADDED:
                raise ValueError(f"refill {n} of seat {seat} is on the seat")
            if refill.state is RefillState.RETURNED:
                return refill
            await write_house(
                conn,
                HouseKind.HOUSE_RETURN,
                refill.amount,
                lounge_id,
                seat,
                refill_return_key(lounge_id, seat, n, refill.amount),
                at,
            )
            row = await conn.fetchrow(
                f"UPDATE ai_refills SET state = 'returned' WHERE lounge_id = $1 AND seat = $2 "
                f"AND n = $3 RETURNING {_REFILL}",
                lounge_id,
                seat,
                n,
            )
            assert row is not None
            return _refill(row)

    async def funded_ai_refills(self, lounge_id: str, limit: int) -> list[AiRefill]:
        rows = await self.pool.fetch(
            f"SELECT {_REFILL} FROM ai_refills WHERE lounge_id = $1 AND state = 'funded' "
            "ORDER BY created_at, seat LIMIT $2",
            lounge_id,
            limit,
        )
        return [_refill(r) for r in rows]

    async def house(self) -> int:
        return int(await self.pool.fetchval("SELECT coalesce(sum(balance), 0) FROM house_account"))

    async def audit(self) -> Audit:
        row = await self.pool.fetchrow(AUDIT_QUERY)
        assert row is not None
        return Audit(*(int(v) for v in row.values()))

    async def house_won(self, player_id: str, since: datetime) -> int:
        won = await self.pool.fetchval(
            "SELECT coalesce(sum(amount), 0) FROM ledger WHERE player_id = $1 "
            "AND created_at >= $2 AND kind NOT IN ('grant', 'top_up') "
            "AND table_id IN (SELECT lounge_id FROM house_ledger) "
            # a seat whose chips are not home yet is no result: chips parked there would
            # read as a loss that hides a win elsewhere
            "AND table_id NOT IN (SELECT lounge_id FROM buy_ins WHERE player_id = $1 "
            "AND state NOT IN " + _RETURNED + ")",
            player_id,
            since,
        )
        return int(won)

    async def house_winners(self, since: datetime | None, limit: int) -> list[Winner]:
        rows = await self.pool.fetch(
            "SELECT player_id, sum(amount) AS won FROM ledger "
            "WHERE kind NOT IN ('grant', 'top_up') "
            "AND table_id IN (SELECT lounge_id FROM house_ledger) "
            "AND ($1::timestamptz IS NULL OR created_at >= $1) "
            "GROUP BY player_id HAVING sum(amount) > 0 ORDER BY won DESC, player_id LIMIT $2",
            since,
            limit,
        )
        return [Winner(r["player_id"], int(r["won"])) for r in rows]


_REFILL = "lounge_id, seat, n, amount, state, created_at"


def _refill(row: asyncpg.Record) -> AiRefill:
    return AiRefill(
        row["lounge_id"],
        row["seat"],
        row["n"],
        int(row["amount"]),
        RefillState(row["state"]),
        row["created_at"],
    )


async def _locked_refill(conn: Conn, lounge_id: str, seat: int, n: int) -> AiRefill:
    row = await conn.fetchrow(
        f"SELECT {_REFILL} FROM ai_refills WHERE lounge_id = $1 AND seat = $2 AND n = $3 "
        "FOR UPDATE",
        lounge_id,
        seat,
        n,
    )
    if row is None:
        raise KeyError(f"no refill {n} of seat {seat} at lounge {lounge_id}")
    return _refill(row)
