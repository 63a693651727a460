"""The ``Ledger`` port: every chip's movement, its accounts and the free top-up policy."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from felt.idempotency import RequestKey


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
    """No free top-up now: the player's chips are not low (``NOT_LOW``: the balance and the
    chips at tables together) or one was given recently (``COOLING_DOWN``, with the time
    the next one can be had)."""

    def __init__(self, reason: str, message: str, next_at: datetime | None = None) -> None:
        super().__init__(message)
        self.reason, self.message, self.next_at = reason, message, next_at


def check_top_up(
    account: Account, below: int, cooldown: timedelta, at: datetime, at_tables: int = 0
) -> None:
    """Refuse a top-up the policy does not allow now (shared by the adapters).

    ``at_tables``: the chips the player has taken to tables and not yet brought back (its
    unfinished buy-ins: not in :data:`RETURNED_STATES`). They are the player's as much as the
    balance: counted apart, chips parked at a table would leave a low balance that earns a
    free top-up every hour."""
    if account.balance + at_tables >= below:
        held = f" ({at_tables:,} of them at tables)" if at_tables else ""
        raise TopUpRefused(
            "NOT_LOW",
            f"a free top-up is for a player with under {below:,} chips, at tables included; "
            f"this one has {account.balance + at_tables:,}{held}",
        )
    last = account.last_top_up_at
    if last is not None and last + cooldown > at:
        next_at = last + cooldown
        raise TopUpRefused(
            "COOLING_DOWN",
            f"the next free top-up can be had at {next_at.isoformat()}",
            next_at,
        )


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
