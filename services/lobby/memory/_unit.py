"""The saga unit of work in memory (``services.lobby.domain.unit``): the fakes' dicts and
ledger, each step without a suspension point between a check and its write, so a
transition is atomic on one event loop as the adapter's transaction is."""

from __future__ import annotations

from datetime import datetime
from typing import Generic, TypeVar

from services.lobby.domain.sagas import Credit, FreedSeat
from services.lobby.memory.ledger import MemoryLedger
from services.lobby.memory.lounges import MemoryLounges
from services.lobby.ports.buy_ins import BuyIn
from services.lobby.ports.chip_adds import ChipAdd

S = TypeVar("S", BuyIn, ChipAdd)


class MemorySagaUnit(Generic[S]):
    """A :class:`~services.lobby.domain.unit.SagaUnit` over ``sagas`` beside ``ledger`` (and
    ``lounges``, whose seats a vacated saga frees)."""

    def __init__(
        self, sagas: dict[str, S], ledger: MemoryLedger, lounges: MemoryLounges | None = None
    ) -> None:
        self.sagas: dict[str, S] = sagas
        self.ledger, self.lounges = ledger, lounges

    async def __aenter__(self) -> MemorySagaUnit[S]:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None  # nothing to commit or roll back: each step was written as it was made

    async def locked(self, saga_id: str) -> S:
        return self.sagas[saga_id]

    async def credit(self, credit: Credit, at: datetime) -> None:
        # The ledger writes a key once (a second move with it returns the first).
        await self.ledger.move(
            credit.player_id, credit.kind, credit.amount, credit.key, at, credit.lounge_id
        )

    async def free_seat(self, seat: FreedSeat) -> None:
        assert self.lounges is not None, "this store frees no seats"
        self.lounges.free_seat(seat)

    async def save(self, saga: S) -> S:
        self.sagas[saga.saga_id] = saga
        return saga
