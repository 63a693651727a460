"""Closing a lounge (``CloseLounge``, or its table ending by itself), without gRPC.

A close is driven again and again until it is done, each pass retry-safe and
crash-safe, by the owner's call, then by :meth:`ClosingApp.recover` (on start and
periodically):

1. **closing** — OPEN to CLOSING (``Closes.mark_closing``): no more joins (a buy-in
   already under way is seated and then sent home, or refused by the closed table
   and compensated).
2. **the table** — ``CloseTable`` (between hands; while a hand runs it is tried
   again on the next pass); buy-ins under way driven to SEATED or COMPENSATED (a closed
   table refuses a new seat), and chip adds under way (RESERVED) to ADDED or COMPENSATED
   (the table answers the add's own request: on the seat, its chips leave with the
   seat's stack; refused, they come back), so none is stranded; then ``GetTable``: for
   each player's seat still held by its player, that sequence is recorded on the saga
   (``Closes.seen_seated``, once), *before* the seat is asked to leave (``LeaveSeat``
   with the service credential, AI seats too): the seat's ``PlayerLeft`` is after it,
   whenever it comes (at once, or when the hand in play ends).
3. **settle** — a seat whose ``PlayerLeft`` is there is settled in one transaction
   (``Closes.settle``: its stack back to the balance as a ``table closed`` movement,
   key ``table-closed/<saga>``, the saga LEFT). A seat whose player had asked to leave
   (its saga LEAVING, perhaps with a leave the table refused) is settled the same way;
   if the leave's own pass gets there first, it is its cash-out instead. Either way
   the saga's row lock lets one of them credit it, once. A seat the busted seats' pass
   freed (a person busted past the lounge's grace, ``services.lobby.busted``) whose buy-in a
   crash left SEATED is finished by that pass's own leave again (``BustedSeats.finish``).
   Each AI seat, once vacated (its ``PlayerLeft``, after the sequence a pass saw it
   held, ``Closes.ai_seen_seated``), is settled to the house the same way
   (``Closes.settle_ai``: its stack back as a ``house_return`` movement, once). A refill
   of a busted AI seat still on its way (``services.lobby.refills``, FUNDED) is driven
   before that: onto a seat still there at 0 (its stack then comes back with it), or, the
   seat gone (the close asked it to leave just before), back to the house.
4. **closed** — once the table is closed, no saga of the lounge (buy-in, chip add or AI
   refill) holds chips off the balances and no AI seat holds the house's chips, CLOSED.

Until a seat is settled its chips count as on the table (they are), so balances +
chips on tables + the house == chips granted at every moment. A lounge whose table closes by
itself (``max_hands``, ``close_time``) is found by the recovery pass
(``Closes.ending``: only those lounges, a batch per pass) and closed the same way.
"""

from __future__ import annotations

from datetime import datetime

import structlog

from felt.storage.idempotency import ClientRequest
from felt.wire import limits
from poker.events.v1 import events_pb2 as epb
from poker.v1.reason_pb2 import Reason
from services.lobby.auth import Caller
from services.lobby.busted import BustedSeats
from services.lobby.chips import ChipsApp
from services.lobby.lounges import LoungeApp
from services.lobby.ports import (
    BuyInState,
    Closes,
    Lounge,
    LoungeState,
    TableRefused,
    Tables,
    TablesUnavailable,
)
from services.lobby.refills import RefillApp
from services.lobby.refusals import Code, Refused
from services.lobby.seating import SeatingApp

log = structlog.get_logger("felt.lobby.closing")

RECOVER_BATCH = 100


def close_request_id(lounge_id: str) -> str:
    """The table service's request id for a lounge's ``CloseTable``."""
    return f"lounge/{lounge_id}/close"


