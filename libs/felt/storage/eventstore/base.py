"""The event store contract: types, errors, key names and the ``EventStore`` protocol.

A table's events form one append-only log. Each event gets a *sequence*: 1 for
the first, then consecutive integers, never reused. The table's *version* is
its last sequence (0 for a table with no events). Writers append with the
version they decided on (``expected_version``), so a stale writer (a table
service that lost its lease, a retry racing a newer action) is refused with
:class:`VersionConflict` instead of forking the log.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """One stored event: its sequence, the serialized event, and the request that wrote it."""

    sequence: int
    payload: bytes
    request_id: str | None = None


@dataclass(frozen=True, slots=True)
class AppendResult:
    """What an append did (or, for a retried request id, what the original append did).

    The events got the sequences ``first_sequence..last_sequence`` inclusive;
    ``response`` is the blob the original caller supplied, and ``duplicate``
    says this answer is a replay of an earlier append with the same request id
    (nothing was appended this time).
    """

    first_sequence: int
    last_sequence: int
    response: bytes = b""
    duplicate: bool = False

    @property
    def sequences(self) -> range:
        return range(self.first_sequence, self.last_sequence + 1)


class EventStoreError(Exception):
    """Base class of event store errors."""


class VersionConflict(EventStoreError):
    """The table's version was ``actual``, not the ``expected`` version the caller decided on."""

    def __init__(self, expected: int, actual: int) -> None:
        super().__init__(f"expected table version {expected}, but it is {actual}")
        self.expected = expected
        self.actual = actual


class EventsTrimmed(EventStoreError):
    """Events after ``after_sequence`` were asked for, but the oldest kept is ``first_available``.

    Events are trimmed only once archived; a reader that gets this must start
    from a snapshot (or the archive) instead.
    """

    def __init__(self, after_sequence: int, first_available: int) -> None:
        super().__init__(
            f"events after {after_sequence} were trimmed; the oldest retained is {first_available}"
        )
        self.after_sequence = after_sequence
        self.first_available = first_available


def check_table_id(table_id: str) -> str:
    """Refuse ids that would break key names (braces end the Redis Cluster hash tag)."""
    if not table_id or "{" in table_id or "}" in table_id:
        raise ValueError(f"invalid table id {table_id!r}: must be non-empty, without braces")
    return table_id


def events_key(table_id: str) -> str:
    """The table's event stream. ``{table_id}`` is a hash tag: all table keys share a slot."""
    return f"table:{{{check_table_id(table_id)}}}:events"


def meta_key(table_id: str) -> str:
    """Hash with the table's ``version`` (last sequence) and ``snapshot`` (its latest's)."""
    return f"table:{{{check_table_id(table_id)}}}:meta"


def requests_key(table_id: str) -> str:
    """Hash: request id -> ``b"<first>:<last>:<response>"`` (for idempotent retries)."""
    return f"table:{{{check_table_id(table_id)}}}:requests"


def archived_key(table_id: str) -> str:
    """String: the last sequence of the table archived to PostgreSQL (decimal, only raised).

    Written by the projector once a table's hands are committed to the archive;
    the table service trims the stream only below it (and below a snapshot).
    """
    return f"table:{{{check_table_id(table_id)}}}:archived"


def lease_key(table_id: str) -> str:
    """String holding the owner of the table's lease, with the lease's TTL."""
    return f"table:{{{check_table_id(table_id)}}}:lease"


@runtime_checkable
class TableLeases(Protocol):
    """Who runs a table: one owner at a time, for a time-to-live the owner keeps renewing.

    A port of its own, because the service layer needs ownership and the log
    for different reasons (``TableManager`` takes, renews and releases leases;
    ``TableRuntime`` appends and reads) and a test or another backend may
    provide one without the other. It is still *implemented* by the event
    stores, on purpose: a lease is per table and lives next to the table's log
    (``table:{id}:lease`` shares the hash slot of ``table:{id}:events``, so one
    Redis Cluster node holds both, and an append could be fenced by the lease in
    the same script one day), and the in-memory store gives service tests one
    object with the same behaviour. So ``EventStore`` extends this protocol,
    and whoever needs only leases asks for a ``TableLeases``. Its contract is
    ``tests/integration/test_lease_contract.py``, run against both stores.
    """

    async def acquire_lease(self, table_id: str, owner: str, ttl_ms: int) -> bool:
        """Take the table's lease for ``ttl_ms`` if it is free or already ``owner``'s."""
        ...

    async def renew_lease(self, table_id: str, owner: str, ttl_ms: int) -> bool:
        """Extend ``owner``'s lease to ``ttl_ms`` from now; False if ``owner`` does not hold it."""
        ...

    async def release_lease(self, table_id: str, owner: str) -> bool:
        """Give up ``owner``'s lease; False (and no change) if ``owner`` does not hold it."""
        ...

    async def lease_owner(self, table_id: str) -> str | None:
        """Who holds the table's lease now, if anyone."""
        ...


