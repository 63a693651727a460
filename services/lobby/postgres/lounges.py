"""The ``Lounges`` port on PostgreSQL (migration ``0002_lounges.sql``)."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from felt.storage.idempotency import RequestReused
from services.lobby.domain import lounges as rules
from services.lobby.ports.closes import ends_by_itself
from services.lobby.ports.lounges import (
    Lounge,
    LoungeFilter,
    LoungeSeat,
    LoungeState,
    NewLounge,
)
from services.lobby.postgres._tx import Conn

_LOUNGE = (
    "lounge_id, listing_id, owner_id, name, variant, config, stake, seat_count, min_buy_in, "
    "max_buy_in, invite_code, state, created_at, failure, busted_grace_s"
)


def _lounge(r: asyncpg.Record, seats: list[LoungeSeat]) -> Lounge:
    return Lounge(
        r["lounge_id"],
        r["listing_id"],
        r["owner_id"],
        r["name"],
        r["variant"],
        bytes(r["config"]),
        r["stake"],
        r["seat_count"],
        r["min_buy_in"],
        r["max_buy_in"],
        r["invite_code"],
        LoungeState(r["state"]),
        r["created_at"],
        tuple(seats),
        r["failure"],
        r["busted_grace_s"],
    )


class PgLounges:
    """Lounges and their seats; a listing walks ``lounges_listing`` (or, for one variant,
    ``lounges_listing_variant``) newest first and stops at the page size."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    @staticmethod
    async def _seats(conn: Conn | asyncpg.Pool, ids: list[str]) -> dict[str, list[LoungeSeat]]:
        rows = await conn.fetch(
            "SELECT lounge_id, seat, player_id, display_name, ai_level, stack, leave_sequence "
            "FROM lounge_seats "
            "WHERE lounge_id = ANY($1::text[]) ORDER BY lounge_id, seat",
            ids,
        )
        seats: dict[str, list[LoungeSeat]] = {i: [] for i in ids}
        for r in rows:
            seats[r["lounge_id"]].append(LoungeSeat(*list(r.values())[1:]))
        return seats

    async def _lounges(self, conn: Conn | asyncpg.Pool, rows: list[asyncpg.Record]) -> list[Lounge]:
        seats = await self._seats(conn, [r["lounge_id"] for r in rows])
        return [_lounge(r, seats[r["lounge_id"]]) for r in rows]

    async def create(self, new: NewLounge, max_per_owner: int | None = None) -> Lounge:
        """With a cap, the owner's player row is locked first (one owner's creations run one
        at a time), then the retry looked for, then its lounges counted: two concurrent
        creations cannot both see room for one more."""
        async with self.pool.acquire() as conn, conn.transaction():
            if max_per_owner is not None:
                await conn.execute(
                    "SELECT 1 FROM players WHERE player_id = $1 FOR UPDATE", new.owner_id
                )
                retry = await conn.fetchval(
                    "SELECT 1 FROM lounges WHERE request_key = $1", new.request.key
                )
                owned = await conn.fetchval(
                    "SELECT count(*) FROM lounges WHERE owner_id = $1 AND state = ANY($2::text[])",
                    new.owner_id,
                    [state.value for state in rules.OWNED],
                )
                if retry is None:
                    rules.check_room(owned, max_per_owner)
            row = await conn.fetchrow(
                "INSERT INTO lounges (lounge_id, owner_id, name, variant, config, stake, "
                "seat_count, seats_taken, min_buy_in, max_buy_in, private, invite_code, state, "
                "request_key, fingerprint, created_at, ends_by_itself, busted_grace_s) VALUES ($1, "
                "$2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'creating', $13, $14, $15, $16, "
                "$17) "
                f"ON CONFLICT (request_key) DO NOTHING RETURNING {_LOUNGE}",
                new.lounge_id,
                new.owner_id,
                new.name,
                new.variant,
                new.config,
                new.stake,
                new.seat_count,
                len(new.ai_seats),
                new.min_buy_in,
                new.max_buy_in,
                new.invite_code is not None,
                new.invite_code,
                new.request.key,
                new.request.fingerprint,
                new.at,
                ends_by_itself(new.config),
                new.busted_grace_s,
            )
            if row is None:  # a retry: the first lounge of this request
                first = await conn.fetchrow(
                    f"SELECT fingerprint, {_LOUNGE} FROM lounges WHERE request_key = $1",
                    new.request.key,
                )
                assert first is not None
                if bytes(first["fingerprint"]) != new.request.fingerprint:
                    raise RequestReused()
                lounge = await self.get(first["lounge_id"])
                assert lounge is not None
                return lounge
            await conn.executemany(
                "INSERT INTO lounge_seats (lounge_id, seat, player_id, display_name, ai_level, "
                "stack) VALUES ($1, $2, $3, $4, $5, $6)",
                [
                    (new.lounge_id, s.seat, s.player_id, s.display_name, s.ai_level, s.stack)
                    for s in new.ai_seats
                ],
            )
            return (await self._lounges(conn, [row]))[0]

    async def get(self, lounge_id: str) -> Lounge | None:
        """One statement, the seats an array of records beside the lounge's row: a join
        looks its lounge up first, and a second round trip for the seats cost it as much."""
        row = await self.pool.fetchrow(
            f"SELECT {_LOUNGE}, (SELECT coalesce(array_agg(ROW(s.seat, s.player_id, "
            "s.display_name, s.ai_level, s.stack, s.leave_sequence) ORDER BY s.seat), '{}') "
            "FROM lounge_seats s WHERE s.lounge_id = l.lounge_id) AS seats "
            "FROM lounges l WHERE lounge_id = $1",
            lounge_id,
        )
        return None if row is None else _lounge(row, [LoungeSeat(*s) for s in row["seats"]])

    async def move(self, lounge_id: str, to: LoungeState, failure: str | None = None) -> Lounge:
        """The lounge moved to ``to`` from the one state the lifecycle's rule reaches it from
        (``domain.lounges.MOVES_FROM``; its seats gone in an emptied state, ``failure``
        kept), else as it is: a slower driver of the same lounge must not reopen one its
        owner closed (or that failed) meanwhile; it gets the lounge as it is."""
        update = (
            "UPDATE lounges SET state = $2, failure = coalesce($5, failure), "
            "seats_taken = CASE WHEN $4 THEN 0 ELSE seats_taken END "
            "WHERE lounge_id = $1 AND state = $3"
        )
        args = (lounge_id, to.value, rules.MOVES_FROM[to].value, to in rules.EMPTIED, failure)
        if to not in rules.EMPTIED:  # one statement: no transaction's round trips
            await self.pool.execute(update, *args)
        else:
            async with self.pool.acquire() as conn, conn.transaction():
                if await conn.execute(update, *args) == "UPDATE 1":
                    await conn.execute("DELETE FROM lounge_seats WHERE lounge_id = $1", lounge_id)
        lounge = await self.get(lounge_id)
        if lounge is None:
            raise KeyError(lounge_id)
        return lounge

    async def mark_open(self, lounge_id: str) -> Lounge:
        return await self.move(lounge_id, LoungeState.OPEN)

    async def listing(self, where: LoungeFilter, before: int | None, limit: int) -> list[Lounge]:
        # Only the conditions that apply, so that the plan can seek the index to the page's
        # start (``listing_id < $n`` as an index condition) rather than filter from the top.
        conditions, args = ["state = 'open'", "NOT private"], []
        for sql, value, used in (
            ("listing_id < ${}", before, before is not None),
            ("variant = ${}", where.variant, bool(where.variant)),
            ("stake >= ${}", where.min_stake, bool(where.min_stake)),
            ("stake <= ${}", where.max_stake, bool(where.max_stake)),
            ("free_seats >= ${}", where.min_free_seats, bool(where.min_free_seats)),
        ):
            if used:
                args.append(value)
                conditions.append(sql.format(len(args)))
        args.append(limit)
        rows = await self.pool.fetch(
            f"SELECT {_LOUNGE} FROM lounges WHERE {' AND '.join(conditions)} "
            f"ORDER BY listing_id DESC LIMIT ${len(args)}",
            *args,
        )
        return await self._lounges(self.pool, list(rows))

    async def occupied(self, after: int, limit: int) -> list[Lounge]:
        rows = await self.pool.fetch(
            f"SELECT {_LOUNGE} FROM lounges l WHERE state = 'open' AND listing_id > $1 "
            "AND EXISTS (SELECT 1 FROM lounge_seats s WHERE s.lounge_id = l.lounge_id) "
            "ORDER BY listing_id LIMIT $2",
            after,
            limit,
        )
        return await self._lounges(self.pool, list(rows))

    async def creating(self, limit: int, after: tuple[datetime, str] | None = None) -> list[Lounge]:
        at, lounge_id = after if after is not None else (None, "")
        rows = await self.pool.fetch(
            f"SELECT {_LOUNGE} FROM lounges WHERE state = 'creating' "
            "AND ($2::timestamptz IS NULL OR (created_at, lounge_id) > ($2, $3)) "
            "ORDER BY created_at, lounge_id LIMIT $1",
            limit,
            at,
            lounge_id,
        )
        return await self._lounges(self.pool, list(rows))

    async def mark_failed(self, lounge_id: str, failure: str) -> Lounge:
        return await self.move(lounge_id, LoungeState.FAILED, failure)
