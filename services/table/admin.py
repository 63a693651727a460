"""The internal use cases, without gRPC: create a table, seat a player (who gets a seat token),
close a table, issue a watch grant (a private table's spectator key).

Each needs the service credential (``Caller.require_admin``) and is retry-safe like every
mutation (``services.table.application``). A new table's configuration comes
as the API's ``TableConfig`` message, because its bounds (``felt.wire.limits``)
and its conversion (``felt.messages.values``) are defined on it.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from felt.core.table.aggregate import (
    CloseTable,
    CreateTable,
    ReissueSeatToken,
    SeatPlayer,
    TableCommand,
    TableState,
)
from felt.messages.values import CodecError, ai_level_from_proto, table_config_from_proto
from felt.storage.idempotency import ClientRequest
from felt.wire import limits
from felt.wire.convert import table_to_proto
from felt.wire.tokens import (
    WATCH_GRANT_TTL_S,
    SeatClaim,
    WatchClaim,
    issue_token,
    issue_watch_grant,
    request_nonce,
    token_hash,
)
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from poker.v1.reason_pb2 import Reason
from services.table.application import TableApp, check_table_id, request_key
from services.table.auth import Caller, Secrets
from services.table.manager import NotOwner
from services.table.refusals import Code, Refused, first_answer, invalid


@dataclass(frozen=True, slots=True)
class Seated:
    """A player seated: its seat, its seat token and when that expires (0: never)."""

    seat: int
    sequence: int
    seat_token: str
    expires_at: int


@dataclass(frozen=True, slots=True)
class WatchGrant:
    """A watch grant for one table, and when it expires (Unix seconds)."""

    token: str
    expires_at: int


class TableAdmin:
    """Creating tables and seating players (see the module docstring)."""

    def __init__(self, app: TableApp, secrets: Secrets) -> None:
        self.app = app
        self.secrets = secrets

    async def create_table(
        self,
        caller: Caller,
        request: ClientRequest,
        table_id: str,
        name: str,
        config: epb.TableConfig | None,
    ) -> tpb.Table:
        """Create a table (admin); ``table_id`` "" derives one from the request id."""
        key = request_key(caller.require_admin(), request)
        table_id = table_id or f"t-{hashlib.sha256(request.request_id.encode()).hexdigest()[:12]}"
        check_table_id(table_id)
        if config is None:
            raise Refused(Code.INVALID_ARGUMENT, "config is required")
        name = limits.clean_table_name(name)
        manager = self.app.manager
        existing = manager.runtimes.get(table_id)
        if existing is not None or await manager.registry.exists(table_id):
            # A retry gets the first answer before its config is checked again: a close_time
            # that was ahead then may have passed by now (the lobby retries a lost answer).
            earlier = await manager.store.request_result(table_id, key.key)
            if earlier is not None:
                if existing is not None:
                    # The first attempt may have failed after its append, before the table
                    # was registered and started: never to be adopted again, nor run.
                    await manager.created(existing)
                return pb.CreateTableResponse.FromString(first_answer(key, earlier.response)).table
            if existing is None:
                raise Refused(Code.ALREADY_EXISTS, "a table with this table_id already exists")
        limits.check_table_config(config, datetime.now(UTC))
        try:
            domain_config = table_config_from_proto(config, table_id, name)
        except ValueError as exc:
            raise Refused(Code.INVALID_ARGUMENT, str(exc)) from None
        try:
            runtime = existing or await manager.register(table_id)
        except NotOwner:
            raise Refused(
                Code.ALREADY_EXISTS, "a table with this table_id already exists"
            ) from None
        try:
            answer = await self.app.mutate(
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

    async def issue_watch_grant(self, caller: Caller, table_id: str) -> WatchGrant:
        """A watch grant for ``table_id`` (admin: the lobby gives it to whom it lets watch a
        private lounge). A read, not a mutation: nothing is stored, and a grant is no more
        than the lobby's word, signed, that its holder may watch this table for a while."""
        caller.require_admin()
        runtime = await self.app.runtime(table_id)
        if runtime.state is None:
            raise Refused(Code.NOT_FOUND, "no table has this table_id", Reason.NO_TABLE)
        expires = int(time.time()) + WATCH_GRANT_TTL_S
        token = issue_watch_grant(self.secrets.token_secret, WatchClaim(table_id, expires))
        return WatchGrant(token, expires)

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
        *,
        wait_for_big_blind: bool = False,
    ) -> Seated:
        """Seat a player (admin) at ``seat`` or the first free one; it gets a seat token.

        With ``wait_for_big_blind`` the player is dealt in only when the big blind reaches it.

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
        runtime = await self.app.runtime(table_id)
        table_id = runtime.table_id
        secret = self.secrets.token_secret
        ttl = self.secrets.token_ttl_s
        expires = int(time.time()) + ttl if ttl else 0
        nonce = request_nonce(secret, table_id, request.request_id)

        def where(state: TableState) -> int:
            return seat if seat is not None else free_seat(state)

        def make(state: TableState | None) -> TableCommand:
            if state is None:
                raise Refused(Code.NOT_FOUND, "no table has this table_id", Reason.NO_TABLE)
            try:
                limits.check_chips_added(state, stack)
            except limits.LimitError as exc:
                raise invalid(exc) from None
            chosen = where(state)
            token = issue_token(secret, SeatClaim(table_id, chosen, player_id, expires), nonce)
            return SeatPlayer(
                chosen,
                player_id,
                display_name,
                stack,
                token_hash(token),
                level,
                wait_for_big_blind,
            )

        def answer(
            before: TableState | None, _: TableState, seq: int, __: datetime | None
        ) -> pb.SeatPlayerResponse:
            assert before is not None  # make refused a missing table
            out = pb.SeatPlayerResponse(seat=where(before), sequence=seq)
            if expires:
                out.seat_token_expire_time.FromSeconds(expires)
            return out

        first = await self.app.mutate(runtime, make, key, answer, pb.SeatPlayerResponse)
        # Fresh or retried: the same claim and nonce give the same token.
        expires_at = first.seat_token_expire_time.seconds
        claim = SeatClaim(table_id, first.seat, player_id, expires_at)
        return Seated(first.seat, first.sequence, issue_token(secret, claim, nonce), expires_at)

    async def reissue_seat_token(
        self, caller: Caller, request: ClientRequest, table_id: str, seat: int, player_id: str
    ) -> Seated:
        """A fresh token for ``seat``'s current occupant ``player_id`` (internal: the lobby's,
        as the seat with its stored token, which may have expired).

        Like ``seat_player`` the token is derived from the request id, so a retry gets the
        same token back while only its hash is stored (``SeatTokenReissued``); every
        earlier token of the seat stops working at the append.
        """
        limits.check_player_id(player_id)
        secret = self.secrets.token_secret
        ttl = self.secrets.token_ttl_s
        expires = int(time.time()) + ttl if ttl else 0
        runtime = await self.app.runtime(table_id)
        table_id = runtime.table_id
        nonce = request_nonce(secret, table_id, f"reissue/{request.request_id}")
        token = issue_token(secret, SeatClaim(table_id, seat, player_id, expires), nonce)

        def answer(
            _: TableState | None, __: TableState, seq: int, ___: datetime | None
        ) -> pb.ReissueSeatTokenResponse:
            out = pb.ReissueSeatTokenResponse(sequence=seq)
            if expires:
                out.seat_token_expire_time.FromSeconds(expires)
            return out

        first = await self.app.seat_call(
            caller,
            request,
            table_id,
            seat,
            ReissueSeatToken(seat, player_id, token_hash(token)),
            answer,
            pb.ReissueSeatTokenResponse,
            internal=True,
        )
        # Fresh or retried: the first answer's expiry and the request's nonce give its token.
        expires_at = first.seat_token_expire_time.seconds
        claim = SeatClaim(table_id, seat, player_id, expires_at)
        token = issue_token(secret, claim, nonce)
        # A retry after a later reissue (or the seat's leave) would hand back a token that is
        # void: stored by the lobby, the seat's leave would name it by a dead token.
        state = (await self.app.runtime(table_id)).state
        player = state.player(seat) if state is not None else None
        if player is None or player.player_id != player_id:
            raise Refused(
                Code.FAILED_PRECONDITION,
                "the seat is not this player_id's any more",
                Reason.NOT_OCCUPANT,
            )
        if player.token_hash != token_hash(token):
            raise Refused(
                Code.FAILED_PRECONDITION,
                "a later reissue replaced the token this request was given; reissue again "
                "with a new request_id",
                Reason.SEAT_TOKEN_SUPERSEDED,
            )
        return Seated(seat, first.sequence, token, expires_at)

    async def close_table(
        self, caller: Caller, request: ClientRequest, table_id: str, reason: str
    ) -> int:
        """Close a table between hands (service): no more hands or seats; its seats still
        leave with their chips. Its sequence after the ``TableClosed``."""
        key = request_key(caller.require_admin(), request)
        reason = limits.clean_name(reason, "reason", CLOSE_REASON_MAX) or "closed"
        runtime = await self.app.runtime(table_id)
        first = await self.app.mutate(
            runtime,
            CloseTable(reason),
            key,
            lambda _, __, seq, ___: pb.CloseTableResponse(sequence=seq),
            pb.CloseTableResponse,
        )
        return first.sequence


CLOSE_REASON_MAX = 200


def free_seat(state: TableState) -> int:
    for seat in range(state.config.seat_count):
        if state.player(seat) is None and not state.dealt_in(seat):
            return seat
    raise Refused(Code.RESOURCE_EXHAUSTED, "the table is full", Reason.TABLE_FULL)
