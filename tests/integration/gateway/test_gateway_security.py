"""The gateway attacked over real HTTP on loopback (docs/gateway.md, "Security review").

Paths out of the web client's directory, compressed and malformed bodies, oversized
request heads, header bytes gRPC cannot carry, what an error tells of the cluster, the
headers every answer carries, CORS with any origin, a seat's stream through the
gateway after its token is reissued; and (issue #20) internal calls, service credentials
and the operator's view refused at the edge without reaching a service, and failed
credential attempts throttled per client address.
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import struct
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from connectrpc.code import Code
from connectrpc.errors import ConnectError

from felt.wire import access
from felt.wire.attempts import AttemptLimits
from felt.wire.clients import TrustedProxies
from felt.wire.tokens import SEAT_TOKEN_HEADER
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_service_connect as connect
from poker.v1 import table_service_pb2 as pb
from services.gateway.app import CONTENT_SECURITY_POLICY
from services.gateway.config import ConnectionBounds
from services.gateway.edge import HISTORY_SERVICE, LOBBY_SERVICE, TABLE_SERVICE
from services.grpc_server import aio_server, bind
from services.table.auth import SERVICE_ONLY_RPCS

from .conftest import ADMIN, AI_TOKEN, Stack, admin, create_table, holdem, seat
from .test_gateway_http import connect_reason, reason_of

WAIT = 20.0


async def raw_http(port: int, request: bytes) -> bytes:
    """``request`` sent as it is (no client normalises its path), the answer until closed;
    b"" when the gateway reset the connection before answering."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        await writer.drain()
        return await asyncio.wait_for(reader.read(1 << 20), WAIT)
    except ConnectionError:
        return b""
    finally:
        writer.close()


