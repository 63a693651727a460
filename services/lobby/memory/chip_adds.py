"""The ``ChipAdds`` port in memory, beside a ``MemoryLedger``."""

from __future__ import annotations

from felt.storage.idempotency import RequestKey, RequestReused
from services.lobby.domain import sagas
from services.lobby.domain.transitions import ChipAddTransitions
from services.lobby.memory._recovery import MemoryRecoveryRows
from services.lobby.memory._unit import MemorySagaUnit
from services.lobby.memory.buy_ins import MemoryBuyIns
from services.lobby.memory.ledger import MemoryLedger
from services.lobby.ports.chip_adds import (
    CHIP_ADD_LIVE_STATES,
    ChipAdd,
    ChipAddState,
    ChipReservation,
    NewChipAdd,
    add_key,
)
from services.lobby.ports.ledger import RETURNED_STATES, Kind, NoAccount


class MemoryChipAdds(ChipAddTransitions, MemoryRecoveryRows[ChipAdd]):
    """The saga's rows beside a :class:`MemoryLedger`: each transition runs with no
    suspension point between its checks and writes, so it is atomic on one event loop."""

    _LIVE_STATES = CHIP_ADD_LIVE_STATES

    def __init__(self, ledger: MemoryLedger, buy_ins: MemoryBuyIns | None = None) -> None:
        self.ledger = ledger
        self.sagas: dict[str, ChipAdd] = {}
        self._requests: dict[str, tuple[bytes, str]] = {}
        if buy_ins is not None:  # a top-up counts added chips too, as PgLedger reads them
            before = ledger.at_tables

            def at_tables(player_id: str) -> int:
                return before(player_id) + sum(
                    s.amount
                    for s in self.sagas.values()
                    if s.player_id == player_id
                    and s.state is not ChipAddState.COMPENSATED
                    and (seat := buy_ins.sagas.get(s.buy_in_id)) is not None
                    and seat.state.value not in RETURNED_STATES
                )

            ledger.at_tables = at_tables

    def _first(self, request: RequestKey) -> ChipAdd | None:
        first = self._requests.get(request.key)
        if first is None:
            return None
        if first[0] != request.fingerprint:
            raise RequestReused()
        return self.sagas[first[1]]

    async def reserve(self, new: NewChipAdd) -> ChipReservation:
        account = self.ledger._accounts.get(new.player_id)
        if account is None:
            raise NoAccount(new.player_id)
        first = self._first(new.request)
        if first is not None:
            return ChipReservation(first, account.balance)
        movement = await self.ledger.move(
            new.player_id, Kind.BUY_IN, new.amount, add_key(new.saga_id), new.at, new.lounge_id
        )
        saga = sagas.chips_reserved(new)
        self.sagas[saga.saga_id] = saga
        self._requests[new.request.key] = (new.request.fingerprint, saga.saga_id)
        return ChipReservation(saga, movement.balance_after)

    async def first(self, request: RequestKey) -> ChipAdd | None:
        return self._first(request)

    def _unit(self) -> MemorySagaUnit[ChipAdd]:
        return MemorySagaUnit(self.sagas, self.ledger)

    async def reserved_at(self, lounge_id: str) -> list[ChipAdd]:
        return [s for s in await self.unfinished(len(self.sagas)) if s.lounge_id == lounge_id]

    async def held(self, player_id: str) -> int:
        return sum(
            s.amount
            for s in self.sagas.values()
            if s.player_id == player_id and s.state is ChipAddState.RESERVED
        )
