"""Busted seats at OPEN lounges (RULES.md, "Chips at the table and sitting out"), without gRPC.

A seat left with no chips after a hand is not dealt in. The lobby hears of a bust from nobody,
so :meth:`BustedSeats.recover` looks: each pass reads a page of OPEN lounges with a seat taken
(``GetTableView`` as the service, one call a lounge). A seat all in shows 0 chips behind until
its hand ends, so a seat dealt in to the hand in play is never taken for busted.

A busted **AI seat** adds chips from the house between hands (``services.lobby.refills``).

A busted **person** sits out until they add chips (``AddSeatChips``) or leave; after the
lounge's grace (``Lounge.busted_grace_s``, default 5 minutes; 0: never) the seat is freed and
the player leaves the table. The table says *which* bust it sees: ``Seat.busted_hand``, the
number of the hand whose end left the seat with no chips (chips added reset it; losing them
again sets the later hand's). The grace counts from the first pass that saw the seat's buy-in
(its saga) busted since that hand (``BuyIns.busted_seen``: a new hand, a new grace), so a
seat that added chips and lost them in between is not freed early. Once it has passed:

1. **leave** — the table's *conditional* ``LeaveSeat`` as the seat (the saga's own stored
   token, so it names the very seating; a player who left and sat down again holds another
   token) with ``busted_hand``, request id ``busted/<saga>/<hand>``. The table refuses it
   (``NOT_BUSTED``, or the token no longer the seat's), changing nothing, unless the seat is
   still at 0 chips, out of the hand in play and busted since that hand: a rebuy
   (``AddSeatChips``) that lands first wins, and the seat stays. Else ``PlayerLeft`` with
   ``busted`` set and 0 chips.
2. **freed** — ``BuyIns.busted_freed``: the saga SEATED (or LEAVING: the player's own leave
   under way) to LEFT with a stack of 0, its lounge seat freed, in one transaction; nothing
   to cash out, so the ledger is as a leave with nothing behind leaves it.

A retry is the same request: the table answers a leave it made with its first answer (it keeps
``LeaveSeat`` answers), so a pass whose answer was lost, or a lobby that crashed between the
two steps, finishes it on a later pass: the saga still SEATED, its recorded bust's grace
passed, and the table showing its seat no longer its player's, the pass sends that same
conditional leave again (:meth:`BustedSeats.finish`); so does the close of a lounge that began
meanwhile, for such a buy-in, before it settles the seats, and so does the player's own leave
asked meanwhile (LEAVING, which this pass does not look at: ``SeatingApp.drive_leave``, once
the table refused the player's leave, the seat's token being void). Two passes at once (two lobby
processes) send the same request and free once.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import structlog

from services.lobby.ports import (
    BuyIn,
    BuyIns,
    BuyInState,
    Lounge,
    Lounges,
    SeatNow,
    TableRefused,
    TablesUnavailable,
)
from services.lobby.recovery import Backoffs
from services.lobby.refills import RefillApp

log = structlog.get_logger("felt.lobby.busted")

LOUNGES_PER_PASS = 100
"""OPEN lounges with a seat taken whose table one pass reads, at most (the walk goes on from
there next pass)."""


def busted_leave_request_id(saga_id: str, busted_hand: int) -> str:
    """The conditional ``LeaveSeat``'s request id: one per buy-in and bust, so every retry of a
    decision is that same request, and a later bust's is another."""
    return f"busted/{saga_id}/{busted_hand}"


