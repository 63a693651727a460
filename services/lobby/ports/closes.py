"""The ``Closes`` port: closing a lounge, and settling each of its seats' chips once.

A lounge closes (its owner's ``CloseLounge``, or its table ending by itself at its
hands or time limit) in steps the lobby drives again and again until done
(``services.lobby.closing``): OPEN to CLOSING (no more joins); the table closed
and every seat asked to leave; each player's seat, once vacated, settled (its
stack back to the balance as a ``table closed`` movement, key
``table-closed/<saga>``, the saga LEFT, the lounge's seat freed, in one
transaction); each AI seat, once vacated, settled the same way to the house
(``settle_ai``: its stack back as a ``house_return`` movement, the seat freed); then
CLOSED. Settling takes the saga from SEATED or LEAVING only,
under the same lock as a leave's cash-out, so each seat's chips come home once
whichever of the two gets there first.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from felt.storage.idempotency import RequestKey, server_key
from poker.events.v1 import events_pb2 as epb
from services.lobby.ports.buy_ins import BuyIn
from services.lobby.ports.lounges import Lounge


def closed_key(saga_id: str) -> RequestKey:
    """The ledger key of a saga's chips sent home by its table's closing: once per saga."""
    return server_key("table-closed", saga_id, 0)


def ends_by_itself(config: bytes) -> bool:
    """Whether a lounge's table closes at a limit (``max_hands`` or ``close_time``)."""
    table = epb.TableConfig.FromString(config)
    return bool(table.max_hands) or table.HasField("close_time")


class Closes(Protocol):
    async def mark_closing(self, lounge_id: str) -> Lounge:
        """OPEN to CLOSING (any other state stays); KeyError if there is no such lounge."""
        ...

    async def unsettled(self, lounge_id: str) -> list[BuyIn]:
        """The lounge's sagas still holding chips off the balances: RESERVED, SEATED or
        LEAVING, oldest first."""
        ...

    async def seen_seated(self, saga_id: str, sequence: int) -> BuyIn:
        """Record, on a SEATED or LEAVING saga with no ``leave_sequence`` yet, the table's
        ``sequence`` at which its seat was seen still held by its player (the first one is
        kept): the seat's ``PlayerLeft`` is after it. Any other saga is returned as it is."""
        ...

    async def settle(self, saga_id: str, stack: int, at: datetime) -> BuyIn:
        """SEATED or LEAVING to LEFT: ``stack`` back to the balance (a ``table closed``
        movement, :func:`closed_key`; none for 0), the lounge's seat freed, at once; from
        any other state nothing changes and the saga is returned as it is."""
        ...

    async def ai_seen_seated(self, lounge_id: str, seat: int, sequence: int) -> None:
        """Record on the lounge's AI seat with no ``leave_sequence`` yet the table's
        ``sequence`` at which it was seen still held (the first is kept): its
        ``PlayerLeft`` is after it. Any other seat is left as it is."""
        ...

    async def settle_ai(self, lounge_id: str, seat: int, stack: int, at: datetime) -> bool:
        """A vacated AI seat's ``stack`` back to the house (a ``house_return`` movement, key
        ``house_return_key``; none for 0, nor for a seat the house never funded) and the
        lounge's seat freed, at once; False (nothing changed) if that AI seat is gone."""
        ...

    async def mark_closed(self, lounge_id: str) -> Lounge:
        """CLOSING to CLOSED, its seats (the AI ones left) cleared; another state stays."""
        ...

    async def closing(self, limit: int) -> list[Lounge]:
        """Lounges CLOSING, oldest first (for the recovery pass)."""
        ...

    async def ending(self, after: int, limit: int) -> list[Lounge]:
        """OPEN lounges whose table ends by itself (:func:`ends_by_itself`), by listing id
        above ``after``, ascending (the recovery pass walks them a batch at a time)."""
        ...
