"""What the PostgreSQL adapters share: the connection type, and the chips movement written in
a caller's transaction (by the ledger, and by a buy-in saga with its own row).

A chips movement locks its account row (``SELECT ... FOR UPDATE``) before it
looks for its key and writes, so two movements of one balance are serialised
and never both spend the same chips; the ``CHECK (balance >= 0)`` constraints
are the backstop.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, TypeAlias

import asyncpg

if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

from felt.storage.idempotency import RequestKey, RequestReused
from services.lobby.ports.ledger import HouseKind, HouseMovement, Kind, Movement, NoAccount

Conn: TypeAlias = "PoolConnectionProxy[asyncpg.Record]"  # subscriptable only in the stubs
MOVEMENT = "entry_id, player_id, kind, amount, balance_after, table_id, created_at"


def movement(row: asyncpg.Record) -> Movement:
    values = list(row.values())
    values[2] = Kind(values[2])
    return Movement(*values)


async def first_movement(conn: Conn, request: RequestKey) -> Movement | None:
    """The movement ``request`` wrote, if it did (``RequestReused`` if with another fingerprint)."""
    row = await conn.fetchrow(
        f"SELECT fingerprint, {MOVEMENT} FROM ledger WHERE movement_key = $1", request.key
    )
    if row is None:
        return None
    if bytes(row["fingerprint"]) != request.fingerprint:
        raise RequestReused()
    values = list(row.values())[1:]
    values[2] = Kind(values[2])
    return Movement(*values)


async def write_movement(
    conn: Conn,
    account: asyncpg.Record,
    kind: Kind,
    delta: int,
    request: RequestKey,
    at: datetime,
    table_id: str | None,
) -> Movement:
    """Move ``delta`` chips of the locked ``account`` and write its ledger row, in ``conn``'s
    transaction."""
    balance = int(account["balance"]) + delta
    await conn.execute(
        "UPDATE accounts SET balance = $2, "
        "last_top_up_at = CASE WHEN $3 THEN $4 ELSE last_top_up_at END "
        "WHERE player_id = $1",
        account["player_id"],
        balance,
        kind is Kind.TOP_UP,
        at,
    )
    row = await conn.fetchrow(
        "INSERT INTO ledger (player_id, kind, amount, balance_after, table_id, "
        "movement_key, fingerprint, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
        f"RETURNING {MOVEMENT}",
        account["player_id"],
        kind.value,
        delta,
        balance,
        table_id,
        request.key,
        request.fingerprint,
        at,
    )
    assert row is not None
    return movement(row)


async def lock_account(conn: Conn, player_id: str) -> asyncpg.Record:
    """Lock the player's account row (``FOR UPDATE``) for the transaction: its movements, and
    its buy-in sagas, run one at a time (:class:`NoAccount` if it has none)."""
    account = await conn.fetchrow(
        "SELECT player_id, balance, last_top_up_at FROM accounts WHERE player_id = $1 FOR UPDATE",
        player_id,
    )
    if account is None:
        raise NoAccount(player_id)
    return account


HOUSE_MOVEMENT = "entry_id, kind, amount, balance_after, lounge_id, seat, created_at"


def house_movement(row: asyncpg.Record) -> HouseMovement:
    values = list(row.values())
    values[1] = HouseKind(values[1])
    return HouseMovement(*values)


async def write_house(
    conn: Conn,
    kind: HouseKind,
    delta: int,
    lounge_id: str,
    seat: int,
    request: RequestKey,
    at: datetime,
) -> HouseMovement:
    """Move ``delta`` chips of the house's balance with its row, in ``conn``'s transaction:
    the house's row locked first (its movements run one at a time), then the key looked
    for (a retry finds the first movement, ``RequestReused`` with another fingerprint)."""
    await conn.execute(
        "INSERT INTO house_account (house, balance) VALUES (true, 0) ON CONFLICT DO NOTHING"
    )
    balance = await conn.fetchval("SELECT balance FROM house_account FOR UPDATE")
    first = await conn.fetchrow(
        f"SELECT fingerprint, {HOUSE_MOVEMENT} FROM house_ledger WHERE movement_key = $1",
        request.key,
    )
    if first is not None:
        if bytes(first["fingerprint"]) != request.fingerprint:
            raise RequestReused()
        values = list(first.values())[1:]
        values[1] = HouseKind(values[1])
        return HouseMovement(*values)
    after = int(balance) + delta
    await conn.execute("UPDATE house_account SET balance = $1", after)
    row = await conn.fetchrow(
        "INSERT INTO house_ledger (kind, amount, balance_after, lounge_id, seat, movement_key, "
        "fingerprint, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
        f"RETURNING {HOUSE_MOVEMENT}",
        kind.value,
        delta,
        after,
        lounge_id,
        seat,
        request.key,
        request.fingerprint,
        at,
    )
    assert row is not None
    return house_movement(row)
