"""The event store's codec: an event and its envelope <-> ``poker.events.v1.StoredEvent`` bytes.

What is stored is the message ``felt.messages.events`` builds (the table that
describes each event once, both ways); this module only turns it into the
deterministic bytes a stream entry holds and back, refusing bytes that are not
such a message with :class:`~felt.messages.values.CodecError`.
"""

from __future__ import annotations

from google.protobuf.message import DecodeError
from google.protobuf.timestamp_pb2 import Timestamp

from felt.core.table.events import AnyEvent
from felt.messages.events import EventMeta, fill_stored, from_stored_event, to_stored_event
from felt.messages.values import CodecError
from poker.events.v1 import events_pb2 as pb

__all__ = ["decode_event", "encode_event", "encode_stored"]


def encode_stored(
    event: AnyEvent,
    table_id: str,
    sequence: int,
    request_key: str,
    hand_id: str,
    recorded_at: Timestamp | None,
) -> bytes:
    """``encode_event`` with the envelope's fields given one by one (the append's hot path)."""
    stored = pb.StoredEvent(
        sequence=sequence, table_id=table_id, hand_id=hand_id, request_key=request_key
    )
    if recorded_at is not None:
        stored.recorded_at.CopyFrom(recorded_at)
    fill_stored(stored, event)
    return stored.SerializeToString(deterministic=True)


def encode_event(event: AnyEvent, meta: EventMeta) -> bytes:
    """Serialize ``event`` with its envelope (deterministic bytes)."""
    return to_stored_event(event, meta).SerializeToString(deterministic=True)


def decode_event(data: bytes) -> tuple[AnyEvent, EventMeta]:
    """The event and envelope serialized by :func:`encode_event`."""
    stored = pb.StoredEvent()
    try:
        stored.ParseFromString(data)
    except DecodeError as e:
        raise CodecError(f"not a poker.events.v1.StoredEvent: {e}") from e
    return from_stored_event(stored)