@runtime_checkable
class EventStore(TableLeases, Protocol):
    """An append-only, versioned, idempotent log of events per table, plus its lease."""

    async def append(
        self,
        table_id: str,
        events: Sequence[bytes],
        expected_version: int,
        request_id: str | None = None,
        response: bytes = b"",
        *,
        snapshot_at: int = 0,
    ) -> AppendResult:
        """Atomically append ``events`` if the table's version is ``expected_version``.

        They get sequences ``expected_version + 1 ...``. ``snapshot_at`` (0:
        none) is the sequence of a table snapshot among them: it becomes the
        table's latest snapshot (:meth:`latest_snapshot`) in the same step. With a ``request_id``
        (empty means none) that was already used on this table, nothing is
        appended and the original :class:`AppendResult` (with its ``response``)
        is returned with ``duplicate=True``, whatever the version now is.
        Otherwise a version mismatch raises :class:`VersionConflict`.
        ``events`` must not be empty.
        """
        ...

    async def read(
        self, table_id: str, from_sequence: int = 0, count: int | None = None
    ) -> list[StoredRecord]:
        """Events with sequence > ``from_sequence``, oldest first, at most ``count`` of them.

        Raises :class:`EventsTrimmed` if some of them are no longer retained.
        """
        ...

    def subscribe(
        self, table_id: str, from_sequence: int = 0, *, block_ms: int = 5000
    ) -> AsyncIterator[StoredRecord]:
        """Every event with sequence > ``from_sequence``, in order, then each new one as appended.

        Never skips or repeats; waits (indefinitely) for new events. Raises
        :class:`EventsTrimmed` if the next event is no longer retained.
        ``block_ms`` bounds each server-side wait (the iterator just waits again).
        """
        ...

    async def version(self, table_id: str) -> int:
        """The table's last sequence (0 if it has no events)."""
        ...

    async def trim(self, table_id: str, up_to_sequence: int) -> int:
        """Drop archived events with sequence <= ``up_to_sequence`` and their request-id records.

        The kept records (``felt.storage.idempotency.KEPT_PREFIX``) stay: the lobby
        retries those calls until it hears an answer, however late.

        Returns how many events were dropped, at most :data:`TRIM_PAGE` (the oldest;
        call again for the rest). The version is unchanged.
        Unconditional: the table service trims with :meth:`trim_archived`.
        """
        ...

    async def latest_snapshot(self, table_id: str) -> int:
        """The sequence of the table's latest snapshot (0 if it has none)."""
        ...

    async def read_tail(self, table_id: str) -> list[StoredRecord]:
        """The events from the table's latest snapshot on (all of them without one).

        What a table is rebuilt from: the snapshot first, then every event
        after it. A trim racing the read (below a snapshot written meanwhile)
        makes it start again from the newer snapshot, so it never returns a
        stream with a hole; :class:`EventsTrimmed` only if that keeps happening.
        """
        ...

    async def archived(self, table_id: str) -> int:
        """The table's archived position (``archived_key``; 0 if nothing is archived)."""
        ...

    async def record_archived(self, table_id: str, sequence: int) -> int:
        """Raise the archived position to ``sequence`` (never lowers it); returns it.

        The projector's write (tests stand in for it until it exists).
        """
        ...

    async def trim_archived(self, table_id: str, before_snapshot: int) -> int:
        """Drop the events before snapshot ``before_snapshot`` that are archived, atomically.

        Drops every event with a sequence below ``before_snapshot``, below the
        latest snapshot, and at or below the archived position, with their
        request-id records (a retry of those requests is then a new request).
        All three are compared in one step, so a projector that has not archived
        an event yet never loses it, and a rebuild always finds its snapshot.
        Returns how many events were dropped, at most :data:`TRIM_PAGE` (the oldest;
        the next call drops more); the version is unchanged.
        """
        ...

    async def request_result(self, table_id: str, request_id: str) -> AppendResult | None:
        """The recorded result of an earlier append with ``request_id`` (``duplicate=True``).

        Lets a service answer a retried request before deciding anything, since
        deciding again on the newer state would refuse what already succeeded.
        """
        ...


def check_append_args(events: Sequence[bytes], expected_version: int) -> None:
    if not events:
        raise ValueError("append needs at least one event")
    if expected_version < 0:
        raise ValueError(f"expected_version must be >= 0, not {expected_version}")


def check_snapshot_at(snapshot_at: int, expected_version: int, count: int) -> None:
    if snapshot_at and not expected_version < snapshot_at <= expected_version + count:
        raise ValueError(f"snapshot_at {snapshot_at} is not one of the appended sequences")


TRIM_PAGE = 10_000
"""The most entries one trim drops. A trim is one Lua script, and Redis runs nothing else
(no table's append) while it does: a table whose projector was away for a day holds
millions of entries, which one unbounded script would spend seconds on. The table service
trims at every snapshot, so it catches up by a page a hand."""

_TAIL_ATTEMPTS = 5


async def read_tail_of(store: EventStore, table_id: str) -> list[StoredRecord]:
    """``EventStore.read_tail`` on the port's own reads (both adapters share it).

    Trims only ever drop events below the latest snapshot, so reading from the
    latest snapshot is safe unless a newer one is written and trimmed below
    meanwhile; the read then finds a hole (``EventsTrimmed``) and starts over
    from that newer snapshot.
    """
    for attempt in range(_TAIL_ATTEMPTS):
        snapshot = await store.latest_snapshot(table_id)
        try:
            return await store.read(table_id, max(0, snapshot - 1))
        except EventsTrimmed:
            if attempt == _TAIL_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def check_ttl(ttl_ms: int) -> None:
    if ttl_ms <= 0:
        raise ValueError(f"ttl_ms must be positive, not {ttl_ms}")
