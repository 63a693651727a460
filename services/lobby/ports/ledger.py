"""The ``Ledger`` port: every chip's movement, its accounts and the free top-up policy."""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from felt.storage.idempotency import FINGERPRINT_BYTES, RequestKey, server_key
from poker.v1.reason_pb2 import Reason


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


class HouseKind(enum.StrEnum):
    """The house account's movements: chips to an AI seat, and back from it."""

    HOUSE_SEAT = "house_seat"
    HOUSE_RETURN = "house_return"


@dataclass(frozen=True, slots=True)
class HouseMovement:
    entry_id: int
    kind: HouseKind
    amount: int  # signed: what the house's balance changed by (a seat's funding is negative)
    balance_after: int
    lounge_id: str
    seat: int
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Audit:
    """The chips audit with the house (docs/operations.md): ``created == balances +
    on_tables + house`` at every quiescent moment, each figure read from its own rows in one
    snapshot. ``ledger_sum`` and ``house_sum`` are the rows' sums that ``balances`` and
    ``house`` must equal; ``overpaid`` counts the lounges that paid out more than went in
    (chips minted at a table: always 0), ``stranded`` the closed or failed lounges with
    chips not yet home (always 0 once their close is done)."""

    created: int
    balances: int
    on_tables: int  # players' and the house's chips at tables
    house: int  # the house's balance: its result (negative: the players are ahead)
    ledger_sum: int
    house_sum: int
    overpaid: int
    stranded: int

    @property
    def holds(self) -> bool:
        return (
            self.created == self.balances + self.on_tables + self.house
            and self.ledger_sum == self.balances
            and self.house_sum == self.house
            and self.overpaid == 0
            and self.stranded == 0
        )


@dataclass(frozen=True, slots=True)
class Winner:
    """A player's net result at lounges with AI seats (house-funded) since a moment: chips
    brought home minus chips bought in, over seats settled since then."""

    player_id: str
    won: int


def _house_key(kind: str, lounge_id: str, seat: int, amount: int, n: int = 0) -> RequestKey:
    """A house movement's key: once per lounge seat (and refill ``n``), sealed with its amount
    (the same seat moved with another amount is ``RequestReused``, a bug, not a retry)."""
    key = server_key(kind, f"{lounge_id}/{seat}", n).key
    sealed = hashlib.sha256(f"{key}:{amount}".encode()).digest()[:FINGERPRINT_BYTES]
    return RequestKey(key, sealed)


def house_seat_key(lounge_id: str, seat: int, amount: int) -> RequestKey:
    """The ledger key of an AI seat's ``amount`` from the house: once per lounge seat."""
    return _house_key("house-seat", lounge_id, seat, amount)


def house_return_key(lounge_id: str, seat: int, amount: int) -> RequestKey:
    """The ledger key of an AI seat's ``amount`` back to the house: once per lounge seat."""
    return _house_key("house-return", lounge_id, seat, amount)


def refill_key(lounge_id: str, seat: int, n: int, amount: int) -> RequestKey:
    """The ledger key of a busted AI seat's ``n``-th refill (n >= 1) from the house: the seat's
    first funding is n = 0 (:func:`house_seat_key`)."""
    return _house_key("house-seat", lounge_id, seat, amount, n)


def refill_return_key(lounge_id: str, seat: int, n: int, amount: int) -> RequestKey:
    """The ledger key of the ``n``-th refill's chips back to the house when the table refused
    it for good (its seat gone, the table closed)."""
    return _house_key("house-refill-return", lounge_id, seat, amount, n)


def refill_request_id(lounge_id: str, seat: int, n: int) -> str:
    """The table service's request id for the ``n``-th refill's ``AddChips`` (every retry)."""
    return f"lounge/{lounge_id}/ai/{seat}/refill/{n}"


class RefillState(enum.StrEnum):
    """A refill saga's state: FUNDED (the house paid, the table not answered yet), then ADDED
    (on the seat) or RETURNED (refused by the table, the chips back to the house)."""

    FUNDED = "funded"
    ADDED = "added"
    RETURNED = "returned"


@dataclass(frozen=True, slots=True)
class AiRefill:
    """A busted AI seat's ``n``-th refill of ``amount`` chips from the house."""

    lounge_id: str
    seat: int
    n: int
    amount: int
    state: RefillState
    created_at: datetime


class NoAccount(Exception):
    """The player has no chips account (``Ledger.open`` was never called)."""


