"""Table events: seating, chips, sitting out and the action clock, around the hand events.

A table's stream holds these and the hand events (``felt.core.rules.events``) in
one order; the table state is the fold of both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeGuard

from felt.core.record import Record
from felt.core.rules.config import Variant
from felt.core.rules.events import Event as HandEvent
from felt.core.table.player import Player
from felt.core.table.positions import Positions


@dataclass(frozen=True, slots=True)
class TableConfig(Record):
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
    private: bool = False  # a private lounge's: spectators need a watch grant (service side)


@dataclass(frozen=True, slots=True)
class TableCreated(Record):
    config: TableConfig


AI_LEVELS = ("easy", "normal", "hard")
"""The levels an AI seat is played at, weakest first: the one list of them.

``PlayerSeated.ai_level`` holds one of these (or ``""`` for a human); the
bots (``felt.players.bots``) have a bot for each and the event codec a wire value for
each, which their tests check against this list.
"""


@dataclass(frozen=True, slots=True)
class PlayerSeated(Record):
    """A player took ``seat`` with ``stack`` chips. ``token_hash`` authenticates it.

    ``ai_level`` is one of :data:`AI_LEVELS` for an AI seat, empty for a
    human. Only a hash of the seat token is ever stored.
    """

    seat: int
    player_id: str
    name: str
    stack: int
    token_hash: str
    ai_level: str = ""


@dataclass(frozen=True, slots=True)
class SeatTokenReissued(Record):
    """``seat``'s occupant ``player_id`` got a fresh token: only ``token_hash`` opens it now.

    A new event rather than a second ``PlayerSeated``, because a seating means
    chips came in and what the seat may see starts anew; a reissue changes
    neither (a player seated longer than a token lives keeps its seat).
    """

    seat: int
    player_id: str
    token_hash: str


@dataclass(frozen=True, slots=True)
class PlayerLeft(Record):
    """The player gave up ``seat`` and took ``stack`` chips with them.

    ``busted``: the seat was freed by the conditional leave of a seat busted longer than its
    lounge's grace (``LeaveSeat.busted_hand``), not by its player; ``stack`` is then 0.
    """

    seat: int
    stack: int
    busted: bool = False


@dataclass(frozen=True, slots=True)
class PlayerSatOut(Record):
    """``seat`` is not dealt in from the next hand; ``reason``: requested, timeouts, leaving."""

    seat: int
    reason: str = "requested"


@dataclass(frozen=True, slots=True)
class PlayerSatIn(Record):
    seat: int


@dataclass(frozen=True, slots=True)
class PlayerWaitingForBigBlind(Record):
    """``seat`` waits for the big blind: dealt in only when the big blind would reach it.

    Recorded after the ``PlayerSeated`` or ``PlayerSatIn`` it qualifies (RULES.md,
    "Wait for the big blind"; games with blinds only). Without it a newcomer is
    dealt in from the next hand owing no blind, so a new event rather than a
    changed meaning of those two. The wait ends with the first ``HandStarted``
    that deals the seat in (as the big blind) or when the seat sits out again.
    """

    seat: int


@dataclass(frozen=True, slots=True)
class ChipsAdded(Record):
    seat: int
    amount: int


@dataclass(frozen=True, slots=True)
class ActionTimedOut(Record):
    """``seat``'s action clock ran out; the hand event that follows checks or folds for it."""

    seat: int


@dataclass(frozen=True, slots=True, init=False)
class DeckCommitted(Record):
    """A hand's deck order was fixed before any card: a Merkle root over salted card hashes.

    ``seed`` is the secret the deck order and the per-position salts derive
    from; it is stored so a restarted server can keep opening cards, and it
    is removed from every view (only ``root`` is public).
    """

    hand_id: str
    root: str
    leaf_count: int
    seed: bytes = b""

    def __init__(self, hand_id: str, root: str, leaf_count: int, seed: bytes = b"") -> None:
        object.__setattr__(self, "hand_id", hand_id)
        object.__setattr__(self, "root", root)
        object.__setattr__(self, "leaf_count", leaf_count)
        object.__setattr__(self, "seed", seed)


@dataclass(frozen=True, slots=True)
class TableClosed(Record):
    reason: str = ""


@dataclass(frozen=True, slots=True, init=False)
class TableSnapshotTaken(Record):
    """The table between two hands: what its fold holds that outlives a hand.

    Written by the table service as the first event of a deal, so it is exactly
    the fold of the stream before it except for the last hand's ``hand``,
    ``hand_events`` and ``commitment``, which the deal's ``DeckCommitted`` and
    ``HandStarted`` replace at once. Folding it changes nothing
    (``felt.core.table.aggregate.apply_event``); a stream trimmed up to it folds
    from it (``state_from_snapshot``). ``seated_at`` is not the fold's: it is
    each occupant's ``PlayerSeated`` sequence, which the service needs to know
    what a seat may see and which a trimmed stream no longer shows.
    No card, deck or seed is in it, by construction.
    """

    config: TableConfig
    players: tuple[Player, ...] = ()
    hands_played: int = 0
    positions: Positions | None = None
    timing_out: int | None = None
    closed: bool = False
    seated_at: tuple[tuple[int, int], ...] = ()

    def __init__(
        self,
        config: TableConfig,
        players: tuple[Player, ...] = (),
        hands_played: int = 0,
        positions: Positions | None = None,
        timing_out: int | None = None,
        closed: bool = False,
        seated_at: tuple[tuple[int, int], ...] = (),
    ) -> None:
        object.__setattr__(self, "config", config)
        object.__setattr__(self, "players", players)
        object.__setattr__(self, "hands_played", hands_played)
        object.__setattr__(self, "positions", positions)
        object.__setattr__(self, "timing_out", timing_out)
        object.__setattr__(self, "closed", closed)
        object.__setattr__(self, "seated_at", seated_at)


TableEvent = (
    TableCreated
    | PlayerSeated
    | SeatTokenReissued
    | PlayerLeft
    | PlayerSatOut
    | PlayerSatIn
    | PlayerWaitingForBigBlind
    | ChipsAdded
    | ActionTimedOut
    | DeckCommitted
    | TableClosed
    | TableSnapshotTaken
)

AnyEvent = TableEvent | HandEvent

HAND_EVENTS: tuple[type, ...] = HandEvent.__args__
"""The hand events' classes (``felt.core.rules.events.Event``), to tell them from table events."""


def is_hand_event(event: AnyEvent) -> TypeGuard[HandEvent]:
    """Whether ``event`` is one of the rules' hand events (not a table event)."""
    return isinstance(event, HAND_EVENTS)
