"""The ``Tables`` port: the table service as the lobby (its service credential) sees it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from poker.v1.reason_pb2 import Reason


@dataclass(frozen=True, slots=True)
class SeatGrant:
    """A seat taken at a table: the seat, its token (a secret for its player) and expiry."""

    seat: int
    seat_token: str
    expires_at: datetime | None  # None: never
    sequence: int = 0  # the table's sequence with the player seated (its PlayerSeated)


@dataclass(frozen=True, slots=True)
class Occupants:
    """A table's seats as ``GetTable`` shows them: who sits where, at which sequence."""

    sequence: int
    closed: bool
    seats: tuple[tuple[int, str], ...]  # (seat, player id) of each taken seat


@dataclass(frozen=True, slots=True)
class Departure:
    """The table's answer to a leave: the chips behind the seat then (final if it was not
    dealt in) and the table's sequence after the call."""

    stack: int
    sequence: int


@dataclass(frozen=True, slots=True)
class WatchGrant:
    """A watch grant for a table (a spectator's bearer token for a private one) and when it
    expires."""

    token: str
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class SeatNow:
    """One seat as the table shows it now: who sits there, with what behind, and whether the
    hand in play has them dealt in (as far as a view can tell: the table decides)."""

    player_id: str
    stack: int
    in_hand: bool
    busted_hand: int = 0  # the hand whose end left it with no chips (Seat.busted_hand); 0: none


@dataclass(frozen=True, slots=True)
class ChipsAdded:
    """The table's answer to an add of chips: the seat's stack after, and its sequence."""

    stack: int
    sequence: int


class TableRefused(Exception):
    """The table service definitely refused the call (a bad config, a taken seat, ...):
    retrying the same request will not change the answer."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason, self.message = reason, message  # the reason's name, as the wire has it

    @classmethod
    def of(cls, reason: Reason.ValueType, message: str) -> TableRefused:
        """The refusal the table service sends with the declared ``reason``."""
        return cls(Reason.Name(reason), message)

    def means(self, reason: Reason.ValueType) -> bool:
        """Whether the table service refused with the declared ``reason``."""
        return self.reason == Reason.Name(reason)


class TablesUnavailable(Exception):
    """The call's outcome is unknown (unreachable, deadline passed): retry with the same
    request id, which the table service answers as the first time."""


class Tables(Protocol):
    """The table service, as the lobby's admin client sees it. Every call is idempotent by
    its ``request_id`` (scoped to the lobby's admin credential)."""

    async def create(self, table_id: str, name: str, config: bytes, request_id: str) -> None: ...

    async def seat(
        self,
        table_id: str,
        seat: int | None,
        player_id: str,
        display_name: str,
        stack: int,
        ai_level: int,
        request_id: str,
        *,
        wait_for_big_blind: bool = False,
    ) -> SeatGrant:
        """``SeatPlayer`` (the admin's): ``wait_for_big_blind`` seats the player waiting for
        the big blind (Hold'em; else ``TableRefused`` NO_BIG_BLIND)."""
        ...

    async def leave(
        self,
        table_id: str,
        seat: int,
        seat_token: str,
        request_id: str,
        *,
        busted_hand: int | None = None,
    ) -> Departure:
        """``LeaveSeat`` as the seat (its token; "": for whoever sits there, as closing a table
        does): the seat is vacated now, or, dealt in, when the hand in play ends. With
        ``busted_hand`` the conditional leave of a busted seat: ``TableRefused`` NOT_BUSTED,
        nothing changed, unless the seat (this token's) is still at 0 chips, out of the hand
        in play and busted since that hand; then vacated at once with 0."""
        ...

    async def reissue(self, table_id: str, seat: int, player_id: str, request_id: str) -> SeatGrant:
        """``ReissueSeatToken``: a fresh token for ``seat``'s occupant, who must be
        ``player_id`` (else ``TableRefused`` NOT_OCCUPANT); every earlier token of the seat
        stops working. A retry with the same request id gets the same token."""
        ...

    async def seat_now(self, table_id: str, seat: int) -> SeatNow | None:
        """``GetTableView`` as a spectator: the seat's occupant (None: empty), stack and
        whether it is dealt in to a hand in play."""
        ...

    async def seats_now(self, table_id: str) -> dict[int, SeatNow]:
        """:meth:`seat_now` of every taken seat, from one ``GetTableView``."""
        ...

    async def add_chips(
        self,
        table_id: str,
        seat: int,
        seat_token: str,
        amount: int,
        max_stack: int,
        request_id: str,
    ) -> ChipsAdded:
        """``AddChips`` as the seat (its token; "": the service's own call for whoever sits
        there, an AI seat's refill): between its hands only (``TableRefused`` HAND_RUNNING),
        the stack after at most ``max_stack`` (ABOVE_MAX_STACK). A retry with the same token
        and request id gets the first answer."""
        ...

    async def close(self, table_id: str, request_id: str) -> bool:
        """``CloseTable``: True once the table is closed (now, or already), False while a
        hand runs (it closes between hands)."""
        ...

    async def watch_grant(self, table_id: str) -> WatchGrant:
        """``IssueWatchGrant``: a short-lived token with which a spectator reads the table
        (needed for a private lounge's); ``TableRefused`` when there is no such table."""
        ...

    async def occupants(self, table_id: str) -> Occupants:
        """``GetTable``: who sits where now."""
        ...

    async def vacated(
        self, table_id: str, seat: int, player_id: str, after_sequence: int
    ) -> int | None:
        """The stack ``player_id``'s seat left with, if its ``PlayerLeft`` is in the table's
        events after ``after_sequence``; None while that player still sits there."""
        ...
