"""The ``BuyIns`` port: the buy-in saga's rows and their transitions, each with its chips."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from felt.storage.idempotency import RequestKey, server_key
from services.lobby.ports.tables import SeatGrant


class BuyInState(enum.StrEnum):
    RESERVED = "reserved"  # the chips left the balance; the table may or may not have seated
    SEATED = "seated"  # the table seated the player with them: committed
    COMPENSATED = "compensated"  # the table refused: the chips came back, once
    LEAVING = "leaving"  # the player asked to leave: the seat's chips come back when vacated
    LEFT = "left"  # the seat was vacated: its stack came back to the balance, once


BUY_IN_LIVE_STATES = (BuyInState.RESERVED, BuyInState.SEATED, BuyInState.LEAVING)
"""The states a buy-in leaves again: what ``count_by_state`` counts (the partial index
``buy_ins_lounge_unsettled`` holds exactly these rows; the finished ones grow for ever)."""


@dataclass(frozen=True, slots=True)
class NewBuyIn:
    saga_id: str  # derived from ``request``: also the table's request id and the ledger's keys
    player_id: str  # the saga records the player's display name (the players' store's)
    lounge_id: str
    seat: int | None  # asked for; None: the next free one
    amount: int
    request: RequestKey
    at: datetime
    # Seat the player waiting for the big blind (Hold'em): kept with the saga, so that a
    # retry or the recovery pass seats the player with the same choice.
    wait_for_big_blind: bool = False


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
    leave_sequence: int | None = None  # LEAVING/LEFT: the table's sequence of the leave call
    left_stack: int | None = None  # LEFT only: the chips the seat left with (cashed out)
    # RESERVED: the recovery pass's bookkeeping (``due``, ``attempting``, ``attempt_failed``)
    attempts: int = 0  # the pass's attempts since the saga was reserved (or requeued)
    last_attempt_at: datetime | None = None
    next_attempt_at: datetime | None = None  # None: due since it was reserved
    stuck_at: datetime | None = None  # set: the pass gave up; an operator resolves it
    last_error: str | None = None  # the last attempt's unknown outcome, for the operator
    wait_for_big_blind: bool = False  # as asked: the table seats the player waiting for it


@dataclass(frozen=True, slots=True)
class Reservation:
    """What ``reserve`` answers: the saga (new, or a retry's first one) and the player's
    balance as the reservation left it (so a join needs no second look at the account)."""

    buy_in: BuyIn
    balance: int


def reserve_key(saga_id: str) -> RequestKey:
    """The ledger key of a saga's buy-in movement (the server's own: one per saga)."""
    return server_key("buy-in", saga_id, 0)


def refund_key(saga_id: str) -> RequestKey:
    """The ledger key of a saga's refund: a second refund of one saga is a retry."""
    return server_key("buy-in-refund", saga_id, 0)


def cash_out_key(saga_id: str) -> RequestKey:
    """The ledger key of a saga's cash-out when its seat is vacated: once per saga."""
    return server_key("cash-out", saga_id, 0)


class NotSeated(Exception):
    """The player has no seat at that lounge to leave."""


