"""The ``BuyIns`` port on PostgreSQL: each saga transition one transaction with its chips."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from felt.storage.idempotency import RequestKey, RequestReused
from services.lobby.domain import ledger as rules
from services.lobby.domain import sagas
from services.lobby.domain.transitions import BuyInTransitions
from services.lobby.ports.buy_ins import (
    BUY_IN_LIVE_STATES,
    BuyIn,
    BuyInState,
    NewBuyIn,
    Reservation,
    reserve_key,
)
from services.lobby.ports.ledger import InsufficientChips, Kind, NoAccount
from services.lobby.ports.tables import SeatGrant
from services.lobby.postgres._recovery import RecoveryRows
from services.lobby.postgres._tx import lock_account
from services.lobby.postgres._unit import PgSagaUnit

_BUY_IN = (
    "saga_id, player_id, display_name, lounge_id, seat, amount, state, seat_token, "
    "seat_token_expires_at, refusal, created_at, leave_sequence, left_stack, attempts, "
    "last_attempt_at, next_attempt_at, stuck_at, last_error, wait_for_big_blind"
)


_COLUMNS = [c.strip() for c in _BUY_IN.split(",")]
_BUY_IN_B = ", ".join(f"b.{c}" for c in _COLUMNS)
_SAGA_OF_R = ", ".join(f"(r.r_saga).{c}" for c in _COLUMNS)


def _buy_in(row: asyncpg.Record) -> BuyIn:
    values = [row[c] for c in _COLUMNS]
    values[6] = BuyInState(values[6])
    return BuyIn(*values)


class PgBuyIns(BuyInTransitions, RecoveryRows[BuyIn]):
    """The saga's transitions, each one transaction with its chips: the saga's row is locked
    (``FOR UPDATE``) before its state is read, so of two drivers of one saga (a client's
    retry and the recovery pass) one makes the transition and the other sees it made."""

    _TABLE = "buy_ins"
    _SELECT = _BUY_IN
    _LIVE_STATES = BUY_IN_LIVE_STATES

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    def _row(self, row: asyncpg.Record) -> BuyIn:
        return _buy_in(row)

    async def reserve(self, new: NewBuyIn) -> Reservation:
        """One call of ``lobby_reserve_buy_in`` (migration 0005, as of 0015): its steps are the
        transaction this method ran statement by statement, one round trip in all. What it
        checks is the ledger's rule (``domain.ledger``): the amount first, as a move's."""
        rules.movement(Kind.BUY_IN, new.amount)
        movement = reserve_key(new.saga_id)
        row = await self.pool.fetchrow(
            f"SELECT r.r_outcome, r.r_balance, (r.r_saga).fingerprint, {_SAGA_OF_R} "
            "FROM lobby_reserve_buy_in($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) r",
            new.saga_id,
            new.player_id,
            new.lounge_id,
            new.seat,
            new.amount,
            new.request.key,
            new.request.fingerprint,
            movement.key,
            movement.fingerprint,
            new.at,
            new.wait_for_big_blind,
        )
        assert row is not None
        outcome = row["r_outcome"]
        if outcome == "no_account":
            raise NoAccount(new.player_id)
        if outcome == "insufficient":
            raise InsufficientChips(int(row["r_balance"]), new.amount)
        if outcome == "first" and bytes(row["fingerprint"]) != new.request.fingerprint:
            raise RequestReused()
        return Reservation(_buy_in(row), int(row["r_balance"]))

    async def seated(self, saga_id: str, grant: SeatGrant) -> BuyIn:
        """One call of ``lobby_seat_buy_in`` (migration 0005), the transaction this method
        ran statement by statement: the table service is the authority on who sits where,
        so its seat replaces whatever the lobby's view had there."""
        row = await self.pool.fetchrow(
            f"SELECT {_BUY_IN} FROM lobby_seat_buy_in($1, $2, $3, $4)",  # a buy_ins row
            saga_id,
            grant.seat,
            grant.seat_token,
            grant.expires_at,
        )
        if row is None or row["saga_id"] is None:
            raise KeyError(saga_id)
        return _buy_in(row)

    def _unit(self) -> PgSagaUnit[BuyIn]:
        return PgSagaUnit(self.pool, "buy_ins", _COLUMNS, _buy_in)

    async def leaving(
        self, player_id: str, lounge_id: str, request: RequestKey, at: datetime
    ) -> BuyIn:
        async with self.pool.acquire() as conn, conn.transaction():
            # The player's account row serialises its sagas' transitions with its leaves.
            await lock_account(conn, player_id)
            first = await conn.fetchrow(
                f"SELECT r.fingerprint AS leave_fingerprint, {_BUY_IN_B} FROM leave_requests r "
                "JOIN buy_ins b USING (saga_id) WHERE r.request_key = $1",
                request.key,
            )
            if first is not None:
                if bytes(first["leave_fingerprint"]) != request.fingerprint:
                    raise RequestReused()
                return _buy_in(first)
            rows = await conn.fetch(
                f"SELECT {_BUY_IN} FROM buy_ins WHERE player_id = $1 AND lounge_id = $2 "
                "AND state = ANY($3::text[]) FOR UPDATE",
                player_id,
                lounge_id,
                [state.value for state in sagas.HELD],
            )
            held = [_buy_in(r) for r in rows]
            step = sagas.leaving(held, lounge_id)
            await conn.execute(
                "INSERT INTO leave_requests (request_key, fingerprint, saga_id) "
                "VALUES ($1, $2, $3)",
                request.key,
                request.fingerprint,
                step.saga.saga_id,
            )
            if step.saga in held:
                return step.saga
            row = await conn.fetchrow(
                f"UPDATE buy_ins SET state = $2 WHERE saga_id = $1 RETURNING {_BUY_IN}",
                step.saga.saga_id,
                step.saga.state.value,
            )
            assert row is not None
            return _buy_in(row)

    async def seated_saga(self, player_id: str, lounge_id: str) -> BuyIn | None:
        row = await self.pool.fetchrow(
            f"SELECT {_BUY_IN} FROM buy_ins WHERE player_id = $1 AND lounge_id = $2 "
            "AND state = 'seated' ORDER BY created_at LIMIT 1",
            player_id,
            lounge_id,
        )
        return None if row is None else _buy_in(row)

    async def busted_seen(self, saga_id: str, busted_hand: int, at: datetime) -> datetime:
        # One statement: a new bust (no row, or one of another hand) is recorded as seen now;
        # the same bust keeps its first sighting (the DO UPDATE's WHERE skips it, and the row
        # is read back). Concurrent passes serialise on the row's key.
        seen = await self.pool.fetchval(
            "WITH up AS (INSERT INTO busted_seats (saga_id, busted_hand, seen_at) "
            "VALUES ($1, $2, $3) ON CONFLICT (saga_id) DO UPDATE SET busted_hand = "
            "EXCLUDED.busted_hand, seen_at = EXCLUDED.seen_at "
            "WHERE busted_seats.busted_hand <> EXCLUDED.busted_hand RETURNING seen_at) "
            "SELECT seen_at FROM up UNION ALL "
            "SELECT seen_at FROM busted_seats WHERE saga_id = $1 AND busted_hand = $2 "
            "LIMIT 1",
            saga_id,
            busted_hand,
            at,
        )
        if seen is None:  # a concurrent pass inserted it after this statement's snapshot
            seen = await self.pool.fetchval(
                "SELECT seen_at FROM busted_seats WHERE saga_id = $1", saga_id
            )
        assert isinstance(seen, datetime)
        return seen

    async def busted_noted(self, saga_id: str) -> tuple[int, datetime] | None:
        row = await self.pool.fetchrow(
            "SELECT busted_hand, seen_at FROM busted_seats WHERE saga_id = $1", saga_id
        )
        return None if row is None else (row["busted_hand"], row["seen_at"])

    async def reserved_saga(self, player_id: str, lounge_id: str) -> BuyIn | None:
        row = await self.pool.fetchrow(
            f"SELECT {_BUY_IN} FROM buy_ins WHERE player_id = $1 AND lounge_id = $2 "
            "AND state = 'reserved' ORDER BY created_at, saga_id LIMIT 1",
            player_id,
            lounge_id,
        )
        return None if row is None else _buy_in(row)

    async def leaving_sagas(
        self, limit: int, after: tuple[datetime, str] | None = None
    ) -> list[BuyIn]:
        at, saga_id = after if after is not None else (None, "")
        rows = await self.pool.fetch(
            f"SELECT {_BUY_IN} FROM buy_ins WHERE state = 'leaving' "
            "AND ($2::timestamptz IS NULL OR (created_at, saga_id) > ($2, $3)) "
            "ORDER BY created_at, saga_id LIMIT $1",
            limit,
            at,
            saga_id,
        )
        return [_buy_in(r) for r in rows]
