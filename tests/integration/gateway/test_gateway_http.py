"""The gateway over real HTTP against real table-service instances on loopback.

What a browser or an app sees: Connect unary calls in JSON and in binary
protobuf, the WatchTable stream (Connect and gRPC-Web), CORS preflights, the
services' status codes and ErrorInfo reasons as Connect errors, the bearer
token passed through, bounded requests, caps on watch streams, and a table's
calls reaching the instance that owns it when there are two.
"""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import grpc
import pytest
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.protocol import ProtocolType
from google.protobuf import json_format
from google.rpc import error_details_pb2  # type: ignore[import-untyped]

from felt.wire.clients import TrustedProxies
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_connect as connect
from poker.v1 import table_service_pb2 as pb
from services.gateway.codecs import CompactJsonCodec
from services.table.watch import WatchLimits

from .conftest import ORIGIN, Stack, create_table, seat

WAIT = 20.0


def reason_of(detail: dict[str, Any]) -> str:
    assert detail["type"] == "google.rpc.ErrorInfo"
    info = error_details_pb2.ErrorInfo.FromString(base64.b64decode(detail["value"] + "=="))
    return str(info.reason)


def connect_reason(error: ConnectError) -> str:
    (detail,) = error.details
    assert detail.type_name == "google.rpc.ErrorInfo"
    return str(error_details_pb2.ErrorInfo.FromString(detail.message_bytes).reason)


async def view_as(stack: Stack, table_id: str, token: str, seat: int) -> tpb.TableView:
    response = await stack.post_json("GetTableView", {"tableId": table_id, "seat": seat}, token)
    assert response.status_code == 200, response.text
    return json_format.ParseDict(response.json(), pb.GetTableViewResponse()).view


async def test_unary_json_is_the_services_answer(stack: Stack) -> None:
    server = await stack.add_table_service("a")
    await stack.start_gateway()
    stub = stack.stub(server)
    await create_table(stub, "gw-json")  # internal: the lobby's call, never the gateway's
    got = await stack.post_json("GetTable", {"tableId": "gw-json"})
    assert got.status_code == 200, got.text
    assert got.headers["content-type"] == "application/json"
    assert got.json()["table"]["tableId"] == "gw-json"
    tokens = [await seat(stub, "gw-json", s) for s in (0, 1)]
    view = await view_as(stack, "gw-json", tokens[0], 0)
    direct = await stub.GetTableView(
        pb.GetTableViewRequest(table_id="gw-json"),
        metadata=(("authorization", f"Bearer {tokens[0]}"),),
    )
    assert view.HasField("viewer_seat")
    assert view.viewer_seat == 0
    # The same table through either door (a hand may have started in between).
    assert view.table.config == direct.view.table.config
    assert [s.player_id for s in view.table.seats] == ["p0", "p1"]
    assert [s.player_id for s in direct.view.table.seats] == ["p0", "p1"]


async def test_unary_binary_protobuf(stack: Stack) -> None:
    server = await stack.add_table_service("a")
    await stack.start_gateway()
    await create_table(stack.stub(server), "gw-bin")
    assert stack.http is not None
    response = await stack.http.post(
        "/poker.v1.TableService/GetTable",
        content=pb.GetTableRequest(table_id="gw-bin").SerializeToString(),
        headers={"content-type": "application/proto"},
    )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/proto"
    table = pb.GetTableResponse.FromString(response.content).table
    assert table.table_id == "gw-bin"
    assert len(table.seats) == 2


