"""The gateway's binary table requests (``services.gateway.raw_request``).

A binary request is parsed once by protobuf's own parser (upb) and forwarded as
the client's bytes: malformed bodies are refused exactly as the decode path
refused them, ``table_id`` and ``seat`` presence are read as the service will
read them (a repeated field by its last occurrence), and the bytes that go
upstream are the client's, unchanged.
"""

from __future__ import annotations

import pytest
from google.protobuf.message import DecodeError, Message

from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from services.gateway.codecs import RawBinaryCodec
from services.gateway.raw_request import RawRequest, has_field, table_id_of

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


@pytest.mark.parametrize("request_message", REQUESTS, ids=lambda m: type(m).__name__)
def test_a_valid_request_is_read_as_protobuf_reads_it(request_message: Message) -> None:
    data = request_message.SerializeToString()
    raw = RawRequest(data, type(request_message))
    assert raw.message == request_message
    assert table_id_of(raw) == table_id_of(request_message) != ""
    fields = type(request_message).DESCRIPTOR.fields_by_name
    if "seat" in fields and fields["seat"].has_presence:
        assert has_field(raw, "seat") == request_message.HasField("seat")
    assert raw.data is data  # forwarded as it came, not re-encoded


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
def test_malformed_bytes_are_refused_as_the_decode_path_refused_them(name: str) -> None:
    data = MALFORMED[name]
    with pytest.raises(DecodeError) as upb:
        pb.SubmitActionRequest.FromString(data)
    codec: RawBinaryCodec[pb.SubmitActionRequest] = RawBinaryCodec()
    with pytest.raises(DecodeError) as raised:
        codec.decode(data, pb.SubmitActionRequest)
    # Connect answers either with invalid_argument "unmarshal message: <this>"
    assert str(raised.value) == str(upb.value)
    assert "Error parsing message with type 'poker.v1.SubmitActionRequest'" in str(raised.value)


def test_unknown_fields_are_kept_and_forwarded_as_they_came() -> None:
    # seat (a varint) sent length-delimited, and an unknown group: unknown fields to
    # protobuf, so seat is not set; the bytes go upstream with them.
    data = tag(1, 2) + varint(1) + b"t" + tag(2, 2) + varint(1) + b"x" + tag(99, 3) + tag(99, 4)
    raw = RawBinaryCodec[pb.WatchTableRequest]().decode(data, pb.WatchTableRequest)
    assert isinstance(raw, RawRequest)
    assert table_id_of(raw) == "t"
    assert not has_field(raw, "seat")
    assert not has_field(raw, "no_such_field")
    assert raw.data == data


def test_a_repeated_table_id_is_routed_by_its_last_occurrence() -> None:
    data = tag(1, 2) + varint(1) + b"a" + tag(1, 2) + varint(1) + b"b"
    raw = RawRequest(data, pb.GetTableRequest)
    assert table_id_of(raw) == "b" == pb.GetTableRequest.FromString(data).table_id
    assert raw.data == data


def test_the_codec_writes_answers_as_the_binary_codec_does() -> None:
    codec: RawBinaryCodec[pb.GetTableRequest] = RawBinaryCodec()
    message = pb.GetTableRequest(table_id="x")
    assert codec.encode(message) == message.SerializeToString()
