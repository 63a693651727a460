"""The message codecs the gateway speaks: binary protobuf and compact proto JSON.

An answer from a service reaches the gateway as bytes, and the gateway hands
it on as :class:`Raw` (the bytes and their message class), never decoded
unless a client wants JSON:

* binary (``application/proto``, ``connect+proto``, gRPC-Web): the service's
  bytes are written as they came;
* JSON: the canonical proto3 mapping (camelCase names, int64 as strings,
  enums by name), written without whitespace (``connectrpc.compat``'s codec
  pretty-prints). ``json_format`` costs far more than the rest of a call (it
  walks the message in Python), so the JSON of recent answers is kept by
  their bytes: the watchers of a table who may see the same thing (all its
  spectators) are sent one event's JSON made once, not once per stream.

Requests: a binary one to the table service (:class:`RawBinaryCodec`) is
parsed once by protobuf's C parser (upb), which validates it as the decode
path always did and gives the ``table_id`` it is routed by, and is forwarded
as the client's bytes, never encoded again (``services.gateway.raw_request``,
issue #23). The lobby's and the history service's binary requests,
whose fields the gateway reads more of (the session cookie, the operator's
view), and every JSON request are decoded; reading JSON ignores fields the
gateway does not know, as the Connect protocol expects of a server so that
newer clients keep working against it.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any, TypeVar

from connectrpc.codec import Codec
from google.protobuf import json_format
from google.protobuf.message import Message

from services.gateway.raw_request import RawRequest

M = TypeVar("M", bound=Message)

JSON_CACHE_ENTRIES = 512


class Raw:
    """A service's answer as it came over gRPC: its serialized bytes and its type."""

    __slots__ = ("data", "message_class")

    def __init__(self, data: bytes, message_class: type[Message]) -> None:
        self.data = data
        self.message_class = message_class

    def message(self) -> Message:
        return self.message_class.FromString(self.data)


def raw_reader(message_class: type[Message]) -> Any:
    """A gRPC response deserializer that keeps the bytes (see :class:`Raw`)."""

    def read(data: bytes) -> Raw:
        return Raw(data, message_class)

    return read


class BinaryCodec(Codec[Any, M]):
    """Binary protobuf; an answer's bytes as they came."""

    def name(self) -> str:
        return "proto"

    def encode(self, message: Raw | Message) -> bytes:
        if isinstance(message, Raw):
            return message.data
        return message.SerializeToString()

    def decode(self, data: bytes | bytearray, message_class: type[M]) -> M:
        return message_class.FromString(bytes(data))


class RawBinaryCodec(BinaryCodec[M]):
    """Binary protobuf whose requests keep their bytes (:class:`RawRequest`): parsed by upb
    (a refusal is the decode path's ``invalid_argument``), forwarded as they came."""

    def decode(self, data: bytes | bytearray, message_class: type[M]) -> Any:
        return RawRequest(bytes(data), message_class)


class CompactJsonCodec(Codec[Any, M]):
    """Proto JSON without whitespace; recent answers' JSON kept by their bytes."""

    def __init__(self, cache_entries: int = JSON_CACHE_ENTRIES) -> None:
        self.cache_entries = cache_entries
        self._cache: OrderedDict[tuple[type[Message], bytes], bytes] = OrderedDict()

    def name(self) -> str:
        return "json"

    def encode(self, message: Raw | Message) -> bytes:
        if not isinstance(message, Raw):
            return _json(message)
        key = (message.message_class, message.data)
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        encoded = _json(message.message())
        self._cache[key] = encoded
        if len(self._cache) > self.cache_entries:
            self._cache.popitem(last=False)
        return encoded

    def decode(self, data: bytes | bytearray, message_class: type[M]) -> M:
        message = message_class()
        json_format.Parse(bytes(data), message, ignore_unknown_fields=True)
        return message


def _json(message: Message) -> bytes:
    value = json_format.MessageToDict(message)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def codecs(raw_requests: bool = False) -> list[Codec[Any, Any]]:
    """The codecs of one application (each keeps its own JSON cache); binary requests kept
    as bytes (:class:`RawBinaryCodec`) if ``raw_requests``."""
    return [RawBinaryCodec() if raw_requests else BinaryCodec(), CompactJsonCodec()]