class BuyIns(Protocol):
    """The buy-in saga's state machine, each transition one transaction with its chips:
    ``reserve`` (the row RESERVED and the buy-in movement ``buy-in/<saga>``), then ``seated``
    (SEATED and the lounge's seat) or ``compensate`` (the refund movement
    ``buy-in/<saga>/refund`` and COMPENSATED). A transition from any other state changes
    nothing and returns the saga as it is, so each happens at most once."""

    async def reserve(self, new: NewBuyIn) -> Reservation:
        """Record the saga (with the player's display name) and take its chips from the
        balance, atomically; a retry (same key and fingerprint) finds the first saga. Raises
        :class:`InsufficientChips`, :class:`NoAccount` (the player has no account yet: open
        it, then reserve again) or ``RequestReused`` (and then nothing is written)."""
        ...

    async def seated(self, saga_id: str, grant: SeatGrant) -> BuyIn:
        """RESERVED to SEATED at ``grant``'s seat, and the seat in the lounge's seats."""
        ...

    async def compensate(self, saga_id: str, refusal: str, at: datetime) -> BuyIn:
        """RESERVED to COMPENSATED, and the chips back to the balance (exactly once)."""
        ...

    async def leaving(
        self, player_id: str, lounge_id: str, request: RequestKey, at: datetime
    ) -> BuyIn:
        """The leave asked for: the player's SEATED saga at the lounge to LEAVING, recorded
        with ``request``. A retry (same key and fingerprint) finds its saga in whatever state
        it is now; a second leave of a seat already LEAVING returns it as is (one cash-out
        either way). Raises :class:`NotSeated` or ``RequestReused`` (nothing written)."""
        ...

    async def leave_called(self, saga_id: str, sequence: int) -> BuyIn:
        """Record the table's sequence of the ``LeaveSeat`` call (LEAVING only, first one
        kept): the seat's ``PlayerLeft`` is at or after it."""
        ...

    async def left(self, saga_id: str, stack: int, at: datetime) -> BuyIn:
        """LEAVING to LEFT: the cash-out of ``stack`` (key ``cash-out/<saga>``, once), the
        lounge's seat freed, in one transaction; from any other state nothing changes."""
        ...

    async def seated_saga(self, player_id: str, lounge_id: str) -> BuyIn | None:
        """The player's SEATED saga at the lounge (its seat now), or None."""
        ...

    async def busted_seen(self, saga_id: str, busted_hand: int, at: datetime) -> datetime:
        """When the busted seats' pass first saw the saga's seat busted since ``busted_hand``
        (the table's ``Seat.busted_hand``): recorded as ``at`` if this is the first sighting
        of that bust (none before, or one since another hand: the seat had chips added and
        lost them again, so its grace starts anew). One record per saga; concurrent passes
        agree on the first."""
        ...

    async def busted_noted(self, saga_id: str) -> tuple[int, datetime] | None:
        """The saga's recorded bust (``busted_hand``, first seen at), if any."""
        ...

    async def busted_freed(self, saga_id: str, at: datetime) -> BuyIn:
        """The table freed the saga's busted seat (its conditional ``LeaveSeat`` answered,
        ``PlayerLeft`` with 0 chips): SEATED or LEAVING to LEFT with a stack of 0 (no
        cash-out: nothing is left), the lounge's seat freed, in one transaction; from any
        other state nothing changes."""
        ...

    async def reserved_saga(self, player_id: str, lounge_id: str) -> BuyIn | None:
        """The player's oldest RESERVED saga at the lounge (a buy-in under way), or None."""
        ...

    async def token_reissued(self, saga_id: str, grant: SeatGrant) -> BuyIn:
        """The seat's fresh token and expiry (``grant``) replace the stored ones (SEATED or
        LEAVING: the table now knows only the new token); from any other state nothing
        changes."""
        ...

    async def get(self, saga_id: str) -> BuyIn | None: ...

    async def unfinished(self, limit: int) -> list[BuyIn]:
        """Sagas still RESERVED (stuck ones too), oldest first (an operator's listing)."""
        ...

    async def due(self, now: datetime, limit: int) -> list[BuyIn]:
        """RESERVED sagas, not stuck, due by ``now`` (``next_attempt_at``, or never attempted),
        longest due first (then by id): the recovery pass's queue. A saga the pass failed
        to finish is due again only at its ``next_attempt_at``, behind every saga due
        before it, so no set of sagas can keep another out."""
        ...

    async def attempting(self, saga_id: str, at: datetime, next_at: datetime) -> BuyIn | None:
        """Claim the saga for one attempt of the pass, before the table service is called:
        ``attempts`` + 1, ``last_attempt_at`` = ``at``, due again at ``next_at`` (so a crash
        or a call that hangs still moves it back in the queue). None (nothing changed)
        unless it is RESERVED, not stuck and due at ``at``: finished meanwhile, or another
        pass (another lobby process) claimed it first."""
        ...

    async def attempt_failed(self, saga_id: str, error: str, stuck_at: datetime | None) -> BuyIn:
        """The attempt's outcome stayed unknown: ``error`` recorded (cut to 500 characters),
        and with ``stuck_at`` the saga is stuck (out of the queue until requeued or
        resolved). RESERVED only; else the saga as it is."""
        ...

    async def stuck(self, limit: int) -> list[BuyIn]:
        """RESERVED sagas the pass gave up on, longest stuck first."""
        ...

    async def count_stuck(self) -> int:
        """How many RESERVED sagas are stuck (the operator's gauge)."""
        ...

    async def count_by_state(self) -> dict[str, int]:
        """How many sagas are in each of :data:`BUY_IN_LIVE_STATES` (a state with none is
        absent): the operator's ``felt_lobby_sagas`` gauge, so a pile of RESERVED or LEAVING
        shows before it hurts. The finished states are not counted (every saga ever)."""
        ...

    async def requeue(self, saga_id: str) -> BuyIn:
        """Back in the pass's queue at once, in its first place (due since it was reserved,
        whatever the caller's clock says), its attempts reset and its stuck mark and error
        cleared. RESERVED only; else the saga as it is."""
        ...

    async def leaving_sagas(
        self, limit: int, after: tuple[datetime, str] | None = None
    ) -> list[BuyIn]:
        """Sagas LEAVING (their seat not yet known vacated), oldest first (by ``created_at``,
        then id), those after ``after`` only: the recovery pass walks them page by page, so
        leaves that wait long (a hand in play, a refused leave) do not keep the others out."""
        ...
