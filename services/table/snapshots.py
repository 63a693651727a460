"""When a table writes a snapshot, and how far below one its owner may trim the stream.

A snapshot (``TableSnapshotTaken``) is written as the first event of a deal,
every ``every`` hands, in the deal's own atomic append: at that moment the
table is between hands, so the snapshot is the fold minus the last hand, which
the deal's ``DeckCommitted`` and ``HandStarted`` replace at once. It costs no
extra round trip, and a rebuild (``EventStore.read_tail``) reads from it.

Trimming is the owner's job, right after it wrote a snapshot: it asks the
store to drop what lies below the newest snapshot that is at least ``retain``
old (``EventStore.trim_archived``, which also stops at the projector's archived
position and at the latest snapshot, in one step). ``retain`` is how long a
finished hand's requests keep being answered as retries (their idempotency
records go with their events) and how far back a watcher may resume from Redis.
Only the lease holder writes snapshots and trims, so two trims of a table never
race each other; a rebuild racing a trim starts again from the newer snapshot.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from felt.config.settings import FELT_SNAPSHOT_EVERY, FELT_TRIM_RETAIN_S
from felt.core.table.aggregate import StartNextHand, TableCommand, TableState


@dataclass(slots=True)
class SnapshotPolicy:
    """How often a table is snapshotted, and how long events stay after a snapshot."""

    # hands between snapshots; 0: never (and then nothing is trimmed)
    every: int = FELT_SNAPSHOT_EVERY.default
    retain: timedelta = timedelta(seconds=FELT_TRIM_RETAIN_S.default)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> SnapshotPolicy:
        """``FELT_SNAPSHOT_EVERY`` (hands, default 1) and ``FELT_TRIM_RETAIN_S`` (default 60)."""
        retain = FELT_TRIM_RETAIN_S.read(env)
        return cls(FELT_SNAPSHOT_EVERY.read(env), timedelta(seconds=retain))

    def due(self, state: TableState | None, command: TableCommand) -> bool:
        """Whether the deal ``command`` makes of ``state`` should carry a snapshot first."""
        return (
            self.every > 0
            and isinstance(command, StartNextHand)
            and state is not None
            and state.hands_played > 0
            and state.hands_played % self.every == 0
        )


@dataclass(slots=True)
class TrimPoints:
    """The snapshots a runtime knows of (sequence, when written), oldest first."""

    known: list[tuple[int, datetime]] = field(default_factory=list)

    def reset(self, sequence: int, at: datetime | None) -> None:
        """After a rebuild: only the snapshot the table was rebuilt from (if any) is known."""
        self.known = [(sequence, at)] if sequence and at is not None else []

    def add(self, sequence: int, at: datetime) -> None:
        self.known.append((sequence, at))

    def take(self, now: datetime, retain: timedelta) -> int:
        """The newest snapshot written at least ``retain`` before ``now`` (0: none yet).

        It and the newer ones stay known (the next trim may reach further); the
        older ones are forgotten, being below it.
        """
        # Oldest first, so the ripe ones are a prefix: found by bisection, not a scan of every
        # snapshot of the retention window at each deal.
        ripe = bisect.bisect_right(self.known, now - retain, key=lambda known: known[1])
        if not ripe:
            return 0
        self.known = self.known[ripe - 1 :]
        return self.known[0][0]
