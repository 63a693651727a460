"""The unit of work a saga transition runs in, and the one way a transition is applied.

A :class:`SagaUnit` is one transaction over a saga's row and the ledger: the saga read and
locked (its player's account first: the order a reservation takes), the credits written
once each by their ledger key, the lounge seat freed, the saga saved. The PostgreSQL
adapters open one on a connection in a transaction; the in-memory fakes on their dicts (no
await between its steps: atomic on one event loop). :func:`transition` is the rest, the
same for both: lock, decide by the pure rule (:mod:`services.lobby.domain.sagas`), apply.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Protocol, TypeVar

from services.lobby.domain.sagas import Credit, FreedSeat, Step
from services.lobby.ports.buy_ins import BuyIn
from services.lobby.ports.chip_adds import ChipAdd

S = TypeVar("S", BuyIn, ChipAdd)


class SagaUnit(Protocol[S]):
    async def locked(self, saga_id: str) -> S:
        """The saga, locked (with its player's account) until the unit ends; KeyError if
        there is none."""
        ...

    async def credit(self, credit: Credit, at: datetime) -> None:
        """``credit`` written to the ledger, unless its key was written already."""
        ...

    async def free_seat(self, seat: FreedSeat) -> None:
        """The lounge's view of ``seat`` freed (if its player still holds it there)."""
        ...

    async def save(self, saga: S) -> S:
        """The saga as stored now."""
        ...


async def transition(
    unit: AbstractAsyncContextManager[SagaUnit[S]],
    saga_id: str,
    decide: Callable[[S], Step[S] | None],
    at: datetime | None = None,
) -> S:
    """One transition of one saga, in one unit of work: the saga locked, ``decide`` asked
    (None: the saga as it is, nothing written), its credits (dated ``at``), freed seat and
    saga applied."""
    async with unit as work:
        saga = await work.locked(saga_id)
        step = decide(saga)
        if step is None:
            return saga
        for credit in step.credits:
            assert at is not None, "a transition that credits chips is dated"
            await work.credit(credit, at)
        if step.freed is not None:
            await work.free_seat(step.freed)
        return await work.save(step.saga)
