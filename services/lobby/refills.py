"""A busted AI seat refilled from the house between hands (RULES.md, "Chips at the table and
sitting out"), without gRPC.

Without it a lounge's AI seats dwindle: each one that busts sits at 0 for good, and a table
whose AI seats all bust but one is left to its people (or, with nobody else seated, deals no
hand at all; a player who chose to wait for the big blind waits for ever). The house pays for
each refill as it paid for the seat's first stack, so every chip stays a ledger entry.

A refill is a saga of two steps. The busted seats' pass (``services.lobby.busted``) reads each
OPEN lounge's table periodically (the lobby hears of a bust from nobody) and hands each AI
seat it shows at 0 chips, out of the hand in play, to :meth:`RefillApp.refill`:

1. **funded** — the lounge's AI stack from the house (``Ledger.fund_ai_refill``: a
   ``house_seat`` movement and the saga FUNDED, in one transaction, the lounge's row shared
   so that a close cannot begin meanwhile), or the seat's refill still FUNDED, if any (one at
   a time per seat), or nothing when the seat had ``LobbySettings.ai_refills_per_day`` refills
   since midnight UTC already (the house's bound at a lounge).
2. **added** — ``AddChips`` as the service, for whoever sits at the seat, with the refill's
   own request id (``lounge/<lounge>/ai/<seat>/refill/<n>``, the same on every retry) and
   ``max_stack`` equal to the amount, so the table adds the chips only to a seat at 0. The
   table keeps the answer of an add for the table's life (``KEPT_CALLS``): a retry after it
   was added is answered alike, whichever lobby sends it. ADDED (``Ledger.ai_refill_added``).

The table does not record a refusal, so a refusal *for now* (the seat not at 0: another pass
refilled it, or the answer was lost after the chips landed) leaves the refill FUNDED: the
seat's next bust takes it again (its retry then adds, or gets the first answer back) rather
than a new one. A refusal *for good* (the table closed or gone, the seat empty) can never turn
into an add, so the chips go back to the house (``Ledger.return_ai_refill``: a
``house_return`` movement and RETURNED). A table that does not answer leaves the refill FUNDED
for the seat's next look. A closing lounge (``services.lobby.closing``) drives its FUNDED
refills (:meth:`RefillApp.settle`) and is not CLOSED while one is left.
"""

from __future__ import annotations

import structlog

from poker.v1.reason_pb2 import Reason
from services.lobby.application import LobbyApp
from services.lobby.house import day_start
from services.lobby.ports import (
    AiRefill,
    Lounge,
    RefillState,
    SeatNow,
    TableRefused,
    Tables,
    TablesUnavailable,
    refill_request_id,
)

log = structlog.get_logger("felt.lobby.refills")

SETTLE_BATCH = 100
"""FUNDED refills of a closing lounge driven per pass, at most (it has one per AI seat at most)."""

GONE_FOR_GOOD = frozenset(
    Reason.Name(r)
    for r in (Reason.TABLE_CLOSED, Reason.NO_TABLE, Reason.SEAT_EMPTY, Reason.EMPTY_SEAT)
)
"""The table's refusals of a refill after which no retry of it can ever add it: the chips go
back to the house. Any other refusal (the seat not at 0, in a hand) leaves it FUNDED."""


class RefillApp:
    def __init__(self, lobby: LobbyApp, tables: Tables) -> None:
        self.lobby, self.tables = lobby, tables

    async def refill(self, lounge: Lounge, seats: dict[int, SeatNow]) -> int:
        """Each of ``lounge``'s AI seats that its table shows (``seats``) at 0 chips and out of
        the hand in play (a seat all in shows 0 behind until the hand ends), still held by its
        AI player, funded and refilled; how many were added."""
        added = 0
        for ai in lounge.seats:
            seen = seats.get(ai.seat)
            if (
                not ai.ai_level
                or seen is None
                or seen.player_id != ai.player_id
                or seen.stack
                or seen.in_hand
            ):
                continue
            now = self.lobby.clock()
            refill = await self.lobby.ledger.fund_ai_refill(
                lounge.lounge_id,
                ai.seat,
                ai.stack,
                now,
                day_start(now),
                self.lobby.settings.ai_refills_per_day,
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
        for refill in await self.lobby.ledger.funded_ai_refills(lounge_id, SETTLE_BATCH):
            pending += await self.drive(refill) is RefillState.FUNDED
        return pending