async def test_errors_keep_their_code_message_and_reason(stack: Stack) -> None:
    server = await stack.add_table_service("a")
    await stack.start_gateway()
    stub = stack.stub(server)
    await create_table(stub, "gw-err")
    tokens = [await seat(stub, "gw-err", s) for s in (0, 1)]

    missing = await stack.post_json("GetTable", {"tableId": "no-such-table"})
    assert missing.status_code == 404
    assert missing.json()["code"] == "not_found"

    bad = await stack.post_json("GetTable", {"tableId": "Not A Table"})
    assert bad.status_code == 400
    assert bad.json()["code"] == "invalid_argument"
    assert reason_of(bad.json()["details"][0]) == "BAD_TABLE_ID"

    forged = await stack.post_json(
        "SitOut", {"tableId": "gw-err", "seat": 0, "requestId": "o1"}, "v1.forged.token"
    )
    assert forged.status_code == 401
    assert forged.json()["code"] == "unauthenticated"

    view = await view_as(stack, "gw-err", tokens[0], 0)
    waiting = 1 - view.hand.to_act if view.hand.HasField("to_act") else 1
    refused = await stack.post_json(
        "SubmitAction",
        {"tableId": "gw-err", "seat": waiting, "requestId": "x1", "action": {"check": {}}},
        tokens[waiting],
    )
    assert refused.status_code == 400  # Connect: failed_precondition is HTTP 400
    body = refused.json()
    assert body["code"] == "failed_precondition"
    assert reason_of(body["details"][0]) == "NOT_YOUR_TURN"
    assert body["message"]

    others = await stack.post_json(  # the token passed through is seat 0's, not seat 1's
        "SitOut", {"tableId": "gw-err", "seat": 1, "requestId": "o2"}, tokens[0]
    )
    assert others.status_code == 403
    assert others.json()["code"] == "permission_denied"


async def test_submit_action_plays_through_the_gateway(stack: Stack) -> None:
    server = await stack.add_table_service("a")
    await stack.start_gateway()
    stub = stack.stub(server)
    await create_table(stub, "gw-play")
    tokens = [await seat(stub, "gw-play", s) for s in (0, 1)]

    async def dealt() -> tpb.TableView:
        for _ in range(200):
            view = await view_as(stack, "gw-play", tokens[0], 0)
            if view.hand.HasField("to_act"):
                return view
            await asyncio.sleep(0.05)
        raise AssertionError("no hand was dealt")

    view = await dealt()
    actor = view.hand.to_act
    fold = {
        "tableId": "gw-play",
        "seat": actor,
        "requestId": "fold-1",
        "expectedSequence": str(view.table.sequence),
        "action": {"fold": {}},
    }
    response = await stack.post_json("SubmitAction", fold, tokens[actor])
    assert response.status_code == 200, response.text
    accepted = json_format.ParseDict(response.json(), pb.SubmitActionResponse())
    assert accepted.sequence > view.table.sequence
    # A retry is answered, not applied twice.
    again = await stack.post_json("SubmitAction", fold, tokens[actor])
    assert again.json() == response.json()


async def _watch(
    client: connect.TableServiceClient, table_id: str, count: int, token: str = ""
) -> list[pb.WatchTableResponse]:
    headers = {"authorization": f"Bearer {token}"} if token else None
    got: list[pb.WatchTableResponse] = []
    async with asyncio.timeout(WAIT):
        async for item in client.watch_table(
            pb.WatchTableRequest(table_id=table_id), headers=headers
        ):
            got.append(item)
            if len(got) == count:
                break
    return got


@pytest.mark.parametrize(
    "protocol,json",
    [(ProtocolType.CONNECT, False), (ProtocolType.CONNECT, True), (ProtocolType.GRPC_WEB, False)],
)
async def test_watch_table_streams(stack: Stack, protocol: ProtocolType, json: bool) -> None:
    server = await stack.add_table_service("a")
    await stack.start_gateway()
    stub = stack.stub(server)
    await create_table(stub, "gw-watch")
    kwargs: dict[str, Any] = {"protocol": protocol}
    if json:
        kwargs["codec"] = CompactJsonCodec()
    async with connect.TableServiceClient(stack.url, **kwargs) as client:
        watching = asyncio.create_task(_watch(client, "gw-watch", 3))
        await asyncio.sleep(0.2)
        await seat(stub, "gw-watch", 0)
        await seat(stub, "gw-watch", 1)
        got = await watching
    assert got[0].WhichOneof("item") == "snapshot"
    snapshot_at = got[0].snapshot.table.sequence
    assert [g.event.sequence for g in got[1:]] == [snapshot_at + 1, snapshot_at + 2]
    assert got[1].event.HasField("player_seated")


async def test_a_streams_error_is_a_connect_error(stack: Stack) -> None:
    await stack.add_table_service("a")
    await stack.start_gateway()
    async with connect.TableServiceClient(stack.url) as client:
        with pytest.raises(ConnectError) as caught:
            await _watch(client, "no-such-table", 1)
    assert caught.value.code is Code.NOT_FOUND


