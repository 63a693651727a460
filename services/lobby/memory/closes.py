"""The ``Closes`` port in memory, on the rows of a ``MemoryBuyIns`` and its ``MemoryLounges``."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from services.lobby.domain import house
from services.lobby.domain.transitions import CloseTransitions
from services.lobby.memory.buy_ins import MemoryBuyIns
from services.lobby.ports.buy_ins import BuyIn, BuyInState
from services.lobby.ports.closes import ends_by_itself
from services.lobby.ports.ledger import HouseKind, house_return_key
from services.lobby.ports.lounges import Lounge, LoungeState

_UNSETTLED = (BuyInState.RESERVED, BuyInState.SEATED, BuyInState.LEAVING)


class MemoryCloses(CloseTransitions):
    """Each method does its work without awaiting between its checks and writes (the
    ledger's ``move`` awaits nothing), so it is atomic on one event loop."""

    buy_ins: MemoryBuyIns

    def __init__(self, buy_ins: MemoryBuyIns) -> None:
        self.buy_ins, self.lounges = buy_ins, buy_ins.lounges

    async def mark_closing(self, lounge_id: str) -> Lounge:
        return self.lounges.move(lounge_id, LoungeState.CLOSING)

    async def unsettled(self, lounge_id: str) -> list[BuyIn]:
        found = [
            s
            for s in self.buy_ins.sagas.values()
            if s.lounge_id == lounge_id and s.state in _UNSETTLED
        ]
        return sorted(found, key=lambda s: s.created_at)

    async def ai_seen_seated(self, lounge_id: str, seat: int, sequence: int) -> None:
        lounge = self.lounges._lounges[lounge_id]
        seats = tuple(
            replace(s, leave_sequence=sequence)
            if s.seat == seat and s.ai_level and s.leave_sequence is None
            else s
            for s in lounge.seats
        )
        self.lounges._lounges[lounge_id] = replace(lounge, seats=seats)

    async def settle_ai(self, lounge_id: str, seat: int, stack: int, at: datetime) -> bool:
        lounge = self.lounges._lounges[lounge_id]
        ledger = self.buy_ins.ledger
        settled = house.settle_ai(
            any(s.seat == seat and s.ai_level for s in lounge.seats),
            ledger.house_funded(lounge_id, seat),
            stack,
        )
        if settled is None:
            return False
        if settled.returned:
            ledger.house_write(
                HouseKind.HOUSE_RETURN,
                settled.returned,
                lounge_id,
                seat,
                house_return_key(lounge_id, seat, settled.returned),
                at,
            )
        seats = tuple(s for s in lounge.seats if s.seat != seat)
        self.lounges._lounges[lounge_id] = replace(lounge, seats=seats)
        return True

    async def mark_closed(self, lounge_id: str) -> Lounge:
        return self.lounges.move(lounge_id, LoungeState.CLOSED)

    async def closing(self, limit: int) -> list[Lounge]:
        found = [x for x in self.lounges._lounges.values() if x.state is LoungeState.CLOSING]
        return sorted(found, key=lambda x: x.created_at)[:limit]

    async def ending(self, after: int, limit: int) -> list[Lounge]:
        found = [
            x
            for x in self.lounges._lounges.values()
            if x.state is LoungeState.OPEN and x.listing_id > after and ends_by_itself(x.config)
        ]
        return sorted(found, key=lambda x: x.listing_id)[:limit]
