"""``WatchTable`` with limits: admission caps, one shared tail per table, bounded replays.

Each watcher used to run its own ``XREAD BLOCK`` and read its whole history in
one list, so a few hundred anonymous watchers from sequence 1 held hundreds of
Redis connections and megabytes each, and their catch-up reads queued ahead
of the live tables' appends. Here:

* **Admission.** At most ``max_streams`` watch streams in the service, of
  which spectators may use all but ``seat_reserve``, and ``max_per_peer`` per
  client address (however many connections it opens); past a cap the call is
  ``RESOURCE_EXHAUSTED`` before anything is read.
* **One tail per table.** A :class:`TableFeed` follows the table's stream
  once (one blocking read, each record decoded once) and hands every record
  to its watchers' buffers. The feed stops when its last watcher leaves.
* **Bounded buffers.** A watcher's buffer holds at most ``buffer`` records.
  A watcher that falls that far behind (its client reads too slowly) is
  dropped: its buffer is freed at once, its call ends ``RESOURCE_EXHAUSTED``
  (ended from outside the handler if that is stuck writing to a client that
  does not read), and the feed and the other watchers go on untouched.
* **What the rules made of each event.** A feed started where the table's runtime
  is (the usual case) holds the table's state and folds every record into it
  once for all of its watchers (:class:`Folded`): each watcher's event then
  carries its ``ViewChange`` (whose turn, the deadline, the pots, the table's
  state, and the seat to act its legal actions), so a client folds its view from
  the stream and asks ``GetTableView`` only on connect, resume or a gap. Records
  replayed from history carry none (the client asks for a view then).
* **History in pages.** A watcher that starts behind the feed reads the gap
  in pages of ``page`` records, at most ``replays`` watchers at a time (a
  semaphore taken per page, never while writing to the client), yielding to
  the event loop between pages, and joins the feed once caught up. A replay
  holds one page in memory, so memory goes back down when watchers leave.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime

import structlog

from felt.config import settings as S
from felt.config.settings import environment
from felt.core.table.aggregate import TableState, apply_event
from felt.core.table.events import AnyEvent
from felt.messages.events import EventMeta
from felt.service.tasks import ended_within
from felt.storage.eventstore import EventStore, EventsTrimmed
from felt.storage.eventstore.codec import decode_event
from felt.wire.clients import counted_peer
from felt.wire.convert import fill_view_change
from poker.v1 import table_service_pb2 as pb
from services.table.stream import deadline_of, starts_turn

log = structlog.get_logger("felt.table")

# How long stopping waits for the feeds' tasks to end (``WatchHub.aclose``).
CLOSE_WAIT_S = 2.0


@dataclass(frozen=True, slots=True)
class WatchLimits:
    """The limits of ``WatchTable`` (environment: ``FELT_WATCH_*``, see :meth:`from_env`)."""

    max_streams: int = S.FELT_WATCH_MAX_STREAMS.default  # watch streams in this service
    # watch streams per client address (all its connections)
    max_per_peer: int = S.FELT_WATCH_MAX_PER_PEER.default
    # of max_streams, kept for seats' own streams (not spectators)
    seat_reserve: int = S.FELT_WATCH_SEAT_RESERVE.default
    # records a watcher may fall behind its table before it is dropped
    buffer: int = S.FELT_WATCH_BUFFER.default
    replays: int = S.FELT_WATCH_REPLAYS.default  # watchers reading history at the same time
    page: int = S.FELT_WATCH_PAGE.default  # records per history read

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> WatchLimits:
        """``FELT_WATCH_MAX_STREAMS``, ``FELT_WATCH_MAX_PER_PEER``, ``FELT_WATCH_BUFFER``,
        ``FELT_WATCH_REPLAYS``, ``FELT_WATCH_PAGE``; unset ones keep their defaults."""
        return cls(
            max_streams=S.FELT_WATCH_MAX_STREAMS.read(env),
            max_per_peer=S.FELT_WATCH_MAX_PER_PEER.read(env),
            seat_reserve=S.FELT_WATCH_SEAT_RESERVE.read(env),
            buffer=S.FELT_WATCH_BUFFER.read(env),
            replays=S.FELT_WATCH_REPLAYS.read(env),
            page=S.FELT_WATCH_PAGE.read(env),
        )


class WatchClosed(ConnectionError):
    """The table service is stopping (an ``OSError``: the call ends ``UNAVAILABLE``)."""


class FellBehind(Exception):
    """The watcher's client read too slowly: it was dropped."""

    def __init__(self, last_sent: int) -> None:
        super().__init__(last_sent)
        self.last_sent = last_sent


