"""The ``Sessions`` port on PostgreSQL: a rotation locks its session row (``FOR UPDATE``),
so of two refreshes with one token only one rotates it."""

from __future__ import annotations

from datetime import datetime, timedelta

import asyncpg

from felt.storage.idempotency import RequestKey, RequestReused
from services.lobby.ports.sessions import Rotation, Session, TokenHasher

_SESSION = "session_id, player_id, generation, issued_at, expires_at, revoked_at IS NOT NULL"


def _session(row: asyncpg.Record) -> Session:
    return Session(*row.values())


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
