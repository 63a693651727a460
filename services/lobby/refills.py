"""A busted AI seat refilled from the house between hands (RULES.md, "Chips at the table and
sitting out"), without gRPC.

Without it a lounge's AI seats dwindle: each one that busts sits at 0 for good, and a table
whose AI seats all bust but one is left to its people (or, with nobody else seated, deals no
hand at all; a player who chose to wait for the big blind waits for ever). The house pays for
each refill as it paid for the seat's first stack, so every chip stays a ledger entry.

A refill is a saga of two steps, driven by :meth:`RefillApp.recover` (periodically; the
lobby has no other way to hear that a seat busted than to look):

1. **funded** — the lounge's table is read (``GetTableView`` as the service); an AI seat of an
   OPEN lounge that still holds its AI player at 0 chips, out of the hand in play (all in, it
   shows 0 behind until the hand ends), gets its lounge stack from the house
   (``Ledger.fund_ai_refill``: a ``house_seat`` movement and the saga FUNDED, in one
   transaction; the seat's refill still FUNDED instead, if any: one at a time per seat).
2. **added** — ``AddChips`` as the service, for whoever sits at the seat, with the refill's
   own request id (``lounge/<lounge>/ai/<seat>/refill/<n>``, the same on every retry) and
   ``max_stack`` equal to the amount, so the table adds the chips only to a seat that is at
   0 when they arrive. The table's answer, kept for the table's life, makes every retry
   answer alike: added, it is ADDED (``Ledger.ai_refill_added``).

A refusal because the seat is not at 0 (refilled by another pass, whose answer this one
did not hear) or is in a hand leaves the refill FUNDED: the house's chips wait for the
seat's next bust, which takes this refill again rather than a new one. Only a refusal for
good (the table closed or gone, the seat empty: the lounge is closing) sends the chips
back to the house (``Ledger.return_ai_refill``: a ``house_return`` movement and RETURNED).
The table never answers the same request both ways, so two lobbies driving one refill
agree. A table that does not answer leaves the refill FUNDED for the next pass, and a
closing lounge (``services.lobby.closing``) is not CLOSED while one of its refills is.
"""

from __future__ import annotations

import structlog

from poker.v1.reason_pb2 import Reason
from services.lobby.application import LobbyApp
from services.lobby.ports import (
    AiRefill,
    Lounge,
    Lounges,
    RefillState,
    TableRefused,
    Tables,
    TablesUnavailable,
    refill_request_id,
)
from services.lobby.recovery import Backoffs

log = structlog.get_logger("felt.lobby.refills")

RECOVER_BATCH = 100
"""Lounges read (and FUNDED refills driven) per pass, at most."""

GONE_FOR_GOOD = frozenset(
    Reason.Name(r)
    for r in (Reason.TABLE_CLOSED, Reason.NO_TABLE, Reason.SEAT_EMPTY, Reason.EMPTY_SEAT)
)
"""The table's refusals of a refill after which no retry of it can ever add it: the chips go
back to the house. Any other refusal (the seat not at 0, in a hand) leaves it FUNDED."""


class RefillApp:
    def __init__(self, lobby: LobbyApp, lounges: Lounges, tables: Tables) -> None:
        self.lobby, self.lounges, self.tables = lobby, lounges, tables
        self._after = 0  # where the walk of OPEN lounges with AI seats is
        self._waits = Backoffs()  # lounges whose table did not answer wait longer each time

    async def recover(self) -> int:
        """One pass: the FUNDED refills driven on (a batch), then a page of OPEN lounges with
        AI seats read and their busted AI seats refilled; how many refills were added."""
        added = 0
        for refill in await self.lobby.ledger.funded_ai_refills(None, RECOVER_BATCH):
            added += await self.drive(refill) is RefillState.ADDED
        page = await self.lounges.with_ai(self._after, RECOVER_BATCH)
        self._after = page[-1].listing_id if len(page) == RECOVER_BATCH else 0
        now = self.lobby.clock()
        for lounge in page:
            if not self._waits.due(lounge.lounge_id, now):
                continue
            try:
                added += await self.refill(lounge)
                self._waits.succeeded(lounge.lounge_id)
            except TablesUnavailable as exc:
                self._waits.failed(lounge.lounge_id, now)
                log.warning("refill_not_checked", lounge_id=lounge.lounge_id, error=str(exc))
            except TableRefused as exc:  # no table (any more): the close pass's business
                log.info("refill_not_checked", lounge_id=lounge.lounge_id, reason=exc.reason)
        return added

    async def refill(self, lounge: Lounge) -> int:
        """Each of ``lounge``'s AI seats that its table shows at 0 chips and out of the hand in
        play (a seat all in shows 0 behind until the hand ends), still held by its AI player,
        funded and refilled; how many were added."""
        seats = await self.tables.seats_now(lounge.lounge_id)
        added = 0
        for ai in lounge.seats:
            now = seats.get(ai.seat)
            if (
                not ai.ai_level
                or now is None
                or now.player_id != ai.player_id
                or now.stack
                or now.in_hand
            ):
                continue
            refill = await self.lobby.ledger.fund_ai_refill(
                lounge.lounge_id, ai.seat, ai.stack, self.lobby.clock()
            )
            if refill is not None:
                added += await self.drive(refill) is RefillState.ADDED
        return added

    async def drive(self, refill: AiRefill) -> RefillState:
        """``AddChips`` for a FUNDED refill: ADDED, RETURNED (refused for good), or FUNDED
        still (refused for now, or no answer). ``TablesUnavailable`` is logged, not raised."""
        lid, seat, n = refill.lounge_id, refill.seat, refill.n
        try:
            await self.tables.add_chips(
                lid, seat, "", refill.amount, refill.amount, refill_request_id(lid, seat, n)
            )
        except TablesUnavailable as exc:
            log.warning("refill_unanswered", lounge_id=lid, seat=seat, n=n, error=str(exc))
            return RefillState.FUNDED
        except TableRefused as exc:
            if exc.reason not in GONE_FOR_GOOD:
                log.info("refill_waits", lounge_id=lid, seat=seat, n=n, reason=exc.reason)
                return RefillState.FUNDED
            await self.lobby.ledger.return_ai_refill(lid, seat, n, self.lobby.clock())
            log.info("refill_returned", lounge_id=lid, seat=seat, n=n, reason=exc.reason)
            return RefillState.RETURNED
        await self.lobby.ledger.ai_refill_added(lid, seat, n)
        log.info("ai_seat_refilled", lounge_id=lid, seat=seat, n=n, chips=refill.amount)
        return RefillState.ADDED

    async def settle(self, lounge_id: str) -> int:
        """A closing lounge's FUNDED refills driven (each ADDED, or RETURNED once its seat is
        gone); how many are still FUNDED (the close waits for them)."""
        pending = 0
        for refill in await self.lobby.ledger.funded_ai_refills(lounge_id, RECOVER_BATCH):
            pending += await self.drive(refill) is RefillState.FUNDED
        return pending
