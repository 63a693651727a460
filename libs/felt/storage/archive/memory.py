"""The hand archive in dicts, for service tests: the same contract as PostgreSQL, one process."""

from __future__ import annotations

from collections.abc import Sequence

from felt.storage.archive.port import (
    MAX_PAGE,
    HandNumberTaken,
    PositionMoved,
    check_limit,
    check_writes,
)
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


class MemoryHandArchive:
    """:class:`~felt.storage.archive.port.HandArchive` in memory.

    ``writes`` counts committed batches.
    """

    def __init__(self) -> None:
        self.hands: dict[str, ArchivedHand] = {}
        self.cursors: dict[str, Cursor] = {}
        self.events: dict[str, dict[int, ArchivedEvent]] = {}  # table -> its events of no hand
        self.writes = 0

    async def cursor(self, table_id: str) -> Cursor:
        return self.cursors.get(table_id, Cursor())

    async def write(self, writes: Sequence[TableWrite]) -> None:
        check_writes(writes)
        # No await below: the checks and the writes are atomic within the event loop.
        for w in writes:
            actual = self.cursors.get(w.table_id, Cursor()).position
            if actual != w.expected:
                raise PositionMoved(w.table_id, w.expected, actual)
        staged = dict(self.hands)
        numbers = {(h.table_id, h.number) for h in staged.values()}
        for w in writes:
            for hand in w.hands:
                if hand.hand_id in staged:
                    raise ValueError(f"hand {hand.hand_id} is archived already")
                if (hand.table_id, hand.number) in numbers:
                    raise HandNumberTaken(hand.table_id, hand.number)
                staged[hand.hand_id] = hand
                numbers.add((hand.table_id, hand.number))
            for item in w.late:
                if item.hand_id not in staged:
                    raise ValueError(f"late event of {item.hand_id}, which is not archived")
                staged[item.hand_id] = staged[item.hand_id].with_late(item)
        events = {t: dict(e) for t, e in self.events.items()}
        for w in writes:
            table = events.setdefault(w.table_id, {})
            for event in w.table_events:
                if event.sequence in table:
                    raise ValueError(f"event {event.sequence} of {w.table_id} is archived already")
                table[event.sequence] = event
        self.hands, self.events = staged, events
        for w in writes:
            self.cursors[w.table_id] = w.cursor
        self.writes += 1

    async def hand(self, hand_id: str) -> ArchivedHand | None:
        return self.hands.get(hand_id)

    async def table_hands(
        self, table_id: str, *, before: int | None = None, limit: int = 50
    ) -> list[HandHeader]:
        check_limit(limit)
        found = sorted(
            (
                h
                for h in self.hands.values()
                if h.table_id == table_id and (before is None or h.number < before)
            ),
            key=lambda h: h.number,
            reverse=True,
        )
        return [
            HandHeader(h.hand_id, h.table_id, h.number, h.variant, h.started_at, h.ended_at)
            for h in found[:limit]
        ]

    async def player_hands(
        self, player_id: str, *, before: PlayerPageKey | None = None, limit: int = 50
    ) -> list[PlayerHand]:
        check_limit(limit)
        rows = [
            PlayerHand(h.hand_id, h.table_id, h.number, h.variant, h.ended_at, s.summary)
            for h in self.hands.values()
            for s in h.seats
            if s.player_id == player_id
        ]
        rows.sort(key=lambda r: (r.ended_at, r.hand_id), reverse=True)
        if before is not None:
            rows = [r for r in rows if (r.ended_at, r.hand_id) < (before.ended_at, before.hand_id)]
        return rows[:limit]

    async def player_stats(self, player_id: str) -> PlayerStats:
        seats = [
            s.summary for h in self.hands.values() for s in h.seats if s.player_id == player_id
        ]
        return PlayerStats(
            player_id,
            hands=len(seats),
            net=sum(s.net for s in seats),
            vpip=sum(s.vpip for s in seats),
            pfr=sum(s.pfr for s in seats),
            went_to_showdown=sum(s.went_to_showdown for s in seats),
            won_at_showdown=sum(s.won_at_showdown for s in seats),
        )

    async def table_events(
        self, table_id: str, *, after: int = 0, limit: int = MAX_PAGE
    ) -> list[ArchivedEvent]:
        check_limit(limit)
        table = self.events.get(table_id, {})
        return [table[s] for s in sorted(table) if s > after][:limit]
