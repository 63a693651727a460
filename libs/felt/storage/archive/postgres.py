"""The hand archive on PostgreSQL (asyncpg): tables of migrations 0007, 0009 and 0016.

A write is one transaction: first the cursors, in one statement that moves
only those still at their expected position (a row another writer holds is
waited for and then re-checked, so of two racing writers the second finds the
position moved), then the rows by ``COPY``
(``copy_records_to_table``, one per table of rows, whatever the number of
hands), then the late events and the table's events of no hand. The cursors
come first so a loser stops before sending rows. Primary keys on the public id
and ``(table_id, number)`` would refuse a duplicate even if the cursor check
were bypassed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import asyncpg

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
    ArchivedPot,
    ArchivedSeat,
    Cursor,
    HandHeader,
    PlayerHand,
    PlayerPageKey,
    PlayerStats,
    SeatSummary,
    TableWrite,
)

HAND_COLUMNS = (
    "hand_id",
    "table_id",
    "number",
    "table_hand_id",
    "variant",
    "button",
    "started_at",
    "ended_at",
    "first_sequence",
    "last_sequence",
    "deck_root",
    "deck_leaf_count",
    "board",
)
SEAT_COLUMNS = (
    "hand_id",
    "seat",
    "player_id",
    "display_name",
    "ai_level",
    "stack_start",
    "stack_end",
    "net",
    "shown",
    "vpip",
    "pfr",
    "went_to_showdown",
    "won_at_showdown",
    "ended_at",
)
POT_COLUMNS = (
    "hand_id",
    "index",
    "amount",
    "eligible",
    "share_seats",
    "share_amounts",
    "winning_hand",
)
EVENT_COLUMNS = ("hand_id", "sequence", "recorded_at", "payload")
TABLE_EVENT_COLUMNS = ("table_id", "sequence", "recorded_at", "payload")

Rows = dict[str, list[tuple[Any, ...]]]


def archive_rows(hands: Sequence[ArchivedHand]) -> Rows:
    """The rows of ``hands``, per table, in the columns above (what ``COPY`` sends)."""
    rows: Rows = {
        "archived_hands": [],
        "archived_seats": [],
        "archived_pots": [],
        "archived_events": [],
    }
    for h in hands:
        rows["archived_hands"].append(
            (
                h.hand_id,
                h.table_id,
                h.number,
                h.table_hand_id,
                h.variant,
                h.button,
                h.started_at,
                h.ended_at,
                h.first_sequence,
                h.last_sequence,
                h.deck_root,
                h.deck_leaf_count,
                list(h.board),
            )
        )
        for s in h.seats:
            m = s.summary
            rows["archived_seats"].append(
                (
                    h.hand_id,
                    m.seat,
                    m.player_id,
                    s.display_name,
                    s.ai_level,
                    m.stack_start,
                    m.stack_end,
                    m.net,
                    list(s.shown),
                    m.vpip,
                    m.pfr,
                    m.went_to_showdown,
                    m.won_at_showdown,
                    h.ended_at,
                )
            )
        for p in h.pots:
            rows["archived_pots"].append(
                (
                    h.hand_id,
                    p.index,
                    p.amount,
                    list(p.eligible),
                    [seat for seat, _ in p.shares],
                    [chips for _, chips in p.shares],
                    p.hand,
                )
            )
        for e in h.events:
            rows["archived_events"].append((h.hand_id, e.sequence, e.recorded_at, e.payload))
    return rows


COLUMNS = {
    "archived_hands": HAND_COLUMNS,
    "archived_seats": SEAT_COLUMNS,
    "archived_pots": POT_COLUMNS,
    "archived_events": EVENT_COLUMNS,
}

# One statement moves every cursor of a write: a table's first write (expected 0) inserts
# its row (of two racing first writes, the second's ON CONFLICT waits for the first to
# commit and then inserts nothing); later ones update it only if it is still at the
# expected position (a row another writer holds is waited for, then re-checked). The
# tables returned are those that moved.
_MOVE_CURSORS = """
WITH w AS (
    SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[], $5::text[],
                         $6::text[], $7::text[])
        AS w(table_id, expected, position, players, last_hand, last_table_hand, fingerprint)
), first AS (
    INSERT INTO archive_cursors
        (table_id, position, players, last_hand, last_table_hand, fingerprint)
    SELECT table_id, position, players::jsonb, last_hand, last_table_hand, fingerprint FROM w
    WHERE expected = 0
    ON CONFLICT (table_id) DO NOTHING
    RETURNING table_id
), later AS (
    UPDATE archive_cursors AS c
    SET position = w.position, players = w.players::jsonb, last_hand = w.last_hand,
        last_table_hand = w.last_table_hand, fingerprint = w.fingerprint, updated_at = now()
    FROM w
    WHERE w.expected > 0 AND c.table_id = w.table_id AND c.position = w.expected
    RETURNING c.table_id
)
SELECT table_id FROM first UNION ALL SELECT table_id FROM later
"""


def _players_json(cursor: Cursor) -> str:
    return json.dumps([list(p) for p in cursor.players])


class PostgresHandArchive:
    """:class:`~felt.storage.archive.port.HandArchive` on a PostgreSQL pool.

    The caller closes the pool.
    """

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def cursor(self, table_id: str) -> Cursor:
        row = await self.pool.fetchrow(
            "SELECT position, players, last_hand, last_table_hand, fingerprint"
            " FROM archive_cursors"
            " WHERE table_id = $1",
            table_id,
        )
        if row is None:
            return Cursor()
        players = tuple(
            (int(s), str(p), str(n), str(a)) for s, p, n, a in json.loads(row["players"])
        )
        return Cursor(
            row["position"], players, row["last_hand"], row["last_table_hand"], row["fingerprint"]
        )

    async def write(self, writes: Sequence[TableWrite]) -> None:
        check_writes(writes)
        if not writes:
            return
        try:
            await self._write(writes)
        except asyncpg.UniqueViolationError as exc:
            if exc.constraint_name != "archived_hands_table_id_number_key":
                raise
            raise await self._number_taken(writes) from exc

    async def _number_taken(self, writes: Sequence[TableWrite]) -> Exception:
        """Which write's hand number is taken (the failure path only: a second look)."""
        for w in writes:
            for hand in w.hands:
                other = await self.pool.fetchval(
                    "SELECT hand_id FROM archived_hands WHERE table_id = $1 AND number = $2",
                    hand.table_id,
                    hand.number,
                )
                if other is not None and other != hand.hand_id:
                    return HandNumberTaken(hand.table_id, hand.number)
        return RuntimeError("a hand number was taken, then freed")  # pragma: no cover

    async def _write(self, writes: Sequence[TableWrite]) -> None:
        ids = [w.table_id for w in writes]
        async with self.pool.acquire() as conn, conn.transaction():
            moved = await conn.fetch(
                _MOVE_CURSORS,
                ids,
                [w.expected for w in writes],
                [w.cursor.position for w in writes],
                [_players_json(w.cursor) for w in writes],
                [w.cursor.last_hand for w in writes],
                [w.cursor.last_table_hand for w in writes],
                [w.cursor.fingerprint for w in writes],
            )
            if len(moved) != len(writes):
                done = {r["table_id"] for r in moved}
                lost = next(w for w in writes if w.table_id not in done)
                actual = await conn.fetchval(
                    "SELECT position FROM archive_cursors WHERE table_id = $1", lost.table_id
                )
                raise PositionMoved(lost.table_id, lost.expected, int(actual or 0))
            rows = archive_rows([h for w in writes for h in w.hands])
            for table, records in rows.items():
                if records:
                    await conn.copy_records_to_table(table, records=records, columns=COLUMNS[table])
            table_events = [
                (w.table_id, e.sequence, e.recorded_at, e.payload)
                for w in writes
                for e in w.table_events
            ]
            if table_events:
                await conn.copy_records_to_table(
                    "archived_table_events", records=table_events, columns=TABLE_EVENT_COLUMNS
                )
            late = [item for w in writes for item in w.late]
            if late:
                await conn.executemany(
                    "INSERT INTO archived_events (hand_id, sequence, recorded_at, payload)"
                    " VALUES ($1, $2, $3, $4)",
                    [
                        (i.hand_id, i.event.sequence, i.event.recorded_at, i.event.payload)
                        for i in late
                    ],
                )
                await conn.executemany(
                    "UPDATE archived_hands SET last_sequence = greatest(last_sequence, $2)"
                    " WHERE hand_id = $1",
                    [(i.hand_id, i.event.sequence) for i in late],
                )
                shown = [(i.hand_id, i.seat, list(i.shown)) for i in late if i.shown]
                if shown:
                    await conn.executemany(
                        "UPDATE archived_seats SET shown = $3 WHERE hand_id = $1 AND seat = $2",
                        shown,
                    )

    async def hand(self, hand_id: str) -> ArchivedHand | None:
        async with self.pool.acquire() as conn, conn.transaction(isolation="repeatable_read"):
            h = await conn.fetchrow("SELECT * FROM archived_hands WHERE hand_id = $1", hand_id)
            if h is None:
                return None
            seats = await conn.fetch(
                "SELECT * FROM archived_seats WHERE hand_id = $1 ORDER BY seat", hand_id
            )
            pots = await conn.fetch(
                "SELECT * FROM archived_pots WHERE hand_id = $1 ORDER BY index", hand_id
            )
            events = await conn.fetch(
                "SELECT sequence, recorded_at, payload FROM archived_events"
                " WHERE hand_id = $1 ORDER BY sequence",
                hand_id,
            )
        order = {
            seat: i
            for i, seat in enumerate(_dealing_order(h["button"], [s["seat"] for s in seats]))
        }
        return ArchivedHand(
            hand_id=h["hand_id"],
            table_id=h["table_id"],
            table_hand_id=h["table_hand_id"],
            number=h["number"],
            variant=h["variant"],
            button=h["button"],
            started_at=h["started_at"],
            ended_at=h["ended_at"],
            deck_root=h["deck_root"],
            deck_leaf_count=h["deck_leaf_count"],
            board=tuple(h["board"]),
            seats=tuple(sorted((_seat(s) for s in seats), key=lambda s: order[s.seat])),
            pots=tuple(
                ArchivedPot(
                    p["index"],
                    p["amount"],
                    tuple(p["eligible"]),
                    tuple(zip(p["share_seats"], p["share_amounts"], strict=True)),
                    p["winning_hand"],
                )
                for p in pots
            ),
            events=tuple(
                ArchivedEvent(e["sequence"], e["recorded_at"], bytes(e["payload"])) for e in events
            ),
        )

    async def table_hands(
        self, table_id: str, *, before: int | None = None, limit: int = 50
    ) -> list[HandHeader]:
        rows = await self.pool.fetch(
            "SELECT hand_id, table_id, number, variant, started_at, ended_at FROM archived_hands"
            " WHERE table_id = $1 AND ($2::integer IS NULL OR number < $2)"
            " ORDER BY number DESC LIMIT $3",
            table_id,
            before,
            check_limit(limit),
        )
        return [HandHeader(*r.values()) for r in rows]

    async def player_hands(
        self, player_id: str, *, before: PlayerPageKey | None = None, limit: int = 50
    ) -> list[PlayerHand]:
        rows = await self.pool.fetch(
            "SELECT s.*, h.table_id, h.number, h.variant FROM archived_seats s"
            " JOIN archived_hands h USING (hand_id)"
            " WHERE s.player_id = $1"
            " AND ($2::timestamptz IS NULL OR (s.ended_at, s.hand_id) < ($2, $3))"
            " ORDER BY s.ended_at DESC, s.hand_id DESC LIMIT $4",
            player_id,
            before.ended_at if before else None,
            before.hand_id if before else "",
            check_limit(limit),
        )
        return [
            PlayerHand(
                r["hand_id"], r["table_id"], r["number"], r["variant"], r["ended_at"], _summary(r)
            )
            for r in rows
        ]

    async def player_stats(self, player_id: str) -> PlayerStats:
        r = await self.pool.fetchrow(
            "SELECT count(*) AS hands, coalesce(sum(net), 0) AS net,"
            " count(*) FILTER (WHERE vpip) AS vpip, count(*) FILTER (WHERE pfr) AS pfr,"
            " count(*) FILTER (WHERE went_to_showdown) AS sd,"
            " count(*) FILTER (WHERE won_at_showdown) AS wsd"
            " FROM archived_seats WHERE player_id = $1",
            player_id,
        )
        assert r is not None
        return PlayerStats(
            player_id, r["hands"], int(r["net"]), r["vpip"], r["pfr"], r["sd"], r["wsd"]
        )

    async def table_events(
        self, table_id: str, *, after: int = 0, limit: int = MAX_PAGE
    ) -> list[ArchivedEvent]:
        rows = await self.pool.fetch(
            "SELECT sequence, recorded_at, payload FROM archived_table_events"
            " WHERE table_id = $1 AND sequence > $2 ORDER BY sequence LIMIT $3",
            table_id,
            after,
            check_limit(limit),
        )
        return [ArchivedEvent(r["sequence"], r["recorded_at"], bytes(r["payload"])) for r in rows]


def _summary(r: asyncpg.Record) -> SeatSummary:
    return SeatSummary(
        r["seat"],
        r["player_id"],
        r["stack_start"],
        r["stack_end"],
        r["net"],
        r["vpip"],
        r["pfr"],
        r["went_to_showdown"],
        r["won_at_showdown"],
    )


def _seat(r: asyncpg.Record) -> ArchivedSeat:
    return ArchivedSeat(_summary(r), r["display_name"], r["ai_level"], tuple(r["shown"]))


def _dealing_order(button: int, seats: list[int]) -> list[int]:
    """Seats clockwise from the left of the button (the order the hand dealt them in)."""
    return sorted(seats, key=lambda s: (s <= button, s))
