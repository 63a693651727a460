"""The gateway's wire reader (``services.gateway.wire_reader``) against protobuf's own parser.

A binary request is forwarded as its bytes and routed by the ``table_id`` read
from them: the reader must accept exactly what upb accepts (else the gateway
would forward what the service cannot parse, or refuse what it would take) and
read the same ``table_id`` and ``seat`` presence. Held to upb on every public
request type, hand-made malformed bytes and seeded random mutations.
"""

from __future__ import annotations

import random

import pytest
from google.protobuf.message import DecodeError, Message

from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from services.gateway.codecs import RawBinaryCodec
from services.gateway.wire_reader import MAX_DEPTH, RawRequest, table_id_of

REQUESTS: list[Message] = [
    pb.GetTableRequest(table_id="demo-holdem"),
    pb.GetTableViewRequest(table_id="t-1", seat=0),
    pb.GetTableViewRequest(table_id="t-1"),
    pb.WatchTableRequest(table_id="watched", seat=3, from_sequence=1234567),
    pb.WatchTableRequest(table_id="watched", from_sequence=2**63),
    pb.SubmitActionRequest(
        table_id="t-2",
        seat=1,
        request_id="0f9c2b1e-2c4d-4e7a-9a55-1f1f3c0de0aa",
        expected_sequence=99,
        action=tpb.Action(raise_to=tpb.Action.RaiseTo(amount=300)),
    ),
    pb.SubmitActionRequest(
        table_id="t-2",
        seat=0,
        request_id="r",
        action=tpb.Action(discard=tpb.Action.Discard(cards=[3, 17])),
    ),
    pb.SitOutRequest(table_id="t-3", seat=5, request_id="r-ü"),
    pb.ShowCardsRequest(table_id="t-4", seat=2, hand_id="t-4:7", request_id="x"),
    pb.GetHandHistoryRequest(table_id="t-5", hand_id="h", seat=-1),
    pb.CreateTableRequest(
        table_id="t-6",
        name="Friday ♠",
        config=epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=6, small_blind=5, big_blind=10),
        request_id="c",
    ),
]


def parsed(data: bytes, message_class: type[Message]) -> Message | None:
    try:
        return message_class.FromString(data)
    except DecodeError:
        return None


def read(data: bytes, message_class: type[Message]) -> RawRequest | None:
    try:
        return RawRequest(data, message_class)
    except DecodeError:
        return None


def assert_same(data: bytes, message_class: type[Message]) -> None:
    message, raw = parsed(data, message_class), read(data, message_class)
    assert (message is None) == (raw is None), (data.hex(), message)
    if message is None or raw is None:
        return
    assert raw.table_id == table_id_of(message)
    if "seat" in message_class.DESCRIPTOR.fields_by_name:
        field = message_class.DESCRIPTOR.fields_by_name["seat"]
        if field.has_presence:
            assert raw.has("seat") == message.HasField("seat")
    assert raw.message() == message
    assert raw.data == data  # forwarded as it came


@pytest.mark.parametrize("request_message", REQUESTS, ids=lambda m: type(m).__name__)
def test_a_valid_request_is_read_as_protobuf_reads_it(request_message: Message) -> None:
    data = request_message.SerializeToString()
    raw = RawRequest(data, type(request_message))
    assert raw.table_id == table_id_of(request_message)
    assert_same(data, type(request_message))


def tag(number: int, wire_type: int) -> bytes:
    return varint(number << 3 | wire_type)


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


