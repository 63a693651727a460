"""``poker.v1.TableService`` over gRPC: authentication, validation, idempotency, error mapping.

Every mutating call carries a ``request_id``. A fresh request is decided and
appended in one version-checked call that also records the request id; a
retry is answered with the stored response of the first call: by the append
itself, or (when deciding again on the newer state refuses it) by looking the
id up. A refused request gets the status code a client can act on
(FAILED_PRECONDITION with the rules code for "not your turn" and friends,
ABORTED for a stale ``expected_sequence``, PERMISSION_DENIED for someone
else's seat) and changes nothing.

Seat checks happen in two steps: the token's signature, table and seat before
anything else, and "is this the seat's current occupant" under the table's
lock, so that nobody can slip in between the check and the append.

Log context, deadlines and the mapping of refusals to statuses are done for
every unary call by ``services.table.interceptors.CallInterceptor``; the
statuses themselves are in ``services.table.errors``. The use cases still live
here, next to their handlers (moving them into a gRPC-free application layer
is the next step, see docs/architecture.md).
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any, TypeVar, cast

import grpc
import structlog
from google.protobuf.message import Message
from redis.exceptions import RedisError
from structlog.contextvars import bind_contextvars, bound_contextvars

from felt.api import limits
from felt.api.convert import (
    BadAction,
    action_from_proto,
    fill_table_view,
    proof_to_proto,
    redacted_stored_event,
    table_to_proto,
    table_view_to_proto,
)
from felt.eventstore import EventsTrimmed, VersionConflict
from felt.eventstore.codec import (
    CodecError,
    ai_level_from_proto,
    decode_event,
    table_config_from_proto,
)
from felt.idempotency import (
    ADMIN_PRINCIPAL,
    RequestKey,
    RequestReused,
    ai_principal,
    client_key,
    seat_principal,
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
from felt.table.events import PlayerLeft
from felt.tokens import SeatClaim, TokenError, issue_token, request_nonce, token_hash, verify_token
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from services.table.errors import TOO_SLOW as _TOO_SLOW
from services.table.errors import Refused as _Abort
from services.table.errors import fail as _fail
from services.table.errors import first_answer as _first_answer
from services.table.errors import invalid as _invalid
from services.table.errors import quarantined as _quarantined
from services.table.errors import refusal as _refusal
from services.table.errors import unavailable as _unavailable
from services.table.manager import NotOwner, TableManager, TableNotFound
from services.table.runtime import CommandSource, LeaseLost, TableQuarantined, TableRuntime
from services.table.watch import FellBehind, WatchHub, WatchLimits

log = structlog.get_logger("felt.table")

M = TypeVar("M", bound=Message)
_VERIFIED_TOKENS = 10_000  # how many verified tokens to remember
DEFAULT_TOKEN_TTL_S = 86_400  # seat tokens live a day unless configured (FELT_SEAT_TOKEN_TTL_S)
Context = grpc.aio.ServicerContext[Any, Any]
Respond = Callable[[TableState, int, datetime | None], M]


@dataclass(frozen=True, slots=True)
class Secrets:
    """Shared secrets: token signing, and the credentials of admins and AI workers.

    ``token_ttl_s`` is the lifetime of the seat tokens issued here (0: they never
    expire, which only tokens minted elsewhere with the secret may want).
    """

    token_secret: bytes
    admin_token: str = ""
    ai_token: str = ""
    token_ttl_s: int = DEFAULT_TOKEN_TTL_S


@dataclass(frozen=True, slots=True)
class _Credential:
    """A bearer token checked for its signature, table and seat (not yet for its occupant)."""

    seat: int
    token_hash: str
    ai: bool = False

    @property
    def principal(self) -> str:
        """Who calls, for idempotency keys: the AI workers for this seat, or this very token."""
        return ai_principal(self.seat) if self.ai else seat_principal(self.seat, self.token_hash)


def _request_key(principal: str, request: Any) -> RequestKey:
    """``request``'s idempotency key, its ``request_id`` checked first."""
    _require_request_id(request.request_id)
    return client_key(principal, request)


def _check_table_id(table_id: str) -> str:
    try:
        return limits.check_table_id(table_id)
    except limits.LimitError as exc:
        raise _invalid(exc) from None


def _require_request_id(request_id: str) -> str:
    try:
        return limits.check_request_id(request_id)
    except limits.LimitError as exc:
        raise _invalid(exc) from None


