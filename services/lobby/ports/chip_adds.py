"""The ``ChipAdds`` port: the add-chips saga's rows (chips from a player's balance to their
seat, between hands), each transition one transaction with its chips.

The saga is the buy-in's, on a seat already taken: **reserve** (the row RESERVED and a
``buy_in`` ledger movement keyed ``add-chips/<saga>``), then **added** (ADDED, with the
seat's stack after, as the table answered) or **compensate** (a ``cash_out`` refund keyed
``add-chips-refund/<saga>``, once, and COMPENSATED with the table's reason). The ledger's
kinds are the buy-in's, so "chips at tables = -(buy_in + cash_out + table_closed rows)"
holds throughout: a RESERVED saga's chips count as at the table, as a reserved buy-in's do.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from felt.storage.idempotency import RequestKey, server_key


class ChipAddState(enum.StrEnum):
    RESERVED = "reserved"  # the chips left the balance; the table may or may not have them
    ADDED = "added"  # the table added them to the seat's stack: committed
    COMPENSATED = "compensated"  # the table refused: the chips came back, once


CHIP_ADD_LIVE_STATES = (ChipAddState.RESERVED,)
"""The states a chip add leaves again: what ``count_by_state`` counts (partial index
``chip_adds_reserved_lounge``)."""


@dataclass(frozen=True, slots=True)
class NewChipAdd:
    saga_id: str  # derived from ``request``: also the table's request id and the ledger's keys
    player_id: str
    lounge_id: str
    buy_in_id: str  # the buy-in saga of the seat (SEATED when this one starts)
    seat: int
    seat_token: str  # the seat's token when reserved: every table call of the saga sends it
    amount: int
    max_stack: int  # the lounge's max_buy_in: the table refuses a stack above it
    request: RequestKey
    at: datetime


@dataclass(frozen=True, slots=True)
class ChipAdd:
    """One add-chips saga: what was asked, where it stands, and its outcome."""

    saga_id: str
    player_id: str
    lounge_id: str
    buy_in_id: str
    seat: int
    seat_token: str
    amount: int
    max_stack: int
    state: ChipAddState
    stack_after: int | None  # ADDED only: the seat's stack right after the chips went on
    refusal: str | None  # COMPENSATED only: the table service's reason
    created_at: datetime
    # RESERVED: the recovery pass's bookkeeping, as a buy-in's (``BuyIn.attempts`` ...)
    attempts: int = 0  # the pass's attempts since the saga was reserved (or requeued)
    last_attempt_at: datetime | None = None
    next_attempt_at: datetime | None = None  # None: due since it was reserved
    stuck_at: datetime | None = None  # set: the pass gave up; an operator resolves it
    last_error: str | None = None  # the last attempt's unknown outcome, for the operator


@dataclass(frozen=True, slots=True)
class ChipReservation:
    """What ``reserve`` answers: the saga (new, or a retry's first one) and the balance now."""

    chip_add: ChipAdd
    balance: int


def add_key(saga_id: str) -> RequestKey:
    """The ledger key of a saga's ``buy_in`` movement (the server's own: one per saga)."""
    return server_key("add-chips", saga_id, 0)


def add_request_id(saga_id: str) -> str:
    """The table service's request id for a saga's ``AddChips`` (the same on every retry)."""
    return f"add-chips/{saga_id}"


def add_refund_key(saga_id: str) -> RequestKey:
    """The ledger key of a saga's refund: a second refund of one saga is a retry."""
    return server_key("add-chips-refund", saga_id, 0)


class ChipAdds(Protocol):
    """The add-chips saga's state machine. A transition from any other state than the one it
    starts from changes nothing and returns the saga as it is, so each happens at most once."""

    async def reserve(self, new: NewChipAdd) -> ChipReservation:
        """Record the saga and take its chips from the balance, atomically; a retry (same key
        and fingerprint) finds the first saga and moves nothing. Raises
        ``InsufficientChips``, ``NoAccount`` or ``RequestReused`` (then nothing is written)."""
        ...

    async def first(self, request: RequestKey) -> ChipAdd | None:
        """The saga ``request`` started, if any (``RequestReused`` if with other content)."""
        ...

    async def added(self, saga_id: str, stack_after: int) -> ChipAdd:
        """RESERVED to ADDED, with the seat's stack after (no chips move: they are on it)."""
        ...

    async def compensate(self, saga_id: str, refusal: str, at: datetime) -> ChipAdd:
        """RESERVED to COMPENSATED, and the chips back to the balance (exactly once)."""
        ...

    async def get(self, saga_id: str) -> ChipAdd | None: ...

    async def unfinished(self, limit: int) -> list[ChipAdd]:
        """Sagas still RESERVED (stuck ones too), oldest first (an operator's listing)."""
        ...

    async def reserved_at(self, lounge_id: str) -> list[ChipAdd]:
        """The lounge's sagas still RESERVED, oldest first: a closing lounge drives them
        to ADDED or COMPENSATED before its seats are settled (none may be stranded)."""
        ...

    # The recovery pass's queue, exactly as ``BuyIns``' (see there): ``due`` longest due
    # first, ``attempting`` claims one attempt before the table is called, after bounded
    # attempts ``attempt_failed`` marks it stuck; ``requeue`` puts it back at once.

    async def due(self, now: datetime, limit: int) -> list[ChipAdd]: ...

    async def attempting(self, saga_id: str, at: datetime, next_at: datetime) -> ChipAdd | None: ...

    async def attempt_failed(
        self, saga_id: str, error: str, stuck_at: datetime | None
    ) -> ChipAdd: ...

    async def stuck(self, limit: int) -> list[ChipAdd]: ...

    async def count_stuck(self) -> int: ...

    async def count_by_state(self) -> dict[str, int]: ...

    async def requeue(self, saga_id: str) -> ChipAdd: ...

    async def held(self, player_id: str) -> int:
        """The chips of the player's RESERVED sagas: off the balance, not yet on a seat for
        sure (a top-up's "what the player has" counts them, as a reserved buy-in's)."""
        ...
