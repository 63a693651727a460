"""The message codecs the gateway speaks: binary protobuf and compact proto JSON.

``connectrpc.compat``'s JSON codec pretty-prints (``MessageToJson``'s default
indent of 2), which makes a table view about twice its size and slower to
write; this one writes the same JSON (the canonical proto3 mapping: camelCase
names, int64 as strings, enums by name) without whitespace. Reading ignores
fields the gateway does not know, as the Connect protocol expects of a server
so that newer clients keep working against it.
"""

from __future__ import annotations

import json
from typing import TypeVar

from connectrpc.codec import Codec
from connectrpc.compat import google_protobuf_binary_codec
from google.protobuf import json_format
from google.protobuf.message import Message

M = TypeVar("M", bound=Message)


class CompactJsonCodec(Codec[Message, M]):
    """Proto JSON without whitespace."""

    def name(self) -> str:
        return "json"

    def encode(self, message: Message) -> bytes:
        value = json_format.MessageToDict(message)
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()

    def decode(self, data: bytes | bytearray, message_class: type[M]) -> M:
        message = message_class()
        json_format.Parse(bytes(data), message, ignore_unknown_fields=True)
        return message


def codecs() -> list[Codec[Message, Message]]:
    return [google_protobuf_binary_codec(), CompactJsonCodec()]
