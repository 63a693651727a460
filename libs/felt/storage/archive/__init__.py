"""The hand archive: every finished hand, once, with its seats, pots, events and statistics.

``port`` is the ``HandArchive`` protocol (written by the projector, read by hand
histories and replays), ``values`` what it holds, ``summary`` the pure per-seat
flags statistics add up, ``projection`` the pure fold of a table's stream into
archive rows, ``memory`` the fake and ``postgres`` the PostgreSQL adapter.
"""

from felt.storage.archive.memory import MemoryHandArchive
from felt.storage.archive.port import (
    MAX_PAGE,
    ArchiveError,
    HandArchive,
    HandNumberTaken,
    PositionMoved,
)
from felt.storage.archive.summary import seat_summaries
from felt.storage.archive.values import (
    ArchivedEvent,
    ArchivedHand,
    ArchivedPot,
    ArchivedSeat,
    Cursor,
    HandHeader,
    LateEvent,
    PlayerHand,
    PlayerPageKey,
    PlayerStats,
    SeatSummary,
    TableWrite,
)

__all__ = [
    "MAX_PAGE",
    "ArchiveError",
    "ArchivedEvent",
    "ArchivedHand",
    "ArchivedPot",
    "ArchivedSeat",
    "Cursor",
    "HandArchive",
    "HandHeader",
    "HandNumberTaken",
    "LateEvent",
    "MemoryHandArchive",
    "PlayerHand",
    "PlayerPageKey",
    "PlayerStats",
    "PositionMoved",
    "SeatSummary",
    "TableWrite",
    "seat_summaries",
]
