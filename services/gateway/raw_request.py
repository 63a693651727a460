"""A binary request to the table service: parsed once to check and route it, forwarded as
the client's bytes.

Why (issue #23): the gateway used to decode a binary request and encode it
again to forward it. Now :class:`RawRequest` keeps both the bytes and the
message protobuf's own C parser (upb, ``message_class.FromString``) made of
them: the parse validates the request exactly as the decode path always did
(a refusal is its ``DecodeError``, which Connect answers ``invalid_argument``
"unmarshal message: Error parsing message with type '...'"), the gateway reads
``table_id`` and ``seat`` presence from the parsed message (a repeated field
is read as protobuf reads it: its last occurrence, as the service will), and
upstream gets ``data`` unchanged, never re-encoded.

A hand-written walk over the wire format once did this instead; a hostile
review (H1-M3) found it 200-500x slower than upb on crafted bodies (before
any authentication, on the event loop), holding ~2 MB per 64 KiB request, and
slower than upb even on ordinary ones. upb parses at most the 64 KiB the
Connect application admits (it refuses longer bodies before this runs), its
nesting bounded by its own depth limit.
"""

from __future__ import annotations

from google.protobuf.message import Message


class RawRequest:
    """A binary request: its ``message`` (parsed, so valid) and the client's ``data``.

    ``data`` is what is forwarded; ``message`` is what the gateway reads. Construction
    raises protobuf's ``DecodeError`` for bytes upb refuses.
    """

    __slots__ = ("data", "message")

    def __init__(self, data: bytes, message_class: type[Message]) -> None:
        self.message = message_class.FromString(data)
        self.data = data


Request = Message | RawRequest  # what the gateway's handlers are given


def message_of(request: Request) -> Message:
    """A request's parsed message (either kind)."""
    return request.message if isinstance(request, RawRequest) else request


def table_id_of(request: Request) -> str:
    """A request's ``table_id`` (either kind; "" if it has none)."""
    return str(getattr(message_of(request), "table_id", ""))


def has_field(request: Request, name: str) -> bool:
    """Whether a request (either kind) has the field ``name`` set (one with presence)."""
    message = message_of(request)
    return name in message.DESCRIPTOR.fields_by_name and message.HasField(name)
