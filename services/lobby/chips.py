"""Adding chips at the table (``AddSeatChips``), without gRPC: the add-chips saga.

A seated player's rebuy (once busted) or top-up moves chips from their balance to their
seat with the buy-in's guarantees, in three steps, each retry-safe:

1. **reserve** — one transaction records the saga (RESERVED, keyed by the client's
   request, which also derives the saga's id) and takes the chips from the balance (a
   ``buy_in`` ledger row keyed ``add-chips/<saga>``). Not enough chips: nothing is written.
2. **add** — the table service adds them to the seat (``AddChips`` as the seat, with the
   seat token the saga recorded, request id ``add-chips/<saga>``, so a retry after a crash
   is the same request and gets the first answer; ``max_stack`` the lounge's max_buy_in,
   which the table checks on the stack it adds to).
3. **commit** — ADDED with the seat's stack after; or, if the table definitely refused
   (the seat is dealt in: HAND_RUNNING; the stack would pass the maximum; the seat is not
   this player's any more), **compensate**: the chips come back at once (a ``cash_out``
   row keyed ``add-chips-refund/<saga>``, once) and COMPENSATED.

An unknown outcome (``TablesUnavailable``) leaves the saga RESERVED, its chips counted as
at the table: the client's retry with the same request id or :meth:`ChipsApp.recover`
(periodically, beside the buy-ins') asks again. Chips added are part of the seat's stack,
so its leave's cash-out (``PlayerLeft``'s stack) brings them home with the rest.

Checked before any chip moves (a first call): the player's own SEATED seat at the lounge
(NOT_SEATED), the lounge OPEN, the seat not in a hand in play as far as the table's view
shows (HAND_RUNNING; the table's own refusal covers the rest), and the stack after within
the lounge's min_buy_in and max_buy_in. ``amount`` 0 means "up to the lounge's maximum".
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import timedelta

import structlog

from felt.service.refusals import reason_name
from felt.storage.idempotency import ClientRequest, RequestKey
from felt.wire import limits
from poker.v1.reason_pb2 import Reason
from services.lobby.auth import Caller
from services.lobby.lounges import LoungeApp
from services.lobby.ports import (
    BuyIns,
    ChipAdd,
    ChipAdds,
    ChipAddState,
    InsufficientChips,
    LoungeState,
    NewChipAdd,
    TableRefused,
    Tables,
    TablesUnavailable,
)
from services.lobby.refusals import Code, Refused
from services.lobby.tables import CALL_TIMEOUT_S

log = structlog.get_logger("felt.lobby.chips")

RECOVER_BATCH = 100


@dataclass(frozen=True, slots=True)
class ChipsAddedToSeat:
    """An add-chips saga ADDED, and the player's balance after it."""

    chip_add: ChipAdd
    balance: int


def add_request_id(saga_id: str) -> str:
    """The table service's request id for a saga's ``AddChips`` (the same on every retry)."""
    return f"add-chips/{saga_id}"


def _not_seated() -> Refused:
    return Refused(
        Code.FAILED_PRECONDITION,
        "you have no seat at this lounge (or it is leaving): join it to play",
        Reason.NOT_SEATED,
    )


def _unavailable() -> Refused:
    return Refused(
        Code.UNAVAILABLE,
        "the table service did not answer: your chips are held for your seat; retry with "
        "the same request_id (the lobby also finishes it by itself)",
        Reason.TABLES_UNAVAILABLE,
    )


