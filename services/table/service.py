"""``poker.v1.TableService`` over gRPC: authentication, validation, idempotency, error mapping.

Every mutating call carries a ``request_id``: a retry is answered from the
stored response of the first call, before anything is decided again. A
refused request gets the status code a client can act on (FAILED_PRECONDITION
with the rules code for "not your turn" and friends, ABORTED for a stale
``expected_sequence``, PERMISSION_DENIED for someone else's seat) and changes
nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc
import structlog
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from felt.api.convert import (
    BadAction,
    action_from_proto,
    proof_to_proto,
    redacted_stored_event,
    table_to_proto,
    table_view_to_proto,
)
from felt.eventstore import EventsTrimmed, VersionConflict
from felt.eventstore.codec import (
    ai_level_from_proto,
    decode_event,
    table_config_from_proto,
)
from felt.rules.commands import IllegalAction, ShowCards
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
from felt.table.deals import ProofTracker
from felt.table.events import DeckCommitted
from felt.tokens import SeatClaim, TokenError, issue_token, request_nonce, token_hash, verify_token
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from services.table.manager import NotOwner, TableManager, TableNotFound
from services.table.runtime import Outcome, TableRuntime

log = structlog.get_logger("felt.table")

TABLE_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
M = TypeVar("M", bound=Message)

# Rules codes that mean "the request is fine but the table is not in a state for it".
_PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION
_CODE_STATUS: dict[str, grpc.StatusCode] = {
    "BAD_CONFIG": grpc.StatusCode.INVALID_ARGUMENT,
    "BAD_AMOUNT": grpc.StatusCode.INVALID_ARGUMENT,
    "BAD_SEAT": grpc.StatusCode.INVALID_ARGUMENT,
    "BAD_AI_LEVEL": grpc.StatusCode.INVALID_ARGUMENT,
    "BAD_DISCARD": grpc.StatusCode.INVALID_ARGUMENT,
    "TABLE_EXISTS": grpc.StatusCode.ALREADY_EXISTS,
    "SEAT_TAKEN": grpc.StatusCode.ALREADY_EXISTS,
    "ALREADY_SEATED": grpc.StatusCode.ALREADY_EXISTS,
    "NO_TABLE": grpc.StatusCode.NOT_FOUND,
    "SEAT_EMPTY": grpc.StatusCode.NOT_FOUND,
    "UNKNOWN_SEAT": _PRECONDITION,
}


class _Abort(Exception):
    def __init__(self, code: grpc.StatusCode, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.code, self.message, self.reason = code, message, reason


@dataclass(frozen=True, slots=True)
class Secrets:
    """Shared secrets: token signing, and the credentials of admins and AI workers."""

    token_secret: bytes
    admin_token: str = ""
    ai_token: str = ""
    token_ttl_s: int = 0


def _check_table_id(table_id: str) -> str:
    if not TABLE_ID.match(table_id):
        raise _Abort(
            grpc.StatusCode.INVALID_ARGUMENT,
            "table_id must be 1-63 characters of a-z, 0-9 and '-', starting with a letter or digit",
        )
    return table_id


def _require_request_id(request_id: str) -> str:
    if not request_id or len(request_id) > 128:
        raise _Abort(
            grpc.StatusCode.INVALID_ARGUMENT,
            "request_id is required (a client-generated unique id, at most 128 characters)",
        )
    return request_id


def _bearer(context: grpc.aio.ServicerContext[Any, Any]) -> str:
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
            return value[len("Bearer ") :].strip()
    return ""


async def _fail(context: grpc.aio.ServicerContext[Any, Any], error: _Abort) -> None:
    status = status_pb2.Status(code=error.code.value[0], message=error.message)
    if error.reason:
        info = error_details_pb2.ErrorInfo(reason=error.reason, domain="felt.poker")
        status.details.add().Pack(info)
    await context.abort_with_status(rpc_status.to_status(status))


class TableService(rpc.TableServiceServicer):
    """The gRPC face of the tables this instance owns."""

    def __init__(self, manager: TableManager, secrets: Secrets) -> None:
        self.manager = manager
        self.secrets = secrets

    # ------------------------------------------------------------------ plumbing

    async def _runtime(self, table_id: str) -> TableRuntime:
        _check_table_id(table_id)
        try:
            return await self.manager.get(table_id)
        except TableNotFound:
            raise _Abort(grpc.StatusCode.NOT_FOUND, f"table {table_id} does not exist") from None
        except NotOwner:
            raise _Abort(
                grpc.StatusCode.UNAVAILABLE,
                f"table {table_id} is run by another table-service instance; retry shortly",
            ) from None

    def _require_admin(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        if self.secrets.admin_token and not hmac.compare_digest(
            _bearer(context), self.secrets.admin_token
        ):
            raise _Abort(grpc.StatusCode.UNAUTHENTICATED, "this call needs the admin token")

    def _authorize_seat(
        self, context: grpc.aio.ServicerContext[Any, Any], state: TableState | None, seat: int
    ) -> None:
        """Only the holder of the seat's token (or an AI worker, for an AI seat) may use it."""
        if state is None:
            raise _Abort(grpc.StatusCode.NOT_FOUND, "the table does not exist")
        player = state.player(seat)
        if player is None:
            raise _Abort(grpc.StatusCode.NOT_FOUND, f"nobody sits at seat {seat}")
        token = _bearer(context)
        if not token:
            raise _Abort(
                grpc.StatusCode.UNAUTHENTICATED,
                "send the seat token as 'authorization: Bearer <token>' metadata",
            )
        if player.ai_level and self.secrets.ai_token:
            if hmac.compare_digest(token, self.secrets.ai_token):
                return
        try:
            claim = verify_token(self.secrets.token_secret, token, int(time.time()))
        except TokenError as exc:
            raise _Abort(grpc.StatusCode.UNAUTHENTICATED, str(exc)) from None
        if claim.table_id != state.config.table_id or claim.seat != seat:
            raise _Abort(
                grpc.StatusCode.PERMISSION_DENIED,
                f"this token is for seat {claim.seat} of table {claim.table_id}, not seat {seat}",
            )
        if not hmac.compare_digest(token_hash(token), player.token_hash):
            raise _Abort(
                grpc.StatusCode.PERMISSION_DENIED,
                "this token belonged to an earlier occupant of the seat",
            )

    async def _mutate(
        self,
        runtime: TableRuntime,
        command: TableCommand,
        request_id: str,
        respond: Callable[[TableState, int], M],
        response_type: type[M],
        expected: int | None = None,
    ) -> M:
        """Answer a retry from the log, else decide-append-apply and answer."""
        earlier = await runtime.store.request_result(runtime.table_id, request_id)
        if earlier is not None:
            return response_type.FromString(earlier.response)
        try:
            outcome: Outcome = await runtime.run(
                command,
                request_id,
                lambda state, seq: respond(state, seq).SerializeToString(),
                expected_version=expected,
            )
        except IllegalAction as exc:
            raise _Abort(_CODE_STATUS.get(exc.code, _PRECONDITION), exc.message, exc.code) from None
        except VersionConflict as exc:
            raise _Abort(
                grpc.StatusCode.ABORTED,
                f"the table moved on: it is at sequence {exc.actual}, not {exc.expected}; "
                "read the view again and decide on it",
                "STALE_SEQUENCE",
            ) from None
        return response_type.FromString(outcome.response)

    async def _guard(self, context: grpc.aio.ServicerContext[Any, Any], call: Awaitable[M]) -> M:
        try:
            return await call
        except _Abort as exc:
            await _fail(context, exc)
            raise AssertionError("unreachable") from None

    # ------------------------------------------------------------------ tables

    async def CreateTable(
        self, request: pb.CreateTableRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.CreateTableResponse:
        async def run() -> pb.CreateTableResponse:
            self._require_admin(context)
            request_id = _require_request_id(request.request_id)
            table_id = (
                request.table_id or f"t-{hashlib.sha256(request_id.encode()).hexdigest()[:12]}"
            )
            _check_table_id(table_id)
            if not request.HasField("config"):
                raise _Abort(grpc.StatusCode.INVALID_ARGUMENT, "config is required")
            try:
                config = table_config_from_proto(request.config, table_id, request.name)
            except ValueError as exc:
                raise _Abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc)) from None
            existing = self.manager.runtimes.get(table_id)
            if existing is None and await self.manager.redis.sismember("felt:tables", table_id):
                earlier = await self.manager.store.request_result(table_id, request_id)
                if earlier is not None:
                    return pb.CreateTableResponse.FromString(earlier.response)
                raise _Abort(grpc.StatusCode.ALREADY_EXISTS, f"table {table_id} already exists")
            try:
                runtime = existing or await self.manager.register(table_id)
            except NotOwner:
                raise _Abort(
                    grpc.StatusCode.ALREADY_EXISTS, f"table {table_id} already exists"
                ) from None
            response = await self._mutate(
                runtime,
                CreateTable(config),
                request_id,
                lambda state, seq: pb.CreateTableResponse(table=table_to_proto(state, seq)),
                pb.CreateTableResponse,
            )
            await self.manager.created(runtime)
            return response

        return await self._guard(context, run())

    async def GetTable(
        self, request: pb.GetTableRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.GetTableResponse:
        async def run() -> pb.GetTableResponse:
            runtime = await self._runtime(request.table_id)
            assert runtime.state is not None
            return pb.GetTableResponse(table=table_to_proto(runtime.state, runtime.version))

        return await self._guard(context, run())

    async def SeatPlayer(
        self, request: pb.SeatPlayerRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.SeatPlayerResponse:
        async def run() -> pb.SeatPlayerResponse:
            self._require_admin(context)
            request_id = _require_request_id(request.request_id)
            runtime = await self._runtime(request.table_id)
            if not request.player_id:
                raise _Abort(grpc.StatusCode.INVALID_ARGUMENT, "player_id is required")
            state = runtime.state
            assert state is not None
            seat = request.seat if request.HasField("seat") else _free_seat(state)
            ai_level = ai_level_from_proto(request.ai_level)
            expires = int(time.time()) + self.secrets.token_ttl_s if self.secrets.token_ttl_s else 0
            claim = SeatClaim(runtime.table_id, seat, request.player_id, expires)
            # The token is derived from the request id, so a retry gets the same
            # token back although only its hash is ever stored.
            nonce = request_nonce(self.secrets.token_secret, runtime.table_id, request_id)
            token = issue_token(self.secrets.token_secret, claim, nonce)
            command = SeatPlayer(
                seat,
                request.player_id,
                request.display_name,
                request.stack,
                token_hash(token),
                ai_level,
            )

            def respond(state: TableState, seq: int) -> pb.SeatPlayerResponse:
                out = pb.SeatPlayerResponse(seat=seat, sequence=seq)
                if expires:
                    out.seat_token_expire_time.FromSeconds(expires)
                return out

            earlier = await runtime.store.request_result(runtime.table_id, request_id)
            if earlier is not None:
                stored = pb.SeatPlayerResponse.FromString(earlier.response)
                expires_at = stored.seat_token_expire_time.seconds
                claim = SeatClaim(runtime.table_id, stored.seat, request.player_id, expires_at)
                stored.seat_token = issue_token(self.secrets.token_secret, claim, nonce)
                return stored
            response = await self._mutate(
                runtime, command, request_id, respond, pb.SeatPlayerResponse
            )
            response.seat_token = token
            return response

        return await self._guard(context, run())

    async def _seat_call(
        self,
        context: grpc.aio.ServicerContext[Any, Any],
        table_id: str,
        seat: int,
        request_id: str,
        command: TableCommand,
        respond: Callable[[TableState, int], M],
        response_type: type[M],
        expected: int | None = None,
    ) -> M:
        _require_request_id(request_id)
        runtime = await self._runtime(table_id)
        self._authorize_seat(context, runtime.state, seat)
        return await self._mutate(runtime, command, request_id, respond, response_type, expected)

    async def LeaveSeat(
        self, request: pb.LeaveSeatRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.LeaveSeatResponse:
        async def run() -> pb.LeaveSeatResponse:
            runtime = await self._runtime(request.table_id)
            before = runtime.state.player(request.seat) if runtime.state is not None else None
            left_with = before.stack if before is not None else 0

            def respond(state: TableState, seq: int) -> pb.LeaveSeatResponse:
                # Gone now: it left with its stack; still seated: it leaves after the hand.
                player = state.player(request.seat)
                stack = left_with if player is None else player.stack
                return pb.LeaveSeatResponse(stack=stack, sequence=seq)

            return await self._seat_call(
                context,
                request.table_id,
                request.seat,
                request.request_id,
                LeaveSeat(request.seat),
                respond,
                pb.LeaveSeatResponse,
            )

        return await self._guard(context, run())

    async def SitOut(
        self, request: pb.SitOutRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.SitOutResponse:
        return await self._guard(
            context,
            self._seat_call(
                context,
                request.table_id,
                request.seat,
                request.request_id,
                SitOut(request.seat),
                lambda state, seq: pb.SitOutResponse(sequence=seq),
                pb.SitOutResponse,
            ),
        )

    async def SitIn(
        self, request: pb.SitInRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.SitInResponse:
        return await self._guard(
            context,
            self._seat_call(
                context,
                request.table_id,
                request.seat,
                request.request_id,
                SitIn(request.seat),
                lambda state, seq: pb.SitInResponse(sequence=seq),
                pb.SitInResponse,
            ),
        )

    async def AddChips(
        self, request: pb.AddChipsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.AddChipsResponse:
        def respond(state: TableState, seq: int) -> pb.AddChipsResponse:
            player = state.player(request.seat)
            return pb.AddChipsResponse(stack=player.stack if player else 0, sequence=seq)

        return await self._guard(
            context,
            self._seat_call(
                context,
                request.table_id,
                request.seat,
                request.request_id,
                AddChips(request.seat, request.amount),
                respond,
                pb.AddChipsResponse,
            ),
        )

    async def SubmitAction(
        self, request: pb.SubmitActionRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.SubmitActionResponse:
        async def run() -> pb.SubmitActionResponse:
            try:
                command = action_from_proto(request.seat, request.action)
            except BadAction as exc:
                raise _Abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc)) from None
            runtime = await self._runtime(request.table_id)

            def respond(state: TableState, seq: int) -> pb.SubmitActionResponse:
                view = table_view_to_proto(state, request.seat, seq)
                return pb.SubmitActionResponse(sequence=seq, view=view)

            expected = request.expected_sequence or None
            response = await self._seat_call(
                context,
                request.table_id,
                request.seat,
                request.request_id,
                PlayHand(command),
                respond,
                pb.SubmitActionResponse,
                expected,
            )
            deadline = runtime.action_deadline()
            if deadline is not None and response.view.hand.HasField("to_act"):
                response.view.hand.action_deadline.FromDatetime(deadline)
            return response

        return await self._guard(context, run())

    async def ShowCards(
        self, request: pb.ShowCardsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.ShowCardsResponse:
        async def run() -> pb.ShowCardsResponse:
            runtime = await self._runtime(request.table_id)
            state = runtime.state
            if (
                request.hand_id
                and state is not None
                and state.hand is not None
                and state.hand.setup.hand_id != request.hand_id
            ):
                raise _Abort(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "cards can be shown only for the last hand, before the next one starts",
                    "HAND_OVER",
                )
            return await self._seat_call(
                context,
                request.table_id,
                request.seat,
                request.request_id,
                PlayHand(ShowCards(request.seat)),
                lambda state, seq: pb.ShowCardsResponse(sequence=seq),
                pb.ShowCardsResponse,
            )

        return await self._guard(context, run())

    # ------------------------------------------------------------------ views

    async def _viewer(
        self,
        context: grpc.aio.ServicerContext[Any, Any],
        runtime: TableRuntime,
        has_seat: bool,
        seat: int,
    ) -> int | None:
        if not has_seat:
            return None
        self._authorize_seat(context, runtime.state, seat)
        return seat

    async def GetTableView(
        self, request: pb.GetTableViewRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.GetTableViewResponse:
        async def run() -> pb.GetTableViewResponse:
            runtime = await self._runtime(request.table_id)
            viewer = await self._viewer(context, runtime, request.HasField("seat"), request.seat)
            assert runtime.state is not None
            view = table_view_to_proto(
                runtime.state, viewer, runtime.version, runtime.action_deadline()
            )
            return pb.GetTableViewResponse(view=view)

        return await self._guard(context, run())

    async def WatchTable(
        self, request: pb.WatchTableRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[pb.WatchTableResponse]:
        try:
            runtime = await self._runtime(request.table_id)
            viewer = await self._viewer(context, runtime, request.HasField("seat"), request.seat)
        except _Abort as exc:
            await _fail(context, exc)
            return
        store = runtime.store
        table_id = runtime.table_id
        start = request.from_sequence
        snapshot_needed = start == 0
        if start > runtime.version:
            await _fail(
                context,
                _Abort(
                    grpc.StatusCode.OUT_OF_RANGE,
                    f"from_sequence {start} is ahead of the table (at {runtime.version})",
                ),
            )
            return
        if snapshot_needed:
            assert runtime.state is not None
            start = runtime.version
            yield pb.WatchTableResponse(
                snapshot=table_view_to_proto(
                    runtime.state, viewer, start, runtime.action_deadline()
                )
            )
        tracker = ProofTracker(viewer)
        # Prime the proof tracker with the running hand's commitment and deck.
        prime_from = max(0, runtime.hand_first_sequence - 2)
        if prime_from < start:
            with contextlib.suppress(EventsTrimmed):
                for record in await store.read(table_id, prime_from, start - prime_from):
                    tracker.openings(decode_event(record.payload)[0])
        try:
            async for record in store.subscribe(table_id, start):
                event, meta = decode_event(record.payload)
                proofs = tracker.openings(event)
                yield pb.WatchTableResponse(
                    event=redacted_stored_event(event, meta, viewer),
                    card_proofs=[proof_to_proto(p) for p in proofs],
                )
        except EventsTrimmed:
            await _fail(
                context,
                _Abort(
                    grpc.StatusCode.OUT_OF_RANGE,
                    "those events are archived; watch again with from_sequence 0",
                ),
            )

    async def GetHandHistory(
        self, request: pb.GetHandHistoryRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.GetHandHistoryResponse:
        async def run() -> pb.GetHandHistoryResponse:
            runtime = await self._runtime(request.table_id)
            viewer = await self._viewer(context, runtime, request.HasField("seat"), request.seat)
            records = await runtime.store.read(runtime.table_id)
            decoded = [decode_event(r.payload) for r in records]
            hand_id = request.hand_id
            if not hand_id:
                hand_ids = [e.hand_id for e in decoded if isinstance(e, DeckCommitted)]
                if not hand_ids:
                    raise _Abort(grpc.StatusCode.NOT_FOUND, "no hand has been dealt at this table")
                hand_id = hand_ids[-1]
            tracker = ProofTracker(viewer)
            items = []
            inside = False
            for event, meta in decoded:
                if isinstance(event, DeckCommitted):
                    inside = event.hand_id == hand_id
                    if not inside and items:
                        break
                proofs = tracker.openings(event)
                if inside and (meta.hand_id == hand_id or isinstance(event, DeckCommitted)):
                    items.append(
                        pb.WatchTableResponse(
                            event=redacted_stored_event(event, meta, viewer),
                            card_proofs=[proof_to_proto(p) for p in proofs],
                        )
                    )
            if not items:
                raise _Abort(grpc.StatusCode.NOT_FOUND, f"hand {hand_id} is not at this table")
            return pb.GetHandHistoryResponse(hand_id=hand_id, events=items)

        return await self._guard(context, run())


def _free_seat(state: TableState) -> int:
    for seat in range(state.config.seat_count):
        if state.player(seat) is None:
            return seat
    raise _Abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "the table is full", "TABLE_FULL")
