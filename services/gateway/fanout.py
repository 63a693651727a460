"""One upstream ``WatchTable`` stream per table, shared by all of its spectators.

Every spectator of a table sees the same items, so the gateway opens one
upstream stream per table (a :class:`SharedFeed`) and fans each item out to
a bounded buffer per watcher, instead of one upstream stream per watcher
(which cost the table service a redaction, an encoding and a send per event
per watcher). Seat watchers see their own cards and keep their own stream;
they never come here.

The stream contract is gap-free (a snapshot at S, then S+1, ...), and the
gateway cannot make a snapshot itself (it knows no rules). So a spectator
starts with a short upstream call of its own, with its own request (a
snapshot, or a resume after ``from_sequence``), and is handed over to the
shared feed once that call has reached the feed's position: from then on it
is sent the feed's events after the last one its own call gave it, and its
own call is closed. Its buffer is bounded (``buffer`` items): a watcher that
falls that far behind is dropped, its buffer freed, and its stream ends
``RESOURCE_EXHAUSTED`` ``WATCH_TOO_SLOW`` (the table service's status) when
its handler runs again; the feed and the others go on. An upstream error
ends every watcher's stream with that error; the feed closes with its last
watcher.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from connectrpc.code import Code

from poker.v1 import table_service_pb2 as pb
from poker.v1.reason_pb2 import Reason
from services.gateway.codecs import Raw
from services.gateway.errors import refused
from services.gateway.raw_request import Request, message_of, table_id_of

TOO_SLOW = Reason.WATCH_TOO_SLOW

Metadata = tuple[tuple[str, str], ...]
# Opens an upstream WatchTable call (with the forwarder's routing and retries).
Relay = Callable[[Request, Metadata], AsyncIterator[Raw]]


def sequence_of(raw: Raw) -> int:
    """The sequence an item brings its watcher to (an event's, or its snapshot's)."""
    item = pb.WatchTableResponse.FromString(raw.data)
    if item.WhichOneof("item") == "snapshot":
        return int(item.snapshot.table.sequence)
    return int(item.event.sequence)


def wants_view_changes(request: Request) -> bool:
    """Whether a watch request asked for ``view_changes`` (its feed must carry them)."""
    message = message_of(request)
    return bool(getattr(message, "view_changes", False))


class _Watcher:
    """One spectator's place at a feed: its buffer, and how to wake it."""

    __slots__ = ("dropped", "error", "items", "joined", "wake")

    def __init__(self) -> None:
        self.items: deque[tuple[int, Raw]] = deque()
        self.wake = asyncio.Event()
        self.joined = False
        self.dropped = False
        self.error: BaseException | None = None


