"""The table service's use cases, without gRPC: one method each, plain arguments in, results out.

``services.table.service`` translates a call's request into the arguments of
one method here and its result into the response; the service tests
(``tests/unit/services/``) call these methods straight, on the in-memory
ports. A use case raises :class:`~services.table.refusals.Refused` (or lets a
rules, store or limit error through) to refuse; it never builds a status.

Every mutating use case takes the request as a
:class:`~felt.idempotency.ClientRequest` (its id and content, for the
idempotency key) and the :class:`~services.table.auth.Caller` the token made.
A fresh request is decided and appended in one version-checked call that also
records the request id; a retry is answered with the stored answer of the
first call: by the append itself, or (when deciding again on the newer state
refuses it) by looking the id up. A refused request changes nothing. The
stored answer is the API's response message, serialized (so that a retry
gets the same bytes whichever version of the service answers it); the
results here are decoded from it.

Two inputs stay the API's messages because their bounds and conversion are
defined on them (``felt.api.limits``, ``felt.eventstore.codec``): a new
table's ``TableConfig``, and the view a seat's action is answered with.
Reads (views, the watch stream, hand histories) are in
``services.table.queries``.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

from google.protobuf.message import Message
from structlog.contextvars import bind_contextvars

from felt.api import limits
from felt.api.convert import fill_table_view, table_to_proto
from felt.eventstore import VersionConflict
from felt.eventstore.codec import CodecError, ai_level_from_proto, table_config_from_proto
from felt.idempotency import ClientRequest, RequestKey, RequestReused
from felt.rules.commands import Act, Discard, IllegalAction, ShowCards
from felt.table.aggregate import (
    AddChips,
    CreateTable,
    LeaveSeat,
    PlayHand,
    SeatPlayer,
    SitIn,
    SitOut,
    TableCommand,
    TableState,
)
from felt.tokens import SeatClaim, issue_token, request_nonce, token_hash
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from services.table.auth import Caller, Credential, Secrets, check_occupant
from services.table.manager import NotOwner, TableManager, TableNotFound
from services.table.refusals import (
    Code,
    Refused,
    first_answer,
    invalid,
    quarantined,
    refusal,
    unavailable,
)
from services.table.runtime import CommandSource, LeaseLost, TableQuarantined, TableRuntime

M = TypeVar("M", bound=Message)
Answer = Callable[[TableState | None, TableState, int, datetime | None], M]


@dataclass(frozen=True, slots=True)
class Seated:
    """A player seated: its seat, its seat token and when that expires (0: never)."""

    seat: int
    sequence: int
    seat_token: str
    expires_at: int


@dataclass(frozen=True, slots=True)
class Stack:
    """A seat's chips behind after the call (leaving: what it takes with it), and the sequence."""

    stack: int
    sequence: int


@dataclass(frozen=True, slots=True)
class Acted:
    """An action taken: the sequence, and the seat's view right after it."""

    sequence: int
    view: tpb.TableView


