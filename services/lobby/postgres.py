"""The lobby's ports on PostgreSQL (asyncpg, one pool shared by every adapter).

Every write is one transaction. A chips movement locks its account row
(``SELECT ... FOR UPDATE``) before it looks for its key and writes, so two
movements of one balance are serialised and never both spend the same chips;
the ``CHECK (balance >= 0)`` constraints are the backstop. Token rotation
locks the session row the same way, so of two refreshes with one token only
one rotates it. The schema is ``services/lobby/migrations``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, TypeAlias

import asyncpg

if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

from felt.idempotency import RequestKey, RequestReused
from services.lobby.ports import (
    Account,
    AlreadyRegistered,
    BuyIn,
    BuyInState,
    InsufficientChips,
    Kind,
    Lounge,
    LoungeFilter,
    LoungeSeat,
    LoungeState,
    Movement,
    NameTaken,
    NewBuyIn,
    NewLounge,
    NewPlayer,
    NoAccount,
    Player,
    Rotation,
    SeatGrant,
    Session,
    TokenHasher,
    TooManyLounges,
    Totals,
    check_top_up,
    refund_key,
    reserve_key,
)

Conn: TypeAlias = "PoolConnectionProxy[asyncpg.Record]"  # subscriptable only in the stubs
_PLAYER = "player_id, display_name, password_hash, created_at, registered_at"
_SESSION = "session_id, player_id, generation, issued_at, expires_at, revoked_at IS NOT NULL"
_MOVEMENT = "entry_id, player_id, kind, amount, balance_after, table_id, created_at"


def _player(row: asyncpg.Record) -> Player:
    return Player(*row.values())


def _session(row: asyncpg.Record) -> Session:
    return Session(*row.values())


def _movement(row: asyncpg.Record) -> Movement:
    values = list(row.values())
    values[2] = Kind(values[2])
    return Movement(*values)


class PgPlayers:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def create(self, new: NewPlayer) -> Player:
        try:
            row = await self.pool.fetchrow(
                f"INSERT INTO players (player_id, display_name, name_key, password_hash, "
                "request_key, fingerprint, created_at, registered_at) "
                "VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
                f"ON CONFLICT (request_key) DO NOTHING RETURNING {_PLAYER}",
                new.player_id,
                new.display_name,
                new.name_key,
                new.password_hash,
                new.request.key,
                new.request.fingerprint,
                new.at,
                new.at if new.password_hash is not None else None,
            )
        except asyncpg.UniqueViolationError as exc:
            # The name is taken, unless by this very request racing itself: look first.
            first = await self.by_request(new.request)
            if first is not None:
                return first
            if exc.constraint_name == "players_name_key_key":
                raise NameTaken(new.display_name) from None
            raise
        if row is not None:
            return _player(row)
        first = await self.by_request(new.request)  # the request was made before: its answer
        assert first is not None
        return first

    async def by_request(self, request: RequestKey) -> Player | None:
        first = await self.pool.fetchrow(
            f"SELECT fingerprint, {_PLAYER} FROM players WHERE request_key = $1", request.key
        )
        if first is None:
            return None
        if bytes(first["fingerprint"]) != request.fingerprint:
            raise RequestReused()
        return Player(*list(first.values())[1:])

    async def get(self, player_id: str) -> Player | None:
        row = await self.pool.fetchrow(
            f"SELECT {_PLAYER} FROM players WHERE player_id = $1", player_id
        )
        return None if row is None else _player(row)

    async def by_name(self, name_key: str) -> Player | None:
        row = await self.pool.fetchrow(
            f"SELECT {_PLAYER} FROM players WHERE name_key = $1", name_key
        )
        return None if row is None else _player(row)

    async def register(self, player_id: str, password_hash: str, at: datetime) -> Player:
        async with self.pool.acquire() as conn, conn.transaction():
            current = await conn.fetchval(
                "SELECT password_hash IS NOT NULL FROM players WHERE player_id = $1 FOR UPDATE",
                player_id,
            )
            if current is None:
                raise KeyError(player_id)
            if current:
                raise AlreadyRegistered(player_id)
            row = await conn.fetchrow(
                "UPDATE players SET password_hash = $2, registered_at = $3 WHERE player_id = $1 "
                f"RETURNING {_PLAYER}",
                player_id,
                password_hash,
                at,
            )
            assert row is not None
            return _player(row)


class PgSessions:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def start(
        self,
        session_id: str,
        player_id: str,
        request: RequestKey,
        token_hash: TokenHasher,
        at: datetime,
        ttl: timedelta,
    ) -> Session:
        async with self.pool.acquire() as conn, conn.transaction():
            row = await conn.fetchrow(
                "INSERT INTO sessions (session_id, player_id, request_key, fingerprint, "
                "issued_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6) "
                f"ON CONFLICT (request_key) DO NOTHING RETURNING {_SESSION}",
                session_id,
                player_id,
                request.key,
                request.fingerprint,
                at,
                at + ttl,
            )
            if row is not None:
                await conn.execute(
                    "INSERT INTO refresh_tokens (token_hash, session_id, generation) "
                    "VALUES ($1, $2, 0)",
                    token_hash(session_id, 0),
                    session_id,
                )
                return _session(row)
        first = await self.pool.fetchrow(
            f"SELECT fingerprint, {_SESSION} FROM sessions WHERE request_key = $1", request.key
        )
        assert first is not None
        if bytes(first["fingerprint"]) != request.fingerprint:
            raise RequestReused()
        return Session(*list(first.values())[1:])

    async def get(self, session_id: str) -> Session | None:
        row = await self.pool.fetchrow(
            f"SELECT {_SESSION} FROM sessions WHERE session_id = $1", session_id
        )
        return None if row is None else _session(row)

    async def rotate(
        self,
        token_hash: bytes,
        request: RequestKey,
        next_hash: TokenHasher,
        at: datetime,
        ttl: timedelta,
    ) -> tuple[Rotation, Session | None]:
        async with self.pool.acquire() as conn, conn.transaction():
            token = await conn.fetchrow(
                "SELECT session_id, generation, rotated_key, rotated_fingerprint "
                "FROM refresh_tokens WHERE token_hash = $1",
                token_hash,
            )
            if token is None:
                return Rotation.UNKNOWN, None
            row = await conn.fetchrow(
                f"SELECT {_SESSION} FROM sessions WHERE session_id = $1 FOR UPDATE",
                token["session_id"],
            )
            assert row is not None
            session = _session(row)
            # Re-read the token under the session's lock: a concurrent rotation is now visible.
            token = await conn.fetchrow(
                "SELECT generation, rotated_key, rotated_fingerprint FROM refresh_tokens "
                "WHERE token_hash = $1",
                token_hash,
            )
            assert token is not None
            generation: int = token["generation"]
            if token["rotated_key"] == request.key:
                if bytes(token["rotated_fingerprint"]) != request.fingerprint:
                    raise RequestReused()
                if session.revoked:
                    return Rotation.REVOKED, None
                return Rotation.RETRIED, Session(
                    session.session_id,
                    session.player_id,
                    generation + 1,
                    session.issued_at,
                    session.expires_at,
                    False,
                )
            if session.revoked:
                return Rotation.REVOKED, None
            if token["rotated_key"] is not None or generation != session.generation:
                await conn.execute(
                    "UPDATE sessions SET revoked_at = $2, revoked_why = 'refresh_token_reused' "
                    "WHERE session_id = $1",
                    session.session_id,
                    at,
                )
                return Rotation.REUSED, None
            if session.expires_at <= at:
                return Rotation.EXPIRED, None
            await conn.execute(
                "UPDATE refresh_tokens SET rotated_key = $2, rotated_fingerprint = $3 "
                "WHERE token_hash = $1",
                token_hash,
                request.key,
                request.fingerprint,
            )
            await conn.execute(
                "INSERT INTO refresh_tokens (token_hash, session_id, generation) "
                "VALUES ($1, $2, $3)",
                next_hash(session.session_id, generation + 1),
                session.session_id,
                generation + 1,
            )
            row = await conn.fetchrow(
                "UPDATE sessions SET generation = $2, issued_at = $3, expires_at = $4 "
                f"WHERE session_id = $1 RETURNING {_SESSION}",
                session.session_id,
                generation + 1,
                at,
                at + ttl,
            )
            assert row is not None
            return Rotation.ROTATED, _session(row)

    async def revoke(self, session_id: str, at: datetime, why: str) -> bool:
        status = await self.pool.execute(
            "UPDATE sessions SET revoked_at = $2, revoked_why = $3 "
            "WHERE session_id = $1 AND revoked_at IS NULL",
            session_id,
            at,
            why,
        )
        return bool(status == "UPDATE 1")


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


class PgLedger:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    @staticmethod
    async def _first(conn: Conn, request: RequestKey) -> Movement | None:
        row = await conn.fetchrow(
            f"SELECT fingerprint, {_MOVEMENT} FROM ledger WHERE movement_key = $1", request.key
        )
        if row is None:
            return None
        if bytes(row["fingerprint"]) != request.fingerprint:
            raise RequestReused()
        values = list(row.values())[1:]
        values[2] = Kind(values[2])
        return Movement(*values)

    @staticmethod
    async def _write(
        conn: Conn,
        account: asyncpg.Record,
        kind: Kind,
        delta: int,
        request: RequestKey,
        at: datetime,
        table_id: str | None,
    ) -> Movement:
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
            f"RETURNING {_MOVEMENT}",
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
        return _movement(row)

    @staticmethod
    async def _lock(conn: Conn, player_id: str) -> asyncpg.Record:
        account = await conn.fetchrow(
            "SELECT player_id, balance, last_top_up_at FROM accounts "
            "WHERE player_id = $1 FOR UPDATE",
            player_id,
        )
        if account is None:
            raise NoAccount(player_id)
        return account

    async def open(self, player_id: str, grant: int, request: RequestKey, at: datetime) -> Movement:
        async with self.pool.acquire() as conn, conn.transaction():
            status = await conn.execute(
                "INSERT INTO accounts (player_id, balance) VALUES ($1, 0) "
                "ON CONFLICT (player_id) DO NOTHING",
                player_id,
            )
            account = await self._lock(conn, player_id)
            first = await self._first(conn, request)
            if first is not None:
                return first
            if status != "INSERT 0 1":
                raise ValueError(f"{player_id} has an account already")
            return await self._write(conn, account, Kind.GRANT, grant, request, at, None)

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
            account = await self._lock(conn, player_id)
            first = await self._first(conn, request)
            if first is not None:
                return first
            delta = kind.sign * amount
            if account["balance"] + delta < 0:
                raise InsufficientChips(int(account["balance"]), amount)
            return await self._write(conn, account, kind, delta, request, at, table_id)

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
            account = await self._lock(conn, player_id)
            first = await self._first(conn, request)
            if first is not None:
                return first
            check_top_up(Account(*account.values()), below, cooldown, at)
            return await self._write(conn, account, Kind.TOP_UP, amount, request, at, None)

    async def account(self, player_id: str) -> Account | None:
        row = await self.pool.fetchrow(
            "SELECT player_id, balance, last_top_up_at FROM accounts WHERE player_id = $1",
            player_id,
        )
        return None if row is None else Account(*row.values())

    async def entries(self, player_id: str, before: int | None, limit: int) -> list[Movement]:
        rows = await self.pool.fetch(
            f"SELECT {_MOVEMENT} FROM ledger WHERE player_id = $1 "
            "AND ($2::bigint IS NULL OR entry_id < $2) ORDER BY entry_id DESC LIMIT $3",
            player_id,
            before,
            limit,
        )
        return [_movement(r) for r in rows]

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


_LOUNGE = (
    "lounge_id, listing_id, owner_id, name, variant, config, stake, seat_count, min_buy_in, "
    "max_buy_in, invite_code, state, created_at"
)


class PgLounges:
    """Lounges and their seats; a listing walks ``lounges_listing`` (or, for one variant,
    ``lounges_listing_variant``) newest first and stops at the page size."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    @staticmethod
    async def _seats(conn: Conn | asyncpg.Pool, ids: list[str]) -> dict[str, list[LoungeSeat]]:
        rows = await conn.fetch(
            "SELECT lounge_id, seat, player_id, display_name, ai_level, stack FROM lounge_seats "
            "WHERE lounge_id = ANY($1::text[]) ORDER BY lounge_id, seat",
            ids,
        )
        seats: dict[str, list[LoungeSeat]] = {i: [] for i in ids}
        for r in rows:
            seats[r["lounge_id"]].append(LoungeSeat(*list(r.values())[1:]))
        return seats

    async def _lounges(self, conn: Conn | asyncpg.Pool, rows: list[asyncpg.Record]) -> list[Lounge]:
        seats = await self._seats(conn, [r["lounge_id"] for r in rows])
        return [
            Lounge(
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
                tuple(seats[r["lounge_id"]]),
            )
            for r in rows
        ]

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
                    "SELECT count(*) FROM lounges "
                    "WHERE owner_id = $1 AND state IN ('creating', 'open')",
                    new.owner_id,
                )
                if retry is None and owned >= max_per_owner:
                    raise TooManyLounges(max_per_owner)
            row = await conn.fetchrow(
                "INSERT INTO lounges (lounge_id, owner_id, name, variant, config, stake, "
                "seat_count, seats_taken, min_buy_in, max_buy_in, private, invite_code, state, "
                "request_key, fingerprint, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
                "$9, $10, $11, $12, 'creating', $13, $14, $15) "
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
        row = await self.pool.fetchrow(
            f"SELECT {_LOUNGE} FROM lounges WHERE lounge_id = $1", lounge_id
        )
        return None if row is None else (await self._lounges(self.pool, [row]))[0]

    async def mark_open(self, lounge_id: str) -> Lounge:
        status = await self.pool.execute(
            "UPDATE lounges SET state = 'open' WHERE lounge_id = $1", lounge_id
        )
        if status != "UPDATE 1":
            raise KeyError(lounge_id)
        lounge = await self.get(lounge_id)
        assert lounge is not None
        return lounge

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

    async def creating(self, limit: int) -> list[Lounge]:
        rows = await self.pool.fetch(
            f"SELECT {_LOUNGE} FROM lounges WHERE state = 'creating' ORDER BY created_at LIMIT $1",
            limit,
        )
        return await self._lounges(self.pool, list(rows))


_BUY_IN = (
    "saga_id, player_id, display_name, lounge_id, seat, amount, state, seat_token, "
    "seat_token_expires_at, refusal, created_at"
)


def _buy_in(row: asyncpg.Record) -> BuyIn:
    values = [row[c.strip()] for c in _BUY_IN.split(",")]
    values[6] = BuyInState(values[6])
    return BuyIn(*values)


class PgBuyIns:
    """The saga's transitions, each one transaction with its chips: the saga's row is locked
    (``FOR UPDATE``) before its state is read, so of two drivers of one saga (a client's
    retry and the recovery pass) one makes the transition and the other sees it made."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def reserve(self, new: NewBuyIn) -> BuyIn:
        async with self.pool.acquire() as conn, conn.transaction():
            account = await PgLedger._lock(conn, new.player_id)  # serialises the player's sagas
            first = await conn.fetchrow(
                f"SELECT fingerprint, {_BUY_IN} FROM buy_ins WHERE request_key = $1",
                new.request.key,
            )
            if first is not None:
                if bytes(first["fingerprint"]) != new.request.fingerprint:
                    raise RequestReused()
                return _buy_in(first)
            if account["balance"] < new.amount:
                raise InsufficientChips(int(account["balance"]), new.amount)
            key = reserve_key(new.saga_id)
            await PgLedger._write(
                conn, account, Kind.BUY_IN, -new.amount, key, new.at, new.lounge_id
            )
            row = await conn.fetchrow(
                "INSERT INTO buy_ins (saga_id, player_id, display_name, lounge_id, seat, amount, "
                "state, request_key, fingerprint, created_at) "
                "VALUES ($1, $2, $3, $4, $5, $6, 'reserved', $7, $8, $9) "
                f"RETURNING {_BUY_IN}",
                new.saga_id,
                new.player_id,
                new.display_name,
                new.lounge_id,
                new.seat,
                new.amount,
                new.request.key,
                new.request.fingerprint,
                new.at,
            )
            assert row is not None
            return _buy_in(row)

    @staticmethod
    async def _locked(conn: Conn, saga_id: str) -> BuyIn:
        row = await conn.fetchrow(
            f"SELECT {_BUY_IN} FROM buy_ins WHERE saga_id = $1 FOR UPDATE", saga_id
        )
        if row is None:
            raise KeyError(saga_id)
        return _buy_in(row)

    async def seated(self, saga_id: str, grant: SeatGrant) -> BuyIn:
        async with self.pool.acquire() as conn, conn.transaction():
            saga = await self._locked(conn, saga_id)
            if saga.state is not BuyInState.RESERVED:
                return saga
            # The table service is the authority on who sits where: its seat replaces
            # whatever the lobby's view had there.
            old = await conn.execute(
                "DELETE FROM lounge_seats WHERE lounge_id = $1 AND seat = $2",
                saga.lounge_id,
                grant.seat,
            )
            await conn.execute(
                "INSERT INTO lounge_seats (lounge_id, seat, player_id, display_name, ai_level, "
                "stack) VALUES ($1, $2, $3, $4, 0, $5)",
                saga.lounge_id,
                grant.seat,
                saga.player_id,
                saga.display_name,
                saga.amount,
            )
            if old == "DELETE 0":
                await conn.execute(
                    "UPDATE lounges SET seats_taken = seats_taken + 1 WHERE lounge_id = $1",
                    saga.lounge_id,
                )
            row = await conn.fetchrow(
                "UPDATE buy_ins SET state = 'seated', seat = $2, seat_token = $3, "
                f"seat_token_expires_at = $4 WHERE saga_id = $1 RETURNING {_BUY_IN}",
                saga_id,
                grant.seat,
                grant.seat_token,
                grant.expires_at,
            )
            assert row is not None
            return _buy_in(row)

    async def compensate(self, saga_id: str, refusal: str, at: datetime) -> BuyIn:
        async with self.pool.acquire() as conn, conn.transaction():
            saga = await self._locked(conn, saga_id)
            if saga.state is not BuyInState.RESERVED:
                return saga
            account = await PgLedger._lock(conn, saga.player_id)
            if await PgLedger._first(conn, refund_key(saga_id)) is None:
                await PgLedger._write(
                    conn,
                    account,
                    Kind.CASH_OUT,
                    saga.amount,
                    refund_key(saga_id),
                    at,
                    saga.lounge_id,
                )
            row = await conn.fetchrow(
                "UPDATE buy_ins SET state = 'compensated', refusal = $2 WHERE saga_id = $1 "
                f"RETURNING {_BUY_IN}",
                saga_id,
                refusal,
            )
            assert row is not None
            return _buy_in(row)

    async def get(self, saga_id: str) -> BuyIn | None:
        row = await self.pool.fetchrow(f"SELECT {_BUY_IN} FROM buy_ins WHERE saga_id = $1", saga_id)
        return None if row is None else _buy_in(row)

    async def unfinished(self, limit: int) -> list[BuyIn]:
        rows = await self.pool.fetch(
            f"SELECT {_BUY_IN} FROM buy_ins WHERE state = 'reserved' ORDER BY created_at LIMIT $1",
            limit,
        )
        return [_buy_in(r) for r in rows]
