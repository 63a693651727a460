"""The ``BuyIns`` port: the buy-in saga's rows and their transitions, each with its chips."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from felt.idempotency import RequestKey, server_key
from services.lobby.ports.tables import SeatGrant


class BuyInState(enum.StrEnum):
    RESERVED = "reserved"  # the chips left the balance; the table may or may not have seated
    SEATED = "seated"  # the table seated the player with them: committed
    COMPENSATED = "compensated"  # the table refused: the chips came back, once


@dataclass(frozen=True, slots=True)
class NewBuyIn:
    saga_id: str  # derived from ``request``: also the table's request id and the ledger's keys
    player_id: str
    display_name: str
    lounge_id: str
    seat: int | None  # asked for; None: the next free one
    amount: int
    request: RequestKey
    at: datetime


@dataclass(frozen=True, slots=True)
class BuyIn:
    """One buy-in saga: what was asked, where it stands, and its outcome."""

    saga_id: str
    player_id: str
    display_name: str
    lounge_id: str
    seat: int | None  # RESERVED: as asked; SEATED: the seat taken
    amount: int
    state: BuyInState
    seat_token: str | None  # SEATED only: the player's secret at the table
    seat_token_expires_at: datetime | None
    refusal: str | None  # COMPENSATED only: the table service's reason
    created_at: datetime


def reserve_key(saga_id: str) -> RequestKey:
    """The ledger key of a saga's buy-in movement (the server's own: one per saga)."""
    return server_key("buy-in", saga_id, 0)


def refund_key(saga_id: str) -> RequestKey:
    """The ledger key of a saga's refund: a second refund of one saga is a retry."""
    return server_key("buy-in-refund", saga_id, 0)


class BuyIns(Protocol):
    """The buy-in saga's state machine, each transition one transaction with its chips:
    ``reserve`` (the row RESERVED and the buy-in movement ``buy-in/<saga>``), then ``seated``
    (SEATED and the lounge's seat) or ``compensate`` (the refund movement
    ``buy-in/<saga>/refund`` and COMPENSATED). A transition from any other state changes
    nothing and returns the saga as it is, so each happens at most once."""

    async def reserve(self, new: NewBuyIn) -> BuyIn:
        """Record the saga and take its chips from the balance, atomically; a retry (same key
        and fingerprint) finds the first saga. Raises :class:`InsufficientChips`,
        :class:`NoAccount` or ``RequestReused`` (and then nothing is written)."""
        ...

    async def seated(self, saga_id: str, grant: SeatGrant) -> BuyIn:
        """RESERVED to SEATED at ``grant``'s seat, and the seat in the lounge's seats."""
        ...

    async def compensate(self, saga_id: str, refusal: str, at: datetime) -> BuyIn:
        """RESERVED to COMPENSATED, and the chips back to the balance (exactly once)."""
        ...

    async def get(self, saga_id: str) -> BuyIn | None: ...

    async def unfinished(self, limit: int) -> list[BuyIn]:
        """Sagas still RESERVED, oldest first (for the recovery pass)."""
        ...
