"""The ``BuyIns`` port in memory, beside a ``MemoryLedger``, ``MemoryLounges`` and players."""

from __future__ import annotations

from datetime import datetime

from felt.storage.idempotency import RequestKey, RequestReused
from services.lobby.domain import sagas
from services.lobby.domain.transitions import BuyInTransitions
from services.lobby.memory._recovery import MemoryRecoveryRows
from services.lobby.memory._unit import MemorySagaUnit
from services.lobby.memory.ledger import MemoryLedger
from services.lobby.memory.lounges import MemoryLounges
from services.lobby.ports.buy_ins import (
    BUY_IN_LIVE_STATES,
    BuyIn,
    BuyInState,
    NewBuyIn,
    Reservation,
    reserve_key,
)
from services.lobby.ports.ledger import RETURNED_STATES, Kind, NoAccount
from services.lobby.ports.players import Players
from services.lobby.ports.tables import SeatGrant


class MemoryBuyIns(BuyInTransitions, MemoryRecoveryRows[BuyIn]):
    """The saga's rows beside a :class:`MemoryLedger` and :class:`MemoryLounges`: each
    transition runs with no suspension point between its checks and writes (the ledger's
    methods do not await anything), so it is atomic on one event loop. ``players`` gives a
    saga its player's display name (looked up before, names never change)."""

    _LIVE_STATES = BUY_IN_LIVE_STATES

    def __init__(self, ledger: MemoryLedger, lounges: MemoryLounges, players: Players) -> None:
        self.ledger, self.lounges, self.players = ledger, lounges, players
        ledger.lounges = lounges  # the audit reads the lounges' states
        self.sagas: dict[str, BuyIn] = {}
        self._requests: dict[str, tuple[bytes, str]] = {}
        self._leaves: dict[str, tuple[bytes, str]] = {}
        self.busted: dict[str, tuple[int, datetime]] = {}  # saga: (busted_hand, first seen)
        ledger.at_tables = self.at_tables  # a top-up counts them, as PgLedger reads buy_ins
        ledger.unsettled_lounges = self.unsettled_lounges  # as PgLedger.house_won reads them

    def unsettled_lounges(self, player_id: str) -> set[str]:
        """The lounges where the player has a seat (or a buy-in) whose chips are not home."""
        return {
            s.lounge_id
            for s in self.sagas.values()
            if s.player_id == player_id and s.state.value not in RETURNED_STATES
        }

    def at_tables(self, player_id: str) -> int:
        """The amounts of the player's sagas whose chips have not come back."""
        return sum(
            s.amount
            for s in self.sagas.values()
            if s.player_id == player_id and s.state.value not in RETURNED_STATES
        )

    async def reserve(self, new: NewBuyIn) -> Reservation:
        player = await self.players.get(new.player_id)
        if player is None:
            raise KeyError(new.player_id)
        # From here on nothing awaits anything that suspends: atomic on the event loop.
        first = self._requests.get(new.request.key)
        if first is not None:
            if first[0] != new.request.fingerprint:
                raise RequestReused()
            return Reservation(self.sagas[first[1]], self._balance(new.player_id))
        movement = await self.ledger.move(
            new.player_id,
            Kind.BUY_IN,
            new.amount,
            reserve_key(new.saga_id),
            new.at,
            new.lounge_id,
        )
        saga = sagas.reserved(new, player.display_name)
        self.sagas[saga.saga_id] = saga
        self._requests[new.request.key] = (new.request.fingerprint, saga.saga_id)
        return Reservation(saga, movement.balance_after)

    def _balance(self, player_id: str) -> int:
        account = self.ledger._accounts.get(player_id)
        if account is None:
            raise NoAccount(player_id)
        return account.balance

    async def seated(self, saga_id: str, grant: SeatGrant) -> BuyIn:
        saga = self.sagas[saga_id]
        step = sagas.seated(saga, grant)
        if step is None:
            return saga
        self.lounges.take_seat(step.lounge_id, step.taken)
        self.sagas[saga_id] = step.saga
        return step.saga

    def _unit(self) -> MemorySagaUnit[BuyIn]:
        return MemorySagaUnit(self.sagas, self.ledger, self.lounges)

    async def leaving(
        self, player_id: str, lounge_id: str, request: RequestKey, at: datetime
    ) -> BuyIn:
        first = self._leaves.get(request.key)
        if first is not None:
            if first[0] != request.fingerprint:
                raise RequestReused()
            return self.sagas[first[1]]
        theirs = (
            s for s in self.sagas.values() if (s.player_id, s.lounge_id) == (player_id, lounge_id)
        )
        step = sagas.leaving(theirs, lounge_id)
        self._leaves[request.key] = (request.fingerprint, step.saga.saga_id)
        self.sagas[step.saga.saga_id] = step.saga
        return step.saga

    async def seated_saga(self, player_id: str, lounge_id: str) -> BuyIn | None:
        found = [
            s
            for s in self.sagas.values()
            if s.player_id == player_id
            and s.lounge_id == lounge_id
            and s.state is BuyInState.SEATED
        ]
        return min(found, key=lambda s: s.created_at) if found else None

    async def busted_seen(self, saga_id: str, busted_hand: int, at: datetime) -> datetime:
        seen = self.busted.get(saga_id)
        if seen is None or seen[0] != busted_hand:
            seen = self.busted[saga_id] = (busted_hand, at)
        return seen[1]

    async def busted_noted(self, saga_id: str) -> tuple[int, datetime] | None:
        return self.busted.get(saga_id)

    async def reserved_saga(self, player_id: str, lounge_id: str) -> BuyIn | None:
        found = [
            s
            for s in self.sagas.values()
            if s.player_id == player_id
            and s.lounge_id == lounge_id
            and s.state is BuyInState.RESERVED
        ]
        return min(found, key=lambda s: (s.created_at, s.saga_id)) if found else None

    async def leaving_sagas(
        self, limit: int, after: tuple[datetime, str] | None = None
    ) -> list[BuyIn]:
        found = [
            s
            for s in self.sagas.values()
            if s.state is BuyInState.LEAVING
            and (after is None or (s.created_at, s.saga_id) > after)
        ]
        return sorted(found, key=lambda s: (s.created_at, s.saga_id))[:limit]