class ClosingApp:
    def __init__(
        self,
        seating: SeatingApp,
        closes: Closes,
        chips: ChipsApp | None = None,
        refills: RefillApp | None = None,
        busted: BustedSeats | None = None,
    ) -> None:
        self.seating, self.closes, self.chips, self.refills = seating, closes, chips, refills
        self.busted = busted  # finishes a busted seat's leave a crash left half-done
        self.lounges: LoungeApp = seating.lounges
        self.tables: Tables = seating.tables
        self.lobby = seating.lobby
        self._ending_after = 0  # where the recovery pass's walk of self-ending lounges is

    async def close(self, caller: Caller, request: ClientRequest, lounge_id: str) -> Lounge:
        """Close the caller's lounge (see the module docstring); the lounge as it is then. A
        retry, or a second close, answers with the lounge as it is now and moves nothing."""
        claim = await self.lobby.signed_in(caller)
        limits.check_request_id(request.request_id)
        lounge = await self.lounges.get(caller, lounge_id, "")  # NO_LOUNGE as for a reader
        if lounge.owner_id != claim.player_id:
            raise Refused(
                Code.PERMISSION_DENIED, "only the lounge's owner may close it", Reason.NOT_OWNER
            )
        if lounge.state is LoungeState.CREATING:
            raise Refused(
                Code.FAILED_PRECONDITION,
                "the lounge is still being created: retry CreateLounge first",
                Reason.LOUNGE_NOT_OPEN,
            )
        lounge = await self.closes.mark_closing(lounge.lounge_id)
        log.info("lounge_closing", lounge_id=lounge.lounge_id, by="owner")
        try:
            return await self.drive(lounge)
        except TablesUnavailable:
            raise Refused(
                Code.UNAVAILABLE,
                "the table service did not answer: the lounge is closing and every seat's "
                "chips come home once its table frees them (the lobby finishes it by itself)",
                Reason.TABLES_UNAVAILABLE,
            ) from None
        except TableRefused as exc:
            log.error("lounge_close_refused", lounge_id=lounge.lounge_id, reason=exc.reason)
            raise Refused(
                Code.FAILED_PRECONDITION,
                f"the table service refused the lounge's table: {exc.message}; the lounge "
                "is closing, and the lobby keeps trying",
                Reason.TABLE_REFUSED,
            ) from None

    async def drive(self, lounge: Lounge) -> Lounge:
        """One pass of a CLOSING lounge's close (any other lounge is returned as it is):
        CLOSED when it is done. ``TablesUnavailable`` leaves it for the next pass."""
        if lounge.state is not LoungeState.CLOSING:
            return lounge
        lid = lounge.lounge_id
        try:
            table_closed = await self.tables.close(lid, close_request_id(lid))
        except TableRefused as exc:  # quarantined, say: an operator's business; seats still go
            log.error("lounge_table_not_closed", lounge_id=lid, reason=exc.reason)
            table_closed = False
        for saga in await self.closes.unsettled(lid):  # buy-ins under way: seated, or refused
            if saga.state is BuyInState.RESERVED:
                await self.seating.drive(saga)
        if self.chips is not None:  # chip adds under way: on the seat, or back
            for add in await self.chips.chip_adds.reserved_at(lid):
                await self.chips.drive(add)
        seen = await self.tables.occupants(lid)
        sitting = dict(seen.seats)
        sagas = []
        for saga in await self.closes.unsettled(lid):  # where each seat is seen held, first
            if (
                saga.state in (BuyInState.SEATED, BuyInState.LEAVING)
                and saga.leave_sequence is None
                and saga.seat is not None
                and sitting.get(saga.seat) == saga.player_id
            ):
                saga = await self.closes.seen_seated(saga.saga_id, seen.sequence)
            sagas.append(saga)
        # Then every seat is asked to leave: the AI players, and each player whose seat was
        # seen held (a seat the table gave a buy-in the lobby has not recorded yet waits for
        # the next pass, so that its PlayerLeft is never before its recorded sequence).
        ai_seats = [s for s in lounge.seats if s.ai_level]
        ai_players = {s.player_id for s in ai_seats}
        for ai in ai_seats:  # where each AI seat is seen held, first, as a player's
            if ai.leave_sequence is None and sitting.get(ai.seat) == ai.player_id:
                await self.closes.ai_seen_seated(lid, ai.seat, seen.sequence)
        seen_held = {
            (s.seat, s.player_id)
            for s in sagas
            if s.state is not BuyInState.RESERVED and s.leave_sequence is not None
        }
        for seat, player_id in seen.seats:
            if player_id not in ai_players and (seat, player_id) not in seen_held:
                continue
            try:
                await self.tables.leave(lid, seat, "", f"close/{lid}/{seat}/{seen.sequence}")
            except TableRefused as exc:  # leaving already (when the hand ends), or gone
                log.debug("close_leave_refused", lounge_id=lid, seat=seat, reason=exc.reason)
        pending = 0
        for saga in sagas:
            if saga.state is BuyInState.RESERVED:
                pending += 1  # the table service did not answer its seating yet
                continue
            assert saga.seat is not None
            if saga.leave_sequence is None:
                # A busted seat the table freed (the busted seats' pass's leave) and the lobby
                # did not record yet (its player may have asked to leave since: LEAVING, that
                # leave refused): that leave again, answered from the table's record.
                busted = self.busted
                if busted and await busted.finish(saga):
                    continue
                log.warning("close_seat_not_seen", saga_id=saga.saga_id, lounge_id=lid)
                pending += 1
                continue
            stack = await self.tables.vacated(
                lid, saga.seat, saga.player_id, saga.leave_sequence - 1
            )
            if stack is None:
                pending += 1  # dealt in: vacated when the hand ends
                continue
            await self.closes.settle(saga.saga_id, stack, self.lobby.clock())
            log.info("seat_sent_home", saga_id=saga.saga_id, lounge_id=lid, chips=stack)
        if self.refills is not None:  # the house's chips on their way to a busted AI seat
            pending += await self.refills.settle(lid)
        pending += await self._settle_ai(lid)
        if pending or not table_closed:
            return lounge
        log.info("lounge_closed", lounge_id=lid)
        return await self.closes.mark_closed(lid)

    async def _settle_ai(self, lid: str) -> int:
        """Each vacated AI seat's stack back to the house (``Closes.settle_ai``); how many
        are still seated. An AI seat never seen held (gone before the close looked) is read
        from the table's first event on."""
        lounge = await self.lounges.lounges.get(lid)
        pending = 0
        for ai in lounge.seats if lounge is not None else ():
            if not ai.ai_level:
                continue
            after = ai.leave_sequence - 1 if ai.leave_sequence is not None else 0
            stack = await self.tables.vacated(lid, ai.seat, ai.player_id, after)
            if stack is None:
                pending += 1  # dealt in: vacated when the hand ends
                continue
            await self.closes.settle_ai(lid, ai.seat, stack, self.lobby.clock())
            log.info("ai_seat_sent_home", lounge_id=lid, seat=ai.seat, chips=stack)
        return pending

    async def recover(self) -> tuple[int, int]:
        """Drive every CLOSING lounge on, and start the close of lounges whose table ended by
        itself (a batch of them per pass); how many closed, and how many were found ended."""
        found = await self._find_ended()
        closed = 0
        for lounge in await self.closes.closing(RECOVER_BATCH):
            try:
                done = await self.drive(lounge)
            except (TablesUnavailable, TableRefused) as exc:
                log.warning("close_not_recovered", lounge_id=lounge.lounge_id, error=str(exc))
                continue
            closed += done.state is LoungeState.CLOSED
        return closed, found

    async def _find_ended(self) -> int:
        batch = await self.closes.ending(self._ending_after, RECOVER_BATCH)
        self._ending_after = batch[-1].listing_id if len(batch) == RECOVER_BATCH else 0
        now = self.lobby.clock()
        found = 0
        for lounge in batch:
            if not _may_have_ended(lounge.config, now):
                continue
            try:
                seen = await self.tables.occupants(lounge.lounge_id)
            except (TablesUnavailable, TableRefused) as exc:
                log.warning("lounge_not_checked", lounge_id=lounge.lounge_id, error=str(exc))
                continue
            if seen.closed:
                await self.closes.mark_closing(lounge.lounge_id)
                log.info("lounge_closing", lounge_id=lounge.lounge_id, by="its limit")
                found += 1
        return found


def _may_have_ended(config: bytes, now: datetime) -> bool:
    """A hands limit may have been reached any time; a time limit only once its time came."""
    table = epb.TableConfig.FromString(config)
    if table.HasField("close_time") and not table.max_hands:
        return table.close_time.ToDatetime(tzinfo=now.tzinfo) <= now
    return True