def get(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n".encode()


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


@pytest.fixture
def dist(tmp_path: Path) -> Path:
    """A built client, a secret beside it and a symlink in it pointing at the secret."""
    built = tmp_path / "dist"
    built.mkdir()
    (built / "index.html").write_text("<!doctype html><title>Felt</title>")
    (tmp_path / "secret.txt").write_text("SECRET")
    (built / "link.txt").symlink_to(tmp_path / "secret.txt")
    return built


async def test_no_path_leaves_the_web_clients_directory(stack: Stack, dist: Path) -> None:
    await stack.add_table_service("a")
    gateway = await stack.start_gateway(static_dir=dist)
    for path in (
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/..%2fsecret.txt",
        "/%2e%2e%2fsecret.txt",
        "/assets/../../secret.txt",
        "/..%5csecret.txt",
        "/link.txt",  # a symlink out of the directory
        "//etc/passwd",
        "/nothing-here.js",
    ):
        answer = await raw_http(gateway.port, get(path))
        assert status_of(answer) == 404, (path, answer[:200])  # not a 500, nor the file
        assert b"SECRET" not in answer
    posted = await raw_http(
        gateway.port, b"POST /index.html HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n"
    )
    assert status_of(posted) == 405
    assert b"SECRET" not in await raw_http(gateway.port, get("/"))


async def test_every_answer_carries_the_security_headers(stack: Stack, dist: Path) -> None:
    await stack.add_table_service("a")
    await stack.start_gateway(static_dir=dist)
    assert stack.http is not None
    answers = [
        await stack.http.get("/"),
        await stack.http.get("/index.html"),
        await stack.http.get("/nothing-here"),
        await stack.http.get("/livez"),
        await stack.post_json("GetTable", {"tableId": "no-such-table"}),
    ]
    for answer in answers:
        headers = answer.headers
        assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY, answer.url
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "no-referrer"
        assert headers["x-frame-options"] == "DENY"
    policy = dict(
        directive.strip().split(" ", 1) for directive in CONTENT_SECURITY_POLICY.split(";")
    )
    assert policy["script-src"] == "'self'"  # no inline script, no eval
    assert policy["frame-ancestors"] == "'none'"
    assert policy["object-src"] == "'none'"
    assert "unsafe" not in CONTENT_SECURITY_POLICY


async def test_the_page_saying_the_client_is_not_built_has_them_too(
    stack: Stack, tmp_path: Path
) -> None:
    await stack.add_table_service("a")
    await stack.start_gateway(static_dir=tmp_path / "missing")
    assert stack.http is not None
    page = await stack.http.get("/")
    assert page.status_code == 200
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY


async def test_any_origin_is_never_sent_credentials(stack: Stack) -> None:
    await stack.add_table_service("a")
    await stack.start_gateway(origins=("*",))
    assert stack.http is not None
    preflight = await stack.http.options(
        "/poker.v1.TableService/GetTable",
        headers={
            "origin": "https://evil.example",
            "access-control-request-method": "POST",
            "access-control-request-headers": "authorization,content-type",
        },
    )
    assert preflight.headers["access-control-allow-origin"] == "*"
    assert "access-control-allow-credentials" not in preflight.headers
    answer = await stack.http.post(
        "/poker.v1.TableService/GetTable",
        json={"tableId": "no-such-table"},
        headers={"origin": "https://evil.example"},
    )
    assert "access-control-allow-credentials" not in answer.headers


async def test_compressed_and_malformed_bodies_are_refused(stack: Stack) -> None:
    """A zip bomb is cut at the message limit (64 KiB) as it inflates; a stream's envelope
    that claims 4 GiB, or says it is compressed with no encoding named, is an error; the
    gateway goes on answering."""
    await stack.add_table_service("a")
    await stack.start_gateway()
    assert stack.http is not None
    bomb = gzip.compress(b"{" + b" " * (64 << 20) + b"}")  # 64 MiB in ~64 KiB
    unary = await stack.http.post(
        "/poker.v1.TableService/GetTable",
        content=bomb,
        headers={"content-type": "application/json", "content-encoding": "gzip"},
    )
    assert unary.status_code == 429
    assert unary.json()["code"] == "resource_exhausted"

    def envelope(flags: int, body: bytes, length: int | None = None) -> bytes:
        return struct.pack(">BI", flags, len(body) if length is None else length) + body

    inflating = gzip.compress(b"\x0a" + b"\x00" * (64 << 20))
    for body, headers, code in (
        (envelope(1, inflating), {"connect-content-encoding": "gzip"}, "resource_exhausted"),
        (envelope(0, b"abc", length=0xFFFFFFFF), {}, "resource_exhausted"),
        (envelope(1, b"abcde"), {}, "internal"),
        (b"\x00\x00", {}, "invalid_argument"),
    ):
        answer = await stack.http.post(
            "/poker.v1.TableService/WatchTable",
            content=body,
            headers={"content-type": "application/connect+proto", **headers},
        )
        end = answer.content
        assert end[:1] == b"\x02", end[:100]  # the end-of-stream message: an error
        assert f'"code": "{code}"'.encode() in end, end[:200]
    assert (await stack.http.get("/livez")).status_code == 200


async def test_a_request_head_is_bounded(stack: Stack) -> None:
    """httptools holds a header whole before handing it on: without a bound one connection
    made the gateway hold megabytes per request."""
    await stack.add_table_service("a")
    gateway = await stack.start_gateway()
    big = b"GET /livez HTTP/1.1\r\nhost: x\r\nx-big: " + b"a" * (4 << 20) + b"\r\n\r\n"
    answer = await raw_http(gateway.port, big)
    assert answer == b"" or status_of(answer) == 431, answer[:200]
    many = b"GET /livez HTTP/1.1\r\nhost: x\r\n"
    many += b"".join(b"x-%d: a\r\n" % i for i in range(20_000)) + b"\r\n"
    assert status_of(await raw_http(gateway.port, many)) == 431
    # A usual request, and one with a body larger than the bound, are served.
    fine = b"GET /livez HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
    assert status_of(await raw_http(gateway.port, fine)) == 200
    body = b'{"tableId": "no-such-table"}' + b" " * 60_000
    post = (
        b"POST /poker.v1.TableService/GetTable HTTP/1.1\r\nhost: x\r\nconnection: close\r\n"
        b"content-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body)
    ) + body
    assert status_of(await raw_http(gateway.port, post)) == 404  # the table service's answer


async def test_a_request_head_must_arrive_in_time(stack: Stack) -> None:
    """A connection that sends nothing, or its head a byte now and then (slowloris), is
    closed once the head's time is up; one whose head came in time keeps its stream."""
    server = await stack.add_table_service("a")
    gateway = await stack.start_gateway(connections=ConnectionBounds(head_timeout_s=0.5))
    await create_table(stack.stub(server), "gw-slow")

    async def closed_after(trickle: bytes) -> float:
        reader, writer = await asyncio.open_connection("127.0.0.1", gateway.port)
        started = asyncio.get_running_loop().time()
        try:
            for byte in trickle:
                if reader.at_eof():
                    break  # closed by the gateway: the rest is never sent
                writer.write(bytes([byte]))
                await asyncio.sleep(0.1)
            assert await asyncio.wait_for(reader.read(), WAIT) == b""
        except ConnectionError:
            pass
        finally:
            writer.close()
        return asyncio.get_running_loop().time() - started

    assert await closed_after(b"") < WAIT / 2
    assert (
        await closed_after(b"GET /livez HTTP/1.1\r\nhost: x\r\nx-slow: aaaaaaaaaaaaaaa") < WAIT / 2
    )
    async with connect.TableServiceClient(stack.url) as client:
        stream = client.watch_table(pb.WatchTableRequest(table_id="gw-slow"))
        assert (await anext(stream)).WhichOneof("item") == "snapshot"
        await asyncio.sleep(1.0)  # twice the head's time: the stream is not cut
        await seat(stack.stub(server), "gw-slow", 0)
        async with asyncio.timeout(WAIT):
            assert (await anext(stream)).event.HasField("player_seated")
        await stream.aclose()  # type: ignore[attr-defined]


async def test_header_bytes_grpc_cannot_carry_are_a_clean_refusal(stack: Stack) -> None:
    await stack.add_table_service("a")
    gateway = await stack.start_gateway()
    body = b'{"tableId": "no-such-table"}'
    for value in ("Bearer \xe9t\xe9".encode("latin-1"), "Bearer é".encode(), b"Bearer a\tb"):
        request = (
            b"POST /poker.v1.TableService/GetTable HTTP/1.1\r\nhost: x\r\nconnection: close\r\n"
            b"content-type: application/json\r\ncontent-length: %d\r\nauthorization: %s\r\n\r\n"
            % (len(body), value)
        ) + body
        answer = await raw_http(gateway.port, request)
        assert status_of(answer) == 400, (value, answer[:300])
        assert b'"code": "invalid_argument"' in answer
        assert b"codec" not in answer and b"Traceback" not in answer


async def test_an_unreachable_service_is_not_named(stack: Stack) -> None:
    """The channel's error names the upstream's address: the client is told no more than
    that the service is unreachable."""
    await stack.add_table_service("a")
    await stack.start_gateway()  # its lobby target is 127.0.0.1:1, where nothing listens
    answer = await stack.post_json("ListLounges", {}, service="LobbyService")
    assert answer.status_code == 503
    message = answer.json()["message"]
    assert "unreachable" in message
    assert "127.0.0.1" not in message and "ipv4" not in message and ":1" not in message


async def test_a_reissue_ends_a_seats_stream_through_the_gateway(stack: Stack) -> None:
    """The old token's holder watching through the gateway is cut off at the reissue, with
    the reason a client acts on; a spectator sending that token (no seat) never saw cards."""
    server = await stack.add_table_service("a")
    await stack.start_gateway()
    stub = stack.stub(server)
    await create_table(stub, "gw-reissue")
    old = await seat(stub, "gw-reissue", 0)
    await seat(stub, "gw-reissue", 1)
    headers = {"authorization": f"Bearer {old}"}
    async with connect.TableServiceClient(stack.url) as client:
        as_seat = client.watch_table(
            pb.WatchTableRequest(table_id="gw-reissue", seat=0, from_sequence=1),
            headers=headers,
        )
        as_spectator = client.watch_table(
            pb.WatchTableRequest(table_id="gw-reissue", from_sequence=1), headers=headers
        )
        spectated: list[pb.WatchTableResponse] = []
        seen: list[pb.WatchTableResponse] = []
        async with asyncio.timeout(WAIT):
            async for item in as_seat:
                seen.append(item)
                dealt_now = item.event.WhichOneof("event") == "hole_cards_dealt"
                if dealt_now and item.event.hole_cards_dealt.seat == 0:
                    break
        dealt = seen[-1].event.hole_cards_dealt
        assert dealt.seat == 0 and dealt.cards[0].WhichOneof("kind") == "code"  # its cards
        issued = await stub.ReissueSeatToken(
            pb.ReissueSeatTokenRequest(
                table_id="gw-reissue", seat=0, player_id="p0", request_id="gw-r1"
            ),
            metadata=(("authorization", f"Bearer {ADMIN}"), (SEAT_TOKEN_HEADER, old)),
        )
        with pytest.raises(ConnectError) as caught:
            async with asyncio.timeout(WAIT):
                async for item in as_seat:
                    assert item.event.sequence < issued.sequence, item
        assert caught.value.code is Code.PERMISSION_DENIED
        assert connect_reason(caught.value) == "SEAT_TOKEN_REISSUED"

        async with asyncio.timeout(WAIT):
            async for item in as_spectator:
                spectated.append(item)
                if item.event.sequence >= issued.sequence:
                    break
        assert any(i.event.WhichOneof("event") == "hole_cards_dealt" for i in spectated)
        for item in spectated:
            if item.event.WhichOneof("event") == "hole_cards_dealt":
                cards = item.event.hole_cards_dealt.cards
                assert all(c.WhichOneof("kind") != "code" for c in cards), item
        await as_spectator.aclose()  # type: ignore[attr-defined]


# ------------------------------------------- issue #20: internal calls never cross the edge


class Recorder(grpc.GenericRpcHandler):
    """An upstream that records every call reaching it (and answers NOT_FOUND)."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler[Any, Any] | None:
        self.calls.append(details.method)

        async def unary(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
            await context.abort(grpc.StatusCode.NOT_FOUND, "recorded")
            return b""

        async def stream(
            request: bytes, context: grpc.aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[bytes]:
            await context.abort(grpc.StatusCode.NOT_FOUND, "recorded")
            yield b""

        if details.method.endswith("/WatchTable"):
            return grpc.unary_stream_rpc_method_handler(stream)
        return grpc.unary_unary_rpc_method_handler(unary)


@pytest.fixture
async def recorder() -> AsyncIterator[tuple[Recorder, int]]:
    """A gRPC server on loopback that records what reaches it: the gateway's every upstream."""
    handler = Recorder()
    server = aio_server()
    server.add_generic_rpc_handlers((handler,))
    port = bind(server, "127.0.0.1:0")
    await server.start()
    try:
        yield handler, port
    finally:
        await server.stop(0)


async def start_recorded_gateway(stack: Stack, port: int, **changes: Any) -> httpx.AsyncClient:
    target = f"127.0.0.1:{port}"
    await stack.start_gateway(table_target=target, lobby_target=target, redis_url="", **changes)
    assert stack.http is not None
    return stack.http


async def rpc(
    http: httpx.AsyncClient,
    service: str,
    method: str,
    body: dict[str, Any] | None = None,
    authorization: str = "",
    client: str = "",
) -> httpx.Response:
    headers = {"content-type": "application/json"}
    if authorization:
        headers["authorization"] = authorization
    if client:
        headers["x-forwarded-for"] = client  # as an ingress names the browser
    return await http.post(f"/{service}/{method}", json=body or {}, headers=headers)


def refusal(answer: httpx.Response) -> tuple[int, str, str]:
    body = answer.json()
    return answer.status_code, body["code"], reason_of(body["details"][0])


# A seat token's shape (v1.<payload>.<signature>) with a signature no secret made.
PAYLOAD = base64.urlsafe_b64encode(b'{"s":0,"t":"gw-x"}').decode().rstrip("=")
FORGED = f"v1.{PAYLOAD}.{'A' * 43}"


def test_every_rpc_is_declared_public_or_service_only() -> None:
    # One declaration (felt.wire.access), which the table service's auth rules take theirs
    # from; every RPC is one or the other, so a new RPC cannot be exposed by accident (the
    # gateway refuses what is not declared public, and this fails until it is declared).
    for service in (TABLE_SERVICE, LOBBY_SERVICE, HISTORY_SERVICE):
        public = access.PUBLIC[service.full_name]
        internal = access.SERVICE_ONLY[service.full_name]
        assert {m.name for m in service.methods} == public | internal, service.full_name
        assert not public & internal
    assert access.SERVICE_ONLY[TABLE_SERVICE.full_name] == SERVICE_ONLY_RPCS
    assert {"CreateTable", "SeatPlayer", "AddChips", "CloseTable", "ReissueSeatToken"} <= (
        SERVICE_ONLY_RPCS
    )


async def test_internal_rpcs_are_refused_and_never_forwarded(
    stack: Stack, recorder: tuple[Recorder, int]
) -> None:
    handler, port = recorder
    http = await start_recorded_gateway(stack, port)
    for name in sorted(SERVICE_ONLY_RPCS):
        for authorization in ("", f"Bearer {ADMIN}", f"Bearer {FORGED}"):
            answer = await rpc(http, TABLE_SERVICE.full_name, name, {"tableId": "t"}, authorization)
            assert refusal(answer) == (403, "permission_denied", "SERVICE_ONLY"), name
            assert name in answer.json()["message"]
    assert handler.calls == []  # nothing reached the table service
    # A public call is forwarded (the recorder answers it): the door is there, only narrow.
    answer = await rpc(http, TABLE_SERVICE.full_name, "GetTable", {"tableId": "t"})
    assert answer.json()["code"] == "not_found"
    assert handler.calls == ["/poker.v1.TableService/GetTable"]


async def test_an_internal_call_through_the_gateway_changes_nothing(stack: Stack) -> None:
    # Against a real table service: CreateTable, SeatPlayer and AddChips with the service
    # credential itself are refused at the gateway, and the table service never saw them.
    server = await stack.add_table_service("a")
    await stack.start_gateway()
    stub = stack.stub(server)
    config = {"variant": "VARIANT_NLHE", "seatCount": 2, "smallBlind": "50", "bigBlind": "100"}
    created = await stack.post_json(
        "CreateTable", {"tableId": "gw-int", "requestId": "c", "config": config}, ADMIN
    )
    assert created.status_code == 403, created.text
    with pytest.raises(grpc.aio.AioRpcError) as missing:
        await stub.GetTable(pb.GetTableRequest(table_id="gw-int"))
    assert missing.value.code() is grpc.StatusCode.NOT_FOUND
    await create_table(stub, "gw-int")
    await seat(stub, "gw-int", 0)
    before = (await stub.GetTable(pb.GetTableRequest(table_id="gw-int"))).table
    added = await stack.post_json(
        "AddChips", {"tableId": "gw-int", "seat": 0, "amount": "1000", "requestId": "a"}, ADMIN
    )
    assert added.status_code == 403, added.text
    closed = await stack.post_json("CloseTable", {"tableId": "gw-int", "requestId": "x"}, ADMIN)
    assert closed.status_code == 403, closed.text
    after = (await stub.GetTable(pb.GetTableRequest(table_id="gw-int"))).table
    assert after == before  # no chips added, not closed


async def test_service_credentials_are_refused_at_the_gateway(
    stack: Stack, recorder: tuple[Recorder, int]
) -> None:
    handler, port = recorder
    http = await start_recorded_gateway(stack, port)
    calls: list[tuple[str, str, dict[str, Any]]] = [
        (TABLE_SERVICE.full_name, "GetTableView", {"tableId": "t", "seat": 1}),
        (TABLE_SERVICE.full_name, "SubmitAction", {"tableId": "t", "seat": 1}),
        (LOBBY_SERVICE.full_name, "GetBalance", {}),
        (HISTORY_SERVICE.full_name, "GetHandHistory", {"handId": "0" * 32}),
    ]
    for service, method, body in calls:
        for authorization in (
            f"Bearer {ADMIN}",
            f"Bearer {AI_TOKEN}",
            f"bearer {FORGED}",  # a scheme the services do not read either
            "Basic dXNlcjpwYXNz",
        ):
            answer = await rpc(http, service, method, body, authorization, client="198.51.100.1")
            assert refusal(answer) == (401, "unauthenticated", "PLAYER_TOKEN_REQUIRED")
            assert ADMIN not in answer.text and AI_TOKEN not in answer.text
    assert handler.calls == []
    # The same with the Connect client, a server stream (WatchTable) included.
    async with connect.TableServiceClient(stack.url) as client:
        stream = client.watch_table(
            pb.WatchTableRequest(table_id="t", seat=1),
            headers={"authorization": f"Bearer {AI_TOKEN}", "x-forwarded-for": "198.51.100.2"},
        )
        with pytest.raises(ConnectError) as caught:
            await anext(stream)
        assert caught.value.code is Code.UNAUTHENTICATED
        assert connect_reason(caught.value) == "PLAYER_TOKEN_REQUIRED"
    assert handler.calls == []
    for service, method, body in calls[2:]:
        answer = await rpc(http, service, method, body, client="198.51.100.3")
        assert answer.json()["code"] == "not_found"  # anonymous calls are forwarded
    assert len(handler.calls) == 2


async def test_the_ai_token_reads_no_ai_seats_cards_through_the_gateway(stack: Stack) -> None:
    # The issue's finding: the AI workers' token, through the gateway, read an AI seat's view.
    server = await stack.add_table_service("a")
    await stack.start_gateway()
    stub = stack.stub(server)
    await create_table(stub, "gw-ai")
    await stub.SeatPlayer(
        pb.SeatPlayerRequest(
            table_id="gw-ai",
            seat=1,
            player_id="bot",
            stack=10_000,
            request_id="s-bot",
            ai_level=epb.AI_LEVEL_EASY,
        ),
        metadata=admin(),
    )
    direct = await stub.GetTableView(
        pb.GetTableViewRequest(table_id="gw-ai", seat=1),
        metadata=(("authorization", f"Bearer {AI_TOKEN}"),),
    )
    assert direct.view.viewer_seat == 1  # the AI workers' own door still opens
    answer = await stack.post_json("GetTableView", {"tableId": "gw-ai", "seat": 1}, AI_TOKEN)
    assert refusal(answer) == (401, "unauthenticated", "PLAYER_TOKEN_REQUIRED")


async def test_the_operator_view_is_refused_at_the_gateway(
    stack: Stack, recorder: tuple[Recorder, int]
) -> None:
    handler, port = recorder
    http = await start_recorded_gateway(stack, port)
    hand = {"handId": "0" * 32, "reader": "HAND_READER_OPERATOR"}
    for authorization in ("", f"Bearer {FORGED}"):
        answer = await rpc(http, HISTORY_SERVICE.full_name, "GetHandHistory", hand, authorization)
        assert refusal(answer) == (403, "permission_denied", "OPERATOR_ONLY")
    assert handler.calls == []
    spectator = {"handId": "0" * 32, "reader": "HAND_READER_SPECTATOR"}
    answer = await rpc(http, HISTORY_SERVICE.full_name, "GetHandHistory", spectator)
    assert answer.json()["code"] == "not_found"
    assert handler.calls == ["/poker.v1.HistoryService/GetHandHistory"]


async def test_the_gateway_throttles_refused_credentials_per_address(
    stack: Stack, recorder: tuple[Recorder, int]
) -> None:
    handler, port = recorder
    http = await start_recorded_gateway(stack, port, attempts=AttemptLimits(burst=3, per_minute=1))
    guess = (TABLE_SERVICE.full_name, "GetTableView", {"tableId": "t", "seat": 0})
    codes = [
        refusal(await rpc(http, *guess, f"Bearer guess-{i}", client="203.0.113.7"))[2]
        for i in range(6)
    ]
    assert codes == ["PLAYER_TOKEN_REQUIRED"] * 3 + ["AUTH_THROTTLED"] * 3
    throttled = await rpc(http, *guess, f"Bearer {ADMIN}", client="203.0.113.7")
    assert refusal(throttled) == (429, "resource_exhausted", "AUTH_THROTTLED")
    # Another address is unaffected; so are this address's players' tokens and anonymous calls.
    other = await rpc(http, *guess, "Bearer guess", client="203.0.113.8")
    assert refusal(other)[2] == "PLAYER_TOKEN_REQUIRED"
    assert handler.calls == []
    player = await rpc(http, *guess, f"Bearer {FORGED}", client="203.0.113.7")
    assert player.json()["code"] == "not_found"  # forwarded: the service checks it
    anonymous = await rpc(http, TABLE_SERVICE.full_name, "GetTable", {"tableId": "t"})
    assert anonymous.json()["code"] == "not_found"
    assert len(handler.calls) == 2


async def test_the_table_service_throttles_wrong_tokens_per_client(stack: Stack) -> None:
    # Wrong seat tokens through the gateway, which names the client: after the allowance its
    # address is RESOURCE_EXHAUSTED, another client is not, and a genuine token still plays.
    server = await stack.add_table_service(
        "a",
        proxies=TrustedProxies.parse("127.0.0.1"),
        attempts=AttemptLimits(burst=3, per_minute=1),
    )
    await stack.start_gateway()
    stub = stack.stub(server)
    await create_table(stub, "gw-guess")
    token = await seat(stub, "gw-guess", 0)
    assert stack.http is not None
    view = {"tableId": "gw-guess", "seat": 0}
    method = (TABLE_SERVICE.full_name, "GetTableView", view)
    reasons = []
    for _ in range(5):
        answer = await rpc(stack.http, *method, f"Bearer {FORGED}", client="203.0.113.9")
        reasons.append((answer.json()["code"], answer.json().get("details") and refusal(answer)[2]))
    assert [code for code, _ in reasons] == ["unauthenticated"] * 3 + ["resource_exhausted"] * 2
    assert reasons[-1][1] == "AUTH_THROTTLED"
    other = await rpc(stack.http, *method, f"Bearer {FORGED}", client="203.0.113.10")
    assert other.json()["code"] == "unauthenticated"
    genuine = await rpc(stack.http, *method, f"Bearer {token}", client="203.0.113.9")
    assert genuine.status_code == 200, genuine.text


async def test_a_throttled_caller_cannot_confirm_the_service_credential(stack: Stack) -> None:
    # Straight at the table service (an attacker inside the network): wrong guesses of the
    # service credential, then the right one is refused like them while the peer is throttled.
    server = await stack.add_table_service("a", attempts=AttemptLimits(burst=3, per_minute=1))
    stub = stack.stub(server)
    request = pb.CreateTableRequest(table_id="gw-cred", config=holdem(), request_id="c")
    codes = []
    for i in range(4):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.CreateTable(request, metadata=(("authorization", f"Bearer guess-{i}"),))
        codes.append(caught.value.code())
    assert codes[:3] == [grpc.StatusCode.PERMISSION_DENIED] * 3  # a seat token's refusal
    assert codes[3] is grpc.StatusCode.RESOURCE_EXHAUSTED
    with pytest.raises(grpc.aio.AioRpcError) as right:
        await stub.CreateTable(request, metadata=admin())
    assert right.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
