"""``felt verify-hand``: check that every card you saw in a hand was fixed before it began.

It fetches the hand as your seat (or a spectator) saw it with
``GetHandHistory`` — or reads a history saved earlier with ``--save`` — and
checks each card's Merkle proof against the commitment root the server
published before the first card was dealt. Cards you never saw stay hidden:
their salts are never sent.
"""

from __future__ import annotations

import argparse
import sys

import grpc
from google.protobuf import json_format

from felt.api.convert import proof_from_proto
from felt.eventstore.codec import from_stored_event
from felt.table.deals import HandCheck, verify_hand
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc


def check_history(history: pb.GetHandHistoryResponse) -> HandCheck:
    """Verify a fetched or saved hand history."""
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


def run(args: argparse.Namespace) -> int:
    if args.file is not None:
        history = json_format.Parse(args.file.read_text(), pb.GetHandHistoryResponse())
    else:
        if not args.table:
            print("verify-hand: --table is required (or --file)", file=sys.stderr)
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
