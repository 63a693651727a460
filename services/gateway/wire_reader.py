"""A binary request kept as the client's bytes, its few needed fields read from them.

Why (issue #23): the gateway decoded every binary request into a message and
encoded it again, only to read its ``table_id`` for routing. Now a binary
request is a :class:`RawRequest`: its bytes, forwarded as they came, and the
top-level fields the gateway reads (``table_id``, whether ``seat`` is set),
found by one walk over the protobuf wire format.

The walk is strict where the decoder was: the gateway never forwards what
protobuf's own parser (upb) would refuse, and refuses it as the decoder did
(``ConnectError`` ``invalid_argument`` "unmarshal message: Error parsing
message with type '...'", the Connect library's answer to a decode error; the
message is the parser's own, asked once the walk has found the bytes bad).
Checked, as upb checks them: every tag (a varint of at most 5 bytes, field
number not 0, wire type 0-5, no end-group at the top), every varint (at most
10 bytes; a length at most 5), fixed32/64 and length-delimited fields inside the bytes, groups
closed by their own field number, and, for the fields the message declares,
UTF-8 in strings, nested messages (recursively, at most ``MAX_DEPTH`` deep)
and packed repeated scalars. A known field sent with another wire type is an
unknown field, kept, as upb keeps it. ``tests/unit/services/test_wire_reader.py``
holds this to upb on mutated requests.

Bounded: one pass over at most the 64 KiB a request may hold (the Connect
application refuses longer bodies before this runs), depth at most
``MAX_DEPTH``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message

MAX_DEPTH = 100  # upb's default nesting limit (python protobuf's recursion limit)

VARINT, FIXED64, LEN, START_GROUP, END_GROUP, FIXED32 = 0, 1, 2, 3, 4, 5

# What a declared field's bytes must be, beyond the wire format (upb's checks).
_STRING, _MESSAGE, _PACKED_VARINT, _PACKED_FIXED32, _PACKED_FIXED64, _PLAIN = range(6)

_VARINT_TYPES = frozenset(
    {
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_BOOL,
        FieldDescriptor.TYPE_ENUM,
    }
)
_FIXED32_TYPES = frozenset(
    {FieldDescriptor.TYPE_FIXED32, FieldDescriptor.TYPE_SFIXED32, FieldDescriptor.TYPE_FLOAT}
)
_FIXED64_TYPES = frozenset(
    {FieldDescriptor.TYPE_FIXED64, FieldDescriptor.TYPE_SFIXED64, FieldDescriptor.TYPE_DOUBLE}
)


@dataclass
class _Schema:
    """A message's declared length-delimited fields: what each one's bytes must be."""

    full_name: str
    checks: dict[int, tuple[int, _Schema | None]] = field(default_factory=dict)
    cache: ClassVar[dict[str, _Schema]] = {}

    @classmethod
    def of(cls, descriptor: Descriptor) -> _Schema:
        schema = cls.cache.get(descriptor.full_name)
        if schema is not None:
            return schema
        schema = cls.cache[descriptor.full_name] = _Schema(descriptor.full_name)  # recursive types
        for f in descriptor.fields:
            if f.type == FieldDescriptor.TYPE_STRING:
                schema.checks[f.number] = (_STRING, None)
            elif f.type == FieldDescriptor.TYPE_MESSAGE:
                assert f.message_type is not None
                schema.checks[f.number] = (_MESSAGE, cls.of(f.message_type))
            elif f.is_repeated and f.type in _VARINT_TYPES:
                schema.checks[f.number] = (_PACKED_VARINT, None)
            elif f.is_repeated and f.type in _FIXED32_TYPES:
                schema.checks[f.number] = (_PACKED_FIXED32, None)
            elif f.is_repeated and f.type in _FIXED64_TYPES:
                schema.checks[f.number] = (_PACKED_FIXED64, None)
            # bytes, and a singular scalar sent length-delimited (an unknown field): as they are
        return schema


class Malformed(DecodeError):
    """Bytes protobuf's parser refuses (the decode path's error: ``invalid_argument``)."""


def _varint(data: bytes, at: int, end: int) -> tuple[int, int]:
    """The varint at ``at`` (at most 10 bytes, inside ``end``) and where the next thing starts."""
    value = 0
    shift = 0
    for i in range(at, min(at + 10, end)):
        byte = data[i]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value & 0xFFFF_FFFF_FFFF_FFFF, i + 1
        shift += 7
    raise Malformed("bad varint")


def _size(data: bytes, at: int, end: int) -> tuple[int, int]:
    """A length-delimited field's length (a varint of at most 5 bytes, as upb reads it)."""
    size, after = _varint(data, at, end)
    if after - at > 5:
        raise Malformed("bad length")
    return size, after


def _tag(data: bytes, at: int, end: int) -> tuple[int, int, int]:
    """Field number, wire type, and the next position, of the tag at ``at``."""
    tag, after = _varint(data, at, end)
    if after - at > 5 or tag > 0xFFFF_FFFF:
        raise Malformed("bad tag")
    number, wire_type = tag >> 3, tag & 7
    if number == 0 or wire_type > FIXED32:
        raise Malformed("bad tag")
    return number, wire_type, after


