"""The gateway's pure parts: the stubs' method names, status codes, watch caps, routes."""

from __future__ import annotations

import json

import grpc
import pytest
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from google.protobuf import json_format

from poker.v1 import history_service_connect, lobby_service_connect, table_service_connect
from poker.v1 import table_service_pb2 as pb
from services.gateway.app import HISTORY_SERVICE, LOBBY_SERVICE, TABLE_SERVICE
from services.gateway.caps import StreamCaps
from services.gateway.codecs import BinaryCodec, CompactJsonCodec, Raw
from services.gateway.config import GatewayConfig, WatchCaps
from services.gateway.errors import connect_code
from services.gateway.forward import guarded_stream, guarded_unary, python_name
from services.settings import ConfigError


@pytest.mark.parametrize(
    "descriptor,protocol",
    [
        (TABLE_SERVICE, table_service_connect.TableService),
        (LOBBY_SERVICE, lobby_service_connect.LobbyService),
        (HISTORY_SERVICE, history_service_connect.HistoryService),
    ],
)
def test_every_rpc_has_the_name_the_connect_stubs_call(descriptor: object, protocol: type) -> None:
    stub_methods = {name for name in vars(protocol) if not name.startswith("_")}
    names = {python_name(m.name) for m in descriptor.methods}  # type: ignore[attr-defined]
    assert names == stub_methods


def test_status_codes_map_one_to_one() -> None:
    codes = {connect_code(s) for s in grpc.StatusCode if s is not grpc.StatusCode.OK}
    assert len(codes) == len(Code)
    assert connect_code(grpc.StatusCode.CANCELLED) is Code.CANCELED
    assert connect_code(grpc.StatusCode.FAILED_PRECONDITION) is Code.FAILED_PRECONDITION


def test_watch_caps_per_token_address_and_total() -> None:
    caps = StreamCaps(WatchCaps(per_token=2, per_address=3, total=4))
    with caps.admit("t1", "a"), caps.admit("t1", "a"):
        with pytest.raises(ConnectError) as caught, caps.admit("t1", "a"):
            pass
        assert caught.value.code is Code.RESOURCE_EXHAUSTED
        with caps.admit("t2", "a"):  # another token, the same address: its third
            with pytest.raises(ConnectError), caps.admit("", "a"):
                pass
            with caps.admit("", "b"), pytest.raises(ConnectError), caps.admit("", "c"):
                pass  # b's stream is the fourth in all: c's is refused
    assert (caps.total, caps.per_token, caps.per_address) == (0, {}, {})


def test_watch_caps_count_an_ipv6_client_by_its_64() -> None:
    """One subscriber holds a whole /64: a fresh address of it is no fresh count (counted by
    the single address, one client could open 2**64 times the cap)."""
    caps = StreamCaps(WatchCaps(per_token=10, per_address=2, total=100))
    with caps.admit("", "2001:db8:1:2::1"), caps.admit("", "2001:db8:1:2:ffff:ffff:ffff:fffe"):
        with pytest.raises(ConnectError) as caught, caps.admit("", "2001:db8:1:2::abcd"):
            pass
        assert caught.value.code is Code.RESOURCE_EXHAUSTED
        with caps.admit("", "2001:db8:1:3::1"):  # the next /64: another client
            pass
        with caps.admit("", "203.0.113.7"), caps.admit("", "203.0.113.8"):
            pass  # IPv4: by the address
        with (
            caps.admit("", "::ffff:203.0.113.9"),
            caps.admit("", "203.0.113.9"),
            pytest.raises(ConnectError),  # an IPv4-mapped address is the IPv4 one
            caps.admit("", "203.0.113.9"),
        ):
            pass
        assert caps.per_address == {"2001:db8:1:2::/64": 2}
    assert (caps.total, caps.per_token, caps.per_address) == (0, {}, {})


async def test_the_gateways_own_failures_tell_the_client_nothing_of_them() -> None:
    """The Connect library sends ``str(exc)`` of any exception but a ConnectError: a
    handler's own failure becomes INTERNAL with a message of the gateway's; a refusal
    (ConnectError) goes through as it is."""

    async def broken(request: object, ctx: object) -> Raw:
        raise RuntimeError("cannot open /srv/felt/secret at 10.1.2.3:50051")

    async def refusing(request: object, ctx: object) -> Raw:
        raise ConnectError(Code.NOT_FOUND, "no such table")

    async def broken_stream(request: object, ctx: object):  # type: ignore[no-untyped-def]
        yield Raw(b"", pb.WatchTableResponse)
        raise KeyError("10.1.2.3")

    for call in (guarded_unary(broken), guarded_unary(refusing)):
        with pytest.raises(ConnectError) as caught:
            await call(pb.GetTableRequest(), None)  # type: ignore[arg-type]
        assert "10.1.2.3" not in caught.value.message and "/srv" not in caught.value.message
    assert caught.value.code is Code.NOT_FOUND
    with pytest.raises(ConnectError) as caught:
        await guarded_unary(broken)(pb.GetTableRequest(), None)  # type: ignore[arg-type]
    assert (caught.value.code, caught.value.message) == (
        Code.INTERNAL,
        "internal error in the gateway",
    )
    stream = guarded_stream(broken_stream)(pb.WatchTableRequest(), None)  # type: ignore[arg-type]
    assert (await anext(stream)).data == b""
    with pytest.raises(ConnectError) as caught:
        await anext(stream)
    assert caught.value.code is Code.INTERNAL and "10.1.2.3" not in caught.value.message


def test_answers_are_handed_on_as_bytes_and_json_made_once() -> None:
    answer = pb.GetTableResponse()
    answer.table.table_id = "t1"
    answer.table.sequence = 2**40  # an int64: a string in JSON
    data = answer.SerializeToString()
    assert BinaryCodec().encode(Raw(data, pb.GetTableResponse)) == data
    codec: CompactJsonCodec[pb.GetTableRequest] = CompactJsonCodec(cache_entries=2)
    encoded = codec.encode(Raw(data, pb.GetTableResponse))
    assert json.loads(encoded) == json_format.MessageToDict(answer)
    assert b" " not in encoded
    assert codec.encode(Raw(data, pb.GetTableResponse)) is encoded  # the second: cached
    for n in range(3):
        codec.encode(
            Raw(pb.GetTableRequest(table_id=f"t{n}").SerializeToString(), pb.GetTableRequest)
        )
    assert len(codec._cache) == 2  # bounded
    parsed = codec.decode(b'{"tableId":"t1","someFutureField":1}', pb.GetTableRequest)
    assert parsed.table_id == "t1"  # unknown fields ignored


def test_settings() -> None:
    config = GatewayConfig.from_env(
        {"FELT_GATEWAY_ADDR": "0.0.0.0:9000", "FELT_GATEWAY_ORIGINS": "https://a, https://b,"}
    )
    assert (config.host, config.port, config.origins) == (
        "0.0.0.0",
        9000,
        ("https://a", "https://b"),
    )
    with pytest.raises(ConfigError):
        GatewayConfig.from_env({"FELT_GATEWAY_ADDR": "nowhere"})
    with pytest.raises(ConfigError):
        GatewayConfig.from_env({"FELT_GATEWAY_WATCH_PER_TOKEN": "0"})
