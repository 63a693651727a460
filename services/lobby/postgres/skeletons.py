"""Fill in the confusable skeleton of players named before migration 0012.

PostgreSQL cannot compute a UTS #39 skeleton (it takes ICU's confusable data), so the
migration adds the column empty and this step, run by ``felt db migrate`` after the SQL
migrations (and by ``felt lobby --dev`` at start), computes it in the lobby. It is
idempotent and bounded: it reads the rows still without one in batches, oldest player
first, so that of two old names that look alike the older one holds the skeleton. The
younger keeps its name but no skeleton (it stays NULL, which the unique index ignores),
and is reported; no new name can take either look.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from services.lobby.names import skeleton

_BATCH = 500


@dataclass(frozen=True, slots=True)
class Backfill:
    filled: int  # rows given their skeleton now
    look_alikes: int  # rows left without one: an older player's name looks the same


async def backfill_skeletons(dsn: str) -> Backfill:
    """Give every player without a ``name_skeleton`` its name's skeleton, where no older
    player's name has it."""
    conn = await asyncpg.connect(dsn)
    try:
        filled = look_alikes = 0
        after: tuple[object, str] | None = None
        while True:
            rows = await conn.fetch(
                "SELECT player_id, display_name, created_at FROM players "
                "WHERE name_skeleton IS NULL "
                "AND ($1::timestamptz IS NULL OR (created_at, player_id) > ($1, $2)) "
                "ORDER BY created_at, player_id LIMIT $3",
                after[0] if after else None,
                after[1] if after else "",
                _BATCH,
            )
            if not rows:
                return Backfill(filled, look_alikes)
            for row in rows:
                try:
                    status = await conn.execute(
                        "UPDATE players SET name_skeleton = $2 WHERE player_id = $1 "
                        "AND name_skeleton IS NULL AND NOT EXISTS "
                        "(SELECT 1 FROM players WHERE name_skeleton = $2)",
                        row["player_id"],
                        skeleton(row["display_name"]),
                    )
                except asyncpg.UniqueViolationError:  # a sign-up took that look just now
                    status = "UPDATE 0"
                if status == "UPDATE 1":
                    filled += 1
                else:
                    look_alikes += 1
            last = rows[-1]
            after = (last["created_at"], last["player_id"])
    finally:
        await conn.close()
