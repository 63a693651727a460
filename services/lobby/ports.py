"""The lobby's ports: what it stores, as ``typing.Protocol``s, and the values they hold.

Each port has a PostgreSQL adapter (``services.lobby.postgres``) and an
in-memory fake (``services.lobby.memory``); one contract suite per port
(``tests/integration/lobby/test_*_contract.py``) runs against both, so the
service tests on the fakes (``tests/unit/services/test_lobby_app_on_fakes.py``)
test what production does.

Every write that a client can retry is keyed by a
:class:`~felt.idempotency.RequestKey` (scoped to the caller and the call,
sealed with the request's fingerprint): the same key with the same
fingerprint finds the first outcome and changes nothing; with another
fingerprint it is :class:`~felt.idempotency.RequestReused`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from felt.idempotency import RequestKey, server_key

# ------------------------------------------------------------------ players


@dataclass(frozen=True, slots=True)
class Player:
    player_id: str
    display_name: str
    password_hash: str | None  # None: a guest
    created_at: datetime
    registered_at: datetime | None

    @property
    def registered(self) -> bool:
        return self.password_hash is not None


@dataclass(frozen=True, slots=True)
class NewPlayer:
    player_id: str
    display_name: str  # already clean (felt.api.limits.clean_display_name)
    name_key: str  # the name case-folded: unique
    password_hash: str | None
    request: RequestKey
    at: datetime


class NameTaken(Exception):
    """Another player has this display name (compared case-insensitively)."""


class AlreadyRegistered(Exception):
    """The player has a password already: a guest upgrades once."""


class Players(Protocol):
    async def create(self, new: NewPlayer) -> Player:
        """Add ``new``; its retry (same request key and fingerprint) finds the same player.
        Raises :class:`NameTaken` or ``RequestReused``."""
        ...

    async def get(self, player_id: str) -> Player | None: ...

    async def by_name(self, name_key: str) -> Player | None: ...

    async def by_request(self, request: RequestKey) -> Player | None:
        """The player ``request`` created, if it did (``RequestReused`` if that key was used
        with another fingerprint)."""
        ...

    async def register(self, player_id: str, password_hash: str, at: datetime) -> Player:
        """Give a guest a password (:class:`AlreadyRegistered` if it has one; KeyError if the
        player does not exist)."""
        ...


# ------------------------------------------------------------------ sessions


@dataclass(frozen=True, slots=True)
class Session:
    """A refresh-token family: one sign-in, its refreshes, until expiry or revocation."""

    session_id: str
    player_id: str
    generation: int  # of the refresh token that is current
    issued_at: datetime  # of the current generation
    expires_at: datetime
    revoked: bool


class Rotation(enum.Enum):
    ROTATED = "rotated"  # the token was current: the session moved to the next generation
    RETRIED = "retried"  # this same refresh call rotated it before: the same answer
    REUSED = "reused"  # an already rotated token used again: the session is now revoked
    REVOKED = "revoked"  # the session was revoked (signed out, or reuse detected)
    EXPIRED = "expired"
    UNKNOWN = "unknown"  # no such token


TokenHasher = Callable[[str, int], bytes]
"""The SHA-256 of a session's refresh token of a generation (tokens are derived, not stored)."""


class Sessions(Protocol):
    async def start(
        self,
        session_id: str,
        player_id: str,
        request: RequestKey,
        token_hash: TokenHasher,
        at: datetime,
        ttl: timedelta,
    ) -> Session:
        """Start a session at generation 0; a retry (same key) finds the first one."""
        ...

    async def get(self, session_id: str) -> Session | None: ...

    async def rotate(
        self,
        token_hash: bytes,
        request: RequestKey,
        next_hash: TokenHasher,
        at: datetime,
        ttl: timedelta,
    ) -> tuple[Rotation, Session | None]:
        """Exchange a refresh token for the next generation's, atomically (see :class:`Rotation`);
        the session is returned for ROTATED and RETRIED (at the retried call's generation)."""
        ...

    async def revoke(self, session_id: str, at: datetime, why: str) -> bool:
        """Revoke the session; False if it was revoked already (or does not exist)."""
        ...


# ------------------------------------------------------------------ throttled sign-ins


class Throttle(Protocol):
    """Sign-in attempts counted per scope (``player:<id>``, ``name:<name_key>``...) in a window.

    An attempt is *reserved* before its password is checked, not recorded after: checking is
    slow (Argon2 in a thread), so a count read first and written afterwards would let any
    number of concurrent guesses through before the first failure landed.
    """

    async def reserve(self, limits: Mapping[str, int], at: datetime, window: timedelta) -> bool:
        """Count one attempt in every scope of ``limits`` at once (a window older than
        ``window`` starts over) if each scope's new count stays within its limit; otherwise
        count nothing and return False. Atomic: of any number of concurrent reservations of a
        scope, at most its limit succeed in one window."""
        ...

    async def failures(self, scopes: Sequence[str], since: datetime) -> int:
        """The most attempts any of ``scopes`` has had in a window that started after ``since``."""
        ...

    async def clear(self, scopes: Sequence[str]) -> None:
        """Forget the scopes' counts (a successful sign-in)."""
        ...

    async def refund(self, scopes: Sequence[str]) -> None:
        """Take back one reserved attempt from each scope (one that succeeded)."""
        ...


# ------------------------------------------------------------------ the chips ledger


