"""The ``Ledger`` port in memory."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from felt.storage.idempotency import RequestKey, RequestReused
from services.lobby.domain import house
from services.lobby.domain import ledger as rules
from services.lobby.ports.ledger import (
    Account,
    AiRefill,
    Audit,
    HouseKind,
    HouseMovement,
    Kind,
    Movement,
    NoAccount,
    RefillState,
    Totals,
    Winner,
    house_return_key,
    house_seat_key,
    refill_key,
    refill_return_key,
)
from services.lobby.ports.lounges import LoungeState

if TYPE_CHECKING:
    from services.lobby.memory.lounges import MemoryLounges

_CREATED = (Kind.GRANT, Kind.TOP_UP)


class MemoryLedger:
    """``lounges`` (set by :class:`~services.lobby.memory.MemoryBuyIns` beside it) lets the
    audit read lounges' states, as the adapter's query joins them."""

    def __init__(self) -> None:
        # The chips a player holds at tables (its unfinished buy-ins), which a top-up counts:
        # the buy-ins beside this ledger (``MemoryBuyIns``) set it; none without them.
        self.at_tables: Callable[[str], int] = lambda _player_id: 0
        # The lounges where the player's seat has not come home yet (set likewise): their rows
        # are not a result yet, so the house's daily limit does not count them.
        self.unsettled_lounges: Callable[[str], set[str]] = lambda _player_id: set()
        self._accounts: dict[str, Account] = {}
        self._rows: list[Movement] = []
        self._keys: dict[str, tuple[bytes, Movement]] = {}
        self._house_rows: list[HouseMovement] = []
        self._house_keys: dict[str, tuple[bytes, HouseMovement]] = {}
        self.lounges: MemoryLounges | None = None
        self._refills: dict[tuple[str, int, int], AiRefill] = {}

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
        delta = rules.movement(kind, amount)
        first = self._first(request)
        if first is not None:
            return first
        account = self._accounts.get(player_id)
        if account is None:
            raise NoAccount(player_id)
        rules.balance_after(account.balance, delta)
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
        rules.top_up(account, amount, below, cooldown, at, self.at_tables(player_id))
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

    def house_write(
        self,
        kind: HouseKind,
        delta: int,
        lounge_id: str,
        seat: int,
        request: RequestKey,
        at: datetime,
    ) -> HouseMovement:
        """One house movement (awaits nothing: atomic on the event loop); a retry finds the
        first."""
        first = self._house_keys.get(request.key)
        if first is not None:
            if first[0] != request.fingerprint:
                raise RequestReused()
            return first[1]
        row = HouseMovement(
            len(self._house_rows) + 1,
            kind,
            delta,
            self._house_balance() + delta,
            lounge_id,
            seat,
            at,
        )
        self._house_rows.append(row)
        self._house_keys[request.key] = (request.fingerprint, row)
        return row

    def _house_balance(self) -> int:
        return self._house_rows[-1].balance_after if self._house_rows else 0

    def house_funded(self, lounge_id: str, seat: int) -> bool:
        return house_seat_key(lounge_id, seat, 0).key in self._house_keys

    async def fund_ai_seat(
        self, lounge_id: str, seat: int, amount: int, at: datetime
    ) -> HouseMovement:
        delta = house.funding(amount)
        key = house_seat_key(lounge_id, seat, amount)
        return self.house_write(HouseKind.HOUSE_SEAT, delta, lounge_id, seat, key, at)

    async def fund_ai_refill(
        self, lounge_id: str, seat: int, amount: int, at: datetime, since: datetime, most: int
    ) -> AiRefill | None:
        delta = house.funding(amount)
        lounge = None if self.lounges is None else self.lounges._lounges.get(lounge_id)
        if (
            lounge is None
            or lounge.state is not LoungeState.OPEN
            or not any(s.seat == seat and s.ai_level for s in lounge.seats)
        ):
            return None
        mine = [r for r in self._refills.values() if (r.lounge_id, r.seat) == (lounge_id, seat)]
        for r in mine:
            if r.state is RefillState.FUNDED:
                return r
        if sum(r.state is RefillState.ADDED and r.created_at >= since for r in mine) >= most:
            return None
        n = max((r.n for r in mine), default=0) + 1
        key = refill_key(lounge_id, seat, n, amount)
        self.house_write(HouseKind.HOUSE_SEAT, delta, lounge_id, seat, key, at)
        refill = AiRefill(lounge_id, seat, n, amount, RefillState.FUNDED, at)
        self._refills[(lounge_id, seat, n)] = refill
        return refill

    async def ai_refill_added(self, lounge_id: str, seat: int, n: int) -> AiRefill:
        refill = self._refills[(lounge_id, seat, n)]
        if refill.state is RefillState.RETURNED:
            raise ValueError(f"refill {n} of seat {seat} was returned to the house")
        refill = replace(refill, state=RefillState.ADDED)
        self._refills[(lounge_id, seat, n)] = refill
        return refill

    async def return_ai_refill(self, lounge_id: str, seat: int, n: int, at: datetime) -> AiRefill:
        refill = self._refills[(lounge_id, seat, n)]
        if refill.state is RefillState.ADDED:
            raise ValueError(f"refill {n} of seat {seat} is on the seat")
        if refill.state is RefillState.RETURNED:
            return refill
        key = refill_return_key(lounge_id, seat, n, refill.amount)
        self.house_write(HouseKind.HOUSE_RETURN, refill.amount, lounge_id, seat, key, at)
        refill = replace(refill, state=RefillState.RETURNED)
        self._refills[(lounge_id, seat, n)] = refill
        return refill

    async def funded_ai_refills(self, lounge_id: str, limit: int) -> list[AiRefill]:
        found = [
            r
            for r in self._refills.values()
            if r.state is RefillState.FUNDED and r.lounge_id == lounge_id
        ]
        return sorted(found, key=lambda r: (r.created_at, r.seat))[:limit]

    async def refund_ai_seats(self, lounge_id: str, at: datetime) -> int:
        returned = {
            r.seat
            for r in self._house_rows
            if r.lounge_id == lounge_id and r.kind is HouseKind.HOUSE_RETURN
        }
        funded = [
            r
            for r in self._house_rows
            if r.lounge_id == lounge_id
            and r.kind is HouseKind.HOUSE_SEAT
            and r.seat not in returned
        ]
        for r in sorted(funded, key=lambda r: r.seat):
            self.house_write(
                HouseKind.HOUSE_RETURN,
                -r.amount,
                lounge_id,
                r.seat,
                house_return_key(lounge_id, r.seat, -r.amount),
                at,
            )
        return sum(-r.amount for r in funded)

    async def house(self) -> int:
        return self._house_balance()

    async def audit(self) -> Audit:
        totals = await self.totals()
        at_lounge: dict[str, int] = defaultdict(int)
        for r in self._rows:
            if r.kind not in _CREATED and r.table_id is not None:
                at_lounge[r.table_id] -= r.amount
        for h in self._house_rows:
            at_lounge[h.lounge_id] -= h.amount
        lounges = self.lounges._lounges if self.lounges is not None else {}
        known = {lid: chips for lid, chips in at_lounge.items() if lid in lounges}
        house_sum = sum(h.amount for h in self._house_rows)
        return Audit(
            totals.created,
            totals.balances,
            totals.on_tables - house_sum,
            self._house_balance(),
            totals.ledger_sum,
            house_sum,
            sum(1 for chips in known.values() if chips < 0),
            sum(
                1
                for lid, chips in known.items()
                if chips and lounges[lid].state.value in ("closed", "failed")
            ),
        )

    async def house_won(self, player_id: str, since: datetime) -> int:
        house_lounges = {h.lounge_id for h in self._house_rows}
        held = self.unsettled_lounges(player_id)
        return sum(
            r.amount
            for r in self._rows
            if r.player_id == player_id
            and r.kind not in _CREATED
            and r.table_id in house_lounges
            and r.table_id not in held
            and r.created_at >= since
        )

    async def house_winners(self, since: datetime | None, limit: int) -> list[Winner]:
        house_lounges = {h.lounge_id for h in self._house_rows}
        won: dict[str, int] = defaultdict(int)
        for r in self._rows:
            if (
                r.kind not in _CREATED
                and r.table_id in house_lounges
                and (since is None or r.created_at >= since)
            ):
                won[r.player_id] += r.amount
        ranked = sorted(
            (Winner(p, w) for p, w in won.items() if w > 0), key=lambda x: (-x.won, x.player_id)
        )
        return ranked[:limit]