def _skip(data: bytes, wire_type: int, number: int, at: int, end: int, depth: int) -> int:
    """Past the value of an unknown field (a group up to its own end) starting at ``at``."""
    if wire_type == VARINT:
        return _varint(data, at, end)[1]
    if wire_type == FIXED64:
        at += 8
    elif wire_type == FIXED32:
        at += 4
    elif wire_type == LEN:
        size, at = _size(data, at, end)
        at += size
    elif wire_type == START_GROUP:
        if depth >= MAX_DEPTH:
            raise Malformed("too deep")
        while True:
            inner, inner_type, at = _tag(data, at, end)
            if inner_type == END_GROUP:
                if inner != number:
                    raise Malformed("group closed by another field")
                return at
            at = _skip(data, inner_type, inner, at, end, depth + 1)
    else:  # an end-group where none was open
        raise Malformed("unexpected end of group")
    if at > end:
        raise Malformed("truncated")
    return at


def _walk(
    data: bytes,
    at: int,
    end: int,
    schema: _Schema,
    depth: int,
    top: dict[tuple[int, int], int | bytes] | None = None,
) -> None:
    """Check the message in ``data[at:end]``; the last value of each top-level varint or
    length-delimited field into ``top``, by field number and wire type (the last one is the
    one protobuf keeps; with another wire type than its own a field is an unknown one)."""
    checks = schema.checks
    while at < end:
        tag = data[at]
        if tag < 0x80:  # a one-byte tag (fields 1-15): the usual case, read inline
            at += 1
            number, wire_type = tag >> 3, tag & 7
            if number == 0 or wire_type > FIXED32:
                raise Malformed("bad tag")
        else:
            number, wire_type, at = _tag(data, at, end)
        start = at
        if wire_type == LEN:
            size = data[at] if at < end else 0x80
            if size < 0x80:
                start = at + 1
            else:
                size, start = _size(data, at, end)
            at = start + size
            if at > end:
                raise Malformed("truncated")
            check = checks.get(number)
            if check is not None:
                kind, inner = check
                if kind == _STRING:
                    try:
                        data[start:at].decode("utf-8")
                    except UnicodeDecodeError:
                        raise Malformed("invalid UTF-8 in a string") from None
                elif kind == _MESSAGE:
                    if depth >= MAX_DEPTH:
                        raise Malformed("too deep")
                    assert inner is not None
                    _walk(data, start, at, inner, depth + 1)
                elif kind == _PACKED_VARINT:
                    i = start
                    while i < at:
                        i = _varint(data, i, at)[1]
                elif kind == _PACKED_FIXED32 and size % 4:
                    raise Malformed("bad packed fixed32")
                elif kind == _PACKED_FIXED64 and size % 8:
                    raise Malformed("bad packed fixed64")
            if top is not None:
                top[number, LEN] = data[start:at]
        elif wire_type == VARINT:
            value = data[at] if at < end else 0x80
            if value < 0x80:
                at += 1
            else:
                value, at = _varint(data, at, end)
            if top is not None:
                top[number, VARINT] = value
        else:
            at = _skip(data, wire_type, number, at, end, depth)


class RawRequest:
    """A binary request as the client sent it: forwarded as these bytes, never re-encoded.

    ``table_id`` and :meth:`has` read the top-level fields found by the strict walk
    (module docstring); :meth:`message` decodes the whole message, for what needs more.
    """

    __slots__ = ("_message", "_top", "data", "message_class")

    def __init__(self, data: bytes, message_class: type[Message]) -> None:
        descriptor: Any = message_class.DESCRIPTOR  # upb's Descriptor or protobuf's
        top: dict[tuple[int, int], int | bytes] = {}
        try:
            _walk(data, 0, len(data), _Schema.of(descriptor), 0, top)
        except Malformed:
            # Refused: in protobuf's own words (a refusal's cost only, never a valid call's).
            message_class.FromString(data)
            raise Malformed(f"Error parsing message with type '{descriptor.full_name}'") from None
        self.data = data
        self.message_class = message_class
        self._top = top
        self._message: Message | None = None

    def _field(self, name: str) -> int | bytes | None:
        """The last value of the declared field ``name``, if it came with its own wire type
        (with another one it is an unknown field to protobuf: not set)."""
        declared = self.message_class.DESCRIPTOR.fields_by_name.get(name)
        if declared is None:
            return None  # a message without that field: never set
        length_delimited = declared.type in (
            FieldDescriptor.TYPE_STRING,
            FieldDescriptor.TYPE_BYTES,
            FieldDescriptor.TYPE_MESSAGE,
        )
        return self._top.get((declared.number, LEN if length_delimited else VARINT))

    @property
    def table_id(self) -> str:
        """The request's ``table_id`` ("" if absent), read from the bytes."""
        value = self._field("table_id")
        return value.decode() if isinstance(value, bytes) else ""

    def has(self, name: str) -> bool:
        """Whether the field ``name`` (a top-level scalar, e.g. ``seat``) was sent."""
        return self._field(name) is not None

    def message(self) -> Message:
        """The request decoded (the bytes are valid: the walk checked them)."""
        if self._message is None:
            self._message = self.message_class.FromString(self.data)
        return self._message


Request = Message | RawRequest  # what the gateway's handlers are given


def table_id_of(request: Request) -> str:
    """A request's ``table_id`` (either kind; "" if it has none)."""
    if isinstance(request, RawRequest):
        return request.table_id
    return str(getattr(request, "table_id", ""))


def has_field(request: Request, name: str) -> bool:
    """Whether a request (either kind) has the field ``name`` set (one with presence)."""
    if isinstance(request, RawRequest):
        return request.has(name)
    return request.HasField(name)
