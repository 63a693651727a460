"""Table events: seating, chips, sitting out and the action clock, around the hand events.

A table's stream holds these and the hand events (``felt.rules.events``) in
one order; the table state is the fold of both.
"""

from __future__ import annotations

from dataclasses import dataclass

from felt.rules.config import Variant
from felt.rules.events import Event as HandEvent


@dataclass(frozen=True, slots=True)
class TableConfig:
    """How a table plays. NLHE uses blinds/ante; Draw uses ante and fixed bets.

    ``action_timeout_ms`` is the action clock (0 disables it); after
    ``max_timeouts`` consecutive time-outs a seat is sat out. ``hand_limit``
    ends the table after that many hands (0: no limit), ``close_at_ms`` at that
    time (Unix milliseconds; 0: never) once the running hand is over. The
    core has no clock: the service closes the table when that time comes.
    """

    table_id: str
    variant: Variant
    seat_count: int
    small_blind: int = 0
    big_blind: int = 0
    ante: int = 0
    small_bet: int = 0
    big_bet: int = 0
    raise_cap: int = 4
    allow_all_in: bool = True
    action_timeout_ms: int = 30_000
    max_timeouts: int = 2
    hand_limit: int = 0
    close_at_ms: int = 0
    name: str = ""


@dataclass(frozen=True, slots=True)
class TableCreated:
    config: TableConfig


@dataclass(frozen=True, slots=True)
class PlayerSeated:
    """A player took ``seat`` with ``stack`` chips. ``token_hash`` authenticates it.

    ``ai_level`` is ``"easy"``, ``"normal"`` or ``"hard"`` for an AI seat,
    empty for a human. Only a hash of the seat token is ever stored.
    """

    seat: int
    player_id: str
    name: str
    stack: int
    token_hash: str
    ai_level: str = ""


@dataclass(frozen=True, slots=True)
class PlayerLeft:
    """The player gave up ``seat`` and took ``stack`` chips with them."""

    seat: int
    stack: int


@dataclass(frozen=True, slots=True)
class PlayerSatOut:
    """``seat`` is not dealt in from the next hand; ``reason``: requested, timeouts, leaving."""

    seat: int
    reason: str = "requested"


@dataclass(frozen=True, slots=True)
class PlayerSatIn:
    seat: int


@dataclass(frozen=True, slots=True)
class ChipsAdded:
    seat: int
    amount: int


@dataclass(frozen=True, slots=True)
class ActionTimedOut:
    """``seat``'s action clock ran out; the hand event that follows checks or folds for it."""

    seat: int


@dataclass(frozen=True, slots=True)
class DeckCommitted:
    """A hand's deck order was fixed before any card: a Merkle root over salted card hashes.

    ``seed`` is the secret the deck order and the per-position salts derive
    from; it is stored so a restarted server can keep opening cards, and it
    is removed from every view (only ``root`` is public).
    """

    hand_id: str
    root: str
    leaf_count: int
    seed: bytes = b""


@dataclass(frozen=True, slots=True)
class TableClosed:
    reason: str = ""


TableEvent = (
    TableCreated
    | PlayerSeated
    | PlayerLeft
    | PlayerSatOut
    | PlayerSatIn
    | ChipsAdded
    | ActionTimedOut
    | DeckCommitted
    | TableClosed
)

AnyEvent = TableEvent | HandEvent