def _bearer(context: Context) -> str:
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
            return value[len("Bearer ") :].strip()
    return ""


class TableService(rpc.TableServiceServicer):
    """The gRPC face of the tables this instance owns."""

    def __init__(
        self, manager: TableManager, secrets: Secrets, watch_limits: WatchLimits | None = None
    ) -> None:
        self.manager = manager
        self.secrets = secrets
        self.watches = WatchHub(manager.store, watch_limits)
        # Tokens whose signature checked out (verifying is a JSON parse and two hashes):
        # token -> (claim, hash). Expiry is still checked on every use.
        self._verified: dict[str, tuple[SeatClaim, str]] = {}

    # ------------------------------------------------------------------ plumbing

    async def _runtime(self, table_id: str) -> TableRuntime:
        _check_table_id(table_id)
        try:
            runtime = await self.manager.get(table_id)  # at once for a table run here
        except TableNotFound:
            raise _Abort(grpc.StatusCode.NOT_FOUND, f"table {table_id} does not exist") from None
        except NotOwner:
            raise _unavailable(table_id) from None
        except TableQuarantined as exc:
            raise _quarantined(exc) from None
        try:
            await runtime.refresh()  # rereads the stream only if the cache may be behind
        except TableQuarantined as exc:
            raise _quarantined(exc) from None
        hand = runtime.state.hand if runtime.state is not None else None
        if hand is not None:
            bind_contextvars(hand_id=hand.setup.hand_id)
        return runtime

    def _require_admin(self, context: Context) -> None:
        if self.secrets.admin_token and not hmac.compare_digest(
            _bearer(context), self.secrets.admin_token
        ):
            raise _Abort(grpc.StatusCode.UNAUTHENTICATED, "this call needs the admin token")

    def _credential(self, context: Context, table_id: str, seat: int) -> _Credential:
        """Step one: a genuine token for this table and seat (or the AI workers' token)."""
        token = _bearer(context)
        if not token:
            raise _Abort(
                grpc.StatusCode.UNAUTHENTICATED,
                "send the seat token as 'authorization: Bearer <token>' metadata",
            )
        if self.secrets.ai_token and hmac.compare_digest(token, self.secrets.ai_token):
            return _Credential(seat, "", ai=True)
        now = int(time.time())
        known = self._verified.get(token)
        if known is not None and not (known[0].expires_at and known[0].expires_at < now):
            claim, hashed = known
        else:
            try:
                claim = verify_token(self.secrets.token_secret, token, now)
            except TokenError as exc:
                raise _Abort(grpc.StatusCode.UNAUTHENTICATED, str(exc)) from None
            hashed = token_hash(token)
            if len(self._verified) >= _VERIFIED_TOKENS:
                self._verified.pop(next(iter(self._verified)))
            self._verified[token] = (claim, hashed)
        if claim.table_id != table_id:
            raise _Abort(
                grpc.StatusCode.PERMISSION_DENIED,
                f"this token is for table {claim.table_id}, not table {table_id}",
            )
        if claim.seat != seat:
            raise _Abort(
                grpc.StatusCode.PERMISSION_DENIED,
                f"this token is for seat {claim.seat}, not seat {seat}",
            )
        return _Credential(seat, hashed)

    @staticmethod
    def _occupant(state: TableState | None, credential: _Credential) -> None:
        """Step two: the token belongs to the seat's current occupant."""
        if state is None:
            raise _Abort(grpc.StatusCode.NOT_FOUND, "the table does not exist")
        seat = credential.seat
        player = state.player(seat)
        if player is None:
            raise _Abort(grpc.StatusCode.NOT_FOUND, f"nobody sits at seat {seat}")
        if credential.ai:
            if not player.ai_level:
                raise _Abort(
                    grpc.StatusCode.PERMISSION_DENIED,
                    f"the AI workers' token acts for AI seats only; seat {seat} is a human's",
                )
        elif not hmac.compare_digest(credential.token_hash, player.token_hash):
            raise _Abort(
                grpc.StatusCode.PERMISSION_DENIED,
                "this token belonged to an earlier occupant of the seat",
            )

    async def _mutate(
        self,
        runtime: TableRuntime,
        command: CommandSource,
        request: RequestKey,
        respond: Respond[M],
        response_type: type[M],
        expected: int | None = None,
        credential: _Credential | None = None,
    ) -> M:
        """Decide-append-apply and answer; a retried request gets its first answer."""

        def authorize(state: TableState | None) -> None:
            if credential is not None:
                self._occupant(state, credential)

        try:
            outcome = await runtime.run(command, request, respond, expected, authorize)
        except (IllegalAction, VersionConflict, _Abort) as exc:
            # Refused on today's state: perhaps because this very request already went
            # through (a retry after the table moved on). Then it gets its first answer.
            earlier = await runtime.store.request_result(runtime.table_id, request.key)
            if earlier is not None:
                return response_type.FromString(_first_answer(request, earlier.response))
            raise _refusal(exc) from None
        except (LeaseLost, RequestReused) as exc:
            raise _refusal(exc) from None
        if outcome.duplicate or outcome.response is None:
            return response_type.FromString(outcome.stored)
        return cast(M, outcome.response)

    # ------------------------------------------------------------------ tables

    async def CreateTable(
        self, request: pb.CreateTableRequest, context: Context
    ) -> pb.CreateTableResponse:
        async def run() -> pb.CreateTableResponse:
            self._require_admin(context)
            key = _request_key(ADMIN_PRINCIPAL, request)
            table_id = (
                request.table_id
                or f"t-{hashlib.sha256(request.request_id.encode()).hexdigest()[:12]}"
            )
            _check_table_id(table_id)
            if not request.HasField("config"):
                raise _Abort(grpc.StatusCode.INVALID_ARGUMENT, "config is required")
            name = limits.clean_table_name(request.name)
            limits.check_table_config(request.config, datetime.now(UTC))
            try:
                config = table_config_from_proto(request.config, table_id, name)
            except ValueError as exc:
                raise _Abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc)) from None
            existing = self.manager.runtimes.get(table_id)
            if existing is None and await self.manager.registry.exists(table_id):
                earlier = await self.manager.store.request_result(table_id, key.key)
                if earlier is not None:
                    first = _first_answer(key, earlier.response)
                    return pb.CreateTableResponse.FromString(first)
                raise _Abort(grpc.StatusCode.ALREADY_EXISTS, f"table {table_id} already exists")
            try:
                runtime = existing or await self.manager.register(table_id)
            except NotOwner:
                raise _Abort(
                    grpc.StatusCode.ALREADY_EXISTS, f"table {table_id} already exists"
                ) from None
            try:
                response = await self._mutate(
                    runtime,
                    CreateTable(config),
                    key,
                    lambda state, seq, _: pb.CreateTableResponse(table=table_to_proto(state, seq)),
                    pb.CreateTableResponse,
                )
            except _Abort:
                await self.manager.discard(runtime)
                raise
            await self.manager.created(runtime)
            return response

        return await run()

    async def GetTable(self, request: pb.GetTableRequest, context: Context) -> pb.GetTableResponse:
        async def run() -> pb.GetTableResponse:
            runtime = await self._runtime(request.table_id)
            if runtime.state is None:
                raise _Abort(grpc.StatusCode.NOT_FOUND, f"table {request.table_id} does not exist")
            return pb.GetTableResponse(table=table_to_proto(runtime.state, runtime.version))

        return await run()

    async def SeatPlayer(
        self, request: pb.SeatPlayerRequest, context: Context
    ) -> pb.SeatPlayerResponse:
        async def run() -> pb.SeatPlayerResponse:
            self._require_admin(context)
            key = _request_key(ADMIN_PRINCIPAL, request)
            limits.check_player_id(request.player_id)
            display_name = limits.clean_display_name(request.display_name)
            limits.check_amount(request.stack, "stack")
            try:
                ai_level = ai_level_from_proto(request.ai_level)
            except CodecError as exc:
                raise _Abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc)) from None
            runtime = await self._runtime(request.table_id)
            table_id = runtime.table_id
            secret = self.secrets.token_secret
            ttl = self.secrets.token_ttl_s
            expires = int(time.time()) + ttl if ttl else 0
            # The token is derived from the request id, so a retry gets the same
            # token back although only its hash is ever stored.
            nonce = request_nonce(secret, table_id, request.request_id)
            chosen: list[int] = []

            def make(state: TableState | None) -> TableCommand:
                if state is None:
                    raise _Abort(grpc.StatusCode.NOT_FOUND, f"table {table_id} does not exist")
                try:
                    limits.check_chips_added(state, request.stack)
                except limits.LimitError as exc:
                    raise _invalid(exc) from None
                seat = request.seat if request.HasField("seat") else _free_seat(state)
                chosen.append(seat)
                token = issue_token(
                    secret, SeatClaim(table_id, seat, request.player_id, expires), nonce
                )
                return SeatPlayer(
                    seat,
                    request.player_id,
                    display_name,
                    request.stack,
                    token_hash(token),
                    ai_level,
                )

            def respond(state: TableState, seq: int, _: datetime | None) -> pb.SeatPlayerResponse:
                out = pb.SeatPlayerResponse(seat=chosen[-1], sequence=seq)
                if expires:
                    out.seat_token_expire_time.FromSeconds(expires)
                return out

            response = await self._mutate(runtime, make, key, respond, pb.SeatPlayerResponse)
            # Fresh or retried: the same claim and nonce give the same token.
            claim = SeatClaim(
                table_id, response.seat, request.player_id, response.seat_token_expire_time.seconds
            )
            response.seat_token = issue_token(secret, claim, nonce)
            return response

        return await run()

    async def _seat_call(
        self,
        context: Context,
        request: Any,
        command: CommandSource,
        respond: Respond[M],
        response_type: type[M],
        expected: int | None = None,
    ) -> M:
        """A seat's mutating call: ``request`` names the table, the seat and the request id."""
        runtime = await self._runtime(request.table_id)
        credential = self._credential(context, request.table_id, request.seat)
        key = _request_key(credential.principal, request)
        return await self._mutate(
            runtime, command, key, respond, response_type, expected, credential
        )

    async def LeaveSeat(
        self, request: pb.LeaveSeatRequest, context: Context
    ) -> pb.LeaveSeatResponse:
        seat = request.seat
        before: list[TableState] = []

        def make(state: TableState | None) -> TableCommand:
            if state is not None:
                before.append(state)
            return LeaveSeat(seat)

        def respond(state: TableState, seq: int, _: datetime | None) -> pb.LeaveSeatResponse:
            # Gone now: it left with its stack; still dealt in: it leaves after the hand,
            # and has its chips behind for now.
            player = state.player(seat)
            source = state if player is not None else before[-1]
            return pb.LeaveSeatResponse(stack=_stack_behind(source, seat), sequence=seq)

        return await self._seat_call(
            context,
            request,
            make,
            respond,
            pb.LeaveSeatResponse,
        )

    async def SitOut(self, request: pb.SitOutRequest, context: Context) -> pb.SitOutResponse:
        return await self._presence(context, request, SitOut(request.seat), pb.SitOutResponse)

    async def SitIn(self, request: pb.SitInRequest, context: Context) -> pb.SitInResponse:
        return await self._presence(context, request, SitIn(request.seat), pb.SitInResponse)

    async def _presence(
        self, context: Context, request: Any, command: TableCommand, response_type: type[M]
    ) -> M:
        """Sitting out or in: the seat's command, answered with the new sequence."""
        return await self._seat_call(
            context,
            request,
            command,
            lambda state, seq, _: response_type(sequence=seq),
            response_type,
        )

    async def AddChips(self, request: pb.AddChipsRequest, context: Context) -> pb.AddChipsResponse:
        def respond(state: TableState, seq: int, _: datetime | None) -> pb.AddChipsResponse:
            player = state.player(request.seat)
            return pb.AddChipsResponse(stack=player.stack if player else 0, sequence=seq)

        def make(state: TableState | None) -> TableCommand:
            try:
                if state is not None:
                    limits.check_chips_added(state, request.amount)
            except limits.LimitError as exc:
                raise _invalid(exc) from None
            return AddChips(request.seat, request.amount)

        return await self._seat_call(
            context,
            request,
            make,
            respond,
            pb.AddChipsResponse,
        )

    async def SubmitAction(
        self, request: pb.SubmitActionRequest, context: Context
    ) -> pb.SubmitActionResponse:
        async def run() -> pb.SubmitActionResponse:
            try:
                command = action_from_proto(request.seat, request.action)
            except BadAction as exc:
                raise _Abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc), "BAD_ACTION") from None
            # Unset: no check. Set: the table must be at it (0 never is: a mistake).
            expected = request.expected_sequence if request.HasField("expected_sequence") else None
            if expected == 0:
                raise _Abort(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "expected_sequence 0 is no table's sequence: set the sequence of the view "
                    "the action was decided on, or leave it unset to skip the check",
                    "BAD_SEQUENCE",
                )

            def respond(
                state: TableState, seq: int, deadline: datetime | None
            ) -> pb.SubmitActionResponse:
                response = pb.SubmitActionResponse(sequence=seq)
                fill_table_view(response.view, state, request.seat, seq, deadline)
                return response

            return await self._seat_call(
                context,
                request,
                PlayHand(command),
                respond,
                pb.SubmitActionResponse,
                expected,
            )

        return await run()

    async def ShowCards(
        self, request: pb.ShowCardsRequest, context: Context
    ) -> pb.ShowCardsResponse:
        def make(state: TableState | None) -> TableCommand:
            try:
                limits.check_hand_id(request.hand_id)
            except limits.LimitError as exc:
                raise _invalid(exc) from None
            hand = state.hand if state is not None else None
            if request.hand_id and hand is not None and hand.setup.hand_id != request.hand_id:
                raise _Abort(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "cards can be shown only for the last hand, before the next one starts",
                    "HAND_OVER",
                )
            return PlayHand(ShowCards(request.seat))

        return await self._seat_call(
            context,
            request,
            make,
            lambda state, seq, _: pb.ShowCardsResponse(sequence=seq),
            pb.ShowCardsResponse,
        )

    # ------------------------------------------------------------------ views

    async def _viewer(
        self, context: Context, table_id: str, has_seat: bool, seat: int
    ) -> tuple[TableRuntime, int | None]:
        """The runtime, and the seat to view as (None: a spectator), its token checked."""
        runtime = await self._runtime(table_id)
        if not has_seat:
            return runtime, None
        credential = self._credential(context, table_id, seat)
        self._occupant(runtime.state, credential)
        return runtime, seat

    async def GetTableView(
        self, request: pb.GetTableViewRequest, context: Context
    ) -> pb.GetTableViewResponse:
        async def run() -> pb.GetTableViewResponse:
            runtime, viewer = await self._viewer(
                context, request.table_id, request.HasField("seat"), request.seat
            )
            assert runtime.state is not None
            response = pb.GetTableViewResponse()
            fill_table_view(
                response.view, runtime.state, viewer, runtime.version, runtime.action_deadline()
            )
            return response

        return await run()

    async def WatchTable(
        self, request: pb.WatchTableRequest, context: Context
    ) -> AsyncIterator[pb.WatchTableResponse]:
        """Stream the table's events as the viewer may see them.

        A seat watcher sees its own cards only in events after its occupant sat
        down (a resume from earlier shows the earlier occupant's hand as a
        spectator), and its stream ends after the occupant's ``PlayerLeft``:
        the token is void from then on.

        Streams are capped per connection and per service, share one tail of the
        table's stream, and are dropped if they fall too far behind
        (``services.table.watch``).
        """
        with (
            bound_contextvars(**_log_context(request.table_id, _seat_of(request))),
            self.watches.admission(context.peer()) as refusal,
        ):
            if refusal:
                log.info("watch_refused", detail=refusal)
                await _fail(context, _Abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refusal))
                return
            try:
                runtime, viewer = await self._viewer(
                    context, request.table_id, request.HasField("seat"), request.seat
                )
            except _Abort as exc:
                log.info("request_refused", code=exc.code.name, detail=exc.message)
                await _fail(context, exc)
                return
            start = request.from_sequence
            if start > runtime.version:
                await _fail(
                    context,
                    _Abort(
                        grpc.StatusCode.OUT_OF_RANGE,
                        f"from_sequence {start} is ahead of the table (at {runtime.version})",
                    ),
                )
                return
            seated_since = runtime.seated_at.get(viewer, 0) if viewer is not None else 0
            if start == 0:
                assert runtime.state is not None
                start = runtime.version
                yield pb.WatchTableResponse(
                    snapshot=table_view_to_proto(
                        runtime.state, viewer, start, runtime.action_deadline()
                    )
                )
            tracker = ProofTracker(viewer)
            # Prime the proof tracker with the commitment and deck of the hand `start` is in.
            deck_at = runtime.deck_sequence_before(start)
            if deck_at:
                try:
                    for record in await runtime.store.read(
                        runtime.table_id, deck_at - 1, start - deck_at + 1
                    ):
                        tracker.viewer = viewer if record.sequence > seated_since else None
                        tracker.openings(decode_event(record.payload)[0])
                except EventsTrimmed:
                    pass  # an archived hand: its cards come without proofs
            try:
                async for sequence, event, meta in self.watches.events(
                    runtime.table_id, start, runtime.version, partial(_fail, context, _TOO_SLOW)
                ):
                    as_seat = viewer if sequence > seated_since else None
                    tracker.viewer = as_seat
                    proofs = tracker.openings(event)
                    yield pb.WatchTableResponse(
                        event=redacted_stored_event(event, meta, as_seat),
                        card_proofs=[proof_to_proto(p) for p in proofs],
                    )
                    if isinstance(event, PlayerLeft) and event.seat == as_seat:
                        return  # the seat's token is void now
            except FellBehind as exc:
                log.info("watcher_fell_behind", last_sent=exc.last_sent)
                await _fail(context, _TOO_SLOW)
            except EventsTrimmed:
                await _fail(
                    context,
                    _Abort(
                        grpc.StatusCode.OUT_OF_RANGE,
                        "those events are archived; watch again with from_sequence 0",
                    ),
                )
            except (RedisError, OSError) as exc:
                log.warning("watch_storage_unavailable", error=repr(exc))
                await _fail(
                    context,
                    _Abort(
                        grpc.StatusCode.UNAVAILABLE,
                        "the table's storage is unreachable; watch again from the last event",
                    ),
                )

    async def GetHandHistory(
        self, request: pb.GetHandHistoryRequest, context: Context
    ) -> pb.GetHandHistoryResponse:
        async def run() -> pb.GetHandHistoryResponse:
            limits.check_hand_id(request.hand_id)
            runtime, viewer = await self._viewer(
                context, request.table_id, request.HasField("seat"), request.seat
            )
            hands = runtime.hand_decks
            hand_id = request.hand_id or next(reversed(hands), "")
            if not hand_id:
                raise _Abort(grpc.StatusCode.NOT_FOUND, "no hand has been dealt at this table")
            first = hands.get(hand_id)
            if first is None:
                raise _Abort(grpc.StatusCode.NOT_FOUND, f"hand {hand_id} is not at this table")
            if viewer is not None and runtime.seated_at.get(viewer, 0) > first:
                viewer = None  # the seat's occupant sat down after this hand: not theirs
            later = [s for s in runtime.deck_sequences if s > first]
            count = later[0] - first if later else None
            try:
                records = await runtime.store.read(runtime.table_id, first - 1, count)
            except EventsTrimmed:
                raise _Abort(
                    grpc.StatusCode.NOT_FOUND, f"hand {hand_id} is archived; ask the hand archive"
                ) from None
            tracker = ProofTracker(viewer)
            items = []
            for record in records:
                event, meta = decode_event(record.payload)
                proofs = tracker.openings(event)
                if meta.hand_id == hand_id:
                    items.append(
                        pb.WatchTableResponse(
                            event=redacted_stored_event(event, meta, viewer),
                            card_proofs=[proof_to_proto(p) for p in proofs],
                        )
                    )
            return pb.GetHandHistoryResponse(hand_id=hand_id, events=items)

        return await run()


def _log_context(table_id: str, seat: int | None) -> dict[str, Any]:
    """What a call's log lines carry (``hand_id`` is added once the table is known)."""
    table_id = table_id[: limits.LOGGED_ID_MAX]  # unchecked yet: log no megabytes
    return {"table_id": table_id} if seat is None else {"table_id": table_id, "seat": seat}


def _seat_of(request: Any) -> int | None:
    return request.seat if request.HasField("seat") else None


def _stack_behind(state: TableState, seat: int) -> int:
    """A seat's chips behind: its hand stack while dealt in, else its table stack."""
    if state.dealt_in(seat):
        assert state.hand is not None
        x = state.hand.seat_state(seat)
        assert x is not None
        return x.stack
    player = state.player(seat)
    return player.stack if player is not None else 0


def _free_seat(state: TableState) -> int:
    for seat in range(state.config.seat_count):
        if state.player(seat) is None and not state.dealt_in(seat):
            return seat
    raise _Abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "the table is full", "TABLE_FULL")
