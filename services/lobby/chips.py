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
(periodically, beside the buy-ins') asks again, with the buy-ins' guarantees
(:mod:`services.lobby.recovery`: longest due first, backoff doubling from 2 s to 5 min, a
bounded number of attempts, then stuck for an operator, ``felt sagas``). From then on only
the operator drives it (the player's retry is refused ``CHIP_ADD_STUCK``), so no second
call of the saga can race the one that settles it. Chips added are part of the seat's stack,
so its leave's cash-out (``PlayerLeft``'s stack) brings them home with the rest.

Checked before any chip moves (a first call): the player's own SEATED seat at the lounge
(NOT_SEATED), the lounge OPEN, the seat not in a hand in play as far as the table's view
shows (HAND_RUNNING; the table's own refusal covers the rest), and the stack after within
the lounge's min_buy_in and max_buy_in. ``amount`` 0 means "up to the lounge's maximum".
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

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
    add_request_id,
)
from services.lobby.recovery import (
    RecoveryMetrics,
    RecoveryPolicy,
    ResolveRefused,
    SagaRecovery,
    check_settled,
)
from services.lobby.refusals import Code, Refused
from services.lobby.tables import CALL_TIMEOUT_S

log = structlog.get_logger("felt.lobby.chips")


@dataclass(frozen=True, slots=True)
class ChipsAddedToSeat:
    """An add-chips saga ADDED, and the player's balance after it."""

    chip_add: ChipAdd
    balance: int


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


def _stuck() -> Refused:
    return Refused(
        Code.FAILED_PRECONDITION,
        "the table service did not answer this add of chips for too long: an operator "
        "settles it (your chips are held for it, then added or returned)",
        Reason.CHIP_ADD_STUCK,
    )


class ChipsApp:
    def __init__(
        self,
        lounges: LoungeApp,
        buy_ins: BuyIns,
        chip_adds: ChipAdds,
        tables: Tables,
        policy: RecoveryPolicy | None = None,
        metrics: RecoveryMetrics | None = None,
    ):
        self.lounges, self.buy_ins, self.chip_adds, self.tables = (
            lounges,
            buy_ins,
            chip_adds,
            tables,
        )
        self.lobby = lounges.lobby
        # Adds younger than two call timeouts are left to their client's own call, which
        # may still be driving them (two calls of one add in flight at once could see one
        # refused and refunded while the other is added).
        self.recovery = SagaRecovery(
            "chip_add",
            chip_adds,
            self.drive,
            lambda done: done.state is ChipAddState.ADDED,
            lambda: self.lobby.clock(),  # the lobby's clock as it is at each pass
            policy,
            metrics,
            grace=timedelta(seconds=2 * CALL_TIMEOUT_S),
        )

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
        elif saga.state is ChipAddState.RESERVED and saga.stuck_at is not None:
            raise _stuck()  # only the operator drives it on: a refund must not race an add
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
        return await drive_chip_add(self.chip_adds, self.tables, saga, self.lobby.clock())

    async def recover(self) -> tuple[int, int]:
        """One recovery pass over the RESERVED adds due (:class:`SagaRecovery`: longest due
        first, a bounded batch, backoff, stuck after bounded attempts): how many were added
        and how many compensated; those the table service does not answer wait their turn."""
        tally = await self.recovery.run_pass()
        return tally.committed, tally.compensated


async def drive_chip_add(
    chip_adds: ChipAdds, tables: Tables, saga: ChipAdd, at: datetime
) -> ChipAdd:
    """The saga's table step: ``AddChips`` as the seat with the token and request id the
    saga recorded (so every call of it is one request to the table, which answers a retry
    as the first time), then ADDED, or COMPENSATED on a definite refusal. A finished saga is
    returned as is; ``TablesUnavailable`` leaves it RESERVED."""
    if saga.state is not ChipAddState.RESERVED:
        return saga
    try:
        added = await tables.add_chips(
            saga.lounge_id,
            saga.seat,
            saga.seat_token,
            saga.amount,
            saga.max_stack,
            add_request_id(saga.saga_id),
        )
    except TableRefused as exc:
        log.info("chip_add_refused", saga_id=saga.saga_id, reason=exc.reason)
        return await chip_adds.compensate(saga.saga_id, exc.reason, at)
    return await chip_adds.added(saga.saga_id, added.stack)


@dataclass(frozen=True, slots=True)
class ChipAddResolution:
    """What resolving a stuck chip add did: ``outcome`` is added, refunded, or finished."""

    outcome: str
    chip_add: ChipAdd


class StuckChipAdds:
    """The operator's side of stuck chip adds (``felt sagas``), as :class:`StuckSagas` is of
    buy-ins: settle one by the table's answer, or put it back in the pass's queue."""

    def __init__(
        self,
        chip_adds: ChipAdds,
        tables: Tables,
        clock: Callable[[], datetime],
        policy: RecoveryPolicy | None = None,
    ) -> None:
        self.chip_adds, self.tables, self.clock = chip_adds, tables, clock
        self.policy = policy or RecoveryPolicy()

    async def requeue(self, saga_id: str) -> ChipAdd:
        """Back in the pass's queue, due at once with its attempts reset (``--retry``)."""
        saga = await self.chip_adds.get(saga_id)
        if saga is None:
            raise ResolveRefused(f"no chip-add saga {saga_id}")
        if saga.state is not ChipAddState.RESERVED:
            raise ResolveRefused(f"the saga is {saga.state.value}: nothing to retry")
        saga = await self.chip_adds.requeue(saga_id)
        log.info("chip_add_requeued", saga_id=saga_id)
        return saga

    async def resolve(self, saga_id: str) -> ChipAddResolution:
        """Settle a stuck chip add by what the table service shows, never both ways and never
        by guessing: the saga's own ``AddChips`` (the token and request id it recorded) is
        answered from the table's record of that request when it went through (the chips
        are on the seat: ADDED, the seat credited), and otherwise decided now on the seat
        as it is (added now, or a definite refusal: the seat left, a hand running, the
        maximum passed: refunded, COMPENSATED). Refused (nothing changed) while a call of
        the saga may still land (not stuck, or attempted less than ``settle`` ago) or the
        table service does not answer."""
        saga = await self.chip_adds.get(saga_id)
        if saga is None:
            raise ResolveRefused(f"no chip-add saga {saga_id}")
        if saga.state is not ChipAddState.RESERVED:
            return ChipAddResolution("finished", saga)
        at = self.clock()
        check_settled(saga, at, self.policy)
        try:
            done = await drive_chip_add(self.chip_adds, self.tables, saga, at)
        except TablesUnavailable as exc:
            raise ResolveRefused(
                f"the table service did not answer ({exc}); nothing changed"
            ) from None
        outcome = {ChipAddState.ADDED: "added", ChipAddState.COMPENSATED: "refunded"}
        log.warning("chip_add_resolved", saga_id=saga_id, outcome=outcome[done.state])
        return ChipAddResolution(outcome[done.state], done)
