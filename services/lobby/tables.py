"""The ``Tables`` port over gRPC: the table service's internal calls, with the lobby's service
credential (``FELT_ADMIN_TOKEN``; a seat's own token as well, in ``x-felt-seat-token``, when it
leaves for one player).

The table service scopes request ids to their caller, so the lobby (one admin
credential) derives each id from what it is for (``lounge/<id>/create``,
``lounge/<id>/ai/<seat>``, a saga's id): a retry after a crash sends the same id
and gets the first answer. A status that means the call was refused for good
(a bad argument, a taken seat, no such table, ...) is :class:`TableRefused`
with the table service's ``ErrorInfo`` reason; anything else (unreachable,
deadline, an internal error) leaves the outcome unknown: :class:`TablesUnavailable`,
to be retried with the same id.

Each call goes to the table's owner (``felt.service.table_router.OwnerCalls``: its lease and
the instance directory in Redis), retried once at once if the owner answered UNAVAILABLE and
the table has moved; given a bare channel instead (tests, ``felt sagas``), every call goes
there.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TypeVar

import grpc

from felt.core.table.events import PlayerLeft
from felt.service.table_router import OwnerCalls
from felt.storage.archive import HandArchive
from felt.storage.eventstore.codec import decode_event
from felt.wire.status import error_reason
from felt.wire.tokens import SEAT_TOKEN_HEADER
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from poker.v1.reason_pb2 import Reason
from services.lobby.ports import (
    ChipsAdded,
    Departure,
    Occupants,
    SeatGrant,
    SeatNow,
    TableRefused,
    TablesUnavailable,
    WatchGrant,
)

DEFINITE = frozenset(
    {
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.OUT_OF_RANGE,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.UNAUTHENTICATED,
    }
)
"""Statuses that will not change on a retry of the same request."""
DEFINITE_REASONS = frozenset({Reason.Name(Reason.TABLE_FULL)})
"""``ErrorInfo`` reasons that are definite although their status is not: a full table is
``RESOURCE_EXHAUSTED``, the status the table service's rate limits (``RATE_LIMITED``) and
size limits also use, which are worth a retry; so that status is told apart by reason."""
CALL_TIMEOUT_S = 10.0
Answer = TypeVar("Answer")
WATCH_TIMEOUT_S = 30.0


class _Trimmed(Exception):
    """``WatchTable`` from a sequence the table service trimmed (``OUT_OF_RANGE``)."""


class GrpcTables:
    """``archive`` (the hand archive, in the lobby's database) is where ``vacated`` looks for a
    ``PlayerLeft`` the table service trimmed from Redis once the projector archived it."""

    def __init__(
        self,
        tables: grpc.aio.Channel | OwnerCalls[rpc.TableServiceAsyncStub],
        admin_token: str,
        archive: HandArchive | None = None,
    ) -> None:
        if isinstance(tables, OwnerCalls):
            self.calls = tables
        else:
            stub: rpc.TableServiceAsyncStub = rpc.TableServiceStub(tables)
            self.calls = OwnerCalls.fixed(stub)
        # The configured instance's stub (the only one without routing; tests call it).
        self.stub = self.calls.stub(self.calls.router.default)
        self.metadata: tuple[tuple[str, str], ...] = (("authorization", f"Bearer {admin_token}"),)
        self.archive = archive

    @staticmethod
    def _failed(err: grpc.aio.AioRpcError) -> Exception:
        reason = error_reason(err)
        if err.code() in DEFINITE or reason in DEFINITE_REASONS:
            return TableRefused(reason, err.details() or err.code().name)
        return TablesUnavailable(f"{err.code().name}: {err.details()}")

    async def _call(
        self, table_id: str, call: Callable[[rpc.TableServiceAsyncStub], Awaitable[Answer]]
    ) -> Answer:
        """``call(stub)`` at the table's owner, its failure mapped to the port's errors
        (``TableRefused`` when the answer is definite, else ``TablesUnavailable``)."""
        try:
            return await self.calls.call(table_id, call)
        except grpc.aio.AioRpcError as err:
            raise self._failed(err) from None

    async def create(self, table_id: str, name: str, config: bytes, request_id: str) -> None:
        request = pb.CreateTableRequest(
            table_id=table_id,
            name=name,
            config=epb.TableConfig.FromString(config),
            request_id=request_id,
        )
        await self._call(
            table_id,
            lambda stub: stub.CreateTable(request, metadata=self.metadata, timeout=CALL_TIMEOUT_S),
        )

    async def seat(
        self,
        table_id: str,
        seat: int | None,
        player_id: str,
        display_name: str,
        stack: int,
        ai_level: int,
        request_id: str,
        *,
        wait_for_big_blind: bool = False,
    ) -> SeatGrant:
        request = pb.SeatPlayerRequest(
            table_id=table_id,
            seat=seat,
            player_id=player_id,
            display_name=display_name,
            stack=stack,
            ai_level=ai_level,  # type: ignore[arg-type]
            request_id=request_id,
            wait_for_big_blind=wait_for_big_blind,
        )
        answer = await self._call(
            table_id,
            lambda stub: stub.SeatPlayer(request, metadata=self.metadata, timeout=CALL_TIMEOUT_S),
        )
        return SeatGrant(answer.seat, answer.seat_token, _expiry(answer), answer.sequence)

    async def leave(
        self,
        table_id: str,
        seat: int,
        seat_token: str,
        request_id: str,
        *,
        busted_hand: int | None = None,
    ) -> Departure:
        request = pb.LeaveSeatRequest(
            table_id=table_id, seat=seat, request_id=request_id, busted_hand=busted_hand
        )
        metadata = self.metadata
        if seat_token:
            metadata = (*metadata, (SEAT_TOKEN_HEADER, seat_token))
        answer = await self._call(
            table_id,
            lambda stub: stub.LeaveSeat(request, metadata=metadata, timeout=CALL_TIMEOUT_S),
        )
        return Departure(answer.stack, answer.sequence)

    async def reissue(self, table_id: str, seat: int, player_id: str, request_id: str) -> SeatGrant:
        # For whoever sits there (no seat token): the table checks the occupant's player id,
        # and the retry key stays the same although the stored token changes.
        request = pb.ReissueSeatTokenRequest(
            table_id=table_id, seat=seat, player_id=player_id, request_id=request_id
        )
        answer = await self._call(
            table_id,
            lambda stub: stub.ReissueSeatToken(
                request, metadata=self.metadata, timeout=CALL_TIMEOUT_S
            ),
        )
        return SeatGrant(seat, answer.seat_token, _expiry(answer), answer.sequence)

    async def seat_now(self, table_id: str, seat: int) -> SeatNow | None:
        return (await self.seats_now(table_id)).get(seat)

    async def seats_now(self, table_id: str) -> dict[int, SeatNow]:
        answer = await self._call(
            table_id,
            lambda stub: stub.GetTableView(
                pb.GetTableViewRequest(table_id=table_id),
                metadata=self.metadata,
                timeout=CALL_TIMEOUT_S,
            ),
        )
        view = answer.view
        # A view also shows the hand just ended (its street COMPLETE): not in play.
        hand = view.hand
        in_play = (
            view.HasField("hand") and bool(hand.hand_id) and hand.street != epb.STREET_COMPLETE
        )
        dealt = {h.seat for h in hand.seats} if in_play else set()
        return {
            s.seat: SeatNow(s.player_id, s.stack, s.seat in dealt, s.busted_hand)
            for s in view.table.seats
            if s.player_id
        }

    async def add_chips(
        self,
        table_id: str,
        seat: int,
        seat_token: str,
        amount: int,
        max_stack: int,
        request_id: str,
    ) -> ChipsAdded:
        request = pb.AddChipsRequest(
            table_id=table_id,
            seat=seat,
            amount=amount,
            max_stack=max_stack,
            request_id=request_id,
        )
        metadata = self.metadata
        if seat_token:  # else the service's own call, for whoever sits there
            metadata = (*metadata, (SEAT_TOKEN_HEADER, seat_token))
        answer = await self._call(
            table_id,
            lambda stub: stub.AddChips(request, metadata=metadata, timeout=CALL_TIMEOUT_S),
        )
        return ChipsAdded(answer.stack, answer.sequence)

    async def close(self, table_id: str, request_id: str) -> bool:
        request = pb.CloseTableRequest(
            table_id=table_id, request_id=request_id, reason="closed by its owner"
        )
        try:
            await self._call(
                table_id,
                lambda stub: stub.CloseTable(
                    request, metadata=self.metadata, timeout=CALL_TIMEOUT_S
                ),
            )
        except TableRefused as refused:
            if refused.means(Reason.TABLE_CLOSED):
                return True
            if refused.means(Reason.HAND_RUNNING):
                return False
            raise
        return True

    async def watch_grant(self, table_id: str) -> WatchGrant:
        answer = await self._call(
            table_id,
            lambda stub: stub.IssueWatchGrant(
                pb.IssueWatchGrantRequest(table_id=table_id),
                metadata=self.metadata,
                timeout=CALL_TIMEOUT_S,
            ),
        )
        return WatchGrant(answer.watch_grant, answer.expire_time.ToDatetime(tzinfo=UTC))

    async def occupants(self, table_id: str) -> Occupants:
        answer = await self._call(
            table_id,
            lambda stub: stub.GetTable(
                pb.GetTableRequest(table_id=table_id),
                metadata=self.metadata,
                timeout=CALL_TIMEOUT_S,
            ),
        )
        table = answer.table
        return Occupants(
            table.sequence,
            table.state == tpb.TABLE_STATE_CLOSED,
            tuple((s.seat, s.player_id) for s in table.seats if s.player_id),
        )

    async def vacated(
        self, table_id: str, seat: int, player_id: str, after_sequence: int
    ) -> int | None:
        """``GetTable``: if the seat still holds the player, None; else its ``PlayerLeft``'s
        stack, read from the table's events after ``after_sequence`` (``WatchTable`` as a
        spectator, up to the sequence ``GetTable`` showed). Events no longer retained (trimmed
        once archived) are read from the archive's events of no hand, then the stream again
        from the archived position; without an archive they are :class:`TablesUnavailable`:
        the stack cannot be known, so nothing is guessed."""
        answer = await self._call(
            table_id,
            lambda stub: stub.GetTable(
                pb.GetTableRequest(table_id=table_id),
                metadata=self.metadata,
                timeout=CALL_TIMEOUT_S,
            ),
        )
        table = answer.table
        if any(s.seat == seat and s.player_id == player_id for s in table.seats):
            return None
        archive = self.archive
        try:
            return await self._watched_departure(table_id, seat, after_sequence, table.sequence)
        except _Trimmed:
            if archive is None:
                raise TablesUnavailable(
                    f"table {table_id}'s events after {after_sequence} are not retained"
                ) from None
        # Trimmed: every event up to the archived position is in the archive.
        after = after_sequence
        while page := await archive.table_events(table_id, after=after):
            for archived in page:
                event, _ = decode_event(archived.payload)
                if isinstance(event, PlayerLeft) and event.seat == seat:
                    return event.stack
            after = page[-1].sequence
        archived_to = (await archive.cursor(table_id)).position
        if archived_to >= table.sequence:
            raise TablesUnavailable(f"no PlayerLeft for seat {seat} of table {table_id} yet")
        try:
            return await self._watched_departure(
                table_id, seat, max(after_sequence, archived_to), table.sequence
            )
        except _Trimmed:  # trimmed again meanwhile: the next pass looks again
            raise TablesUnavailable(f"table {table_id} was trimmed while it was read") from None

    async def _watched_departure(
        self, table_id: str, seat: int, after_sequence: int, up_to: int
    ) -> int:
        """The stack of the seat's first ``PlayerLeft`` after ``after_sequence`` in the stream."""
        address, stub = await self.calls.owner(table_id)
        watch = stub.WatchTable(
            pb.WatchTableRequest(table_id=table_id, from_sequence=after_sequence),
            metadata=self.metadata,
            timeout=WATCH_TIMEOUT_S,
        )
        try:
            async for item in watch:
                if not item.HasField("event"):
                    raise TablesUnavailable(
                        f"table {table_id}'s events after {after_sequence} are not retained"
                    )
                event = item.event
                if event.WhichOneof("event") == "player_left" and event.player_left.seat == seat:
                    return int(event.player_left.stack)
                if event.sequence >= up_to:
                    break
        except grpc.aio.AioRpcError as err:
            if err.code() == grpc.StatusCode.OUT_OF_RANGE:
                raise _Trimmed() from None
            self.calls.failed(table_id, address, err)  # the next try asks for the owner again
            raise self._failed(err) from None
        finally:
            watch.cancel()
        raise TablesUnavailable(f"no PlayerLeft for seat {seat} of table {table_id} yet")


def _expiry(answer: pb.SeatPlayerResponse | pb.ReissueSeatTokenResponse) -> datetime | None:
    """When a seat token the table issued expires (None: never)."""
    if not answer.HasField("seat_token_expire_time"):
        return None
    return answer.seat_token_expire_time.ToDatetime(tzinfo=UTC)