class ChipsApp:
    def __init__(self, lounges: LoungeApp, buy_ins: BuyIns, chip_adds: ChipAdds, tables: Tables):
        self.lounges, self.buy_ins, self.chip_adds, self.tables = (
            lounges,
            buy_ins,
            chip_adds,
            tables,
        )
        self.lobby = lounges.lobby

    async def add(
        self, caller: Caller, request: ClientRequest, lounge_id: str, amount: int
    ) -> ChipsAddedToSeat:
        """Add ``amount`` chips (0: up to the lounge's maximum) from the caller's balance to
        their seat at a lounge, between its hands. A retry with the same request id answers
        as the first call did (finishing what a crash or an unreachable table left)."""
        claim = await self.lobby.signed_in(caller)
        limits.check_request_id(request.request_id)
        limits.check_table_id(lounge_id)
        if not 0 <= amount <= limits.CHIP_CAP:  # as check_amount, the value not repeated
            raise limits.LimitError(
                Reason.BAD_AMOUNT,
                f"amount must be 0 (up to the lounge's maximum) to {limits.CHIP_CAP:,} chips",
            )
        key = request.key(f"add-chips/{claim.player_id}")
        saga_id = "c-" + hashlib.sha256(key.key.encode()).hexdigest()[:24]
        saga = await self.chip_adds.first(key)  # RequestReused: other content, same id
        if saga is None:
            new = await self._checked(claim.player_id, lounge_id, amount, saga_id, key)
            try:
                reservation = await self.chip_adds.reserve(new)
            except InsufficientChips as exc:
                raise Refused(
                    Code.FAILED_PRECONDITION, str(exc), Reason.INSUFFICIENT_CHIPS
                ) from None
            saga = reservation.chip_add
        try:
            saga = await self.drive(saga)
        except TablesUnavailable:
            raise _unavailable() from None
        if saga.state is ChipAddState.COMPENSATED:
            raise Refused.relayed(
                Code.FAILED_PRECONDITION,
                f"the table did not add the chips ({saga.refusal}); your chips are back",
                saga.refusal or reason_name(Reason.TABLE_REFUSED),
            )
        account = await self.lobby._account(claim.player_id)
        return ChipsAddedToSeat(saga, account.balance)

    async def _checked(
        self,
        player_id: str,
        lounge_id: str,
        amount: int,
        saga_id: str,
        key: RequestKey,
    ) -> NewChipAdd:
        """A first call's checks, before any chip moves, and the saga they allow."""
        seat = await self.buy_ins.seated_saga(player_id, lounge_id)
        if seat is None:
            raise _not_seated()
        assert seat.seat is not None and seat.seat_token is not None  # SEATED
        lounge = await self.lounges.lounges.get(lounge_id)
        if lounge is None:
            raise _not_seated()
        if lounge.state is not LoungeState.OPEN:
            raise Refused(Code.FAILED_PRECONDITION, "the lounge is closing", Reason.LOUNGE_NOT_OPEN)
        try:
            now = await self.tables.seat_now(lounge_id, seat.seat)
        except TablesUnavailable:
            raise Refused(
                Code.UNAVAILABLE,
                "the table service did not answer; no chips moved: retry",
                Reason.TABLES_UNAVAILABLE,
            ) from None
        except TableRefused:
            raise _not_seated() from None
        if now is None or now.player_id != player_id:
            raise _not_seated()
        if now.in_hand:
            raise Refused(
                Code.FAILED_PRECONDITION,
                "your seat is dealt in to the hand in play: add chips when it ends",
                Reason.HAND_RUNNING,
            )
        room = lounge.max_buy_in - now.stack
        if amount == 0:
            amount = room
        if room <= 0 or amount > room:
            raise Refused(
                Code.FAILED_PRECONDITION,
                f"a seat here holds at most {lounge.max_buy_in:,} chips: "
                + (f"at most {room:,} more fit now" if room > 0 else "yours is full"),
                Reason.ABOVE_MAX_BUY_IN,
            )
        if now.stack + amount < lounge.min_buy_in:
            raise Refused(
                Code.FAILED_PRECONDITION,
                f"a seat here starts a hand with at least {lounge.min_buy_in:,} chips: "
                f"add at least {lounge.min_buy_in - now.stack:,}",
                Reason.BELOW_MIN_BUY_IN,
            )
        return NewChipAdd(
            saga_id,
            player_id,
            lounge_id,
            seat.saga_id,
            seat.seat,
            seat.seat_token,
            amount,
            lounge.max_buy_in,
            key,
            self.lobby.clock(),
        )

    async def drive(self, saga: ChipAdd) -> ChipAdd:
        """Take a RESERVED saga to ADDED or COMPENSATED (a finished one is returned as is);
        ``TablesUnavailable`` leaves it RESERVED."""
        if saga.state is not ChipAddState.RESERVED:
            return saga
        try:
            added = await self.tables.add_chips(
                saga.lounge_id,
                saga.seat,
                saga.seat_token,
                saga.amount,
                saga.max_stack,
                add_request_id(saga.saga_id),
            )
        except TableRefused as exc:
            log.info("chip_add_refused", saga_id=saga.saga_id, reason=exc.reason)
            return await self.chip_adds.compensate(saga.saga_id, exc.reason, self.lobby.clock())
        return await self.chip_adds.added(saga.saga_id, added.stack)

    async def recover(self) -> tuple[int, int]:
        """Drive every RESERVED saga on (periodically): how many were added and how many
        compensated; those the table service does not answer wait for the next pass."""
        added = compensated = 0
        # Only adds older than two call timeouts: one the client's own call may still be
        # driving is left to it (two attempts of one add in flight at once could see one
        # refused and refunded while the other is added).
        settled_before = self.lobby.clock() - timedelta(seconds=2 * CALL_TIMEOUT_S)
        for saga in await self.chip_adds.unfinished(RECOVER_BATCH):
            if saga.created_at > settled_before:
                continue
            try:
                done = await self.drive(saga)
            except TablesUnavailable as exc:
                log.warning("chip_add_not_recovered", saga_id=saga.saga_id, error=str(exc))
                continue
            added += done.state is ChipAddState.ADDED
            compensated += done.state is ChipAddState.COMPENSATED
        return added, compensated
