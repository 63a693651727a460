"""The hand archive port: finished hands written once, read by id, table or player.

Writes come from the projector only and are a compare-and-set on each
table's :class:`Cursor`: ``write`` stores the hands, the late events and the
new cursors of several tables in one transaction if and only if every
table's stored position is still the one the batch was read from. A projector that crashed after the
commit resumes from the stored position and so never writes a hand twice; two
projectors racing on one table cannot both win (the loser gets
:class:`PositionMoved` and nothing of its batch is stored). Readers (hand
histories, replays, a player's statistics) never write.

``PostgresHandArchive`` (production) and ``MemoryHandArchive`` (service tests)
both pass ``tests/integration/test_hand_archive_contract.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from felt.storage.archive.values import (
    ArchivedEvent,
    ArchivedHand,
    Cursor,
    HandHeader,
    PlayerHand,
    PlayerPageKey,
    PlayerStats,
    TableWrite,
)

MAX_PAGE = 200
"""The most rows one listing returns."""


class ArchiveError(Exception):
    """Base class of the archive's errors."""


class PositionMoved(ArchiveError):
    """The table's stored position was ``actual``, not ``expected``: someone else wrote first."""

    def __init__(self, table_id: str, expected: int, actual: int) -> None:
        super().__init__(
            f"archive position of {table_id} is {actual}, not {expected}: another writer moved it"
        )
        self.table_id = table_id
        self.expected = expected
        self.actual = actual


class HandNumberTaken(ArchiveError):
    """A hand of ``table_id`` with the same number and another id is archived already: the
    table's stream no longer holds the history the archive has (Redis lost its tail after
    those hands were archived, and the table played on from an earlier state). Nothing of
    the batch is stored."""

    def __init__(self, table_id: str, number: int) -> None:
        super().__init__(
            f"hand {number} of {table_id} is archived already with another id: the stream "
            "diverged from the archive (a Redis crash lost events that were archived)"
        )
        self.table_id = table_id
        self.number = number


def check_writes(writes: Sequence[TableWrite]) -> None:
    """Refuse a batch that names a table twice, moves a position back or holds a hand past it."""
    if len({w.table_id for w in writes}) != len(writes):
        raise ValueError("a write names each table at most once")
    for w in writes:
        if w.cursor.position < w.expected or w.cursor.position == 0:
            raise ValueError(f"the position only rises: {w.cursor.position} from {w.expected}")
        for hand in w.hands:
            if hand.table_id != w.table_id or not hand.events:
                raise ValueError(f"hand {hand.hand_id} is not one of {w.table_id}'s")
            if hand.first_sequence <= w.expected or hand.last_sequence > w.cursor.position:
                raise ValueError(f"hand {hand.hand_id} is not between the old and new position")
        for event in w.table_events:
            if not w.expected < event.sequence <= w.cursor.position:
                raise ValueError(f"table event {event.sequence} is not between the positions")


def check_limit(limit: int) -> int:
    if not 1 <= limit <= MAX_PAGE:
        raise ValueError(f"limit must be 1..{MAX_PAGE}, not {limit}")
    return limit


@runtime_checkable
class HandArchive(Protocol):
    """Finished hands by public id, a table's hands, a player's hands and statistics."""

    async def cursor(self, table_id: str) -> Cursor:
        """How far the table's stream is archived (``Cursor()`` if not at all)."""
        ...

    async def write(self, writes: Sequence[TableWrite]) -> None:
        """Store every table's hands, late events and cursor in one transaction.

        Only if each table's stored position is its ``expected``: otherwise
        raises :class:`PositionMoved` for (the first such) table and stores
        nothing. A late event is added to its hand's events, and the cards it
        shows to the seat's shown cards.
        """
        ...

    async def hand(self, hand_id: str) -> ArchivedHand | None:
        """The hand with this public id, with all its seats, pots and events."""
        ...

    async def table_hands(
        self, table_id: str, *, before: int | None = None, limit: int = 50
    ) -> list[HandHeader]:
        """The table's hands, newest first, numbered below ``before`` when given."""
        ...

    async def player_hands(
        self, player_id: str, *, before: PlayerPageKey | None = None, limit: int = 50
    ) -> list[PlayerHand]:
        """The player's hands, newest first (by end, then id), strictly after ``before``."""
        ...

    async def player_stats(self, player_id: str) -> PlayerStats:
        """Sums of the player's seat flags over every archived hand."""
        ...

    async def table_events(
        self, table_id: str, *, after: int = 0, limit: int = MAX_PAGE
    ) -> list[ArchivedEvent]:
        """The table's archived events of no hand with a sequence above ``after``, oldest first."""
        ...
