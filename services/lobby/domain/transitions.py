"""The ports' saga transitions, written once: each is :func:`~services.lobby.domain.unit.
transition` with its rule (:mod:`services.lobby.domain.sagas`), on the unit of work the
adapter provides (``_unit``: PostgreSQL's transaction, or the fakes' dicts). The adapters
and the fakes inherit them, so they differ only in storage."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from datetime import datetime

from felt.storage.idempotency import RequestKey
from services.lobby.domain import sagas
from services.lobby.domain.unit import SagaUnit, transition
from services.lobby.ports.buy_ins import BuyIn, BuyInState, cash_out_key, refund_key
from services.lobby.ports.chip_adds import ChipAdd, add_refund_key
from services.lobby.ports.closes import closed_key
from services.lobby.ports.ledger import Kind
from services.lobby.ports.tables import SeatGrant


class BuyInTransitions:
    """``BuyIns.compensate``, ``token_reissued``, ``leave_called``, ``left``,
    ``busted_freed`` and ``vacated``."""

    def _unit(self) -> AbstractAsyncContextManager[SagaUnit[BuyIn]]:
        raise NotImplementedError

    async def compensate(self, saga_id: str, refusal: str, at: datetime) -> BuyIn:
        refund = refund_key(saga_id)
        return await transition(
            self._unit(), saga_id, lambda s: sagas.compensated(s, refusal, refund), at
        )

    async def token_reissued(self, saga_id: str, grant: SeatGrant) -> BuyIn:
        return await transition(self._unit(), saga_id, lambda s: sagas.token_reissued(s, grant))

    async def leave_called(self, saga_id: str, sequence: int) -> BuyIn:
        return await transition(self._unit(), saga_id, lambda s: sagas.leave_called(s, sequence))

    async def left(self, saga_id: str, stack: int, at: datetime) -> BuyIn:
        return await self.vacated(
            saga_id, (BuyInState.LEAVING,), Kind.CASH_OUT, cash_out_key(saga_id), stack, at
        )

    async def busted_freed(self, saga_id: str, at: datetime) -> BuyIn:
        # A leave with nothing to cash out: the seat held 0 chips when the table freed it.
        return await self.vacated(saga_id, sagas.HELD, Kind.CASH_OUT, cash_out_key(saga_id), 0, at)

    async def vacated(
        self,
        saga_id: str,
        states: tuple[BuyInState, ...],
        kind: Kind,
        key: RequestKey,
        stack: int,
        at: datetime,
    ) -> BuyIn:
        """A vacated seat's saga from one of ``states`` to LEFT, its ``stack`` back to the
        balance as ``kind`` (ledger key ``key``, once; none for 0), its lounge seat freed,
        in one unit of work; from any other state nothing changes. A leave's cash-out
        (``left``) and a close's "table closed" (``CloseTransitions.settle``) are both this."""
        return await transition(
            self._unit(), saga_id, lambda s: sagas.vacated(s, states, kind, key, stack), at
        )


class ChipAddTransitions:
    """``ChipAdds.added`` and ``compensate``."""

    def _unit(self) -> AbstractAsyncContextManager[SagaUnit[ChipAdd]]:
        raise NotImplementedError

    async def added(self, saga_id: str, stack_after: int) -> ChipAdd:
        return await transition(self._unit(), saga_id, lambda s: sagas.chips_added(s, stack_after))

    async def compensate(self, saga_id: str, refusal: str, at: datetime) -> ChipAdd:
        refund = add_refund_key(saga_id)
        return await transition(
            self._unit(), saga_id, lambda s: sagas.compensated(s, refusal, refund), at
        )


class CloseTransitions:
    """``Closes.seen_seated`` and ``settle``, on the buy-ins' transitions (``buy_ins``)."""

    buy_ins: BuyInTransitions

    async def seen_seated(self, saga_id: str, sequence: int) -> BuyIn:
        return await transition(
            self.buy_ins._unit(), saga_id, lambda s: sagas.seen_seated(s, sequence)
        )

    async def settle(self, saga_id: str, stack: int, at: datetime) -> BuyIn:
        return await self.buy_ins.vacated(
            saga_id,
            (BuyInState.SEATED, BuyInState.LEAVING),
            Kind.TABLE_CLOSED,
            closed_key(saga_id),
            stack,
            at,
        )
