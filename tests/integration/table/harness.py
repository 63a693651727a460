"""The table service on loopback against the real Redis, and a generic client to drive it.

``table_env`` starts table-service instances (``start_table_server``, port 0)
on the test Redis DB (flushed per test by the ``redis`` fixture) and gives
tests a small client: create tables, seat players (keeping their tokens),
follow a table's events (:class:`Watcher`), and play hands with any policy
(:meth:`TableEnv.play`). Waits are event-driven (a watch stream, an RPC
retried until it answers) with generous timeouts, never fixed sleeps.

The fixtures (``table_env``, ``policies``) are in this directory's
``conftest.py``; test modules import the classes from here to type them
(``table_env: TableEnv``), which a conftest, not importable by name in
importlib mode, could not offer.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import grpc
import redis.asyncio as redis_async_lib
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]

from felt.core.table.aggregate import replay_table
from felt.messages.events import from_stored_event
from felt.storage.decisions import shard_stream
from felt.storage.eventstore import RedisEventStore, events_key, lease_key, requests_key
from felt.storage.idempotency import client_key, seat_principal
from felt.wire.tokens import token_hash
from poker.events.v1 import events_pb2 as epb
from poker.v1 import ai_pb2
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from services.table.auth import SEAT_TOKEN_HEADER, Secrets
from services.table.ratelimit import RateLimits
from services.table.runtime import TableRuntime
from services.table.server import RunningTableServer, TableServerConfig, start_table_server
from services.table.watch import WatchHub

ADMIN_TOKEN = "table-tests-admin-credential-0123456789"
AI_TOKEN = "table-tests-ai-credential-0123456789"
SECRET = b"table-tests-secret-0123456789abcdef"
WAIT = 20.0  # generous: a loaded 2-core machine

T = TypeVar("T")
Policy = Callable[[tpb.TableView, random.Random], tpb.Action]


async def eventually(
    check: Callable[[], Awaitable[T | None]], what: str, timeout: float = WAIT
) -> T:
    """Retry ``check`` until it returns something other than None (or time out with ``what``)."""
    deadline = time.monotonic() + timeout
    while True:
        result = await check()
        if result is not None:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.02)


def error_reason(err: grpc.aio.AioRpcError) -> str:
    """The ``google.rpc.ErrorInfo.reason`` of a refused call ('' if none)."""
    for key, value in err.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return str(info.reason)
    return ""


@dataclass(frozen=True)
class SeatKey:
    """A seated player and the token that acts for it."""

    seat: int
    player_id: str
    token: str

    @property
    def md(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),)

    @property
    def service_md(self) -> tuple[tuple[str, str], ...]:
        """The service credential acting as this seat (internal calls: LeaveSeat, AddChips)."""
        return (("authorization", f"Bearer {ADMIN_TOKEN}"), (SEAT_TOKEN_HEADER, self.token))


class Watcher:
    """Follows ``WatchTable`` in the background, keeping every item it receives."""

    def __init__(
        self,
        stub: rpc.TableServiceAsyncStub,
        table_id: str,
        seat: SeatKey | None = None,
        from_sequence: int = 0,
        view_changes: bool = False,
    ) -> None:
        request = pb.WatchTableRequest(
            table_id=table_id, from_sequence=from_sequence, view_changes=view_changes
        )
        metadata: tuple[tuple[str, str], ...] = ()
        if seat is not None:
            request.seat = seat.seat
            metadata = seat.md
        self.call = stub.WatchTable(request, metadata=metadata)
        self.items: list[pb.WatchTableResponse] = []
        self.error: BaseException | None = None
        self.done = False
        self._changed = asyncio.Condition()
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        try:
            async for item in self.call:
                self.items.append(item)
                async with self._changed:
                    self._changed.notify_all()
        except BaseException as exc:
            self.error = exc
        finally:
            self.done = True
            async with self._changed:
                self._changed.notify_all()

    @property
    def events(self) -> list[epb.StoredEvent]:
        return [i.event for i in self.items if i.HasField("event")]

    @property
    def last_sequence(self) -> int:
        for item in reversed(self.items):
            if item.HasField("event"):
                return int(item.event.sequence)
            if item.HasField("snapshot"):
                return int(item.snapshot.table.sequence)
        return 0

    async def wait(self, check: Callable[[], bool], what: str, timeout: float = WAIT) -> None:
        """Wait until ``check()`` holds, re-checking after each item."""

        async def until() -> None:
            async with self._changed:
                while not check():
                    if self.done:
                        raise AssertionError(f"watch ended ({self.error!r}) before {what}")
                    await self._changed.wait()

        try:
            await asyncio.wait_for(until(), timeout)
        except TimeoutError:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}") from None

    async def wait_event(
        self, kind: str, what: str = "", after: int = 0, timeout: float = WAIT, **fields: Any
    ) -> epb.StoredEvent:
        """The first event of ``kind`` (with these field values) after sequence ``after``."""

        def find() -> epb.StoredEvent | None:
            for e in self.events:
                if e.sequence > after and e.WhichOneof("event") == kind:
                    body = getattr(e, kind)
                    if all(getattr(body, k) == v for k, v in fields.items()):
                        return e
            return None

        await self.wait(lambda: find() is not None, what or f"{kind} {fields}", timeout)
        found = find()
        assert found is not None
        return found

    async def wait_sequence(self, sequence: int, timeout: float = WAIT) -> None:
        await self.wait(lambda: self.last_sequence >= sequence, f"sequence {sequence}", timeout)

    async def close(self) -> None:
        self.call.cancel()
        with contextlib.suppress(BaseException):
            await self._task


@dataclass
class PlayLog:
    """What :meth:`TableEnv.play` submitted: (seat, request key, action) in order.

    The request key is what the stream records as the events' ``request_key``.
    """

    actions: list[tuple[int, str, tpb.Action]] = field(default_factory=list)
    discards: list[tuple[int, tuple[int, ...]]] = field(default_factory=list)


@dataclass
class TableEnv:
    redis_url: str
    redis: redis_async_lib.Redis
    ai_stream: str
    servers: list[RunningTableServer] = field(default_factory=list)
    channels: list[grpc.aio.Channel] = field(default_factory=list)
    watchers: list[Watcher] = field(default_factory=list)

    eventually = staticmethod(eventually)
    error_reason = staticmethod(error_reason)
    admin: tuple[tuple[str, str], ...] = (("authorization", f"Bearer {ADMIN_TOKEN}"),)
    ai_md: tuple[tuple[str, str], ...] = (("authorization", f"Bearer {AI_TOKEN}"),)

    # ---------------------------------------------------------------- servers

    async def start_server(self, **overrides: Any) -> RunningTableServer:
        config = TableServerConfig(
            redis_url=self.redis_url,
            address="127.0.0.1:0",
            secrets=Secrets(SECRET, ADMIN_TOKEN, AI_TOKEN),
            between_hands_ms=10,
            lease_ttl_ms=3000,
            grace_s=0.5,
            ai_stream=self.ai_stream,
            decision_shards=1,  # one stream, shard_stream(ai_stream, 0): next_decision reads it
            # Tests drive seats far faster than people do; test_bounds checks the limit.
            rate=RateLimits(per_second=10_000, burst=10_000),
        )
        for key, value in overrides.items():
            setattr(config, key, value)
        server = await start_table_server(config)
        self.servers.append(server)
        return server

    @staticmethod
    def hub(server: RunningTableServer) -> WatchHub:
        """The instance's watch hub (every server these tests start has one)."""
        assert server.watches is not None
        return server.watches

    def stub(self, server: RunningTableServer) -> rpc.TableServiceAsyncStub:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{server.port}")
        self.channels.append(channel)
        stub: rpc.TableServiceAsyncStub = rpc.TableServiceStub(channel)
        return stub

    async def crash(self, server: RunningTableServer) -> None:
        """Stop an instance as a crash would: no lease released, no timer left running."""
        manager = server.manager
        if manager._task is not None:
            manager._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await manager._task
            manager._task = None
        for runtime in list(manager.runtimes.values()):
            await runtime.stop()
        manager.runtimes.clear()
        if server.announcer is not None:
            await server.announcer.abandon()
        await server.server.stop(0)
        if server.store is not None:
            await server.store.aclose()
        await server.redis.aclose()
        self.servers.remove(server)

    # ---------------------------------------------------------------- tables

    @staticmethod
    def nlhe(seats: int = 3, clock_ms: int = 0, max_timeouts: int = 0) -> epb.TableConfig:
        config = epb.TableConfig(
            variant=epb.VARIANT_NLHE,
            seat_count=seats,
            small_blind=5,
            big_blind=10,
            max_consecutive_timeouts=max_timeouts,
        )
        if clock_ms:
            config.action_clock.FromMilliseconds(clock_ms)
        return config

    @staticmethod
    def draw(seats: int = 3, clock_ms: int = 0) -> epb.TableConfig:
        config = epb.TableConfig(
            variant=epb.VARIANT_DRAW5,
            seat_count=seats,
            ante=1,
            small_bet=10,
            big_bet=20,
            raise_cap=4,
            allow_all_in=True,
        )
        if clock_ms:
            config.action_clock.FromMilliseconds(clock_ms)
        return config

    async def create_table(
        self, stub: rpc.TableServiceAsyncStub, config: epb.TableConfig, table_id: str = ""
    ) -> str:
        table_id = table_id or f"t-{uuid.uuid4().hex[:12]}"
        response = await stub.CreateTable(
            pb.CreateTableRequest(
                table_id=table_id, name="test", config=config, request_id=uuid.uuid4().hex
            ),
            metadata=self.admin,
        )
        return str(response.table.table_id)

    async def seat(
        self,
        stub: rpc.TableServiceAsyncStub,
        table_id: str,
        seat: int,
        stack: int = 1000,
        ai_level: epb.AiLevel.ValueType = epb.AI_LEVEL_UNSPECIFIED,
        player_id: str = "",
    ) -> SeatKey:
        player_id = player_id or f"p{seat}-{uuid.uuid4().hex[:6]}"
        response = await stub.SeatPlayer(
            pb.SeatPlayerRequest(
                table_id=table_id,
                seat=seat,
                player_id=player_id,
                display_name=f"Player {seat}",
                stack=stack,
                ai_level=ai_level,
                request_id=uuid.uuid4().hex,
            ),
            metadata=self.admin,
        )
        return SeatKey(response.seat, player_id, response.seat_token)

    async def seat_all(
        self, stub: rpc.TableServiceAsyncStub, table_id: str, count: int, stack: int = 1000
    ) -> dict[int, SeatKey]:
        return {s: await self.seat(stub, table_id, s, stack) for s in range(count)}

    def watch(
        self,
        stub: rpc.TableServiceAsyncStub,
        table_id: str,
        seat: SeatKey | None = None,
        from_sequence: int = 0,
        view_changes: bool = False,
    ) -> Watcher:
        watcher = Watcher(stub, table_id, seat, from_sequence, view_changes)
        self.watchers.append(watcher)
        return watcher

    async def view(
        self, stub: rpc.TableServiceAsyncStub, table_id: str, seat: SeatKey | None = None
    ) -> tpb.TableView:
        request = pb.GetTableViewRequest(table_id=table_id)
        if seat is None:
            return (await stub.GetTableView(request)).view
        request.seat = seat.seat
        return (await stub.GetTableView(request, metadata=seat.md)).view

    async def chips(self, stub: rpc.TableServiceAsyncStub, table_id: str) -> int:
        """Every chip at the table: behind, and in the pot of a hand in play. After
        ``play`` the timer may already have dealt the next hand (10 ms between hands), its
        blinds out of the stacks; one view holds both sides."""
        view = await self.view(stub, table_id)
        running = view.hand.hand_id and view.hand.street != epb.STREET_COMPLETE
        in_pot = sum(s.committed for s in view.hand.seats) if running else 0
        return sum(s.stack for s in view.table.seats) + in_pot

    async def check_rebuild(self, server: RunningTableServer, table_id: str) -> None:
        """The live state (built from the rules' own hand state) is the fold of the stream,
        and so is a rebuild that skims the hands that are over. Stops the table's timers."""
        live = server.manager.runtimes[table_id]
        await live.stop()
        rebuilt = TableRuntime(table_id, RedisEventStore(self.redis))
        await rebuilt.load()
        stored = await self.stored(table_id)
        assert rebuilt.version == live.version == len(stored)
        folded = replay_table(from_stored_event(e)[0] for e in stored)
        assert live.state == folded
        assert rebuilt.state == folded
        assert (rebuilt.turn_started_at, rebuilt.last_event_at) == (
            live.turn_started_at,
            live.last_event_at,
        )
        # A rebuild starts from the latest snapshot: it indexes the hands from there on.
        since = rebuilt.loaded_from
        assert since == max(1, await rebuilt.store.latest_snapshot(table_id))
        assert (rebuilt.deck_sequences, rebuilt.hand_decks, rebuilt.seated_at) == (
            [s for s in live.deck_sequences if s >= since],
            {h: s for h, s in live.hand_decks.items() if s >= since},
            live.seated_at,
        )

    async def next_decision(
        self, after: bytes | str = b"0-0"
    ) -> tuple[bytes, ai_pb2.DecisionRequest]:
        """The next decision request on the AI stream after entry ``after`` (blocking read)."""
        reply: list[tuple[bytes, list[tuple[bytes, dict[bytes, bytes]]]]] = await self.redis.xread(  # type: ignore[assignment]
            {shard_stream(self.ai_stream, 0): after}, count=1, block=20_000
        )
        assert reply, "no decision request was published"
        entry_id, fields = reply[0][1][0]
        request = ai_pb2.DecisionRequest.FromString(fields[b"payload"])
        assert fields[b"request_id"].decode() == request.request_id
        return entry_id, request

    async def xlen(self, table_id: str) -> int:
        return int(await self.redis.xlen(events_key(table_id)))

    async def stored(self, table_id: str) -> list[epb.StoredEvent]:
        """The table's unredacted stream, straight from Redis."""
        entries: list[tuple[bytes, dict[bytes, bytes]]] = await self.redis.xrange(  # type: ignore[assignment]
            events_key(table_id)
        )
        return [epb.StoredEvent.FromString(fields[b"e"]) for _, fields in entries]

    async def recorded(self, table_id: str, request_key: str) -> bool:
        return bool(await self.redis.hexists(requests_key(table_id), request_key))

    @staticmethod
    def submit_request(
        table_id: str, seat: SeatKey, action: tpb.Action, expected: int = 0, request_id: str = ""
    ) -> pb.SubmitActionRequest:
        request = pb.SubmitActionRequest(
            table_id=table_id,
            seat=seat.seat,
            request_id=request_id or uuid.uuid4().hex,
            action=action,
        )
        if expected:  # 0: unset, no check
            request.expected_sequence = expected
        return request

    @staticmethod
    def request_key(seat: SeatKey, request: Message) -> str:
        """The key the stream records ``seat``'s ``request`` under
        (``felt.storage.idempotency``)."""
        return client_key(seat_principal(seat.seat, token_hash(seat.token)), request).key

    async def lease_owner(self, table_id: str) -> str | None:
        raw: bytes | None = await self.redis.get(lease_key(table_id))  # type: ignore[assignment]
        return None if raw is None else raw.decode()

    async def submit(
        self,
        stub: rpc.TableServiceAsyncStub,
        table_id: str,
        seat: SeatKey,
        action: tpb.Action,
        expected: int = 0,
        request_id: str = "",
    ) -> pb.SubmitActionResponse:
        request = self.submit_request(table_id, seat, action, expected, request_id)
        return await stub.SubmitAction(request, metadata=seat.md)

    async def act(
        self,
        stub: rpc.TableServiceAsyncStub,
        table_id: str,
        seats: dict[int, SeatKey],
        policy: Policy,
        rng: random.Random | None = None,
        timeout: float = WAIT,
    ) -> pb.SubmitActionResponse:
        """Wait until some seat is to act, then act for it once (per ``policy``)."""
        watcher = self.watch(stub, table_id)
        rng = rng or random.Random(0)

        async def once() -> pb.SubmitActionResponse:
            while True:
                view = await self.view(stub, table_id)
                if view.hand.HasField("to_act") and view.hand.street != epb.STREET_COMPLETE:
                    key = seats[view.hand.to_act]
                    mine = await self.view(stub, table_id, key)
                    if mine.table.sequence == view.table.sequence:
                        action = policy(mine, rng)
                        return await self.submit(stub, table_id, key, action, mine.table.sequence)
                    continue
                await watcher.wait_sequence(view.table.sequence + 1)

        try:
            return await asyncio.wait_for(once(), timeout)
        finally:
            await watcher.close()
            self.watchers.remove(watcher)

    async def play(
        self,
        stub: rpc.TableServiceAsyncStub,
        table_id: str,
        seats: dict[int, SeatKey],
        policy: Policy,
        hands: int,
        seed: int = 1,
        log: PlayLog | None = None,
        timeout: float = 60.0,
    ) -> PlayLog:
        """Act for every seat whenever it is to act, until ``hands`` more hands have ended.

        Stops early when the table stops dealing (fewer than two seats with chips).
        """
        rng = random.Random(seed)
        log = log or PlayLog()
        watcher = self.watch(stub, table_id)
        start = await self.view(stub, table_id)
        target = start.table.hands_played + hands

        async def loop() -> None:
            while True:
                view = await self.view(stub, table_id)
                if view.table.hands_played >= target:
                    return
                hand = view.hand
                if hand.HasField("to_act") and hand.street != epb.STREET_COMPLETE:
                    key = seats[hand.to_act]
                    mine = await self.view(stub, table_id, key)
                    if mine.table.sequence != view.table.sequence:
                        continue
                    action = policy(mine, rng)
                    request = self.submit_request(table_id, key, action, mine.table.sequence)
                    try:
                        await stub.SubmitAction(request, metadata=key.md)
                    except grpc.aio.AioRpcError as err:
                        if err.code() == grpc.StatusCode.ABORTED:
                            continue  # a timer moved the table on: decide again
                        raise
                    log.actions.append((key.seat, self.request_key(key, request), action))
                    if action.HasField("discard"):
                        log.discards.append((key.seat, tuple(action.discard.cards)))
                    continue
                if view.table.state == tpb.TABLE_STATE_WAITING and not hand.HasField("to_act"):
                    return  # nobody left to play with
                await watcher.wait_sequence(view.table.sequence + 1)

        try:
            await asyncio.wait_for(loop(), timeout)
        except TimeoutError:
            raise AssertionError(f"table {table_id} did not play {hands} hands") from None
        finally:
            await watcher.close()
        return log


