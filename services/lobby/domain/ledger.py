"""The ledger's rules, without storage: which movements there are, what each does to a
balance, and when a free top-up is allowed.

Both ledgers (``PgLedger``, ``MemoryLedger``) and the chip-add reservation load the
account (locked), look for a retry's first movement by its key, then ask these rules for
the balance after; what they write is what the rule answered. A refusal raises before
anything is written.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from poker.v1.reason_pb2 import Reason
from services.lobby.ports.ledger import Account, InsufficientChips, Kind, TopUpRefused

MOVED: frozenset[Kind] = frozenset({Kind.BUY_IN, Kind.CASH_OUT, Kind.TABLE_CLOSED})
"""The kinds ``Ledger.move`` takes: chips to a table and back. The others create chips
(``grant``: ``Ledger.open``; ``top_up``: ``Ledger.top_up``, under its policy), so a move of
either would make chips out of nothing past the rules that allow them."""


def movement(kind: Kind, amount: int) -> int:
    """What a ``move`` of ``amount`` chips as ``kind`` changes a balance by (signed),
    ``ValueError`` for a kind a move does not take or for no chips: checked before any
    storage is looked at (an input out of bounds is nobody's retry)."""
    if kind not in MOVED:
        raise ValueError(f"a move takes chips to a table or back, not a {kind.value}")
    if amount <= 0:
        raise ValueError("a movement moves at least one chip")
    return kind.sign * amount


def balance_after(balance: int, delta: int) -> int:
    """The balance a movement of ``delta`` leaves; :class:`InsufficientChips` below zero."""
    if balance + delta < 0:
        raise InsufficientChips(balance, -delta)
    return balance + delta


def check_top_up(
    account: Account, below: int, cooldown: timedelta, at: datetime, at_tables: int = 0
) -> None:
    """Refuse a top-up the policy does not allow now.

    ``at_tables``: the chips the player has taken to tables and not yet brought back (its
    unfinished buy-ins: not in :data:`~services.lobby.ports.ledger.RETURNED_STATES`). They
    are the player's as much as the balance: counted apart, chips parked at a table would
    leave a low balance that earns a free top-up every hour."""
    if account.balance + at_tables >= below:
        held = f" ({at_tables:,} of them at tables)" if at_tables else ""
        raise TopUpRefused(
            Reason.NOT_LOW,
            f"a free top-up is for a player with under {below:,} chips, at tables included; "
            f"this one has {account.balance + at_tables:,}{held}",
        )
    last = account.last_top_up_at
    if last is not None and last + cooldown > at:
        next_at = last + cooldown
        raise TopUpRefused(
            Reason.COOLING_DOWN,
            f"the next free top-up can be had at {next_at.isoformat()}",
            next_at,
        )


def top_up(
    account: Account,
    amount: int,
    below: int,
    cooldown: timedelta,
    at: datetime,
    at_tables: int = 0,
) -> int:
    """The balance a free top-up of ``amount`` leaves, if the policy allows one now
    (:func:`check_top_up`); ``ValueError`` for no chips."""
    if amount <= 0:
        raise ValueError("a top-up gives at least one chip")
    check_top_up(account, below, cooldown, at, at_tables)
    return account.balance + amount