async def test_watch_streams_are_capped_per_token(stack: Stack) -> None:
    server = await stack.add_table_service("a")
    await stack.start_gateway()  # per_token=2
    stub = stack.stub(server)
    await create_table(stub, "gw-caps")
    token = await seat(stub, "gw-caps", 0)
    headers = {"authorization": f"Bearer {token}"}
    async with connect.TableServiceClient(stack.url) as client:
        opened = [
            client.watch_table(pb.WatchTableRequest(table_id="gw-caps", seat=0), headers=headers)
            for _ in range(3)
        ]
        first = [await anext(stream) for stream in opened[:2]]
        assert all(f.WhichOneof("item") == "snapshot" for f in first)
        with pytest.raises(ConnectError) as caught:
            await anext(opened[2])
        assert caught.value.code is Code.RESOURCE_EXHAUSTED
        assert connect_reason(caught.value) == "TOO_MANY_WATCHES"
        for stream in opened[:2]:
            await stream.aclose()  # type: ignore[attr-defined]
        await asyncio.sleep(0.2)  # the gateway sees the streams end
        again = client.watch_table(
            pb.WatchTableRequest(table_id="gw-caps", seat=0), headers=headers
        )
        assert (await anext(again)).WhichOneof("item") == "snapshot"
        await again.aclose()  # type: ignore[attr-defined]


async def test_cors_preflight_admits_configured_origins_only(stack: Stack) -> None:
    await stack.add_table_service("a")
    await stack.start_gateway()
    assert stack.http is not None
    asked = {
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,connect-protocol-version,authorization",
    }
    allowed = await stack.http.options(
        "/poker.v1.TableService/GetTableView", headers={"origin": ORIGIN, **asked}
    )
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == ORIGIN
    assert "authorization" in allowed.headers["access-control-allow-headers"].lower()
    refused = await stack.http.options(
        "/poker.v1.TableService/GetTableView", headers={"origin": "https://evil.example", **asked}
    )
    assert refused.status_code == 400
    assert "access-control-allow-origin" not in refused.headers
    simple = await stack.post_json("GetTable", {"tableId": "no-such-table"})
    assert "access-control-allow-origin" not in simple.headers  # no Origin: no CORS headers
    assert stack.http is not None
    cross = await stack.http.post(
        "/poker.v1.TableService/GetTable",
        json={"tableId": "no-such-table"},
        headers={"origin": ORIGIN, "content-type": "application/json"},
    )
    assert cross.headers["access-control-allow-origin"] == ORIGIN
    assert "grpc-status-details-bin" in cross.headers["access-control-expose-headers"].lower()


async def test_requests_are_bounded(stack: Stack) -> None:
    await stack.add_table_service("a")
    await stack.start_gateway()
    huge = await stack.post_json("GetTable", {"tableId": "a" * (70 * 1024)})
    assert huge.status_code in (413, 429)  # Connect: resource_exhausted
    assert huge.json()["code"] == "resource_exhausted"


async def test_health(stack: Stack) -> None:
    await stack.add_table_service("a")
    await stack.start_gateway()
    assert stack.http is not None
    assert (await stack.http.get("/livez")).status_code == 200
    health = await stack.http.get("/healthz")
    assert health.status_code == 503  # no lobby in these tests
    assert health.json() == {"table": "SERVING", "lobby": "UNREACHABLE (UNAVAILABLE)"}


async def test_a_tables_calls_reach_the_instance_that_owns_it(stack: Stack) -> None:
    first = await stack.add_table_service("a")
    second = await stack.add_table_service("b")
    await stack.start_gateway()  # its default target: the first instance
    await create_table(stack.stub(second), "gw-on-b")
    tokens = [await seat(stack.stub(second), "gw-on-b", s) for s in (0, 1)]
    # Straight to the first instance, the table is someone else's:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stack.stub(first).GetTable(pb.GetTableRequest(table_id="gw-on-b"))
    assert caught.value.code() is grpc.StatusCode.UNAVAILABLE
    # Through the gateway, every call reaches the owner: unary and stream.
    view = await view_as(stack, "gw-on-b", tokens[1], 1)
    assert view.viewer_seat == 1
    assert view.table.table_id == "gw-on-b"
    async with connect.TableServiceClient(stack.url) as client:
        (snapshot,) = await _watch(client, "gw-on-b", 1)
    assert snapshot.snapshot.table.table_id == "gw-on-b"
    # A table on the first instance still goes there.
    await create_table(stack.stub(first), "gw-on-a")
    on_a = await stack.post_json("GetTable", {"tableId": "gw-on-a"})
    assert on_a.status_code == 200, on_a.text