class Folded:
    """The table's state after one record, and when its seat to act is timed out then.

    Shared by every watcher of the feed: the spectators' ``ViewChange`` is built once, on
    first use; only the stream of the seat to act gets one of its own (its legal actions).
    """

    __slots__ = ("_shared", "deadline", "state")

    def __init__(self, state: TableState, deadline: datetime | None) -> None:
        self.state = state
        self.deadline = deadline
        self._shared: pb.ViewChange | None = None

    def change_for(self, viewer: int | None) -> pb.ViewChange:
        """The ``ViewChange`` of this record for ``viewer`` (None: a spectator)."""
        hand = self.state.hand
        if viewer is not None and hand is not None and hand.actor_seat == viewer:
            own = pb.ViewChange()
            fill_view_change(own, self.state, viewer, self.deadline)
            return own
        if self._shared is None:
            self._shared = pb.ViewChange()
            fill_view_change(self._shared, self.state, None, self.deadline)
        return self._shared


# One decoded record, with the table's state after it when the feed holds that (None for
# records replayed from history), and whether it is the live feed's, the one decoding every
# watcher of the table is handed (True), or a replay's own (False: no other stream sees it).
Item = tuple[int, AnyEvent, EventMeta, Folded | None, bool]

# Where the table's runtime is: its version, its state then and when its turn started.
Origin = Callable[[], tuple[int, TableState | None, datetime | None]]


# Ends a watch call from outside its handler (its status to the client; see _Subscriber.drop).
EndCall = Callable[[], Awaitable[None]]
_ending: set[asyncio.Task[None]] = set()  # end-call tasks in flight (a reference each)


class _Subscriber:
    """One watcher's place at a feed: its buffer, and how to wake or drop it."""

    __slots__ = ("dropped", "end_call", "ended", "error", "items", "limit", "waiting", "wake")

    def __init__(self, limit: int, end_call: EndCall | None) -> None:
        self.items: deque[Item] = deque()
        self.wake = asyncio.Event()
        self.dropped = False
        self.ended = False
        self.error: BaseException | None = None
        self.waiting = False
        self.limit = limit
        self.end_call = end_call

    def push(self, item: Item) -> bool:
        """Buffer ``item``; False (and dropped) if the buffer is full."""
        if len(self.items) >= self.limit:
            self.drop()
            return False
        self.items.append(item)
        self.wake.set()
        return True

    def drop(self) -> None:
        self.dropped = True
        self.items.clear()  # the memory goes back at once
        self.wake.set()
        if not self.waiting and self.end_call is not None:
            # Not waiting for records: stuck writing to a client that does not read. Its
            # handler cannot end the call, so end it from here: gRPC sends the status at
            # once (a cancelled handler task would leave the call open).
            self.ended = True
            task = asyncio.get_running_loop().create_task(_end(self.end_call))
            _ending.add(task)
            task.add_done_callback(_ending.discard)

    def fail(self, error: BaseException) -> None:
        self.error = error
        self.wake.set()


async def _end(end_call: EndCall) -> None:
    with contextlib.suppress(Exception):  # gRPC's AbortError: the call is over, as wanted
        await end_call()


