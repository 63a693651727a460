"""Busted seats at OPEN lounges (RULES.md, "Chips at the table and sitting out"), without gRPC.

A seat left with no chips after a hand is not dealt in. RULES.md says what happens next:

- **an AI seat** adds chips from the house between hands (``services.lobby.refills``);
- **a person** sits out until chips are added; after a grace (``LobbySettings
  .busted_seat_grace``, 5 minutes by default) the seat is freed and the player leaves the
  table: the lobby leaves the seat for them (the leave saga of ``services.lobby.seating``,
  which cashes out the 0 chips behind it), so a player who walked away from a busted seat
  holds no lounge seat, and no seat token that plays, for ever.

The lobby hears of neither from the table service, so :meth:`BustedSeats.recover` looks: each
pass reads a page of OPEN lounges' tables (``GetTableView`` as the service, one call a
lounge). A seat all in shows 0 chips behind until its hand ends, so a seat dealt in to the
hand in play is never taken for busted.

When a person's seat went busted is this process's own record (the table keeps no such
field): a lobby restarted meanwhile, or another instance, starts the grace afresh when it
first sees the seat busted. A grace may so run longer, never shorter; two instances freeing
one seat leave it once (a second leave of a LEAVING seat is the same leave).
"""

from __future__ import annotations

from datetime import datetime, timedelta

import structlog

from felt.storage.idempotency import server_key
from services.lobby.ports import (
    Lounge,
    Lounges,
    NotSeated,
    SeatNow,
    TableRefused,
    TablesUnavailable,
)
from services.lobby.recovery import Backoffs
from services.lobby.refills import RefillApp
from services.lobby.seating import SeatingApp

log = structlog.get_logger("felt.lobby.busted")

LOUNGES_PER_PASS = 100
"""OPEN lounges whose table one pass reads, at most (the walk goes on from there next pass)."""
FORGET_AFTER = timedelta(days=1)
"""A busted seat's record outlives its grace by this much at most (a seat still busted then
was freed at its grace; one not seen since sat at a lounge that closed)."""


class BustedSeats:
    def __init__(self, seating: SeatingApp, lounges: Lounges, refills: RefillApp) -> None:
        self.seating, self.lounges, self.refills = seating, lounges, refills
        self.lobby, self.tables = seating.lobby, seating.tables
        self._after = 0  # where the walk of OPEN lounges is
        self._waits = Backoffs()  # lounges whose table did not answer wait longer each time
        # (lounge, seat, player) -> when this process first saw that person's seat busted
        self._since: dict[tuple[str, int, str], datetime] = {}

    async def recover(self) -> tuple[int, int]:
        """One pass: a page of OPEN lounges read, their busted AI seats refilled and their
        persons busted for longer than the grace sent away; how many refills were added and
        how many seats freed."""
        added = freed = 0
        page = await self.lounges.open_after(self._after, LOUNGES_PER_PASS)
        self._after = page[-1].listing_id if len(page) == LOUNGES_PER_PASS else 0
        now = self.lobby.clock()
        for lounge in page:
            if not self._waits.due(lounge.lounge_id, now):
                continue
            try:
                seats = await self.tables.seats_now(lounge.lounge_id)
                added += await self.refills.refill(lounge, seats)
                freed += await self._free(lounge, seats, now)
                self._waits.succeeded(lounge.lounge_id)
            except TablesUnavailable as exc:
                self._waits.failed(lounge.lounge_id, now)
                log.warning("busted_seats_not_checked", lounge_id=lounge.lounge_id, error=str(exc))
            except TableRefused as exc:  # no table (any more): the close pass's business
                log.info("busted_seats_not_checked", lounge_id=lounge.lounge_id, reason=exc.reason)
        # A seat seen busted long ago and not since (its lounge closed meanwhile): forgotten.
        stale = now - (self.lobby.settings.busted_seat_grace or timedelta(0)) - FORGET_AFTER
        self._since = {k: v for k, v in self._since.items() if v > stale}
        return added, freed

    async def _free(self, lounge: Lounge, seats: dict[int, SeatNow], now: datetime) -> int:
        """Each person of ``lounge`` whose seat has been busted (0 chips, out of the hand in
        play) for the grace or longer, sent away (its leave saga); how many."""
        grace = self.lobby.settings.busted_seat_grace
        freed = 0
        for person in lounge.seats:
            if person.ai_level:
                continue
            key = (lounge.lounge_id, person.seat, person.player_id)
            seen = seats.get(person.seat)
            if seen is None or seen.player_id != person.player_id or seen.stack or seen.in_hand:
                self._since.pop(key, None)  # chips added, dealt in, or gone: no longer busted
                continue
            since = self._since.setdefault(key, now)
            if grace is None or now - since < grace:
                continue
            request = server_key(
                "busted-leave", f"{lounge.lounge_id}/{person.seat}", int(since.timestamp())
            )
            try:
                saga = await self.seating.buy_ins.leaving(
                    person.player_id, lounge.lounge_id, request, now
                )
            except NotSeated:  # its buy-in is not SEATED (leaving already, say)
                self._since.pop(key, None)
                continue
            await self.seating.drive_leave(saga)
            self._since.pop(key, None)
            freed += 1
            log.info(
                "busted_seat_freed",
                lounge_id=lounge.lounge_id,
                seat=person.seat,
                saga_id=saga.saga_id,
                busted_s=int((now - since).total_seconds()),
            )
        return freed
