"""Seating's use cases (``JoinLounge``), without gRPC: the buy-in saga.

Chips move between the ledger and a table in three steps, each retry-safe:

1. **reserve** — one transaction records the saga (RESERVED, keyed by the client's
   request, which also derives the saga's id) and takes the buy-in from the balance
   (ledger key ``buy-in/<saga>``). Not enough chips: nothing is written.
2. **seat** — the table service seats the player with those chips (``SeatPlayer``
   with the admin credential and the request id ``buy-in/<saga>``: the table service
   answers a retried id as the first time, so a retry after a crash gets the same seat
   and seat token).
3. **commit** — SEATED, with the seat in the lounge's seats; or, if the table service
   definitely refused (``TableRefused``: a taken seat, a full table), **compensate**:
   the chips come back (ledger key ``buy-in-refund/<saga>``, once) and COMPENSATED.

Before any chips move, a first call is checked against the lobby's view of the lounge
(open, the buy-in in range, not seated there yet, the seat asked for free, a seat free
at all: ``SEAT_TAKEN`` and ``TABLE_FULL`` then refuse at once); the table service stays
the authority, and a seat taken meanwhile (players racing for the last seat) is its
definite refusal, compensated at once.

An unknown outcome (``TablesUnavailable``: the call may or may not have seated the
player) leaves the saga RESERVED: its chips stay counted as on the table, and the
client's retry or :meth:`SeatingApp.recover` (on start and periodically: fair, with
backoff and a bounded number of attempts, :mod:`services.lobby.recovery`) asks again
with the same request id; a saga the pass gave up on (stuck) waits for an operator. So
at every moment balances + chips reserved or at tables == chips created, and no buy-in
is lost or counted twice.

Leaving (``LeaveLounge``) is the saga's second half, on the same row:

1. **leaving** — one transaction marks the player's SEATED saga at the lounge LEAVING,
   with the client's request key (a retry finds it; a second leave of the seat gets the
   same saga and moves nothing).
2. **leave** — ``LeaveSeat`` as the seat (its stored token, request id ``leave/<saga>``, so a
   retry gets the first answer); the table's sequence it answers with is recorded.
3. **vacated** — the seat's ``PlayerLeft`` after that sequence gives the final stack: at once
   if the seat was not dealt in, else when the hand in play ends (its cards folded at its
   turn). Then one transaction credits the cash-out (ledger key ``cash-out/<saga>``, once),
   frees the lounge's seat and marks the saga LEFT.

Until step 3 the saga's chips count as on the table (they are: the seat holds them), so
the invariant holds throughout; :meth:`SeatingApp.recover` drives LEAVING sagas on (an
unreachable table service, a crash, or a hand still in play).
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from datetime import datetime

import structlog

from felt.service.refusals import reason_name
from felt.storage.idempotency import ClientRequest
from felt.wire import limits
from poker.events.v1 import events_pb2 as epb
from poker.v1.reason_pb2 import Reason
from services.lobby.auth import Caller
from services.lobby.busted import busted_leave_request_id
from services.lobby.house import house_limit_refusal
from services.lobby.lounges import LoungeApp
from services.lobby.ports import (
    BuyIn,
    BuyIns,
    BuyInState,
    InsufficientChips,
    Lounge,
    LoungeState,
    NewBuyIn,
    NoAccount,
    NotSeated,
    Reservation,
    SeatGrant,
    TableRefused,
    Tables,
    TablesUnavailable,
)
from services.lobby.recovery import (
    RESOLVED_NOT_SEATED,
    BuyInRecovery,
    RecoveryMetrics,
    RecoveryPolicy,
    settled,
)
from services.lobby.refusals import Code, Refused

log = structlog.get_logger("felt.lobby.seating")


@dataclass(frozen=True, slots=True)
class Joined:
    """A seat taken: the saga's outcome, and the player's balance after the buy-in."""

    buy_in: BuyIn
    balance: int


@dataclass(frozen=True, slots=True)
class Left:
    """A leave's saga (LEAVING until the seat is vacated, then LEFT with its stack) and the
    player's balance now."""

    buy_in: BuyIn
    balance: int