async def test_a_binary_request_is_routed_from_its_bytes_and_a_malformed_one_refused(
    stack: Stack,
) -> None:
    # Issue #23: a binary request is not re-encoded: parsed once by upb to check it and read
    # its table_id (to reach the owner, here not the default target), and the bytes forwarded
    # as they came, unknown fields and all. Bytes protobuf would refuse are refused as its
    # decoder refused them.
    await stack.add_table_service("a")
    second = await stack.add_table_service("b")
    await stack.start_gateway()
    await create_table(stack.stub(second), "gw-raw")
    assert stack.http is not None
    unknown_field = b"\xa2\x06\x03abc"  # field 100, length-delimited: kept, ignored upstream
    body = pb.GetTableRequest(table_id="gw-raw").SerializeToString() + unknown_field
    proto = {"content-type": "application/proto"}
    got = await stack.http.post("/poker.v1.TableService/GetTable", content=body, headers=proto)
    assert got.status_code == 200, got.text
    assert pb.GetTableResponse.FromString(got.content).table.table_id == "gw-raw"
    bad_utf8 = b"\x0a\x02\xc3\x28"  # table_id: not UTF-8
    refused = await stack.http.post(
        "/poker.v1.TableService/GetTable", content=bad_utf8, headers=proto
    )
    assert refused.status_code == 400
    assert refused.json()["code"] == "invalid_argument"
    assert refused.json()["message"].startswith(
        "unmarshal message: Error parsing message with type 'poker.v1.GetTableRequest'"
    )


async def test_a_table_that_moves_is_followed(stack: Stack) -> None:
    first = await stack.add_table_service("a")
    second = await stack.add_table_service("b")
    await stack.start_gateway(route_ttl_ms=60_000)  # only an UNAVAILABLE makes it look again
    await create_table(stack.stub(second), "gw-moves")
    assert (await stack.post_json("GetTable", {"tableId": "gw-moves"})).status_code == 200
    await second.stop()  # hands its tables back
    stack.tables.remove(second)
    moved = await stack.post_json("GetTable", {"tableId": "gw-moves"})
    assert moved.status_code == 200, moved.text  # the first instance adopted it
    assert first.manager.runtimes.get("gw-moves") is not None


async def test_the_table_service_counts_the_clients_the_gateway_names(stack: Stack) -> None:
    # One watch stream per client address at the table service, which trusts loopback (the
    # gateway) to name the client: two browsers behind the gateway are two clients, not one.
    # Seats' streams (spectators share one per table: test_fanout.py).
    await stack.add_table_service(
        "a",
        watch=WatchLimits(max_per_peer=1),
        proxies=TrustedProxies.parse("127.0.0.1"),
    )
    await stack.start_gateway()
    stub = stack.stub(stack.tables[0])
    await create_table(stub, "gw-peers")
    tokens = [await seat(stub, "gw-peers", s) for s in (0, 1)]

    def as_seat(s: int, address: str) -> dict[str, str]:
        # The test's clients say who they are as an ingress would (uvicorn reads
        # X-Forwarded-For from loopback); the gateway passes that on.
        return {"x-forwarded-for": address, "authorization": f"Bearer {tokens[s]}"}

    def request(s: int) -> pb.WatchTableRequest:
        return pb.WatchTableRequest(table_id="gw-peers", seat=s)

    async with connect.TableServiceClient(stack.url) as client:
        first = client.watch_table(request(0), headers=as_seat(0, "203.0.113.1"))
        second = client.watch_table(request(1), headers=as_seat(1, "203.0.113.2"))
        assert (await anext(first)).WhichOneof("item") == "snapshot"
        assert (await anext(second)).WhichOneof("item") == "snapshot"
        third = client.watch_table(request(0), headers=as_seat(0, "203.0.113.1"))
        with pytest.raises(ConnectError) as caught:
            await anext(third)
        assert caught.value.code is Code.RESOURCE_EXHAUSTED  # 203.0.113.1's second stream
        for stream in (first, second):
            await stream.aclose()  # type: ignore[attr-defined]
