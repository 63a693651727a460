"""Play a few hands end to end through the gRPC API with a plain generated client.

    python examples/play.py --target 127.0.0.1:50051 --hands 3

Creates a heads-up No-Limit Hold'em table, seats two players (keeping their
seat tokens), then acts for whichever seat is to act (call or check, with a
raise now and then) until the table has played ``--hands`` hands. Prints each
action and the final stacks. Uses nothing of Felt but the generated stubs.
"""

from __future__ import annotations

import argparse
import time
import uuid

import grpc

from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", default="127.0.0.1:50051")
    parser.add_argument("--hands", type=int, default=3)
    # Seating is internal to Felt (the lobby seats players): this example seats its two
    # players itself with the service credential, the public one of `felt serve --dev`.
    parser.add_argument("--admin-token", default="felt-development-service-token")
    args = parser.parse_args()
    admin = (("authorization", f"Bearer {args.admin_token}"),)

    stub = rpc.TableServiceStub(grpc.insecure_channel(args.target))
    table_id = f"demo-{uuid.uuid4().hex[:8]}"
    config = epb.TableConfig(
        variant=epb.VARIANT_NLHE, seat_count=2, small_blind=5, big_blind=10, max_hands=args.hands
    )
    stub.CreateTable(
        pb.CreateTableRequest(table_id=table_id, config=config, request_id=str(uuid.uuid4())),
        metadata=admin,
    )
    tokens = {}
    for name in ("alice", "bob"):
        seated = stub.SeatPlayer(
            pb.SeatPlayerRequest(
                table_id=table_id,
                player_id=name,
                display_name=name,
                stack=1000,
                request_id=str(uuid.uuid4()),
            ),
            metadata=admin,
        )
        tokens[seated.seat] = seated.seat_token

    step = 0
    while True:
        table = stub.GetTable(pb.GetTableRequest(table_id=table_id)).table
        if table.state == tpb.TABLE_STATE_CLOSED:
            break
        view = stub.GetTableView(pb.GetTableViewRequest(table_id=table_id)).view
        if not view.hand.HasField("to_act"):
            time.sleep(0.1)  # between hands: the server deals the next one itself
            continue
        seat = view.hand.to_act
        auth = (("authorization", f"Bearer {tokens[seat]}"),)
        mine = stub.GetTableView(
            pb.GetTableViewRequest(table_id=table_id, seat=seat), metadata=auth
        ).view
        legal = {a.type: a for a in mine.hand.legal_actions}
        step += 1
        if step % 5 == 0 and tpb.ACTION_TYPE_RAISE in legal:
            action = tpb.Action(
                raise_to=tpb.Action.RaiseTo(amount=legal[tpb.ACTION_TYPE_RAISE].min_to)
            )
        elif tpb.ACTION_TYPE_CALL in legal:
            action = tpb.Action(call=tpb.Action.Call())
        else:
            action = tpb.Action(check=tpb.Action.Check())
        try:
            stub.SubmitAction(
                pb.SubmitActionRequest(
                    table_id=table_id,
                    seat=seat,
                    request_id=str(uuid.uuid4()),
                    expected_sequence=mine.table.sequence,
                    action=action,
                ),
                metadata=auth,
            )
        except grpc.RpcError as exc:  # ABORTED: the table moved on; look again
            if exc.code() != grpc.StatusCode.ABORTED:
                raise
            continue
        print(f"hand {mine.hand.hand_id} seat {seat}: {action.WhichOneof('kind')}")

    final = stub.GetTable(pb.GetTableRequest(table_id=table_id)).table
    print("hands played:", final.hands_played)
    for s in final.seats:
        print(f"seat {s.seat} {s.display_name}: {s.stack}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