def _first_call_refusal(
    lounge: Lounge, player_id: str, seat: int | None, buy_in: int, wait_for_big_blind: bool
) -> Refused | None:
    """Why a first join of ``lounge`` must be refused before any chips move, if it must."""
    if wait_for_big_blind and lounge.variant != epb.VARIANT_NLHE:
        # The table's own refusal (its rule: only Hold'em has a big blind), said here from
        # the lounge's variant so that no chips are reserved for a seat the table refuses.
        return Refused(
            Code.FAILED_PRECONDITION,
            "this game has no big blind to wait for",
            Reason.NO_BIG_BLIND,
        )
    if lounge.state is not LoungeState.OPEN:
        return Refused(
            Code.FAILED_PRECONDITION,
            "the lounge is closed"
            if lounge.state in (LoungeState.CLOSING, LoungeState.CLOSED)
            else "the lounge could not be created"
            if lounge.state is LoungeState.FAILED
            else "the lounge is not open yet: retry CreateLounge",
            Reason.LOUNGE_NOT_OPEN,
        )
    if not lounge.min_buy_in <= buy_in <= lounge.max_buy_in:
        return Refused(
            Code.INVALID_ARGUMENT,
            f"the buy-in must be {lounge.min_buy_in:,} to {lounge.max_buy_in:,} chips "
            "at this lounge",
            Reason.BAD_BUY_IN,
        )
    if any(s.player_id == player_id for s in lounge.seats):
        return Refused(
            Code.FAILED_PRECONDITION, "you sit at this lounge already", Reason.ALREADY_SEATED
        )
    if seat is not None and any(s.seat == seat for s in lounge.seats):
        return Refused(
            Code.FAILED_PRECONDITION, "that seat is taken: pick a free one", Reason.SEAT_TAKEN
        )
    if len(lounge.seats) >= lounge.seat_count:
        return Refused(Code.FAILED_PRECONDITION, "the lounge is full", Reason.TABLE_FULL)
    return None


def _stuck() -> Refused:
    """A join whose buy-in (or the player's buy-in under way at the lounge) is stuck."""
    return Refused(
        Code.FAILED_PRECONDITION,
        "the table service did not answer your buy-in here for a long time: its chips are "
        "held for it until an operator settles it (seated, or refunded)",
        Reason.BUY_IN_STUCK,
    )


def leave_request_id(saga_id: str) -> str:
    """The table service's request id for a saga's ``LeaveSeat`` (the same on every retry)."""
    return f"leave/{saga_id}"


def table_request_id(saga_id: str) -> str:
    """The table service's request id for a saga's ``SeatPlayer`` (the same on every retry)."""
    return f"buy-in/{saga_id}"


def reissue_request_id(saga_id: str, request_id: str) -> str:
    """The table service's request id for a player's ``RefreshSeatToken`` of a saga's seat:
    the same for a retry of that request, so the table answers with the same token."""
    return "reissue/" + hashlib.sha256(f"{saga_id}\0{request_id}".encode()).hexdigest()[:32]


