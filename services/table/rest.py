"""When a table rests: nobody to play for, so no next hand (pure: no clock, no I/O).

A table where only AI seats sit and nobody watches would otherwise deal bot
against bot forever: decisions, appends, log lines and archive rows for no one
(an abandoned lounge, the demo tables of ``make run``). After ``grace`` with no
person seated (a seat without an AI level) and no watcher counted by the
runtime, the table *rests*: the runtime does not start the next hand. A hand
already running is played out; a closing time still closes the table. It
resumes as soon as a person sits down (that ``PlayerSeated`` rearms the
runtime) or a watch stream opens (``TableRuntime.watched``).

Resting records no event, on purpose: it changes no seat, stack, rule or
card, so the stream means what it meant (a longer pause between two hands,
like a table waiting for a second player). A restart or a replay folds the
same state; the new owner starts the grace afresh from when it took the table
(it cannot know who watched the old one), then rests again if still nobody is
there. The decision is this module's, from the folded state, the watcher count
and times the runtime passes in, so it is tested without a clock or a server.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from felt.core.table.aggregate import TableState


def has_person(state: TableState) -> bool:
    """Whether a person (not an AI seat) holds a seat, sitting out or not."""
    return any(not player.ai_level for player in state.players)


@dataclass(frozen=True, slots=True)
class RestPolicy:
    """How long a table deals with nobody to play for; ``grace`` None: it never rests."""

    grace: timedelta | None = None

    @classmethod
    def of_seconds(cls, seconds: float) -> RestPolicy:
        """``FELT_TABLE_IDLE_GRACE_S``: 0 never rests."""
        return cls(timedelta(seconds=seconds) if seconds > 0 else None)

    def idle_since(
        self, since: datetime | None, state: TableState, watchers: int, now: datetime
    ) -> datetime | None:
        """Since when the table has had nobody to play for (None: somebody is there).

        ``since`` is the previous answer: it is kept while nobody comes, so the grace
        counts from when the last person left or the last watcher closed its stream.
        """
        if watchers > 0 or has_person(state):
            return None
        return now if since is None else since

    def rests(self, since: datetime | None, now: datetime) -> bool:
        """Whether the table, idle since ``since``, deals no next hand at ``now``."""
        return self.grace is not None and since is not None and now - since >= self.grace