class Kind(enum.StrEnum):
    GRANT = "grant"
    TOP_UP = "top_up"
    BUY_IN = "buy_in"
    CASH_OUT = "cash_out"
    TABLE_CLOSED = "table_closed"

    @property
    def sign(self) -> int:
        """+1 if the movement brings chips into the balance, -1 if it takes them out."""
        return -1 if self is Kind.BUY_IN else 1


@dataclass(frozen=True, slots=True)
class Movement:
    entry_id: int
    player_id: str
    kind: Kind
    amount: int  # signed: what the balance changed by
    balance_after: int
    table_id: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Account:
    player_id: str
    balance: int
    last_top_up_at: datetime | None


@dataclass(frozen=True, slots=True)
class Totals:
    """The whole ledger at one moment: ``balances + on_tables == created`` always holds, and
    ``ledger_sum == balances`` (every balance is the sum of its rows)."""

    created: int  # grants and top-ups
    balances: int
    on_tables: int  # bought in and not yet back
    ledger_sum: int


class NoAccount(Exception):
    """The player has no chips account (``Ledger.open`` was never called)."""


class InsufficientChips(Exception):
    """A movement would take the balance below zero."""

    def __init__(self, balance: int, wanted: int) -> None:
        super().__init__(f"the balance is {balance:,} chips; {wanted:,} were asked for")
        self.balance, self.wanted = balance, wanted


class TopUpRefused(Exception):
    """No free top-up now: the balance is not low (``NOT_LOW``) or one was given recently
    (``COOLING_DOWN``, with the time the next one can be had)."""

    def __init__(self, reason: str, message: str, next_at: datetime | None = None) -> None:
        super().__init__(message)
        self.reason, self.message, self.next_at = reason, message, next_at


def check_top_up(account: Account, below: int, cooldown: timedelta, at: datetime) -> None:
    """Refuse a top-up the policy does not allow now (shared by the adapters)."""
    if account.balance >= below:
        raise TopUpRefused(
            "NOT_LOW",
            f"a free top-up is for a balance under {below:,} chips; this one has "
            f"{account.balance:,}",
        )
    last = account.last_top_up_at
    if last is not None and last + cooldown > at:
        next_at = last + cooldown
        raise TopUpRefused(
            "COOLING_DOWN",
            f"the next free top-up can be had at {next_at.isoformat()}",
            next_at,
        )


class Ledger(Protocol):
    async def open(self, player_id: str, grant: int, request: RequestKey, at: datetime) -> Movement:
        """Open the player's account with its starting grant (idempotent on ``request``)."""
        ...

    async def move(
        self,
        player_id: str,
        kind: Kind,
        amount: int,
        request: RequestKey,
        at: datetime,
        table_id: str | None = None,
    ) -> Movement:
        """Move ``amount`` (> 0) chips in the direction ``kind`` says, atomically with its row;
        :class:`InsufficientChips` rather than a negative balance; idempotent on ``request``."""
        ...

    async def top_up(
        self,
        player_id: str,
        amount: int,
        below: int,
        cooldown: timedelta,
        request: RequestKey,
        at: datetime,
    ) -> Movement:
        """A free top-up of ``amount`` if the balance is under ``below`` and the last top-up
        was at least ``cooldown`` ago (else :class:`TopUpRefused`); idempotent on ``request``."""
        ...

    async def account(self, player_id: str) -> Account | None: ...

    async def entries(self, player_id: str, before: int | None, limit: int) -> list[Movement]:
        """The player's movements, newest first, with ``entry_id < before`` when given."""
        ...

    async def totals(self) -> Totals:
        """Every balance and movement, from one consistent snapshot."""
        ...


# ------------------------------------------------------------------ lounges


class LoungeState(enum.StrEnum):
    CREATING = "creating"  # its row is written; its table and AI seats may not be yet
    OPEN = "open"  # its table exists and its AI players sit there


@dataclass(frozen=True, slots=True)
class LoungeSeat:
    seat: int
    player_id: str
    display_name: str
    ai_level: int  # poker.events.v1.AiLevel; 0: a human
    stack: int  # what the seat sat down with


class TooManyLounges(Exception):
    """The owner has as many lounges as it may have."""

    def __init__(self, most: int) -> None:
        super().__init__(f"at most {most} lounges per player")
        self.most = most


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
        :class:`TooManyLounges` if its owner has ``max_per_owner`` lounges already (counted
        atomically with the write: concurrent creations never pass the cap)."""
        ...

    async def get(self, lounge_id: str) -> Lounge | None: ...

    async def mark_open(self, lounge_id: str) -> Lounge:
        """CREATING to OPEN (an OPEN lounge stays so); KeyError if there is no such lounge."""
        ...

    async def listing(self, where: LoungeFilter, before: int | None, limit: int) -> list[Lounge]:
        """Open public lounges matching ``where``, newest first, ``listing_id < before`` when
        given, at most ``limit``."""
        ...

    async def creating(self, limit: int) -> list[Lounge]:
        """Lounges still CREATING, oldest first (for the recovery pass)."""
        ...


# ------------------------------------------------------------------ the table service


@dataclass(frozen=True, slots=True)
class SeatGrant:
    """A seat taken at a table: the seat, its token (a secret for its player) and expiry."""

    seat: int
    seat_token: str
    expires_at: datetime | None  # None: never


class TableRefused(Exception):
    """The table service definitely refused the call (a bad config, a taken seat, ...):
    retrying the same request will not change the answer."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason, self.message = reason, message


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
    ) -> SeatGrant: ...


# ------------------------------------------------------------------ buy-ins (the seating saga)


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
