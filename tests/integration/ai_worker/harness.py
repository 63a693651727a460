"""A real table service on loopback and real AI workers, on a private AI stream per test.

Each test gets its own stream and group names (and unique table ids), so the
worker and the table service (``TableServerConfig.ai_stream``) meet on a
stream no other test touches. Waits are on events (a table's watch stream, a
worker's counters) with generous timeouts, never fixed sleeps.

The fixture (``ai_env``) is in this directory's ``conftest.py``; test modules
import :class:`AiEnv` from here to type it (a conftest is not importable by
name in importlib mode).
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

import redis.asyncio as redis_async_lib

from poker.events.v1 import events_pb2 as epb
from poker.v1 import ai_pb2
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from services.ai_worker.decide import Decider, Decision
from services.ai_worker.worker import AiWorker, WorkerConfig
from services.table.server import RunningTableServer

ADMIN_TOKEN = "test-admin-token-credential-0123456789"
AI_TOKEN = "test-ai-token-credential-0123456789"
SECRET = b"ai-worker-tests-secret-0123456789abcdef"
LEVELS = (epb.AI_LEVEL_EASY, epb.AI_LEVEL_NORMAL, epb.AI_LEVEL_HARD)


async def eventually(
    check: Callable[[], Awaitable[bool] | bool], what: str, timeout: float = 30.0
) -> None:
    """Wait until ``check()`` holds (polled), failing with ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if not isinstance(result, bool):
            result = await result
        if result:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.02)


@dataclass
class TableRun:
    """What a watcher saw of a table until it closed (or could not go on)."""

    table_id: str
    hands: int = 0
    closed: bool = False
    last_sequence: int = 0


