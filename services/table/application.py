"""The table service's use cases, without gRPC: one method each, plain arguments in, results out.

``services.table.service`` translates a call's request into the arguments of
one method here and its result into the response; the service tests
(``tests/unit/services/``) call these methods straight, on the in-memory
ports. A use case raises :class:`~services.table.refusals.Refused` (or lets a
rules, store or limit error through) to refuse; it never builds a status.

Every mutating use case takes the request as a
:class:`~felt.storage.idempotency.ClientRequest` (its id and content, for the
idempotency key) and the :class:`~services.table.auth.Caller` the token made.
A fresh request is decided and appended in one version-checked call that also
records the request id; a retry is answered with the stored answer of the
first call: by the append itself, or (when deciding again on the newer state
refuses it) by looking the id up. A refused request changes nothing. The
stored answer is the API's response message, serialized (so that a retry
gets the same bytes whichever version of the service answers it), or for an
action what it is made again from (below).

The calls whose answer is more than a sequence (``SubmitAction``,
``LeaveSeat``, ``AddChips``) return that very response message, built once
under the table's lock (a retry's decoded from the record), and the handler
sends it as it is: no value in between to unpack and pack again. The view a
seat's action is answered with is the API's ``TableView`` message (built by
``felt.wire.convert``, as for every read). An action's idempotency record
keeps its sequence and deadline, not the view (:func:`action_record`): most
answers are never asked for again (the AI workers' never read theirs), and a
retry's view is the table's state at that sequence, folded again from the
stream's last snapshot before it (:func:`restore_action`), so it is the
same answer while the stream still holds such a snapshot within
``runtime.REBUILD_LIMIT`` events before it; an older retry (its events trimmed
past any snapshot, or too far to fold on the event loop) is refused
``REQUEST_TOO_OLD``, FAILED_PRECONDITION, and changes nothing.
The admin's use cases (create a table, seat a player) are in
``services.table.admin``; reads (views, the watch stream, hand histories)
in ``services.table.queries``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TypeVar, cast

from google.protobuf.message import Message
from structlog.contextvars import bind_contextvars

from felt.core.rules.commands import Act, Discard, IllegalAction, ShowCards
from felt.core.table.aggregate import (
    AddChips,
    LeaveSeat,
    PlayHand,
    SitIn,
    SitOut,
    TableCommand,
    TableState,
)
from felt.storage.eventstore import VersionConflict
from felt.storage.idempotency import ClientRequest, RequestKey, RequestReused
from felt.wire import limits
from felt.wire.convert import fill_table_view
from poker.v1 import table_service_pb2 as pb
from poker.v1.reason_pb2 import Reason
from services.table.auth import Caller, Credential, check_occupant
from services.table.manager import NotOwner, TableManager, TableNotFound
from services.table.ratelimit import RateLimiter
from services.table.refusals import (
    Code,
    Refused,
    first_answer,
    invalid,
    quarantined,
    refusal,
    unavailable,
)
from services.table.runtime import (
    CommandSource,
    LeaseLost,
    RequestTooOld,
    TableQuarantined,
    TableRuntime,
)

M = TypeVar("M", bound=Message)
Answer = Callable[[TableState | None, TableState, int, datetime | None], M]
# What of an answer its idempotency record keeps, and how a retry's answer is made from that.
Record = Callable[[M], bytes]
Restore = Callable[[TableRuntime, M], Awaitable[M]]


class TableApp:
    """The use cases of the tables this instance runs (see the module docstring)."""

    def __init__(self, manager: TableManager, rate: RateLimiter | None = None) -> None:
        self.manager = manager
        self.rate = rate if rate is not None else RateLimiter()

    # ------------------------------------------------------------------ plumbing

    async def runtime(self, table_id: str) -> TableRuntime:
        """The runtime of ``table_id`` (checked), its cache fresh; NOT_FOUND, UNAVAILABLE
        (another instance runs it) or TABLE_QUARANTINED otherwise."""
        check_table_id(table_id)
        try:
            runtime = await self.manager.get(table_id)  # at once for a table run here
        except TableNotFound:
            raise Refused(Code.NOT_FOUND, "no table has this table_id", Reason.NO_TABLE) from None
        except NotOwner:
            raise unavailable(table_id) from None
        except TableQuarantined as exc:
            raise quarantined(exc) from None
        try:
            await runtime.refresh()  # rereads the stream only if the cache may be behind
        except TableQuarantined as exc:
            raise quarantined(exc) from None
        hand = runtime.state.hand if runtime.state is not None else None
        if hand is not None:
            bind_contextvars(hand_id=hand.setup.hand_id)
        return runtime

    async def mutate(
        self,
        runtime: TableRuntime,
        command: CommandSource,
        request: RequestKey,
        answer: Answer[M],
        answer_type: type[M],
        expected: int | None = None,
        credential: Credential | None = None,
        record: Record[M] | None = None,
        restore: Restore[M] | None = None,
    ) -> M:
        """Decide-append-apply and answer; a retried request gets its first answer.

        ``record``: what the idempotency record keeps of the answer (default: all of it),
        ``restore``: how a retry's answer is made again from that (default: it is the answer).
        """

        def authorize(state: TableState | None) -> None:
            if credential is not None:
                check_occupant(state, credential)

        async def first(stored: bytes) -> M:
            recorded = answer_type.FromString(stored)
            return recorded if restore is None else await restore(runtime, recorded)

        packed = cast("Callable[[Message], bytes] | None", record)
        try:
            outcome = await runtime.run(command, request, answer, expected, authorize, packed)
        except (IllegalAction, VersionConflict, Refused) as exc:
            # Refused on today's state: perhaps because this very request already went
            # through (a retry after the table moved on). Then it gets its first answer.
            earlier = await runtime.store.request_result(runtime.table_id, request.key)
            if earlier is not None:
                return await first(first_answer(request, earlier.response))
            raise refusal(exc) from None
        except (LeaseLost, RequestReused) as exc:
            raise refusal(exc) from None
        if outcome.duplicate or outcome.response is None:
            return await first(outcome.stored)
        assert isinstance(outcome.response, answer_type)
        return outcome.response

    async def seat_call(
        self,
        caller: Caller,
        request: ClientRequest,
        table_id: str,
        seat: int,
        command: CommandSource,
        answer: Answer[M],
        answer_type: type[M],
        expected: int | None = None,
        internal: bool = False,
        paced: bool = False,
        record: Record[M] | None = None,
        restore: Restore[M] | None = None,
    ) -> M:
        """A seat's mutating call: the table first, then the token, then the request id.
        ``internal``: the service credential's only (``Caller.for_service_seat``). ``paced``:
        the table paces the call itself (an action: one per turn), so the AI workers' answers,
        which come for the decision requests the table issued, are not rate-limited (bot-only
        tables play faster than a person's limit); their other calls are."""
        runtime = await self.runtime(table_id)
        if internal:
            credential = caller.for_service_seat(table_id, seat)
        else:
            credential = caller.for_seat(table_id, seat)
        key = request_key(credential.principal, request)
        # The service (the lobby) is trusted and bounded by its own callers' limits. A bucket is
        # one seat's at one table: the AI workers' principal names only the seat, and seat N of
        # every table must not share one.
        limited = not caller.admin and not (paced and credential.ai)
        if limited and not self.rate.take(rate_key(table_id, credential.principal)):
            raise Refused(
                Code.RESOURCE_EXHAUSTED,
                f"too many changes from this seat: at most {self.rate.limits.per_second:g} a "
                f"second (bursts of {self.rate.limits.burst}); slow down",
                Reason.RATE_LIMITED,
            )
        return await self.mutate(
            runtime, command, key, answer, answer_type, expected, credential, record, restore
        )

    # ------------------------------------------------------------------ a seat's calls

    async def leave_seat(
        self,
        caller: Caller,
        request: ClientRequest,
        table_id: str,
        seat: int,
        *,
        busted_hand: int | None = None,
    ) -> pb.LeaveSeatResponse:
        """Leave (internal: the lobby's, as the seat): gone now with its stack, or (dealt in)
        after the hand, its chips behind. With ``busted_hand`` the lobby's conditional leave
        of a seat busted longer than its lounge's grace: refused ``NOT_BUSTED``, changing
        nothing, unless the seat is still busted since that hand (``LeaveSeat``)."""
        if busted_hand is not None and busted_hand <= 0:
            raise Refused(
                Code.INVALID_ARGUMENT,
                "busted_hand names the hand a seat went busted in: it must be positive",
                Reason.BAD_AMOUNT,
            )

        def answer(
            before: TableState | None, state: TableState, seq: int, _: datetime | None
        ) -> pb.LeaveSeatResponse:
            source = state if state.player(seat) is not None or before is None else before
            return pb.LeaveSeatResponse(stack=stack_behind(source, seat), sequence=seq)

        return await self.seat_call(
            caller,
            request,
            table_id,
            seat,
            LeaveSeat(seat, busted_hand or 0),
            answer,
            pb.LeaveSeatResponse,
            internal=True,
        )

    async def sit_out(
        self, caller: Caller, request: ClientRequest, table_id: str, seat: int
    ) -> int:
        """Sit out (the seat plays passively from the next hand); the new sequence."""
        return await self._presence(caller, request, table_id, SitOut(seat), pb.SitOutResponse)

    async def sit_in(
        self,
        caller: Caller,
        request: ClientRequest,
        table_id: str,
        seat: int,
        *,
        wait_for_big_blind: bool = False,
    ) -> int:
        """Sit back in, at once or (``wait_for_big_blind``) at the big blind; the new sequence."""
        command = SitIn(seat, wait_for_big_blind)
        return await self._presence(caller, request, table_id, command, pb.SitInResponse)

    async def _presence(
        self,
        caller: Caller,
        request: ClientRequest,
        table_id: str,
        command: SitOut | SitIn,
        answer_type: type[pb.SitOutResponse] | type[pb.SitInResponse],
    ) -> int:
        first = await self.seat_call(
            caller,
            request,
            table_id,
            command.seat,
            command,
            lambda _, __, seq, ___: answer_type(sequence=seq),
            answer_type,
        )
        return first.sequence

    async def add_chips(
        self,
        caller: Caller,
        request: ClientRequest,
        table_id: str,
        seat: int,
        amount: int,
        max_stack: int = 0,
    ) -> pb.AddChipsResponse:
        """Add chips to the seat's stack (internal; within the table's cap, and within
        ``max_stack`` when above 0: checked on the state the chips are added to, so two adds
        racing for one seat cannot both pass the lobby's look at the stack); its new stack."""

        def make(state: TableState | None) -> TableCommand:
            try:
                limits.check_amount(max_stack, "max_stack", zero=True)
                if state is not None:
                    limits.check_chips_added(state, amount)
            except limits.LimitError as exc:
                raise invalid(exc) from None
            player = None if state is None or state.dealt_in(seat) else state.player(seat)
            if max_stack and player is not None and player.stack + amount > max_stack:
                raise Refused(
                    Code.FAILED_PRECONDITION,
                    f"the seat's stack may hold at most {max_stack:,} chips: "
                    f"at most {max(0, max_stack - player.stack):,} more fit",
                    Reason.ABOVE_MAX_STACK,
                )
            return AddChips(seat, amount)

        def answer(
            _: TableState | None, state: TableState, seq: int, __: datetime | None
        ) -> pb.AddChipsResponse:
            player = state.player(seat)
            return pb.AddChipsResponse(stack=player.stack if player else 0, sequence=seq)

        return await self.seat_call(
            caller, request, table_id, seat, make, answer, pb.AddChipsResponse, internal=True
        )

    async def submit_action(
        self,
        caller: Caller,
        request: ClientRequest,
        table_id: str,
        action: Act | Discard,
        expected: int | None,
        *,
        sequence_only: bool = False,
    ) -> pb.SubmitActionResponse:
        """The seat's action; ``expected`` (the client's ``expected_sequence``): None skips the
        check, otherwise the table must be at it. ``sequence_only``: the answer carries the
        new sequence and no view (the AI workers read nothing else; building the view was
        about a third of an action's own CPU), and so does a retry's."""
        if expected == 0:
            raise Refused(
                Code.INVALID_ARGUMENT,
                "expected_sequence 0 is no table's sequence: set the sequence of the view "
                "the action was decided on, or leave it unset to skip the check",
                Reason.BAD_SEQUENCE,
            )
        seat = action.seat

        def answer(
            _: TableState | None, state: TableState, seq: int, deadline: datetime | None
        ) -> pb.SubmitActionResponse:
            response = pb.SubmitActionResponse(sequence=seq)
            if not sequence_only:
                fill_table_view(response.view, state, seat, seq, deadline)
            return response

        return await self.seat_call(
            caller,
            request,
            table_id,
            seat,
            PlayHand(action),
            answer,
            pb.SubmitActionResponse,
            expected,
            paced=True,
            record=action_record,
            restore=lambda runtime, first: restore_action(runtime, seat, first, sequence_only),
        )

    async def show_cards(
        self, caller: Caller, request: ClientRequest, table_id: str, seat: int, hand_id: str
    ) -> int:
        """Show the seat's cards of the last hand (``hand_id`` "": whichever it is)."""

        def make(state: TableState | None) -> TableCommand:
            try:
                limits.check_hand_id(hand_id)
            except limits.LimitError as exc:
                raise invalid(exc) from None
            hand = state.hand if state is not None else None
            if hand_id and hand is not None and hand.setup.hand_id != hand_id:
                raise Refused(
                    Code.FAILED_PRECONDITION,
                    "cards can be shown only for the last hand, before the next one starts",
                    Reason.HAND_OVER,
                )
            return PlayHand(ShowCards(seat))

        first = await self.seat_call(
            caller,
            request,
            table_id,
            seat,
            make,
            lambda _, __, seq, ___: pb.ShowCardsResponse(sequence=seq),
            pb.ShowCardsResponse,
        )
        return first.sequence


def action_record(response: pb.SubmitActionResponse) -> bytes:
    """What the idempotency record of an action keeps: the answer without its view, but for
    the view's action deadline (the view is the table's state at the sequence, seen by the
    seat: :func:`restore_action` makes it again for a retry, from the stream)."""
    record = pb.SubmitActionResponse(sequence=response.sequence)
    hand = response.view.hand
    if hand.HasField("action_deadline"):
        record.view.hand.action_deadline.CopyFrom(hand.action_deadline)
    return record.SerializeToString()


async def restore_action(
    runtime: TableRuntime, seat: int, first: pb.SubmitActionResponse, sequence_only: bool = False
) -> pb.SubmitActionResponse:
    """A retried action's first answer, from its record (:func:`action_record`): the seat's
    view of the table as it was at the recorded sequence (``TableRuntime.state_at``), with
    the recorded deadline. A record with a whole view (written before records were kept
    small) is that answer already; so is the record of a ``sequence_only`` request (the
    retry carries the flag too: it is part of the request's fingerprint). Refused
    ``REQUEST_TOO_OLD`` when that state can no longer be made (``RequestTooOld``: trimmed,
    or too far from a kept snapshot)."""
    if first.view.HasField("table") or sequence_only:
        return first
    try:
        state = await runtime.state_at(first.sequence)
    except RequestTooOld as exc:
        raise refusal(exc) from None
    hand = first.view.hand
    deadline = hand.action_deadline.ToDatetime(UTC) if hand.HasField("action_deadline") else None
    answer = pb.SubmitActionResponse(sequence=first.sequence)
    fill_table_view(answer.view, state, seat, first.sequence, deadline)
    return answer


def rate_key(table_id: str, principal: str) -> str:
    """The rate-limit bucket of ``principal`` at ``table_id``: per table and seat (a seat
    token's principal is its table's already; the AI workers' is the seat number alone)."""
    return f"{table_id}/{principal}"


def check_table_id(table_id: str) -> str:
    try:
        return limits.check_table_id(table_id)
    except limits.LimitError as exc:
        raise invalid(exc) from None


def request_key(principal: str, request: ClientRequest) -> RequestKey:
    """``request``'s idempotency key for ``principal``, its ``request_id`` checked first."""
    try:
        limits.check_request_id(request.request_id)
    except limits.LimitError as exc:
        raise invalid(exc) from None
    return request.key(principal)


def stack_behind(state: TableState, seat: int) -> int:
    """A seat's chips behind: its hand stack while dealt in, else its table stack."""
    if state.dealt_in(seat):
        assert state.hand is not None
        x = state.hand.seat_state(seat)
        assert x is not None
        return x.stack
    player = state.player(seat)
    return player.stack if player is not None else 0
