"""``poker.v1.HistoryService`` handlers: translate requests for ``HistoryApp`` and its results back.

Refusals and statuses are the interceptors' (``services.lobby.interceptors``),
as for the lobby's own calls.
"""

from __future__ import annotations

from felt.core.rules.config import Variant
from felt.messages.events import to_stored_event
from felt.messages.values import variant_to_proto
from felt.service.rpc import Context
from felt.tools.history.viewer import Role, Viewer
from felt.wire.convert import proof_to_proto
from poker.v1 import history_service_pb2 as hpb
from poker.v1 import history_service_pb2_grpc as hrpc
from poker.v1 import table_service_pb2 as tpb
from services.lobby.history import HandRead, HistoryApp, PlayerPage, Reading
from services.lobby.interceptors import current_caller

_READING = {
    hpb.HAND_READER_UNSPECIFIED: Reading.AUTO,
    hpb.HAND_READER_SPECTATOR: Reading.SPECTATOR,
    hpb.HAND_READER_SEAT: Reading.SEAT,
    hpb.HAND_READER_OPERATOR: Reading.OPERATOR,
}
_READER = {
    Role.SPECTATOR: hpb.HAND_READER_SPECTATOR,
    Role.SEAT: hpb.HAND_READER_SEAT,
    Role.OPERATOR: hpb.HAND_READER_OPERATOR,
}


class HistoryService(hrpc.HistoryServiceServicer):
    def __init__(self, app: HistoryApp) -> None:
        self.app = app

    async def GetHandHistory(
        self, request: hpb.HistoryServiceGetHandHistoryRequest, context: Context
    ) -> hpb.HistoryServiceGetHandHistoryResponse:
        read = await self.app.hand_history(
            current_caller(),
            request.hand_id,
            request.table_id,
            _READING.get(request.reader, Reading.AUTO),
            request.seat if request.HasField("seat") else None,
            request.invite_code,
        )
        return hand_to_proto(read)

    async def ListPlayerHands(
        self, request: hpb.ListPlayerHandsRequest, context: Context
    ) -> hpb.ListPlayerHandsResponse:
        page = await self.app.player_hands(
            current_caller(), request.player_id, request.page_size, request.page_token
        )
        return page_to_proto(page)


def _reader(viewer: Viewer) -> hpb.HandReader.ValueType:
    return _READER[viewer.role]


def hand_to_proto(read: HandRead) -> hpb.HistoryServiceGetHandHistoryResponse:
    response = hpb.HistoryServiceGetHandHistoryResponse(
        hand_id=read.hand_id,
        table_id=read.table_id,
        reader=_reader(read.viewer),
        archived=read.archived,
        seats=[
            hpb.HistorySeat(seat=s.seat, player_id=s.player_id, display_name=s.display_name)
            for s in read.seats
        ],
        events=[
            tpb.WatchTableResponse(
                event=to_stored_event(e.event, e.meta),
                card_proofs=[proof_to_proto(p) for p in e.proofs],
            )
            for e in read.events
        ],
    )
    if read.viewer.seat is not None:
        response.seat = read.viewer.seat
    return response


def page_to_proto(page: PlayerPage) -> hpb.ListPlayerHandsResponse:
    response = hpb.ListPlayerHandsResponse(next_page_token=page.next_page_token)
    for row in page.hands:
        s = row.summary
        item = response.hands.add(
            hand_id=row.hand_id,
            table_id=row.table_id,
            variant=variant_to_proto(Variant(row.variant)),
            seat=s.seat,
            net=s.net,
            voluntarily_put_in=s.vpip,
            raised_first_round=s.pfr,
            went_to_showdown=s.went_to_showdown,
            won_at_showdown=s.won_at_showdown,
        )
        item.ended_at.FromDatetime(row.ended_at)
    stats = page.stats
    response.stats.CopyFrom(
        hpb.PlayerStats(
            hands_played=stats.hands,
            net_chips=stats.net,
            voluntarily_put_in=stats.vpip,
            raised_first_round=stats.pfr,
            went_to_showdown=stats.went_to_showdown,
            won_at_showdown=stats.won_at_showdown,
        )
    )
    return response