class BustedSeats:
    def __init__(self, lounges: Lounges, refills: RefillApp, buy_ins: BuyIns) -> None:
        self.lounges, self.refills, self.buy_ins = lounges, refills, buy_ins
        self._after = 0  # where the walk of OPEN lounges with a seat taken is
        self._waits = Backoffs()  # lounges whose table did not answer wait longer each time

    async def recover(self) -> int:
        """One pass: a page of OPEN lounges with a seat taken read, their busted AI seats
        refilled and their persons' seats busted past the grace freed; how many seats were
        refilled or freed."""
        done = 0
        page = await self.lounges.occupied(self._after, LOUNGES_PER_PASS)
        self._after = page[-1].listing_id if len(page) == LOUNGES_PER_PASS else 0
        now = self.refills.lobby.clock()
        for lounge in page:
            if not self._waits.due(lounge.lounge_id, now):
                continue
            try:
                seats = await self.refills.tables.seats_now(lounge.lounge_id)
                done += await self.refills.refill(lounge, seats)
                done += await self.free(lounge, seats)
                self._waits.succeeded(lounge.lounge_id)
            except TablesUnavailable as exc:
                self._waits.failed(lounge.lounge_id, now)
                log.warning("busted_seats_not_checked", lounge_id=lounge.lounge_id, error=str(exc))
            except TableRefused as exc:  # no table (any more): the close pass's business
                log.info("busted_seats_not_checked", lounge_id=lounge.lounge_id, reason=exc.reason)
        return done

    async def free(self, lounge: Lounge, seats: dict[int, SeatNow]) -> int:
        """Each person's seat of ``lounge`` that its table (``seats``) shows busted for longer
        than the lounge's grace freed; how many were. ``TablesUnavailable`` is raised (the
        lounge is looked at again after its backoff)."""
        grace = timedelta(seconds=lounge.busted_grace_s)
        if not grace:
            return 0  # this lounge never frees a busted seat
        freed = 0
        for held in lounge.seats:
            if held.ai_level:
                continue
            seen = seats.get(held.seat)
            holds = seen is not None and seen.player_id == held.player_id
            if seen is not None and holds and (seen.stack or seen.in_hand or not seen.busted_hand):
                continue  # chips behind, or in the hand in play: not busted (nothing to read)
            saga = await self.buy_ins.seated_saga(held.player_id, lounge.lounge_id)
            if saga is None or saga.seat != held.seat:
                continue  # joining, leaving or left: not this pass's
            now = self.refills.lobby.clock()
            if seen is not None and holds:
                since = await self.buy_ins.busted_seen(saga.saga_id, seen.busted_hand, now)
                if now - since >= grace:
                    freed += await self._free(saga, seen.busted_hand, since, now)
                continue
            # The lobby holds the seat but the table shows it another's or empty: perhaps this
            # pass's leave went through and its answer (or the commit after it) was lost.
            noted = await self.buy_ins.busted_noted(saga.saga_id)
            if noted is not None and now - noted[1] >= grace:
                freed += await self.finish(saga)
        return freed

    async def finish(self, saga: BuyIn) -> bool:
        """A SEATED buy-in whose seat the table no longer shows held by its player: if the lobby
        recorded a bust of it, the conditional leave of that bust is sent again (the same
        request: answered from the table's record if it went through, when the buy-in is then
        LEFT with 0; refused, changing nothing, if it did not). Whether it is LEFT now. The
        close of a lounge (``services.lobby.closing``) asks too: this pass walks OPEN lounges
        only."""
        noted = await self.buy_ins.busted_noted(saga.saga_id)
        if noted is None:
            return False
        return bool(await self._free(saga, noted[0], noted[1], self.refills.lobby.clock()))

    async def _free(self, saga: BuyIn, busted_hand: int, since: datetime, now: datetime) -> int:
        """The conditional leave of ``saga``'s seat busted since ``busted_hand``, then the saga
        LEFT with 0 chips; 1 if the seat was freed, 0 if the table refused (nothing changed)."""
        assert saga.seat is not None and saga.seat_token is not None  # SEATED
        lid = saga.lounge_id
        try:
            departure = await self.refills.tables.leave(
                lid,
                saga.seat,
                saga.seat_token,
                busted_leave_request_id(saga.saga_id, busted_hand),
                busted_hand=busted_hand,
            )
        except TableRefused as exc:
            # Chips added meanwhile (the rebuy won), busted again since, or the seat not this
            # buy-in's any more: the table changed nothing, nor does the lobby.
            log.info("busted_seat_kept", lounge_id=lid, saga_id=saga.saga_id, reason=exc.reason)
            return 0
        if departure.stack:
            # Not a conditional leave's answer (that frees a seat at 0 only): a table service
            # older than LeaveSeatRequest.busted_hand (a rolling update) took it for a plain
            # leave. Never recorded as a leave with nothing: its chips stay counted as on the
            # table, for an operator to settle by the table's PlayerLeft.
            log.error(
                "busted_leave_not_conditional",
                lounge_id=lid,
                saga_id=saga.saga_id,
                chips=departure.stack,
                sequence=departure.sequence,
            )
            return 0
        after = await self.buy_ins.busted_freed(saga.saga_id, now)
        if after.state is not BuyInState.LEFT:  # pragma: no cover - HELD just now, under lock
            log.warning("busted_seat_not_closed", saga_id=saga.saga_id, state=after.state.value)
            return 0
        log.info(
            "busted_seat_freed",
            lounge_id=lid,
            saga_id=saga.saga_id,
            seat=saga.seat,
            busted_hand=busted_hand,
            busted_for_s=int((now - since).total_seconds()),
            sequence=departure.sequence,
        )
        return 1
