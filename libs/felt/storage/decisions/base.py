"""The decision queue port: the stream's name, the envelope, and the two roles.

Defined once here, read by the table service (which publishes), the AI
workers (which consume) and the benchmarks, so the two sides cannot disagree.

A request travels as one stream entry with the fields ``payload`` (a
serialized ``poker.v1.DecisionRequest``) and ``request_id`` (the same id in
clear, for operators reading the stream), and, when the table service traces,
``traceparent`` (and ``tracestate``): the W3C trace context of the request, so
one AI decision is one trace from the table service through the worker and
back (``felt.service.tracing``). Workers share a consumer group:
each entry goes to one of them, stays *pending* until acknowledged, and can
be claimed by another worker once idle too long (its holder crashed). A
request nobody can answer is *dead-lettered*: copied to ``<stream>:dead``
with the reason, atomically with its acknowledgement.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from felt.config.settings import FELT_AI_GROUP, FELT_AI_STREAM
from poker.v1 import ai_pb2

AI_STREAM = FELT_AI_STREAM.default
AI_STREAM_ENV = FELT_AI_STREAM.name
AI_GROUP = FELT_AI_GROUP.default
# Approximate cap on a stream's length (requests are answered in milliseconds; the cap
# only bounds memory if every worker is down for a long time).
STREAM_MAXLEN = 100_000

Fields = Mapping[bytes, bytes]


def ai_stream_from_env(env: Mapping[str, str] | None = None) -> str:
    """``$FELT_AI_STREAM`` if set (and not blank), else ``AI_STREAM``."""
    return FELT_AI_STREAM.read(env)


def dead_letter_stream(stream: str) -> str:
    """Where poison requests of ``stream`` go unless configured otherwise."""
    return f"{stream}:dead"


# The W3C trace-context headers a request may carry in its entry (``felt.service.tracing``).
TRACE_FIELDS = ("traceparent", "tracestate")
TRACE_FIELD_MAX = 512
"""The longest trace field written or read (W3C's own limit for ``tracestate``): a longer one
is left out, so no trace context can grow the entries, whoever set it."""


def envelope(
    request: ai_pb2.DecisionRequest, trace: Mapping[str, str] | None = None
) -> dict[str, bytes | str]:
    """The stream entry's fields for ``request``, with the publisher's trace context (the
    ``traceparent``/``tracestate`` headers of ``trace``) when tracing is on."""
    fields: dict[str, bytes | str] = {
        "payload": request.SerializeToString(),
        "request_id": request.request_id,
    }
    for name in TRACE_FIELDS:
        value = (trace or {}).get(name)
        if value and len(value) <= TRACE_FIELD_MAX:
            fields[name] = value
    return fields


def payload_of(fields: Fields) -> bytes | None:
    """The serialized request in an entry's fields (None: not there, which is poison)."""
    return fields.get(b"payload")


def trace_of(fields: Fields) -> dict[str, str]:
    """The trace context an entry carries (empty: none; a malformed one is ignored)."""
    found: dict[str, str] = {}
    for name in TRACE_FIELDS:
        value = fields.get(name.encode())
        if value is not None and len(value) <= TRACE_FIELD_MAX:
            with contextlib.suppress(UnicodeDecodeError):
                found[name] = value.decode("ascii")
    return found


class GroupMissing(Exception):
    """The stream or the consumer group was deleted (``NOGROUP``): create it again."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One delivered request: its stream id and fields (None: deleted before it was read)."""

    entry_id: bytes
    fields: Fields | None


@dataclass(frozen=True, slots=True)
class GroupStats:
    """The consumer group as a whole: entries never delivered (None: unknown), pending, members."""

    lag: int | None
    pending: int
    consumers: int


@runtime_checkable
class DecisionPublisher(Protocol):
    """The table service's side: ask the AI workers for a decision."""

    stream: str

    async def publish(
        self, request: ai_pb2.DecisionRequest, trace: Mapping[str, str] | None = None
    ) -> None:
        """Append ``request`` to the stream (in the envelope, with ``trace``'s context)."""
        ...


@runtime_checkable
class DecisionQueue(DecisionPublisher, Protocol):
    """A worker's view of the stream through its consumer group ``group``."""

    group: str
    dead_stream: str

    async def ensure_group(self) -> None:
        """Create the group (and the stream) if missing, reading only entries added from now."""
        ...

    async def read(self, consumer: str, count: int, block_ms: int) -> list[Entry]:
        """Up to ``count`` never-delivered entries, now ``consumer``'s; waits up to ``block_ms``
        for one. Raises :class:`GroupMissing` if the group is gone."""
        ...

    async def claim_idle(
        self, consumer: str, min_idle_ms: int, count: int, cursor: bytes | str
    ) -> tuple[bytes | str, list[Entry]]:
        """Take up to ``count`` entries pending for at least ``min_idle_ms`` (anyone's), scanning
        from ``cursor``; returns the cursor to continue from (``0-0``: from the start again)."""
        ...

    async def touch(self, consumer: str, entry_ids: list[bytes], min_idle_ms: int) -> None:
        """Reset the idle time of ``consumer``'s entries idle at least ``min_idle_ms`` (so that
        nobody claims them meanwhile); an entry claimed away since is left alone."""
        ...

    async def delivery_counts(self, consumer: str, entry_ids: list[bytes]) -> dict[bytes, int]:
        """How often each of ``consumer``'s pending entries has been delivered."""
        ...

    async def ack(self, entry_id: bytes) -> None:
        """The entry is done: no longer pending."""
        ...

    async def dead_letter(
        self, consumer: str, entry_id: bytes, fields: Fields, reason: str, failed_at: str
    ) -> None:
        """Copy the entry to the dead-letter stream with why, who and when, and acknowledge it,
        both or neither."""
        ...

    async def leave(self, consumer: str) -> bool:
        """Remove ``consumer`` from the group if it holds nothing (True: removed)."""
        ...

    async def stats(self) -> GroupStats | None:
        """The group's lag, pending count and size (None: no such group)."""
        ...

    async def prune(self, keep: str, idle_ms: int) -> list[str]:
        """Remove consumers other than ``keep`` that hold nothing and were idle ``idle_ms``."""
        ...

    async def trim_acknowledged(self) -> int:
        """Drop the entries every consumer is done with: delivered and acknowledged.

        Everything below the group's oldest pending entry (or, with none
        pending, up to its last delivered one) goes; nothing pending or not yet
        delivered ever does. Returns how many entries went (0 without a group).
        """
        ...