@dataclass(eq=False)
class TableFeed:
    """Follows one table's stream once for all of its watchers on this instance."""

    table_id: str
    store: EventStore
    position: int  # the last sequence handed to the subscribers
    # The table's state at `position` (None: unknown, the records go without a Folded) and
    # when the turn of its seat to act started (the action clock counts from there).
    state: TableState | None = None
    turn_at: datetime | None = None
    subscribers: set[_Subscriber] = field(default_factory=set)
    task: asyncio.Task[None] | None = None
    # Where the table's runtime is: a feed without a state takes the runtime's when it is
    # exactly at the feed's record (after a failed fold, or a start without one).
    origin: Origin | None = None

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        try:
            handed = 0
            async for record in self.store.subscribe(self.table_id, self.position):
                if not self.subscribers:
                    return  # the last watcher left (and a cancellation got lost)
                event, meta = decode_event(record.payload)
                self.position = record.sequence
                item = (record.sequence, event, meta, self._fold(event, meta), True)
                for subscriber in list(self.subscribers):
                    if not subscriber.push(item):
                        self.subscribers.discard(subscriber)
                        log.info("watcher_dropped", table_id=self.table_id, at=record.sequence)
                handed += 1
                if handed % 100 == 0:
                    await asyncio.sleep(0)  # a big batch does not hold up the other tables
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # storage down, trimmed, undecodable: tell every watcher
            for subscriber in self.subscribers:
                subscriber.fail(exc)
            self.subscribers.clear()
            if not isinstance(exc, Exception):
                raise

    def _fold(self, event: AnyEvent, meta: EventMeta) -> Folded | None:
        """The state after ``event``, the record at ``position`` (as the runtime folds it),
        or None when not known."""
        if self.state is None:
            return self.seed(self.position)
        try:
            self.state = apply_event(self.state, event)
        except Exception as exc:  # a stale start (another writer): stop folding, never fail
            log.warning("watch_fold_failed", table_id=self.table_id, error=repr(exc))
            self.state = None
            return None
        if starts_turn(event):
            self.turn_at = meta.recorded_at
        return Folded(self.state, deadline_of(self.state, self.turn_at))

    def seed(self, sequence: int) -> Folded | None:
        """The runtime's state, if it is the one after ``sequence`` (the feed folds on from
        there); None (still stateless) while the runtime is elsewhere."""
        if self.origin is None:
            return None
        version, state, turn_at = self.origin()
        if state is None or version != sequence:
            return None
        self.state, self.turn_at = state, turn_at
        return Folded(state, deadline_of(state, turn_at))


def client_address(peer: str) -> str:
    """Whose watch streams count together, from gRPC's peer string:
    ``felt.wire.clients.counted_peer`` (``ipv6:[2001:db8::1]:5`` -> ``2001:db8::/64``)."""
    return counted_peer(peer)