class InsufficientChips(Exception):
    """A movement would take the balance below zero."""

    def __init__(self, balance: int, wanted: int) -> None:
        # The message is a refusal's (the caller's own balance; never the amount they sent).
        super().__init__(f"the balance is {balance:,} chips: fewer than asked for")
        self.balance, self.wanted = balance, wanted


class TopUpRefused(Exception):
    """No free top-up now: the player's chips are not low (``NOT_LOW``: the balance and the
    chips at tables together) or one was given recently (``COOLING_DOWN``, with the time
    the next one can be had)."""

    def __init__(
        self, reason: Reason.ValueType, message: str, next_at: datetime | None = None
    ) -> None:
        super().__init__(message)
        self.reason, self.message, self.next_at = Reason.Name(reason), message, next_at


RETURNED_STATES = ("compensated", "left")
"""The buy-in saga states (``BuyInState``) whose chips came back to the balance. A saga in
any other (reserved, seated, leaving, or one added later) holds its amount at a table or on
its way to or from one: the player's chips all the same."""


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
        """A free top-up of ``amount`` if the player's chips, the balance and those at tables
        (its unfinished buy-ins' amounts) together, are under ``below`` and the last top-up
        was at least ``cooldown`` ago (else :class:`TopUpRefused`); checked and written
        atomically with the buy-ins (a buy-in made meanwhile is counted); idempotent on
        ``request``."""
        ...

    async def account(self, player_id: str) -> Account | None: ...

    async def entries(self, player_id: str, before: int | None, limit: int) -> list[Movement]:
        """The player's movements, newest first, with ``entry_id < before`` when given."""
        ...

    async def totals(self) -> Totals:
        """Every balance and movement, from one consistent snapshot."""
        ...

    async def fund_ai_seat(
        self, lounge_id: str, seat: int, amount: int, at: datetime
    ) -> HouseMovement:
        """``amount`` (> 0) from the house to a lounge's AI seat (a ``house_seat`` row, key
        :func:`house_seat_key`; a retry finds the first). The house may go below zero."""
        ...

    async def refund_ai_seats(self, lounge_id: str, at: datetime) -> int:
        """Every AI seat of the lounge funded and not returned gets its funding back whole
        (``house_return`` rows, :func:`house_return_key`): a lounge that failed to be
        created. How many chips came back (0 on a retry)."""
        ...

    async def fund_ai_refill(
        self, lounge_id: str, seat: int, amount: int, at: datetime, since: datetime, most: int
    ) -> AiRefill | None:
        """A busted AI seat's next refill: ``amount`` (> 0) from the house (a ``house_seat``
        row, :func:`refill_key`) and the saga FUNDED, in one transaction; the seat's refill
        still FUNDED instead, if there is one (one at a time per seat). None, with nothing
        written, unless the lounge is OPEN, ``seat`` is one of its AI seats and fewer than
        ``most`` of its refills created since ``since`` were ADDED (the house's bound)."""
        ...

    async def ai_refill_added(self, lounge_id: str, seat: int, n: int) -> AiRefill:
        """The table put the refill on the seat: FUNDED to ADDED (ADDED stays); KeyError if
        there is no such refill, ValueError if it was RETURNED."""
        ...

    async def return_ai_refill(self, lounge_id: str, seat: int, n: int, at: datetime) -> AiRefill:
        """The table refused the refill: its chips back to the house (a ``house_return`` row,
        :func:`refill_return_key`) and FUNDED to RETURNED, in one transaction (RETURNED
        stays); KeyError if there is no such refill, ValueError if it was ADDED."""
        ...

    async def funded_ai_refills(self, lounge_id: str, limit: int) -> list[AiRefill]:
        """The lounge's refills still FUNDED, oldest first, at most ``limit``."""
        ...

    async def house(self) -> int:
        """The house's balance: its result so far."""
        ...

    async def audit(self) -> Audit:
        """The chips audit with the house, from one consistent snapshot."""
        ...

    async def house_won(self, player_id: str, since: datetime) -> int:
        """The player's net result at lounges with AI seats (house-funded), over its
        movements since ``since``: chips brought home minus chips bought in, at lounges where
        none of its seats still holds chips (chips parked at a seat are no loss yet)."""
        ...

    async def house_winners(self, since: datetime | None, limit: int) -> list[Winner]:
        """The players who won most at lounges with AI seats (seats settled since ``since``;
        None: ever), largest first, winners only."""
        ...
