"""``felt verify-hand``: check that every card you saw in a hand was fixed before it began.

It fetches the hand as your seat (or a spectator) saw it with the table
service's ``GetHandHistory`` (a hand still in its table's stream, by
``<table>:<n>``), or with the history service's (``--public-id``: any hand, archived
or live, by its public id, as ``felt replay`` does) — or reads a history of
either kind saved earlier with ``--save`` (``felt replay --save`` too) — and
checks each card's Merkle proof against the commitment root the server
published before the first card was dealt. Cards you never saw stay hidden:
their salts are never sent.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import grpc
from google.protobuf import json_format

from felt.config.settings import FELT_ACCESS_TOKEN, FELT_INVITE_CODE
from felt.core.table.deals import HandCheck, verify_hand
from felt.messages.events import from_stored_event
from felt.wire.convert import proof_from_proto
from poker.v1 import history_service_pb2 as hpb
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc

History = pb.GetHandHistoryResponse | hpb.HistoryServiceGetHandHistoryResponse


def check_history(history: History) -> HandCheck:
    """Verify a fetched or saved hand history (from the table service or the history service)."""
    items = []
    for item in history.events:
        if not item.HasField("event"):
            continue
        event, _ = from_stored_event(item.event)
        items.append((event, [proof_from_proto(p) for p in item.card_proofs]))
    return verify_hand(items)


def fetch_history(
    target: str, table_id: str, hand_id: str, seat: int | None, token: str
) -> pb.GetHandHistoryResponse:
    request = pb.GetHandHistoryRequest(table_id=table_id, hand_id=hand_id)
    if seat is not None:
        request.seat = seat
    metadata = (("authorization", f"Bearer {token}"),) if token else ()
    with grpc.insecure_channel(target) as channel:
        stub = rpc.TableServiceStub(channel)
        response: pb.GetHandHistoryResponse = stub.GetHandHistory(
            request, metadata=metadata, timeout=10
        )
        return response


def read_saved(path: Path) -> History:
    """A history saved by ``felt verify-hand --save`` or ``felt replay --save``."""
    text = path.read_text()
    try:
        return json_format.Parse(text, pb.GetHandHistoryResponse())
    except json_format.ParseError:
        return json_format.Parse(text, hpb.HistoryServiceGetHandHistoryResponse())


def fetch_public(args: argparse.Namespace) -> hpb.HistoryServiceGetHandHistoryResponse:
    """The hand by its public id from the history service (archived or live)."""
    from felt.tools.client.replay import fetch, request_for

    request = request_for(args.public_id, args.table or "", args.seat, args.seat is None, False)
    request.invite_code = FELT_INVITE_CODE.read()  # a private lounge's hand
    token = args.token or FELT_ACCESS_TOKEN.read()
    return fetch(args.history_target, request, token if args.seat is not None else "")


def run(args: argparse.Namespace) -> int:
    history: History
    if args.file is not None:
        history = read_saved(args.file)
    elif args.public_id:
        try:
            history = fetch_public(args)
        except grpc.RpcError as exc:
            print(f"verify-hand: {exc.code().name}: {exc.details()}", file=sys.stderr)
            return 2
        if args.save is not None:
            args.save.write_text(json_format.MessageToJson(history))
    else:
        if not args.table:
            print("verify-hand: --table is required (or --public-id, or --file)", file=sys.stderr)
            return 2
        try:
            history = fetch_history(args.target, args.table, args.hand, args.seat, args.token)
        except grpc.RpcError as exc:
            print(f"verify-hand: {exc.code().name}: {exc.details()}", file=sys.stderr)
            return 2
        if args.save is not None:
            args.save.write_text(json_format.MessageToJson(history))
    result = check_history(history)
    for problem in result.problems:
        print(f"FAIL {problem}")
    if not result.root:
        print(f"hand {history.hand_id}: no deck commitment found")
        return 1
    verdict = "verified" if result.ok else "NOT verified"
    print(
        f"hand {history.hand_id}: {result.verified} cards {verdict} "
        f"against commitment {result.root[:16]}…"
    )
    return 0 if result.ok else 1