class TableApp:
    """The use cases of the tables this instance runs (see the module docstring)."""

    def __init__(self, manager: TableManager, secrets: Secrets) -> None:
        self.manager = manager
        self.secrets = secrets

    # ------------------------------------------------------------------ plumbing

    async def runtime(self, table_id: str) -> TableRuntime:
        """The runtime of ``table_id`` (checked), its cache fresh; NOT_FOUND, UNAVAILABLE
        (another instance runs it) or TABLE_QUARANTINED otherwise."""
        check_table_id(table_id)
        try:
            runtime = await self.manager.get(table_id)  # at once for a table run here
        except TableNotFound:
            raise Refused(Code.NOT_FOUND, f"table {table_id} does not exist") from None
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

    async def _mutate(
        self,
        runtime: TableRuntime,
        command: CommandSource,
        request: RequestKey,
        answer: Answer[M],
        answer_type: type[M],
        expected: int | None = None,
        credential: Credential | None = None,
    ) -> M:
        """Decide-append-apply and answer; a retried request gets its first answer."""

        def authorize(state: TableState | None) -> None:
            if credential is not None:
                check_occupant(state, credential)

        try:
            outcome = await runtime.run(command, request, answer, expected, authorize)
        except (IllegalAction, VersionConflict, Refused) as exc:
            # Refused on today's state: perhaps because this very request already went
            # through (a retry after the table moved on). Then it gets its first answer.
            earlier = await runtime.store.request_result(runtime.table_id, request.key)
            if earlier is not None:
                return answer_type.FromString(first_answer(request, earlier.response))
            raise refusal(exc) from None
        except (LeaseLost, RequestReused) as exc:
            raise refusal(exc) from None
        if outcome.duplicate or outcome.response is None:
            return answer_type.FromString(outcome.stored)
        assert isinstance(outcome.response, answer_type)
        return outcome.response

    async def _seat_call(
        self,
        caller: Caller,
        request: ClientRequest,
        table_id: str,
        seat: int,
        command: CommandSource,
        answer: Answer[M],
        answer_type: type[M],
        expected: int | None = None,
    ) -> M:
        """A seat's mutating call: the table first, then the token, then the request id."""
        runtime = await self.runtime(table_id)
        credential = caller.for_seat(table_id, seat)
        key = request_key(credential.principal, request)
        return await self._mutate(runtime, command, key, answer, answer_type, expected, credential)

    # ------------------------------------------------------------------ tables

    async def create_table(
        self, caller: Caller, request: ClientRequest, table_id: str, name: str, config: Config
    ) -> tpb.Table:
        """Create a table (admin); ``table_id`` "" derives one from the request id."""
        key = request_key(caller.require_admin(), request)
        table_id = table_id or f"t-{hashlib.sha256(request.request_id.encode()).hexdigest()[:12]}"
        check_table_id(table_id)
        if config is None:
            raise Refused(Code.INVALID_ARGUMENT, "config is required")
        name = limits.clean_table_name(name)
        limits.check_table_config(config, datetime.now(UTC))
        try:
            domain_config = table_config_from_proto(config, table_id, name)
        except ValueError as exc:
            raise Refused(Code.INVALID_ARGUMENT, str(exc)) from None
        manager = self.manager
        existing = manager.runtimes.get(table_id)
        if existing is None and await manager.registry.exists(table_id):
            earlier = await manager.store.request_result(table_id, key.key)
            if earlier is not None:
                return pb.CreateTableResponse.FromString(first_answer(key, earlier.response)).table
            raise Refused(Code.ALREADY_EXISTS, f"table {table_id} already exists")
        try:
            runtime = existing or await manager.register(table_id)
        except NotOwner:
            raise Refused(Code.ALREADY_EXISTS, f"table {table_id} already exists") from None
        try:
            answer = await self._mutate(
                runtime,
                CreateTable(domain_config),
                key,
                lambda _, state, seq, __: pb.CreateTableResponse(table=table_to_proto(state, seq)),
                pb.CreateTableResponse,
            )
        except Refused:
            await manager.discard(runtime)
            raise
        await manager.created(runtime)
        return answer.table

    async def seat_player(
        self,
        caller: Caller,
        request: ClientRequest,
        table_id: str,
        seat: int | None,
        player_id: str,
        display_name: str,
        stack: int,
        ai_level: int,
    ) -> Seated:
        """Seat a player (admin) at ``seat`` or the first free one; it gets a seat token.

        The token is derived from the request id, so a retry gets the same token
        back although only its hash is ever stored.
        """
        key = request_key(caller.require_admin(), request)
        limits.check_player_id(player_id)
        display_name = limits.clean_display_name(display_name)
        limits.check_amount(stack, "stack")
        try:
            level = ai_level_from_proto(ai_level)  # type: ignore[arg-type]
        except CodecError as exc:
            raise Refused(Code.INVALID_ARGUMENT, str(exc)) from None
        runtime = await self.runtime(table_id)
        table_id = runtime.table_id
        secret = self.secrets.token_secret
        ttl = self.secrets.token_ttl_s
        expires = int(time.time()) + ttl if ttl else 0
        nonce = request_nonce(secret, table_id, request.request_id)

        def where(state: TableState) -> int:
            return seat if seat is not None else free_seat(state)

        def make(state: TableState | None) -> TableCommand:
            if state is None:
                raise Refused(Code.NOT_FOUND, f"table {table_id} does not exist")
            try:
                limits.check_chips_added(state, stack)
            except limits.LimitError as exc:
                raise invalid(exc) from None
            chosen = where(state)
            token = issue_token(secret, SeatClaim(table_id, chosen, player_id, expires), nonce)
            return SeatPlayer(chosen, player_id, display_name, stack, token_hash(token), level)

        def answer(
            before: TableState | None, _: TableState, seq: int, __: datetime | None
        ) -> pb.SeatPlayerResponse:
            assert before is not None  # make refused a missing table
            out = pb.SeatPlayerResponse(seat=where(before), sequence=seq)
            if expires:
                out.seat_token_expire_time.FromSeconds(expires)
            return out

        first = await self._mutate(runtime, make, key, answer, pb.SeatPlayerResponse)
        # Fresh or retried: the same claim and nonce give the same token.
        expires_at = first.seat_token_expire_time.seconds
        claim = SeatClaim(table_id, first.seat, player_id, expires_at)
        return Seated(first.seat, first.sequence, issue_token(secret, claim, nonce), expires_at)

    # ------------------------------------------------------------------ a seat's calls

    async def leave_seat(
        self, caller: Caller, request: ClientRequest, table_id: str, seat: int
    ) -> Stack:
        """Leave: gone now with its stack, or (dealt in) after the hand, its chips behind."""

        def answer(
            before: TableState | None, state: TableState, seq: int, _: datetime | None
        ) -> pb.LeaveSeatResponse:
            source = state if state.player(seat) is not None or before is None else before
            return pb.LeaveSeatResponse(stack=stack_behind(source, seat), sequence=seq)

        first = await self._seat_call(
            caller, request, table_id, seat, LeaveSeat(seat), answer, pb.LeaveSeatResponse
        )
        return Stack(first.stack, first.sequence)

    async def sit_out(
        self, caller: Caller, request: ClientRequest, table_id: str, seat: int
    ) -> int:
        """Sit out (the seat plays passively from the next hand); the new sequence."""
        return await self._presence(caller, request, table_id, SitOut(seat), pb.SitOutResponse)

    async def sit_in(self, caller: Caller, request: ClientRequest, table_id: str, seat: int) -> int:
        """Sit back in; the new sequence."""
        return await self._presence(caller, request, table_id, SitIn(seat), pb.SitInResponse)

    async def _presence(
        self,
        caller: Caller,
        request: ClientRequest,
        table_id: str,
        command: SitOut | SitIn,
        answer_type: type[pb.SitOutResponse] | type[pb.SitInResponse],
    ) -> int:
        first = await self._seat_call(
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
        self, caller: Caller, request: ClientRequest, table_id: str, seat: int, amount: int
    ) -> Stack:
        """Add chips to the seat's stack (within the table's cap); its new stack."""

        def make(state: TableState | None) -> TableCommand:
            try:
                if state is not None:
                    limits.check_chips_added(state, amount)
            except limits.LimitError as exc:
                raise invalid(exc) from None
            return AddChips(seat, amount)

        def answer(
            _: TableState | None, state: TableState, seq: int, __: datetime | None
        ) -> pb.AddChipsResponse:
            player = state.player(seat)
            return pb.AddChipsResponse(stack=player.stack if player else 0, sequence=seq)

        first = await self._seat_call(
            caller, request, table_id, seat, make, answer, pb.AddChipsResponse
        )
        return Stack(first.stack, first.sequence)

    async def submit_action(
        self,
        caller: Caller,
        request: ClientRequest,
        table_id: str,
        action: Act | Discard,
        expected: int | None,
    ) -> Acted:
        """The seat's action; ``expected`` (the client's ``expected_sequence``): None skips the
        check, otherwise the table must be at it."""
        if expected == 0:
            raise Refused(
                Code.INVALID_ARGUMENT,
                "expected_sequence 0 is no table's sequence: set the sequence of the view "
                "the action was decided on, or leave it unset to skip the check",
                "BAD_SEQUENCE",
            )
        seat = action.seat

        def answer(
            _: TableState | None, state: TableState, seq: int, deadline: datetime | None
        ) -> pb.SubmitActionResponse:
            response = pb.SubmitActionResponse(sequence=seq)
            fill_table_view(response.view, state, seat, seq, deadline)
            return response

        first = await self._seat_call(
            caller,
            request,
            table_id,
            seat,
            PlayHand(action),
            answer,
            pb.SubmitActionResponse,
            expected,
        )
        return Acted(first.sequence, first.view)

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
                    "HAND_OVER",
                )
            return PlayHand(ShowCards(seat))

        first = await self._seat_call(
            caller,
            request,
            table_id,
            seat,
            make,
            lambda _, __, seq, ___: pb.ShowCardsResponse(sequence=seq),
            pb.ShowCardsResponse,
        )
        return first.sequence


Config = epb.TableConfig | None


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


def free_seat(state: TableState) -> int:
    for seat in range(state.config.seat_count):
        if state.player(seat) is None and not state.dealt_in(seat):
            return seat
    raise Refused(Code.RESOURCE_EXHAUSTED, "the table is full", "TABLE_FULL")