class SeatingApp:
    def __init__(
        self,
        lounges: LoungeApp,
        buy_ins: BuyIns,
        tables: Tables,
        policy: RecoveryPolicy | None = None,
        metrics: RecoveryMetrics | None = None,
    ) -> None:
        self.lounges, self.buy_ins, self.tables = lounges, buy_ins, tables
        self.lobby = lounges.lobby
        self.recovery = BuyInRecovery(buy_ins, self.drive, self.lobby.clock, policy, metrics)
        # Where the recovery pass's walk of LEAVING sagas is (None: from the oldest).
        self._leaving_after: tuple[datetime, str] | None = None

    async def join(
        self,
        caller: Caller,
        request: ClientRequest,
        lounge_id: str,
        seat: int | None,
        buy_in: int,
        invite_code: str,
        wait_for_big_blind: bool = False,
    ) -> Joined:
        """Take ``seat`` (None: the next free one) at a lounge with ``buy_in`` chips, waiting
        for the big blind if asked (Hold'em only). A retry with the same request id answers
        as the first call did (and finishes what a crash or an unreachable table service
        left)."""
        claim = await self.lobby.signed_in(caller)
        limits.check_request_id(request.request_id)
        key = request.key(f"join/{claim.player_id}")
        saga_id = "b-" + hashlib.sha256(key.key.encode()).hexdigest()[:24]
        lounge = await self.lounges.visible(claim, lounge_id, invite_code)
        limits.check_amount(buy_in, "buy_in")
        if seat is not None and not 0 <= seat < lounge.seat_count:
            raise limits.LimitError(
                Reason.BAD_SEAT, f"seat must be 0-{lounge.seat_count - 1} at this lounge"
            )
        refusal = _first_call_refusal(
            lounge, claim.player_id, seat, buy_in, wait_for_big_blind
        ) or (await house_limit_refusal(self.lobby, lounge, claim.player_id))
        # Checked before chips move, for a first call; a retry is past them (it may be what
        # seated the player here since), so only a refused call looks for its first saga.
        if refusal is not None and await self.buy_ins.get(saga_id) is None:
            raise refusal
        # One buy-in under way per player and lounge: a join with a new request id while
        # one is held (a client that lost its request id, a double click) would hold a
        # second buy-in for the same seat. Its own retry (the same saga) goes on. (Two
        # first calls at the same moment can both pass: the table then refuses the second
        # player seat, ALREADY_SEATED, and it is compensated.)
        pending = await self.buy_ins.reserved_saga(claim.player_id, lounge.lounge_id)
        if pending is not None and pending.saga_id != saga_id and pending.stuck_at is not None:
            raise _stuck()
        if pending is not None and pending.saga_id != saga_id:
            raise Refused(
                Code.FAILED_PRECONDITION,
                "a buy-in of yours at this lounge is still under way (its chips are held "
                "for it): retry it with its request_id, or wait while the lobby finishes it",
                Reason.BUY_IN_PENDING,
            )
        at = self.lobby.clock()
        new = NewBuyIn(
            saga_id, claim.player_id, lounge.lounge_id, seat, buy_in, key, at, wait_for_big_blind
        )
        try:  # a retry finds its first saga here (its fingerprint checked), and moves nothing
            reservation = await self._reserve(new)
        except InsufficientChips as exc:
            raise Refused(Code.FAILED_PRECONDITION, str(exc), Reason.INSUFFICIENT_CHIPS) from None
        held = reservation.buy_in
        if held.state is BuyInState.RESERVED and held.stuck_at is not None:
            # Only the operator drives a stuck saga on: a refund must not race a seat.
            raise _stuck()
        try:
            saga = await self.drive(reservation.buy_in)
        except TablesUnavailable:
            raise Refused(
                Code.UNAVAILABLE,
                "the table service did not answer: your chips are held for this seat; retry "
                "with the same request_id (the lobby also finishes it by itself)",
                Reason.TABLES_UNAVAILABLE,
            ) from None
        if saga.state is BuyInState.COMPENSATED:
            settled = saga.refusal == RESOLVED_NOT_SEATED
            raise Refused.relayed(
                Code.FAILED_PRECONDITION,
                "an operator settled this buy-in: the table never seated you; your chips are back"
                if settled
                else f"the table refused the seat ({saga.refusal}); your chips are back",
                saga.refusal or reason_name(Reason.TABLE_REFUSED),
            )
        return Joined(saga, reservation.balance)

    async def _reserve(self, new: NewBuyIn) -> Reservation:
        """Reserve, opening the player's account with its starting grant first if it has none
        yet (a sign-up that crashed before its grant): the rare case pays the second call."""
        try:
            return await self.buy_ins.reserve(new)
        except NoAccount:
            await self.lobby._account(new.player_id)
            return await self.buy_ins.reserve(new)

    async def drive(self, saga: BuyIn) -> BuyIn:
        """Take a RESERVED saga to SEATED or COMPENSATED (a finished one is returned as is);
        ``TablesUnavailable`` leaves it RESERVED."""
        if saga.state is not BuyInState.RESERVED:
            return saga
        try:
            grant = await self.tables.seat(
                saga.lounge_id,
                saga.seat,
                saga.player_id,
                saga.display_name,
                saga.amount,
                0,
                table_request_id(saga.saga_id),
                wait_for_big_blind=saga.wait_for_big_blind,
            )
        except TableRefused as exc:
            log.info("buy_in_refused", saga_id=saga.saga_id, reason=exc.reason)
            return await self.buy_ins.compensate(saga.saga_id, exc.reason, self.lobby.clock())
        return await self.buy_ins.seated(saga.saga_id, grant)

    async def leave(self, caller: Caller, request: ClientRequest, lounge_id: str) -> Left:
        """Leave the caller's seat at a lounge: its chips come back when the table vacates
        it (now, or when the hand in play ends). A retry with the same request id answers
        with the same saga as it stands now; a second leave of a leaving seat moves nothing."""
        claim = await self.lobby.signed_in(caller)
        limits.check_request_id(request.request_id)
        limits.check_table_id(lounge_id)
        key = request.key(f"leave/{claim.player_id}")
        try:
            saga = await self.buy_ins.leaving(claim.player_id, lounge_id, key, self.lobby.clock())
        except NotSeated:
            raise Refused(
                Code.FAILED_PRECONDITION, "you have no seat at this lounge", Reason.NOT_SEATED
            ) from None
        try:
            saga = await self.drive_leave(saga)
        except TablesUnavailable:
            raise Refused(
                Code.UNAVAILABLE,
                "the table service did not answer: you are leaving and your chips come back "
                "once the seat is free; retry with the same request_id (the lobby also "
                "finishes it by itself)",
                Reason.TABLES_UNAVAILABLE,
            ) from None
        account = await self.lobby._account(claim.player_id)
        return Left(saga, account.balance)

    async def refresh_token(
        self, caller: Caller, request: ClientRequest, lounge_id: str
    ) -> SeatGrant:
        """A fresh seat token for the caller's own current seat at a lounge (seat tokens
        expire; a player may sit longer). The table voids the old token at once; the saga
        stores the new one, which a later ``LeaveSeat`` names the seat by. A retried request
        gets the token it was first given, unless a later refresh has voided it
        (``SEAT_TOKEN_SUPERSEDED``: then nothing is stored)."""
        claim = await self.lobby.signed_in(caller)
        limits.check_request_id(request.request_id)
        limits.check_table_id(lounge_id)
        saga = await self.buy_ins.seated_saga(claim.player_id, lounge_id)
        if saga is None:
            raise Refused(
                Code.FAILED_PRECONDITION, "you have no seat at this lounge", Reason.NOT_SEATED
            )
        assert saga.seat is not None  # SEATED
        try:
            grant = await self.tables.reissue(
                saga.lounge_id,
                saga.seat,
                claim.player_id,
                reissue_request_id(saga.saga_id, request.request_id),
            )
        except TablesUnavailable:
            raise Refused(
                Code.UNAVAILABLE,
                "the table service did not answer; retry with the same request_id",
                Reason.TABLES_UNAVAILABLE,
            ) from None
        except TableRefused as exc:
            if exc.means(Reason.SEAT_TOKEN_SUPERSEDED):
                # A retry (or a replay) of a refresh that a later one overtook: its token is
                # void. Stored, it would replace the live one, and the seat's leave (named
                # by the stored token) would be refused, its chips kept on the table.
                raise Refused(
                    Code.FAILED_PRECONDITION,
                    "a later RefreshSeatToken replaced the token this request was given; "
                    "refresh again with a new request_id",
                    Reason.SEAT_TOKEN_SUPERSEDED,
                ) from None
            # The seat is no longer this player's at the table (vacated by its close, say).
            raise Refused(
                Code.FAILED_PRECONDITION, "you have no seat at this lounge", Reason.NOT_SEATED
            ) from None
        await self.buy_ins.token_reissued(saga.saga_id, grant)
        return grant

    async def drive_leave(self, saga: BuyIn) -> BuyIn:
        """Take a LEAVING saga on: ask the table to free the seat (once recorded, never
        again), then, if its ``PlayerLeft`` is there, cash its stack out and mark it LEFT.
        Any other saga is returned as is; ``TablesUnavailable`` leaves it LEAVING."""
        if saga.state is not BuyInState.LEAVING:
            return saga
        assert saga.seat is not None and saga.seat_token is not None  # it was SEATED
        if saga.leave_sequence is None:
            try:
                departure = await self.tables.leave(
                    saga.lounge_id, saga.seat, saga.seat_token, leave_request_id(saga.saga_id)
                )
            except TableRefused as exc:
                freed = await self._busted_freed(saga)
                if freed is not None:
                    return freed
                # The seat is not this token's any more (the table closed it, say): where its
                # chips went is the closing's business; the saga stays LEAVING, its chips
                # counted as on the table, and is logged for it.
                log.warning("leave_refused", saga_id=saga.saga_id, reason=exc.reason)
                return saga
            else:
                saga = await self.buy_ins.leave_called(saga.saga_id, departure.sequence)
        assert saga.leave_sequence is not None and saga.seat is not None
        try:
            stack = await self.tables.vacated(
                saga.lounge_id, saga.seat, saga.player_id, saga.leave_sequence - 1
            )
        except TableRefused as exc:
            log.warning("leave_not_vacated", saga_id=saga.saga_id, reason=exc.reason)
            return saga
        if stack is None:
            return saga  # dealt in: vacated when the hand ends (the recovery pass looks again)
        return await self.buy_ins.left(saga.saga_id, stack, self.lobby.clock())

    async def _busted_freed(self, saga: BuyIn) -> BuyIn | None:
        """A LEAVING saga whose own leave the table refused: if the busted seats' pass
        (``services.lobby.busted``) recorded a bust of it, that pass's conditional leave may
        have freed the seat with its answer lost, or the lobby died before recording it, and
        the player asked to leave meanwhile (the busted seats' pass finishes SEATED sagas
        only). Its request again (``busted/<saga>/<hand>``): answered from the table's record
        if it went through, then LEFT with 0 chips; else refused, nothing changed (None)."""
        noted = await self.buy_ins.busted_noted(saga.saga_id)
        if noted is None:
            return None
        assert saga.seat is not None and saga.seat_token is not None  # it was SEATED
        try:
            departure = await self.tables.leave(
                saga.lounge_id,
                saga.seat,
                saga.seat_token,
                busted_leave_request_id(saga.saga_id, noted[0]),
                busted_hand=noted[0],
            )
        except TableRefused:
            return None
        if departure.stack:  # not a conditional leave's answer (BustedSeats._free says why)
            log.error("busted_leave_not_conditional", saga_id=saga.saga_id, chips=departure.stack)
            return None
        log.info("busted_seat_freed", saga_id=saga.saga_id, busted_hand=noted[0], by="leave")
        return await self.buy_ins.busted_freed(saga.saga_id, self.lobby.clock())

    async def recover(self) -> tuple[int, int]:
        """One recovery pass (on start, and periodically): leaves driven on
        (:meth:`recover_leaves`), then the buy-ins due (:class:`BuyInRecovery`: longest due
        first, a bounded batch, backoff, stuck after bounded attempts); how many were
        seated and how many compensated."""
        await self.recover_leaves()
        tally = await self.recovery.run_pass()
        return tally.committed, tally.compensated

    async def recover_leaves(self) -> int:
        """Drive the next page of LEAVING sagas on (a bounded batch, a few at once, each
        attempt bounded in time): how many seats were vacated and cashed out. The pages
        walk every LEAVING saga in turn, then start over, so leaves that wait long (a hand
        in play, a refused leave) cannot keep the others out."""
        policy = self.recovery.policy
        page = await self.buy_ins.leaving_sagas(policy.batch, self._leaving_after)
        full = len(page) == policy.batch
        self._leaving_after = (page[-1].created_at, page[-1].saga_id) if full else None
        gate = asyncio.Semaphore(policy.concurrency)

        async def one(saga: BuyIn) -> bool:
            async with gate:
                try:
                    done = await asyncio.wait_for(
                        self.drive_leave(saga), policy.attempt_timeout.total_seconds()
                    )
                except (TablesUnavailable, TimeoutError) as exc:
                    log.warning("leave_not_recovered", saga_id=saga.saga_id, error=str(exc))
                    return False
                return done.state is BuyInState.LEFT

        return sum(await settled(*(one(s) for s in page)))
