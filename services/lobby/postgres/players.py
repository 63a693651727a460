"""The ``Players`` port on PostgreSQL."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from felt.storage.idempotency import RequestKey, RequestReused
from services.lobby.ports.players import AlreadyRegistered, NameTaken, NewPlayer, Player

_PLAYER = "player_id, display_name, password_hash, created_at, registered_at"


# The unique indexes a taken name breaks: its name_key, or its skeleton (migration 0012).
_NAME_CONSTRAINTS = frozenset({"players_name_key_key", "players_name_skeleton"})


def _player(row: asyncpg.Record) -> Player:
    return Player(*row.values())


class PgPlayers:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def create(self, new: NewPlayer) -> Player:
        try:
            row = await self.pool.fetchrow(
                f"INSERT INTO players (player_id, display_name, name_key, password_hash, "
                "request_key, fingerprint, created_at, registered_at, name_skeleton) "
                "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) "
                f"ON CONFLICT (request_key) DO NOTHING RETURNING {_PLAYER}",
                new.player_id,
                new.display_name,
                new.name_key,
                new.password_hash,
                new.request.key,
                new.request.fingerprint,
                new.at,
                new.at if new.password_hash is not None else None,
                new.skeleton,
            )
        except asyncpg.UniqueViolationError as exc:
            # The name is taken, unless by this very request racing itself: look first.
            first = await self.by_request(new.request)
            if first is not None:
                return first
            if exc.constraint_name in _NAME_CONSTRAINTS:
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

    async def by_skeleton(self, skeleton: str) -> Player | None:
        row = await self.pool.fetchrow(
            f"SELECT {_PLAYER} FROM players WHERE name_skeleton = $1", skeleton
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