def random_policy(view: tpb.TableView, rng: random.Random) -> tpb.Action:
    """Any legal action, mostly passive; draws discard a random 0-3 of the seat's cards."""
    legal = {a.type: a for a in view.hand.legal_actions}
    if tpb.ACTION_TYPE_DISCARD in legal:
        me = next(s for s in view.hand.seats if s.seat == view.viewer_seat)
        own = [c.code for c in me.cards]
        count = rng.randint(0, min(3, legal[tpb.ACTION_TYPE_DISCARD].max_discards))
        return tpb.Action(discard=tpb.Action.Discard(cards=rng.sample(own, count)))
    roll = rng.random()
    for kind in (tpb.ACTION_TYPE_BET, tpb.ACTION_TYPE_RAISE):
        # Small bets and raises only, so that games last several hands.
        if kind in legal and roll < 0.2 and legal[kind].min_to <= 40:
            a = legal[kind]
            amount = rng.randint(a.min_to, min(a.max_to, 40))
            if kind == tpb.ACTION_TYPE_BET:
                return tpb.Action(bet_to=tpb.Action.BetTo(amount=amount))
            return tpb.Action(raise_to=tpb.Action.RaiseTo(amount=amount))
    if tpb.ACTION_TYPE_FOLD in legal and roll > 0.9:
        return tpb.Action(fold=tpb.Action.Fold())
    if tpb.ACTION_TYPE_CHECK in legal:
        return tpb.Action(check=tpb.Action.Check())
    if tpb.ACTION_TYPE_CALL in legal:
        return tpb.Action(call=tpb.Action.Call())
    return tpb.Action(fold=tpb.Action.Fold())


def passive_policy(view: tpb.TableView, rng: random.Random) -> tpb.Action:
    """Check or call to the showdown, standing pat in the draw."""
    legal = {a.type for a in view.hand.legal_actions}
    if tpb.ACTION_TYPE_DISCARD in legal:
        return tpb.Action(discard=tpb.Action.Discard())
    if tpb.ACTION_TYPE_CHECK in legal:
        return tpb.Action(check=tpb.Action.Check())
    return tpb.Action(call=tpb.Action.Call())