@dataclass(eq=False)
class SharedFeed:
    """One table's upstream stream, handed to every watcher's buffer."""

    table_id: str
    buffer: int
    view_changes: bool = False  # its items carry ViewChange (a feed per choice, per table)
    position: int | None = None  # the last sequence the feed has had (None: not started)
    watchers: set[_Watcher] = field(default_factory=set)
    task: asyncio.Task[None] | None = None

    async def run(self, upstream: AsyncIterator[Raw]) -> None:
        try:
            async for raw in upstream:
                sequence = sequence_of(raw)
                first = self.position is None
                self.position = sequence
                for watcher in list(self.watchers):
                    if not first and watcher.joined:
                        if len(watcher.items) >= self.buffer:
                            watcher.dropped = True  # too slow: freed, the others go on
                            watcher.items.clear()
                            self.watchers.discard(watcher)
                        else:
                            watcher.items.append((sequence, raw))
                    watcher.wake.set()
            raise refused(
                Code.UNAVAILABLE, "the table's stream ended; watch again", Reason.STREAM_ENDED
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the upstream's error (already a ConnectError): to everyone
            for watcher in self.watchers:
                watcher.error = exc
                watcher.wake.set()
            self.watchers.clear()


class SharedWatches:
    """The gateway's shared feeds, one per watched table and ``view_changes`` choice (a
    spectator that asked for them must keep getting them after its catch-up)."""

    def __init__(self, relay: Relay, buffer: int = 512) -> None:
        self.relay = relay
        self.buffer = buffer
        self.feeds: dict[tuple[str, bool], SharedFeed] = {}

    def _feed(self, table_id: str, view_changes: bool, metadata: Metadata) -> SharedFeed:
        feed = self.feeds.get((table_id, view_changes))
        if feed is None or feed.task is None or feed.task.done():
            feed = SharedFeed(table_id, self.buffer, view_changes)
            # Counted at the table service as the client who opened it (x-forwarded-for), not
            # as the gateway: one address's cap there must not bound how many tables it shows.
            forwarded = tuple(m for m in metadata if m[0] == "x-forwarded-for")
            ask = pb.WatchTableRequest(table_id=table_id, view_changes=view_changes)
            upstream = self.relay(ask, forwarded)
            feed.task = asyncio.get_running_loop().create_task(feed.run(upstream))
            self.feeds[(table_id, view_changes)] = feed
        return feed

    def _leave(self, feed: SharedFeed, watcher: _Watcher) -> None:
        feed.watchers.discard(watcher)
        if feed.watchers:
            return
        key = (feed.table_id, feed.view_changes)
        if self.feeds.get(key) is feed:
            del self.feeds[key]
        if feed.task is not None and not feed.task.done():
            feed.task.cancel()

    async def watch(self, request: Request, metadata: Metadata) -> AsyncIterator[Raw]:
        """A spectator's stream: its own call until it reaches the feed, then the feed."""
        feed = self._feed(table_id_of(request), wants_view_changes(request), metadata)
        watcher = _Watcher()
        feed.watchers.add(watcher)
        own = self.relay(request, metadata)
        own_items: deque[tuple[int, Raw]] = deque()
        room = asyncio.Event()
        own_done: list[BaseException | None] = []

        async def read_own() -> None:
            try:
                async for raw in own:
                    own_items.append((sequence_of(raw), raw))
                    watcher.wake.set()
                    while len(own_items) >= self.buffer:  # paced by the client
                        room.clear()
                        await room.wait()
                own_done.append(None)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                own_done.append(exc)
            watcher.wake.set()

        reader = asyncio.get_running_loop().create_task(read_own())
        sent: int | None = None
        try:
            while True:
                position = feed.position
                if (
                    sent is not None
                    and position is not None
                    and position - sent <= self.buffer // 2
                ):
                    # Near enough the feed: buffer its events from here on (no await between
                    # reading its position and joining, so none can fall in between).
                    watcher.joined = True
                    joined_at = position
                    break
                if own_items:
                    sequence, raw = own_items.popleft()
                    room.set()
                    yield raw
                    sent = sequence
                    continue
                _check(watcher)
                if own_done:
                    if own_done[0] is not None:
                        raise own_done[0]
                    return
                watcher.wake.clear()
                await watcher.wake.wait()
            # Until the own call has reached where the watcher joined, it goes on.
            while sent is not None and sent < joined_at:
                while own_items and sent < joined_at:
                    sequence, raw = own_items.popleft()
                    room.set()
                    yield raw
                    sent = sequence
                if sent >= joined_at:
                    break
                _check(watcher)
                if own_done:
                    if own_done[0] is not None:
                        raise own_done[0]
                    raise refused(
                        Code.UNAVAILABLE,
                        "the table's stream ended; watch again",
                        Reason.STREAM_ENDED,
                    )
                watcher.wake.clear()
                await watcher.wake.wait()
            reader.cancel()
            own_items.clear()
            while True:
                while watcher.items:
                    sequence, raw = watcher.items.popleft()
                    if sent is not None and sequence <= sent:
                        continue  # its own call sent it already
                    yield raw
                    sent = sequence
                _check(watcher)
                watcher.wake.clear()
                await watcher.wake.wait()
        finally:
            reader.cancel()
            with contextlib.suppress(BaseException):
                await reader
            with contextlib.suppress(BaseException):
                await own.aclose()  # type: ignore[attr-defined]
            self._leave(feed, watcher)


def _check(watcher: _Watcher) -> None:
    if watcher.dropped:
        raise refused(
            Code.RESOURCE_EXHAUSTED,
            "the client read the table's events too slowly; watch again from the last one",
            TOO_SLOW,
        )
    if watcher.error is not None:
        raise watcher.error
