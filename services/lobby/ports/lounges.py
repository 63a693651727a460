"""The ``Lounges`` port: a lobby's tables as players see them, their seats and listings."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from felt.storage.idempotency import RequestKey


class LoungeState(enum.StrEnum):
    CREATING = "creating"  # its row is written; its table and AI seats may not be yet
    OPEN = "open"  # its table exists and its AI players sit there
    CLOSING = "closing"  # closed by its owner or its limit: its seats' chips are going home
    CLOSED = "closed"  # its table is closed and every seat's chips are home
    FAILED = "failed"  # could not be created (refused for good): AI seats' chips back home


@dataclass(frozen=True, slots=True)
class LoungeSeat:
    seat: int
    player_id: str
    display_name: str
    ai_level: int  # poker.events.v1.AiLevel; 0: a human
    stack: int  # what the seat sat down with
    leave_sequence: int | None = None  # an AI seat's: the table's sequence a close saw it held


class TooManyLounges(Exception):
    """The owner has as many lounges as it may have."""

    def __init__(self, most: int) -> None:
        super().__init__(f"at most {most} lounges per player")
        self.most = most


DEFAULT_BUSTED_GRACE_S = 300
"""A person's seat left with no chips is freed after this long without chips (RULES.md), unless
the lounge says otherwise (``CreateLoungeRequest.busted_grace_s``)."""
BUSTED_GRACE_RANGE_S = (60, 86_400)
"""A lounge's grace for a busted seat, when it is not 0 (never freed): at least a minute, at most
a day (the column's CHECK, migration ``0018_busted_grace.sql``)."""


@dataclass(frozen=True, slots=True)
class NewLounge:
    lounge_id: str  # the table service's table_id too
    owner_id: str
    name: str
    variant: int  # poker.events.v1.Variant
    config: bytes  # the checked poker.events.v1.TableConfig, serialized
    stake: int
    seat_count: int
    min_buy_in: int
    max_buy_in: int
    invite_code: str | None  # None: public
    ai_seats: tuple[LoungeSeat, ...]
    request: RequestKey
    at: datetime
    busted_grace_s: int = DEFAULT_BUSTED_GRACE_S  # 0: a busted person's seat is never freed


@dataclass(frozen=True, slots=True)
class Lounge:
    lounge_id: str
    listing_id: int  # the keyset of listings: newer lounges have larger ones
    owner_id: str
    name: str
    variant: int
    config: bytes
    stake: int
    seat_count: int
    min_buy_in: int
    max_buy_in: int
    invite_code: str | None
    state: LoungeState
    created_at: datetime
    seats: tuple[LoungeSeat, ...]  # by seat number
    failure: str | None = None  # FAILED: why (the table service's refusal)
    busted_grace_s: int = DEFAULT_BUSTED_GRACE_S  # 0: a busted person's seat is never freed

    @property
    def private(self) -> bool:
        return self.invite_code is not None

    @property
    def free_seats(self) -> int:
        return self.seat_count - len(self.seats)


@dataclass(frozen=True, slots=True)
class LoungeFilter:
    """What a listing keeps: open public lounges, and of those the ones matching every field
    that is set (0: any)."""

    variant: int = 0
    min_stake: int = 0
    max_stake: int = 0
    min_free_seats: int = 0


class Lounges(Protocol):
    async def create(self, new: NewLounge, max_per_owner: int | None = None) -> Lounge:
        """Add ``new`` (state CREATING) with its AI seats, in one write; its retry (same key
        and fingerprint) finds the first lounge. Raises ``RequestReused``; or
        :class:`TooManyLounges` if its owner has ``max_per_owner`` lounges CREATING or OPEN
        already (counted atomically with the write: concurrent creations never pass the
        cap; a FAILED or CLOSING one does not count)."""
        ...

    async def get(self, lounge_id: str) -> Lounge | None: ...

    async def mark_open(self, lounge_id: str) -> Lounge:
        """CREATING to OPEN (an OPEN lounge stays so); KeyError if there is no such lounge."""
        ...

    async def listing(self, where: LoungeFilter, before: int | None, limit: int) -> list[Lounge]:
        """Open public lounges matching ``where``, newest first, ``listing_id < before`` when
        given, at most ``limit``."""
        ...

    async def creating(self, limit: int, after: tuple[datetime, str] | None = None) -> list[Lounge]:
        """Lounges still CREATING, oldest first (``created_at``, then id), after ``after``
        only: the recovery pass walks them a page at a time."""
        ...

    async def occupied(self, after: int, limit: int) -> list[Lounge]:
        """OPEN lounges (public or private) with a seat taken (an AI's or a person's), by
        ``listing_id`` after ``after``, at most ``limit``: the busted seats' pass walks them a
        page at a time."""
        ...

    async def mark_failed(self, lounge_id: str, failure: str) -> Lounge:
        """CREATING to FAILED with why, its seats cleared: it no longer counts against its
        owner's lounges (any other state stays); KeyError if there is no such lounge. The
        house's chips are returned first (``Ledger.refund_ai_seats``)."""
        ...