MALFORMED = {
    "truncated varint": tag(2, 0) + b"\x80",
    "11-byte varint": tag(2, 0) + b"\xff" * 10 + b"\x01",
    "length past the end": tag(1, 2) + varint(10) + b"abc",
    "invalid UTF-8 in table_id": tag(1, 2) + varint(2) + b"\xc3\x28",
    "a surrogate in table_id": tag(1, 2) + varint(3) + b"\xed\xa0\x80",
    "field number 0": tag(0, 0) + b"\x01",
    "wire type 6": tag(1, 6) + b"\x01",
    "wire type 7": tag(1, 7),
    "end group at the top": tag(9, 4),
    "group closed by another field": tag(9, 3) + tag(8, 4),
    "group never closed": tag(9, 3) + tag(2, 0) + b"\x01",
    "truncated fixed64": tag(9, 1) + b"\x00" * 7,
    "truncated fixed32": tag(9, 5) + b"\x00" * 3,
    "6-byte tag": b"\x88\x80\x80\x80\x80\x00" + b"\x01",
    "6-byte length": tag(9, 2) + b"\x80" * 5 + b"\x00",
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_bytes_are_refused_as_protobuf_refuses_them(name: str) -> None:
    data = MALFORMED[name]
    assert parsed(data, pb.SubmitActionRequest) is None, "the case must be malformed to upb"
    with pytest.raises(DecodeError, match=r"Error parsing message with type 'poker\.v1\.Sub"):
        RawRequest(data, pb.SubmitActionRequest)


def test_nested_fields_are_checked_too() -> None:
    good = pb.SubmitActionRequest(
        table_id="t", action=tpb.Action(raise_to=tpb.Action.RaiseTo(amount=3))
    )
    data = good.SerializeToString()
    action = good.action.SerializeToString()
    broken_action = tag(5, 2) + varint(len(action)) + action[:-1] + b"\x80"
    data = tag(1, 2) + varint(1) + b"t" + broken_action
    assert parsed(data, pb.SubmitActionRequest) is None
    assert read(data, pb.SubmitActionRequest) is None
    packed = tag(1, 2) + varint(2) + b"\x80\x80"  # Discard.cards: a packed varint cut short
    discard = tag(tpb.Action.DESCRIPTOR.fields_by_name["discard"].number, 2) + varint(len(packed))
    action_bytes = discard + packed
    data = tag(5, 2) + varint(len(action_bytes)) + action_bytes
    assert parsed(data, pb.SubmitActionRequest) is None
    assert read(data, pb.SubmitActionRequest) is None


def test_unknown_fields_and_other_wire_types_are_kept_as_protobuf_keeps_them() -> None:
    # seat (a varint) sent length-delimited: an unknown field, so seat is not set.
    data = tag(1, 2) + varint(1) + b"t" + tag(2, 2) + varint(1) + b"x" + tag(99, 3) + tag(99, 4)
    assert_same(data, pb.WatchTableRequest)
    raw = RawRequest(data, pb.WatchTableRequest)
    assert not raw.has("seat")
    assert raw.data == data
    assert not RawRequest(data, pb.WatchTableRequest).has("no_such_field")
    # the last table_id is the one protobuf keeps
    data = tag(1, 2) + varint(1) + b"a" + tag(1, 2) + varint(1) + b"b"
    assert RawRequest(data, pb.GetTableRequest).table_id == "b"
    assert_same(data, pb.GetTableRequest)


def test_nesting_is_bounded() -> None:
    data = tag(9, 3) * (MAX_DEPTH + 5) + tag(9, 4) * (MAX_DEPTH + 5)
    assert read(data, pb.GetTableRequest) is None
    assert parsed(data, pb.GetTableRequest) is None


def test_random_mutations_are_judged_as_protobuf_judges_them() -> None:
    rng = random.Random(23)
    for request_message in REQUESTS:
        message_class = type(request_message)
        good = request_message.SerializeToString()
        for _ in range(150):
            data = bytearray(good)
            for _ in range(rng.randint(1, 3)):
                op = rng.randrange(4)
                at = rng.randrange(len(data) + 1)
                if op == 0 and data:
                    data[min(at, len(data) - 1)] = rng.randrange(256)
                elif op == 1:
                    data[at:at] = bytes([rng.randrange(256)])
                elif op == 2:
                    del data[at : at + rng.randint(1, 3)]
                else:
                    data = data[:at]
            assert_same(bytes(data), message_class)


def test_the_codec_refuses_malformed_bytes_as_the_decode_path_did() -> None:
    codec: RawBinaryCodec[pb.GetTableRequest] = RawBinaryCodec()
    with pytest.raises(DecodeError) as raised:
        codec.decode(MALFORMED["invalid UTF-8 in table_id"], pb.GetTableRequest)
    with pytest.raises(DecodeError) as upb:
        pb.GetTableRequest.FromString(MALFORMED["invalid UTF-8 in table_id"])
    assert str(raised.value) == str(upb.value)  # "unmarshal message: <this>", invalid_argument
    raw = codec.decode(pb.GetTableRequest(table_id="x").SerializeToString(), pb.GetTableRequest)
    assert isinstance(raw, RawRequest)
    assert codec.encode(pb.GetTableRequest(table_id="x")) == raw.data
