"""``poker.v1.TableService`` over gRPC: each handler translates, calls a use case, translates back.

The use cases are gRPC-free: ``services.table.application`` (a seat's calls),
``services.table.admin`` (creating tables, seating players) and
``services.table.queries`` (the reads). What every call
shares is done by the interceptors (``services.table.interceptors``): the
caller's bearer token (``AuthInterceptor``, read here with
:func:`current_caller`), log context, passed deadlines and the mapping of
refusals to statuses (``CallInterceptor``), for ``WatchTable`` too. A
handler never builds a status; the only refusal raised here is a request
that does not translate (a malformed action).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from functools import partial
from typing import Any

from felt.service.interceptors import Frame
from felt.service.rpc import Context, fail
from felt.storage.eventstore import EventStore
from felt.storage.idempotency import ClientRequest
from felt.wire.clients import TrustedProxies
from felt.wire.convert import (
    BadAction,
    action_from_proto,
    fill_table_view,
    proof_to_proto,
    redacted_stored_event,
    table_to_proto,
    table_view_to_proto,
)
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from poker.v1.reason_pb2 import Reason
from services.table.admin import TableAdmin
from services.table.application import TableApp
from services.table.auth import DEFAULT_TOKEN_TTL_S, Secrets
from services.table.frames import SpectatorFrames
from services.table.interceptors import current_caller
from services.table.manager import TableManager
from services.table.queries import Seen, TableQueries, View
from services.table.ratelimit import RateLimiter, RateLimits
from services.table.refusals import TOO_SLOW, Code, Refused
from services.table.watch import WatchHub, WatchLimits

__all__ = ["DEFAULT_TOKEN_TTL_S", "Secrets", "TableService"]


class TableService(rpc.TableServiceServicer):
    """The gRPC face of the tables this instance owns."""

    def __init__(
        self,
        manager: TableManager,
        secrets: Secrets,
        watch_limits: WatchLimits | None = None,
        rate_limits: RateLimits | None = None,
        proxies: TrustedProxies | None = None,
        *,
        feed_store: EventStore | None = None,
    ) -> None:
        self.manager = manager
        # Behind the gateway, the client it names (x-forwarded-for) is whose streams count.
        self.proxies = proxies or TrustedProxies()
        # The watch feeds read through ``feed_store`` (a Redis client of their own, see
        # ``server.feed_connections``), else through the manager's store.
        self.watches = WatchHub(feed_store or manager.store, watch_limits)
        self.app = TableApp(manager, RateLimiter(rate_limits))
        self.admin = TableAdmin(self.app, secrets)
        self.queries = TableQueries(self.app, self.watches)
        self.frames = SpectatorFrames(_encoded)

    # ------------------------------------------------------------------ tables

    async def CreateTable(
        self, request: pb.CreateTableRequest, context: Context
    ) -> pb.CreateTableResponse:
        table = await self.admin.create_table(
            current_caller(),
            ClientRequest.of(request),
            request.table_id,
            request.name,
            request.config if request.HasField("config") else None,
        )
        return pb.CreateTableResponse(table=table)

    async def GetTable(self, request: pb.GetTableRequest, context: Context) -> pb.GetTableResponse:
        found = await self.queries.table(current_caller(), request.table_id)
        return pb.GetTableResponse(table=table_to_proto(found.state, found.version))

    async def SeatPlayer(
        self, request: pb.SeatPlayerRequest, context: Context
    ) -> pb.SeatPlayerResponse:
        seated = await self.admin.seat_player(
            current_caller(),
            ClientRequest.of(request),
            request.table_id,
            request.seat if request.HasField("seat") else None,
            request.player_id,
            request.display_name,
            request.stack,
            request.ai_level,
            wait_for_big_blind=request.wait_for_big_blind,
        )
        response = pb.SeatPlayerResponse(
            seat=seated.seat, sequence=seated.sequence, seat_token=seated.seat_token
        )
        if seated.expires_at:
            response.seat_token_expire_time.FromSeconds(seated.expires_at)
        return response

    async def CloseTable(
        self, request: pb.CloseTableRequest, context: Context
    ) -> pb.CloseTableResponse:
        sequence = await self.admin.close_table(
            current_caller(), ClientRequest.of(request), request.table_id, request.reason
        )
        return pb.CloseTableResponse(sequence=sequence)

    async def IssueWatchGrant(
        self, request: pb.IssueWatchGrantRequest, context: Context
    ) -> pb.IssueWatchGrantResponse:
        grant = await self.admin.issue_watch_grant(current_caller(), request.table_id)
        response = pb.IssueWatchGrantResponse(watch_grant=grant.token)
        response.expire_time.FromSeconds(grant.expires_at)
        return response

    # ------------------------------------------------------------------ a seat's calls

    async def LeaveSeat(
        self, request: pb.LeaveSeatRequest, context: Context
    ) -> pb.LeaveSeatResponse:
        return await self.app.leave_seat(
            current_caller(),
            ClientRequest.of(request),
            request.table_id,
            request.seat,
            busted_hand=request.busted_hand if request.HasField("busted_hand") else None,
        )

    async def ReissueSeatToken(
        self, request: pb.ReissueSeatTokenRequest, context: Context
    ) -> pb.ReissueSeatTokenResponse:
        issued = await self.admin.reissue_seat_token(
            current_caller(),
            ClientRequest.of(request),
            request.table_id,
            request.seat,
            request.player_id,
        )
        response = pb.ReissueSeatTokenResponse(
            seat_token=issued.seat_token, sequence=issued.sequence
        )
        if issued.expires_at:
            response.seat_token_expire_time.FromSeconds(issued.expires_at)
        return response

    async def SitOut(self, request: pb.SitOutRequest, context: Context) -> pb.SitOutResponse:
        sequence = await self.app.sit_out(
            current_caller(), ClientRequest.of(request), request.table_id, request.seat
        )
        return pb.SitOutResponse(sequence=sequence)

    async def SitIn(self, request: pb.SitInRequest, context: Context) -> pb.SitInResponse:
        sequence = await self.app.sit_in(
            current_caller(),
            ClientRequest.of(request),
            request.table_id,
            request.seat,
            wait_for_big_blind=request.wait_for_big_blind,
        )
        return pb.SitInResponse(sequence=sequence)

    async def AddChips(self, request: pb.AddChipsRequest, context: Context) -> pb.AddChipsResponse:
        return await self.app.add_chips(
            current_caller(),
            ClientRequest.of(request),
            request.table_id,
            request.seat,
            request.amount,
            request.max_stack,
        )

    async def SubmitAction(
        self, request: pb.SubmitActionRequest, context: Context
    ) -> pb.SubmitActionResponse:
        try:
            action = action_from_proto(request.seat, request.action)
        except BadAction as exc:
            raise Refused(Code.INVALID_ARGUMENT, str(exc), Reason.BAD_ACTION) from None
        return await self.app.submit_action(
            current_caller(),
            ClientRequest.of(request),
            request.table_id,
            action,
            request.expected_sequence if request.HasField("expected_sequence") else None,
            sequence_only=request.sequence_only,
        )

    async def ShowCards(
        self, request: pb.ShowCardsRequest, context: Context
    ) -> pb.ShowCardsResponse:
        sequence = await self.app.show_cards(
            current_caller(),
            ClientRequest.of(request),
            request.table_id,
            request.seat,
            request.hand_id,
        )
        return pb.ShowCardsResponse(sequence=sequence)

    # ------------------------------------------------------------------ reads

    async def GetTableView(
        self, request: pb.GetTableViewRequest, context: Context
    ) -> pb.GetTableViewResponse:
        view = await self.queries.view(current_caller(), request.table_id, _seat(request))
        response = pb.GetTableViewResponse()
        fill_table_view(response.view, view.state, view.viewer, view.version, view.deadline)
        return response

    async def WatchTable(  # type: ignore[override]  # Frame: sent as it is
        self, request: pb.WatchTableRequest, context: Context
    ) -> AsyncIterator[pb.WatchTableResponse | Frame]:
        """Stream the table's events as the viewer may see them (``TableQueries.watch``); a
        spectator's as the frame all spectators share (``services.table.frames``)."""
        items = self.queries.watch(
            current_caller(),
            self.proxies.caller(context),
            request.table_id,
            _seat(request),
            request.from_sequence,
            partial(fail, context, TOO_SLOW),
        )
        async with aclosing(items):
            async for item in items:
                if isinstance(item, View):
                    yield pb.WatchTableResponse(
                        snapshot=table_view_to_proto(
                            item.state, item.viewer, item.version, item.deadline
                        )
                    )
                elif item.viewer is None and item.live and not request.view_changes:
                    # The guard that keeps a seat's cards out of the shared frames: only a
                    # spectator's item of the live feed (every spectator is handed that one
                    # decoding) is shared; a seat's, a replay's, or one with its own view
                    # changes is made for this stream alone.
                    yield self.frames.frame(item)  # one encoding for every spectator
                else:
                    yield _watched(item, request.view_changes)

    async def GetHandHistory(
        self, request: pb.GetHandHistoryRequest, context: Context
    ) -> pb.GetHandHistoryResponse:
        history = await self.queries.hand_history(
            current_caller(), request.table_id, _seat(request), request.hand_id
        )
        return pb.GetHandHistoryResponse(
            hand_id=history.hand_id, events=[_watched(seen) for seen in history.events]
        )


def _seat(request: Any) -> int | None:
    """A read's optional seat (None: a spectator)."""
    return request.seat if request.HasField("seat") else None


def _encoded(seen: Seen) -> bytes:
    return _watched(seen).SerializeToString()


def _watched(seen: Seen, view_changes: bool = False) -> pb.WatchTableResponse:
    """One event as the viewer may see it, with its ``ViewChange`` when asked for and known."""
    response = pb.WatchTableResponse(
        event=redacted_stored_event(seen.event, seen.meta, seen.viewer),
        card_proofs=[proof_to_proto(p) for p in seen.proofs],
    )
    if view_changes and seen.after is not None:
        response.view_change.CopyFrom(seen.after.change_for(seen.viewer))
    return response
