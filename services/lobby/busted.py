"""Busted seats at OPEN lounges (RULES.md, "Chips at the table and sitting out"), without gRPC.

A seat left with no chips after a hand is not dealt in. A busted **AI seat** adds chips from
the house between hands (``services.lobby.refills``); the lobby hears of a bust from nobody,
so :meth:`BustedSeats.recover` looks: each pass reads a page of OPEN lounges with AI seats
(``GetTableView`` as the service, one call a lounge). A seat all in shows 0 chips behind until
its hand ends, so a seat dealt in to the hand in play is never taken for busted.

A busted **person** sits out until they add chips. RULES.md's grace after which their seat is
freed is not built yet: freeing it from this pass would need the table to say when the seat
went busted (a pass sees a stack of 0 twice, not the chips added and lost in between) and the
leave to name the very buy-in it frees (a player who left and sat down again meanwhile holds
another); see docs/operations.md, "Busted seats".
"""

from __future__ import annotations

import structlog

from services.lobby.ports import Lounges, TableRefused, TablesUnavailable
from services.lobby.recovery import Backoffs
from services.lobby.refills import RefillApp

log = structlog.get_logger("felt.lobby.busted")

LOUNGES_PER_PASS = 100
"""OPEN lounges with AI seats whose table one pass reads, at most (the walk goes on from there
next pass)."""


class BustedSeats:
    def __init__(self, lounges: Lounges, refills: RefillApp) -> None:
        self.lounges, self.refills = lounges, refills
        self._after = 0  # where the walk of OPEN lounges with AI seats is
        self._waits = Backoffs()  # lounges whose table did not answer wait longer each time

    async def recover(self) -> int:
        """One pass: a page of OPEN lounges with AI seats read, their busted AI seats
        refilled; how many refills were added."""
        added = 0
        page = await self.lounges.with_ai(self._after, LOUNGES_PER_PASS)
        self._after = page[-1].listing_id if len(page) == LOUNGES_PER_PASS else 0
        now = self.refills.lobby.clock()
        for lounge in page:
            if not self._waits.due(lounge.lounge_id, now):
                continue
            try:
                seats = await self.refills.tables.seats_now(lounge.lounge_id)
                added += await self.refills.refill(lounge, seats)
                self._waits.succeeded(lounge.lounge_id)
            except TablesUnavailable as exc:
                self._waits.failed(lounge.lounge_id, now)
                log.warning("busted_seats_not_checked", lounge_id=lounge.lounge_id, error=str(exc))
            except TableRefused as exc:  # no table (any more): the close pass's business
                log.info("busted_seats_not_checked", lounge_id=lounge.lounge_id, reason=exc.reason)
        return added
