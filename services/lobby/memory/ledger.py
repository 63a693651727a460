"""The ``Ledger`` port in memory."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from felt.idempotency import RequestKey, RequestReused
from services.lobby.ports.ledger import (
    Account,
    InsufficientChips,
    Kind,
    Movement,
    NoAccount,
    Totals,
    check_top_up,
)


class MemoryLedger:
    def __init__(self) -> None:
        # The chips a player holds at tables (its unfinished buy-ins), which a top-up counts:
        # the buy-ins beside this ledger (``MemoryBuyIns``) set it; none without them.
        self.at_tables: Callable[[str], int] = lambda _player_id: 0
        self._accounts: dict[str, Account] = {}
        self._rows: list[Movement] = []
        self._keys: dict[str, tuple[bytes, Movement]] = {}

    def _first(self, request: RequestKey) -> Movement | None:
        first = self._keys.get(request.key)
        if first is None:
            return None
        if first[0] != request.fingerprint:
            raise RequestReused()
        return first[1]

    def _write(
        self,
        player_id: str,
        kind: Kind,
        delta: int,
        request: RequestKey,
        at: datetime,
        table_id: str | None,
    ) -> Movement:
        account = self._accounts[player_id]
        row = Movement(
            len(self._rows) + 1,
            player_id,
            kind,
            delta,
            account.balance + delta,
            table_id,
            at,
        )
        top_up = at if kind is Kind.TOP_UP else account.last_top_up_at
        self._accounts[player_id] = Account(player_id, row.balance_after, top_up)
        self._rows.append(row)
        self._keys[request.key] = (request.fingerprint, row)
        return row

    async def open(self, player_id: str, grant: int, request: RequestKey, at: datetime) -> Movement:
        first = self._first(request)
        if first is not None:
            return first
        if player_id in self._accounts:
            raise ValueError(f"{player_id} has an account already")
        self._accounts[player_id] = Account(player_id, 0, None)
        return self._write(player_id, Kind.GRANT, grant, request, at, None)

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
        first = self._first(request)
        if first is not None:
            return first
        account = self._accounts.get(player_id)
        if account is None:
            raise NoAccount(player_id)
        delta = kind.sign * amount
        if account.balance + delta < 0:
            raise InsufficientChips(account.balance, amount)
        return self._write(player_id, kind, delta, request, at, table_id)

    async def top_up(
        self,
        player_id: str,
        amount: int,
        below: int,
        cooldown: timedelta,
        request: RequestKey,
        at: datetime,
    ) -> Movement:
        first = self._first(request)
        if first is not None:
            return first
        account = self._accounts.get(player_id)
        if account is None:
            raise NoAccount(player_id)
        check_top_up(account, below, cooldown, at, self.at_tables(player_id))
        return self._write(player_id, Kind.TOP_UP, amount, request, at, None)

    async def account(self, player_id: str) -> Account | None:
        return self._accounts.get(player_id)

    async def entries(self, player_id: str, before: int | None, limit: int) -> list[Movement]:
        rows = [
            r
            for r in reversed(self._rows)
            if r.player_id == player_id and (before is None or r.entry_id < before)
        ]
        return rows[:limit]

    async def totals(self) -> Totals:
        created = sum(r.amount for r in self._rows if r.kind in (Kind.GRANT, Kind.TOP_UP))
        moved = sum(r.amount for r in self._rows if r.kind not in (Kind.GRANT, Kind.TOP_UP))
        return Totals(
            created,
            sum(a.balance for a in self._accounts.values()),
            -moved,
            sum(r.amount for r in self._rows),
        )
