"""``felt replay HAND_ID``: a hand from the history service, printed as a hand history.

The service redacts the hand for the caller (``poker.v1.HistoryService``);
this program renders what it was sent (``felt.tools.history``), which redacts again
for the same reader: a client can only ever print what it was allowed to get.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import UTC

import grpc
from google.protobuf import json_format

from felt.config.settings import FELT_ACCESS_TOKEN, FELT_ADMIN_TOKEN, FELT_INVITE_CODE
from felt.core.table.events import AnyEvent
from felt.messages.events import from_stored_event
from felt.tools.history import (
    OPERATOR,
    SPECTATOR,
    Viewer,
    build_history,
    render_json,
    render_phh,
    render_text,
)
from felt.tools.phh.export import ExportError
from poker.v1 import history_service_pb2 as hpb
from poker.v1 import history_service_pb2_grpc as hrpc

Response = hpb.HistoryServiceGetHandHistoryResponse


def request_for(
    hand_id: str, table_id: str, seat: int | None, spectator: bool, operator: bool
) -> hpb.HistoryServiceGetHandHistoryRequest:
    """The request for a reader chosen on the command line."""
    request = hpb.HistoryServiceGetHandHistoryRequest(hand_id=hand_id, table_id=table_id)
    if seat is not None:
        request.reader = hpb.HAND_READER_SEAT
        request.seat = seat
    elif spectator:
        request.reader = hpb.HAND_READER_SPECTATOR
    elif operator:
        request.reader = hpb.HAND_READER_OPERATOR
    return request


def fetch(target: str, request: hpb.HistoryServiceGetHandHistoryRequest, token: str) -> Response:
    metadata = (("authorization", f"Bearer {token}"),) if token else ()
    with grpc.insecure_channel(target) as channel:
        response: Response = hrpc.HistoryServiceStub(channel).GetHandHistory(
            request, metadata=metadata, timeout=10
        )
        return response


def viewer_of(response: Response) -> Viewer:
    """The reader the service redacted the hand for."""
    if response.reader == hpb.HAND_READER_SEAT and response.HasField("seat"):
        return Viewer.of_seat(response.seat)
    if response.reader == hpb.HAND_READER_OPERATOR:
        return OPERATOR
    return SPECTATOR


def events_of(response: Response) -> list[AnyEvent]:
    return [from_stored_event(item.event)[0] for item in response.events if item.HasField("event")]


def render(response: Response, form: str) -> str:
    """The hand in ``form``: ``text``, ``json`` or ``phh``."""
    events: Sequence[AnyEvent] = events_of(response)
    viewer = viewer_of(response)
    if form == "phh":
        return render_phh(events, viewer, hand_id=response.hand_id)
    started = next(
        (
            item.event.recorded_at.ToDatetime(tzinfo=UTC)
            for item in response.events
            if item.HasField("event")
        ),
        None,
    )
    history = build_history(
        events,
        viewer,
        table_id=response.table_id,
        hand_id=response.hand_id,
        names={s.seat: s.display_name for s in response.seats if s.display_name},
        started_at=started,
    )
    return render_json(history) if form == "json" else render_text(history)


def run(args: argparse.Namespace) -> int:
    if args.file is not None:
        response = json_format.Parse(args.file.read_text(), Response())
    else:
        token = (FELT_ADMIN_TOKEN if args.operator else FELT_ACCESS_TOKEN).read()
        request = request_for(
            args.hand_id,
            args.table,
            args.seat,
            args.spectator,
            args.operator and args.seat is None,
        )
        # A private lounge's hand for one who was not dealt in: its invite code (from the
        # environment, as the tokens are, to keep it out of the process list).
        request.invite_code = FELT_INVITE_CODE.read()
        try:
            response = fetch(args.target, request, token)
        except grpc.RpcError as exc:
            print(f"replay: {exc.code().name}: {exc.details()}", file=sys.stderr)
            return 2
        if args.save is not None:
            args.save.write_text(json_format.MessageToJson(response))
    form = "json" if args.json else "phh" if args.phh else "text"
    try:
        sys.stdout.write(render(response, form))
    except ExportError as exc:
        print(f"replay: {exc}", file=sys.stderr)
        return 2
    return 0