@dataclass
class AiEnv:
    """A table service and helpers to create AI tables and start workers on one stream."""

    redis_url: str
    redis: redis_async_lib.Redis
    server: RunningTableServer
    stub: rpc.TableServiceAsyncStub
    stream: str  # the one stream the workers read (shard 0 of base_stream, the only one)
    group: str
    base_stream: str = ""  # FELT_AI_STREAM, of which ``stream`` is the only shard
    workers: list[AiWorker] = field(default_factory=list)
    gates: list[GatedDecider] = field(default_factory=list)

    eventually = staticmethod(eventually)

    def gated_decider(self) -> GatedDecider:
        """A decider that holds decisions until the test opens its gate (opened at teardown)."""
        decider = GatedDecider()
        self.gates.append(decider)
        return decider

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.server.port}"

    @property
    def admin(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {ADMIN_TOKEN}"),)

    def worker_config(self, **overrides: Any) -> WorkerConfig:
        base = WorkerConfig(
            redis_url=self.redis_url,
            table_target=self.target,
            ai_token=AI_TOKEN,
            concurrency=4,
            claim_idle_ms=500,
            metrics_port=None,
            stream=self.base_stream,
            shards=1,
            group=self.group,
            stats_interval_s=0.5,
            summary_interval_s=2.0,
            drain_timeout_s=20.0,
        )
        return replace(base, **overrides)

    async def start_worker(self, decider: Decider | None = None, **overrides: Any) -> AiWorker:
        if isinstance(decider, GatedDecider):
            overrides.setdefault("bot_thread", True)  # its gate blocks a thread, not the loop
        worker = AiWorker(self.worker_config(**overrides), decider=decider or Decider())
        self.workers.append(worker)
        await worker.start()
        return worker

    async def create_ai_table(
        self,
        seats: int = 3,
        variant: epb.Variant.ValueType = epb.VARIANT_NLHE,
        stack: int = 1000,
        max_hands: int = 5,
        clock_ms: int = 60_000,
        levels: tuple[epb.AiLevel.ValueType, ...] = LEVELS,
    ) -> str:
        """A table of AI seats that plays ``max_hands`` hands and closes."""
        table_id = f"ai-{uuid.uuid4().hex[:12]}"
        if variant == epb.VARIANT_NLHE:
            config = epb.TableConfig(
                variant=variant, seat_count=seats, small_blind=5, big_blind=10, max_hands=max_hands
            )
        else:
            config = epb.TableConfig(
                variant=variant,
                seat_count=seats,
                ante=5,
                small_bet=10,
                big_bet=20,
                max_hands=max_hands,
            )
        config.action_clock.FromMilliseconds(clock_ms)
        await self.stub.CreateTable(
            pb.CreateTableRequest(table_id=table_id, config=config, request_id=uuid.uuid4().hex),
            metadata=self.admin,
        )
        for seat in range(seats):
            await self.stub.SeatPlayer(
                pb.SeatPlayerRequest(
                    table_id=table_id,
                    seat=seat,
                    player_id=f"bot-{seat}",
                    display_name=f"Bot {seat}",
                    stack=stack,
                    ai_level=levels[seat % len(levels)],
                    request_id=uuid.uuid4().hex,
                ),
                metadata=self.admin,
            )
        return table_id

    async def stacks(self, table_id: str) -> dict[int, int]:
        table = (await self.stub.GetTable(pb.GetTableRequest(table_id=table_id))).table
        return {s.seat: s.stack for s in table.seats if s.player_id}

    async def watch_until_done(self, table_id: str, timeout: float = 45.0) -> TableRun:
        """Follow a table as a spectator until it closes or fewer than two seats have chips."""
        run = TableRun(table_id)

        async def follow() -> None:
            chips: dict[int, int] = {}
            call = self.stub.WatchTable(pb.WatchTableRequest(table_id=table_id))
            try:
                async for item in call:
                    if item.HasField("snapshot"):
                        # The table may have finished before we started watching.
                        table = item.snapshot.table
                        run.last_sequence = table.sequence
                        chips = {s.seat: s.stack for s in table.seats if s.player_id}
                        if table.state == tpb.TABLE_STATE_CLOSED:
                            run.closed = True
                            return
                        hand = item.snapshot.hand
                        between_hands = not hand.hand_id or hand.street == epb.STREET_COMPLETE
                        if between_hands and sum(1 for c in chips.values() if c > 0) < 2:
                            return
                        continue
                    event = item.event
                    run.last_sequence = event.sequence
                    kind = event.WhichOneof("event")
                    if kind == "player_seated":
                        chips[event.player_seated.seat] = event.player_seated.stack
                    elif kind == "hand_ended":
                        run.hands += 1
                        chips.update({s.seat: s.stack for s in event.hand_ended.stacks})
                        if sum(1 for c in chips.values() if c > 0) < 2:
                            return
                    elif kind == "table_closed":
                        run.closed = True
                        return
            finally:
                call.cancel()

        try:
            await asyncio.wait_for(follow(), timeout)
        except TimeoutError:
            raise AssertionError(
                f"table {table_id} did not finish within {timeout} s "
                f"({run.hands} hands, sequence {run.last_sequence})"
            ) from None
        return run

    async def requests(self) -> list[tuple[bytes, ai_pb2.DecisionRequest]]:
        """Every decision request still in the stream, decoded."""
        entries: list[tuple[bytes, dict[bytes, bytes]]] = await self.redis.xrange(self.stream)  # type: ignore[assignment]
        return [(eid, ai_pb2.DecisionRequest.FromString(f[b"payload"])) for eid, f in entries]

    async def group_info(self) -> dict[str, Any]:
        for info in await self.redis.xinfo_groups(self.stream):
            if info["name"] == self.group.encode():
                return dict(info)
        return {}


def stream_id(entry_id: bytes) -> bytes:
    """The id in the shard's own stream of an entry id a worker holds (``<shard>/<id>``)."""
    return entry_id.split(b"/", 1)[1]


def _table_full(request: ai_pb2.DecisionRequest) -> bool:
    table = request.view.table
    return sum(1 for seat in table.seats if seat.player_id) == table.config.seat_count


class GatedDecider(Decider):
    """Decides like the real one, but holds some decisions until the test opens the gate.

    Only requests for which ``hold`` is true wait (by default: those made once every seat
    was taken, so a request made while players were still sitting down, which is stale at
    once, passes). ``entered`` is set when a decision waits at the gate, so a test can act
    while a worker is provably in the middle of a decision.
    """

    def __init__(self, hold: Callable[[ai_pb2.DecisionRequest], bool] = _table_full) -> None:
        super().__init__()
        self.hold = hold
        self.entered = threading.Event()
        self.gate = threading.Event()
        self.held = 0
        self.calls = 0

    def decide(self, request: ai_pb2.DecisionRequest) -> Decision:
        self.calls += 1
        if self.hold(request):
            self.held += 1
            self.entered.set()
            if not self.gate.wait(timeout=60):
                raise TimeoutError("the test never opened the gate")
        return super().decide(request)

    async def wait_entered(self, timeout: float = 30.0) -> None:
        if not await asyncio.to_thread(self.entered.wait, timeout):
            raise AssertionError("no decision reached the gate")