class WatchHub:
    """Admission, feeds and history replays for one table-service instance."""

    def __init__(self, store: EventStore, limits: WatchLimits | None = None) -> None:
        self.store = store
        self.limits = limits or WatchLimits()
        self.feeds: dict[str, TableFeed] = {}
        self.streams = 0
        self.per_peer: dict[str, int] = {}
        self._replays = asyncio.Semaphore(self.limits.replays)

    @contextlib.contextmanager
    def admission(self, peer: str, seat: bool = False) -> Iterator[str]:
        """Inside: one watch stream counted for ``peer`` (yields ``""``), or, past a cap,
        nothing counted and the reason for the refusal (``RESOURCE_EXHAUSTED``).

        ``peer`` is gRPC's peer string; streams are counted per client address, so
        opening more connections does not raise one client's share. Spectators may fill
        the service only up to ``seat_reserve`` streams short of its cap: a crowd of
        anonymous watchers never locks a seated player out of its own table's stream.
        """
        limits = self.limits
        address = client_address(peer)
        cap = limits.max_streams if seat else max(0, limits.max_streams - limits.seat_reserve)
        if self.streams >= cap:
            yield (
                f"this table service has its maximum of {cap} "
                f"{'' if seat else 'spectator '}watch streams; retry later"
            )
            return
        if self.per_peer.get(address, 0) >= limits.max_per_peer:
            yield (
                f"at most {limits.max_per_peer} watch streams per client address; close one first"
            )
            return
        peer = address
        self.streams += 1
        self.per_peer[peer] = self.per_peer.get(peer, 0) + 1
        try:
            yield ""
        finally:
            self.streams -= 1
            left = self.per_peer[peer] - 1
            if left:
                self.per_peer[peer] = left
            else:
                del self.per_peer[peer]

    async def events(
        self,
        table_id: str,
        after: int,
        current: int,
        end_call: EndCall | None = None,
        origin: Origin | None = None,
    ) -> AsyncIterator[Item]:
        """Every record of ``table_id`` after ``after``, decoded, then each new one.

        ``current`` is a version the table is known to have reached (where a new feed
        starts). ``origin`` tells where the table's runtime is now: a new feed then starts
        there, with its state, and folds it on (the items' :class:`Folded`). Raises
        :class:`FellBehind` if the consumer cannot keep up (after ending the call with
        ``end_call`` if it was stuck writing: then it just stops), and the store's errors
        (``EventsTrimmed``, storage errors) as they come.
        """
        sent = after
        subscriber: _Subscriber | None = None
        feed: TableFeed | None = None
        try:
            while True:
                feed = self.feeds.get(table_id)
                if feed is not None and (feed.task is None or feed.task.done()):
                    feed = None  # ended: a new one replaces it, seeded like any new feed
                known = origin() if origin is not None and feed is None else None
                if feed is not None:
                    position = feed.position
                elif known is not None:
                    position = max(known[0], current, sent)
                else:
                    position = max(current, sent)
                if sent >= position:
                    # Caught up: join the feed (no await between the check and joining,
                    # so no record can fall between the replay and the feed).
                    at = known if known is not None and known[0] == position else None
                    feed = self._feed(table_id, position, at, origin)
                    if feed.state is None and feed.position == position:
                        feed.seed(position)  # a stateless feed the runtime can seed now
                    subscriber = _Subscriber(self.limits.buffer, end_call)
                    feed.subscribers.add(subscriber)
                    break
                for item in await self._page(table_id, sent, position):
                    yield item
                    sent = item[0]
            while True:
                while subscriber.items:
                    item = subscriber.items.popleft()
                    if item[0] <= sent:
                        continue  # the replay already sent it
                    yield item
                    sent = item[0]
                if subscriber.dropped:
                    if subscriber.ended:
                        return  # the call was ended with its status already
                    raise FellBehind(sent)
                if subscriber.error is not None:
                    raise subscriber.error
                subscriber.wake.clear()
                subscriber.waiting = True
                try:
                    await subscriber.wake.wait()
                finally:
                    subscriber.waiting = False
        finally:
            if subscriber is not None and feed is not None:
                feed.subscribers.discard(subscriber)
                self._release(feed)

    async def _page(self, table_id: str, after: int, upto: int) -> list[Item]:
        """Up to one page of history after ``after`` (not past ``upto``), decoded."""
        async with self._replays:
            records = await self.store.read(table_id, after, min(self.limits.page, upto - after))
            items: list[Item] = []
            for record in records:
                event, meta = decode_event(record.payload)
                items.append((record.sequence, event, meta, None, False))
        if not items:  # `upto` is a sequence the table reached: its events must be there
            raise EventsTrimmed(after, upto + 1)
        await asyncio.sleep(0)  # let the live tables' calls go first
        return items

    def _feed(
        self,
        table_id: str,
        position: int,
        at: tuple[int, TableState | None, datetime | None] | None = None,
        origin: Origin | None = None,
    ) -> TableFeed:
        feed = self.feeds.get(table_id)
        if feed is None or feed.task is None or feed.task.done():
            state, turn_at = (at[1], at[2]) if at is not None else (None, None)
            feed = TableFeed(table_id, self.store, position, state, turn_at, origin=origin)
            self.feeds[table_id] = feed
            feed.start()
        elif feed.origin is None:
            feed.origin = origin
        return feed

    def _release(self, feed: TableFeed) -> None:
        """Stop a feed nobody watches any more."""
        if feed.subscribers:
            return
        if self.feeds.get(feed.table_id) is feed:
            del self.feeds[feed.table_id]
        if feed.task is not None and not feed.task.done():
            feed.task.cancel()

    async def aclose(self) -> None:
        """Stop every feed (the service is stopping).

        Bounded, and the caller's own cancellation is not swallowed: a feed's cancellation
        can be lost inside its blocking read (redis-py on Python 3.11, see
        ``services.table.announce``), and the feed then reads on until a record comes, which
        an idle table never sends. The service closes the feeds' Redis client next, which
        ends such a read.
        """
        tasks: set[asyncio.Task[None]] = set()
        for feed in list(self.feeds.values()):
            for subscriber in feed.subscribers:
                subscriber.fail(WatchClosed("the table service is stopping; watch again"))
            feed.subscribers.clear()
            self._release(feed)
            if feed.task is not None:
                tasks.add(feed.task)
        pending = await ended_within(tasks, CLOSE_WAIT_S)
        if pending:
            log.warning("watch_feeds_slow_stop", feeds=pending)


def limits_from_env(env: Mapping[str, str] | None = None) -> WatchLimits:
    """:meth:`WatchLimits.from_env` of the process's environment by default."""
    return WatchLimits.from_env(environment(env))
