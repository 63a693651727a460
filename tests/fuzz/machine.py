"""The API fuzzer: a hypothesis state machine that drives every TableService RPC over loopback.

Hypothesis runs the machine in a worker thread; the table service, the gRPC
clients and the Redis reads all live on one asyncio loop (``Harness.loop``),
and each step hands its coroutines to that loop and waits. Every example starts
from an empty Redis DB and a freshly started service (``Harness.reset``), so a
failing example replays on its own and shrinks to a short sequence of calls.

What a step may do: create tables (sane or hostile configs), seat humans and
AI players, leave, sit out and in, add chips, act (mostly legally, for whoever
is to act, acting for AI seats with the AI credential and the request id and
sequence of the service's own decision request, as an AI worker does; or
randomly), show cards, read views, tables, hand histories and a bounded number
of watch-stream items, restart the service, and wait for a deal the events say
is due. Fields are random and hostile (huge and odd strings, control
characters, int64 and int32 edges, missing fields); request ids are fresh,
reused, foreign (other seats' ids read from the streams), or the service's
own patterns (``ai:<table>:<seq>``, ``deal:<table>:<seq>``, ...); tokens are the
seat's own, another seat's or table's, the AI credential, the admin token,
garbage or none; ``expected_sequence`` is current, stale, zero or huge.

What must hold (see docs/testing.md): after every call, no ``INTERNAL`` or
``UNKNOWN`` (nor a hung call); a refused call appended nothing; an accepted
mutating call appended its own events, unless it was a true retry (same caller,
RPC and content), which gets the first answer back; no message shows the
caller a card the raw events say it may not see (``oracle.leaks``); and after
every step, the events conserve chips and agree with the service's view, every
AI decision request holds only its seat's cards, and health checks answer.

Why one module of this size: a hypothesis state machine is one class whose
rules share its state (the tables, seats, tokens and request ids it has seen)
and its per-call checks; the oracles it consults live in ``tests.fuzz.oracle``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import random
import time
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import grpc
import redis.asyncio as redis_async_lib
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc  # type: ignore[import-untyped]
from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from felt.storage.decisions import shard_stream
from felt.storage.eventstore import events_key
from felt.storage.idempotency import (
    ADMIN_PRINCIPAL,
    ai_principal,
    client_key,
    seat_principal,
    service_principal,
)
from felt.wire.tokens import token_hash
from poker.events.v1 import events_pb2 as epb
from poker.v1 import ai_pb2
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from services.table.auth import SEAT_TOKEN_HEADER
from services.table.server import SERVICE_NAME
from tests.fuzz.oracle import Ledger, Viewer, Violation, leaks, written_by_server
from tests.integration.table.harness import (
    ADMIN_TOKEN,
    AI_TOKEN,
    TableEnv,
    random_policy,
)

T = TypeVar("T")
CALL_TIMEOUT = 20.0  # a call that takes longer is reported as hung (generous: loaded 2 cores)
LIVENESS_S = 10.0  # how long a due deal may take before the table counts as stalled (generous)
INT64_MAX = 2**63 - 1
MAX_TABLES = 3
STEP_TIMEOUT = 120.0  # a whole step (several bounded calls and waits)
CANCEL_WAIT = 10.0  # how long a hung step, cancelled, may take to end before the next one
MAX_MESSAGE = 2000  # an error message longer than this echoes the caller's input back
MAX_SEATS = 12

# ----------------------------------------------------------------- strategies

ODD_STRINGS = [
    "",
    " ",
    "\n",
    "abc\n",
    "\x00",
    "\x00\x01\x7f",
    "\x1b[31mred",
    "\u202eevil",
    "名字",
    "é" * 70,
    "a" * 63,
    "a" * 64,
    "a" * 128,
    "a" * 129,
    "{brace}",
    "ai:",
    "../../etc/passwd",
    "%s%n%x",
]


@dataclass(frozen=True)
class Big:
    """A long string, drawn by its size: its repr (in printed examples) stays short."""

    size: int
    char: str

    def __str__(self) -> str:
        return self.char * self.size


odd_text = st.one_of(
    st.sampled_from(ODD_STRINGS),
    st.text(max_size=12),
    st.builds(Big, st.sampled_from([70_000, 400_000]), st.sampled_from(["a", "é", "\x01"])),
)
INT64_EDGES = [0, 1, -1, 2, 10, 2**31 - 1, 2**31, 2**53 + 1, 2**62, INT64_MAX - 1, INT64_MAX]
INT64_EDGES += [-(2**63), -(2**63) + 1, 2**62 + 2**61]
int64s = st.one_of(st.sampled_from(INT64_EDGES), st.integers(-(2**63), INT64_MAX))
INT32_EDGES = [-1, 0, 1, 2, 5, 8, 9, 10, 100, 2**31 - 1, -(2**31)]
int32s = st.one_of(st.sampled_from(INT32_EDGES), st.integers(-(2**31), 2**31 - 1))
stacks = st.one_of(st.integers(20, 2000), st.integers(20, 2000), st.integers(1, 50), int64s)
amounts = st.one_of(st.integers(1, 1000), st.integers(1, 1000), int64s)

# A request id: ("fresh",) | ("mine", k) | ("seen", k) | ("server", kind, offset) | ("odd", s)
request_ids = st.one_of(
    st.just(("fresh",)),
    st.just(("fresh",)),
    st.just(("fresh",)),
    st.tuples(st.just("mine"), st.integers(0, 50)),
    st.tuples(st.just("seen"), st.integers(0, 50)),
    # The service's own ids, mostly the next one it will use (its version + 1 after this call).
    st.tuples(
        st.just("server"),
        st.sampled_from(["ai", "deal", "timeout", "auto", "close"]),
        st.sampled_from([1, 1, 1, 0, -1, 2]),
    ),
    st.tuples(st.just("server"), st.sampled_from(["ai", "deal"]), st.just(1)),
    st.tuples(st.just("odd"), odd_text),
)
# Who calls: ("own",) | ("other", k) | ("ai",) | ("admin",) | ("none",) | ("garbage", s)
# | ("service-own",) (the service credential acting as the seat's own token: how the lobby
# leaves and tops up a seat)
callers = st.one_of(
    st.just(("own",)),
    st.just(("own",)),
    st.just(("own",)),
    st.just(("service-own",)),
    st.just(("service-own",)),
    st.tuples(st.just("other"), st.integers(0, MAX_SEATS)),
    st.just(("ai",)),
    st.just(("admin",)),
    st.just(("none",)),
    st.tuples(st.just("garbage"), odd_text),
)
admin_callers = st.one_of(
    st.just(("admin",)),
    st.just(("admin",)),
    st.just(("admin",)),
    st.just(("none",)),
    st.just(("ai",)),
    st.tuples(st.just("other"), st.integers(0, MAX_SEATS)),
)
# The seat a call names: the caller's own (None) or any int32.
seat_numbers = st.one_of(st.none(), st.none(), st.none(), int32s)
# expected_sequence: ("current", delta) | ("zero",) | ("value", n)
expected_sequences = st.one_of(
    st.tuples(st.just("current"), st.just(0)),
    st.tuples(st.just("current"), st.integers(-3, 2)),
    st.just(("zero",)),
    st.tuples(st.just("value"), st.sampled_from([1, 2**63, 2**64 - 1])),
)
actions = st.one_of(
    st.just({"fold": {}}),
    st.just({"check": {}}),
    st.just({"call": {}}),
    st.builds(lambda n: {"bet_to": {"amount": n}}, int64s),
    st.builds(lambda n: {"raise_to": {"amount": n}}, int64s),
    st.just({"all_in": {}}),
    st.builds(
        lambda cs: {"discard": {"cards": cs}},
        st.lists(st.one_of(st.integers(0, 51), st.integers(0, 2**32 - 1)), max_size=6),
    ),
    st.just({}),
)
# Which table a call names: ("table", k) one of ours | ("odd", s)
table_picks = st.one_of(
    st.tuples(st.just("table"), st.integers(0, MAX_TABLES)),
    st.tuples(st.just("table"), st.integers(0, MAX_TABLES)),
    st.tuples(st.just("table"), st.integers(0, MAX_TABLES)),
    st.tuples(st.just("odd"), odd_text),
)
# A hand id: ("latest",) | ("known", k) | ("odd", s)
hand_picks = st.one_of(
    st.just(("latest",)),
    st.tuples(st.just("known"), st.integers(-3, 3)),
    st.tuples(st.just("odd"), odd_text),
)


def _sane_nlhe(seats: int, blinds: tuple[int, int], ante: int, clock_ms: int) -> dict[str, Any]:
    return {
        "variant": epb.VARIANT_NLHE,
        "seat_count": seats,
        "small_blind": blinds[0],
        "big_blind": blinds[1],
        "ante": ante,
        "clock_ms": clock_ms,
    }


def _sane_draw(seats: int, ante: int, all_in: bool | None, clock_ms: int) -> dict[str, Any]:
    config: dict[str, Any] = {
        "variant": epb.VARIANT_DRAW5,
        "seat_count": seats,
        "ante": ante,
        "small_bet": 10,
        "big_bet": 20,
        "clock_ms": clock_ms,
    }
    if all_in is not None:
        config["allow_all_in"] = all_in
    return config


clocks = st.one_of(st.just(0), st.just(0), st.integers(300, 3000))
sane_configs = st.one_of(
    st.builds(
        _sane_nlhe,
        st.integers(2, 6),
        st.sampled_from([(5, 10), (1, 2), (50, 100)]),
        st.sampled_from([0, 0, 1]),
        clocks,
    ),
    st.builds(
        _sane_draw, st.integers(2, 6), st.integers(1, 5), st.sampled_from([None, True]), clocks
    ),
)
CLOCK_EDGES = [
    1,
    10**9,
    315_576_000_000,
    10**12,
    -1,
    -(10**9),
]  # seconds; the Duration max is 10,000 years
hostile_configs = st.fixed_dictionaries(
    {
        "variant": st.sampled_from([0, 1, 2, 3, 99]),
        "seat_count": int32s,
        "small_blind": int64s,
        "big_blind": int64s,
        "ante": int64s,
    },
    optional={
        "small_bet": int64s,
        "big_bet": int64s,
        "raise_cap": int32s,
        "allow_all_in": st.booleans(),
        "clock_s": st.sampled_from(CLOCK_EDGES),
        "max_consecutive_timeouts": int32s,
        "max_hands": int32s,
        "close_time_s": st.sampled_from([-(10**11), 0, 1, 253402300799, 10**12, 2**62]),
    },
)
configs = st.one_of(sane_configs, sane_configs, sane_configs, hostile_configs)
# Sane configs with one hostile setting (hostile ones alone are mostly refused outright).
tweaks = st.one_of(
    st.just({}),
    st.just({}),
    st.builds(lambda s: {"clock_s": s}, st.sampled_from(CLOCK_EDGES)),
    st.builds(lambda n: {"max_hands": n}, int32s),
    st.builds(lambda n: {"big_blind": n}, st.sampled_from([2**62, INT64_MAX])),
    st.builds(lambda n: {"ante": n}, st.sampled_from([0, -1, 2**62])),
)


def config_proto(spec: dict[str, Any]) -> epb.TableConfig:
    """The ``TableConfig`` a config dict describes (the dict is what a failing example prints)."""
    config = epb.TableConfig()
    for key, value in spec.items():
        if key == "clock_ms":
            if value:
                config.action_clock.FromMilliseconds(value)
        elif key == "clock_s":
            config.action_clock.seconds = value
        elif key == "close_time_s":
            config.close_time.seconds = value
        else:
            setattr(config, key, value)
    return config


# ----------------------------------------------------------------- the harness


def awaiting(task: asyncio.Task[Any]) -> str:
    """Where ``task`` waits: the chain of coroutines it awaits, down to a future or a task."""
    parts: list[str] = []
    awaited: Any = task.get_coro()
    while awaited is not None and len(parts) < 30:
        frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "ag_frame", None)
        if frame is None:
            # The future the task waits on (a task awaited shows what it runs and waits for).
            parts.append(repr(getattr(task, "_fut_waiter", None) or awaited)[:400])
            break
        path = frame.f_code.co_filename.split("/site-packages/")[-1]
        for root in ("/services/", "/libs/", "/tests/"):
            if root in path:
                path = root[1:] + path.split(root, 1)[1]
                break
        parts.append(f"{frame.f_code.co_name} ({path}:{frame.f_lineno})")
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "ag_await", None)
    return " -> ".join(parts)


class StepHung(Exception):
    """A step (a few calls, each with its own deadline) did not finish: something is stuck."""


@dataclass
class SeatRef:
    """A seat we were given, with the token SeatPlayer issued (kept after it left: stale)."""

    table_id: str
    seat: int
    player_id: str
    token: str
    ai: bool
    since: int  # sequence of its PlayerSeated


@dataclass
class Harness:
    """The service under test and everything the machine reads, on one asyncio loop."""

    env: TableEnv
    loop: asyncio.AbstractEventLoop
    known: set[str] = field(default_factory=set)  # violation kinds that do not fail a step
    server_options: dict[str, Any] = field(default_factory=dict)
    server: Any = None
    stub: Any = None
    health: Any = None
    channel: grpc.aio.Channel | None = None
    calls: int = 0
    sequences: int = 0
    hands: int = 0
    showdowns: int = 0
    decisions_read: int = 0  # AI decision requests read from the service's stream
    found: dict[str, list[str]] = field(default_factory=dict)  # kind -> details (first few)
    step_task: asyncio.Task[Any] | None = None  # the step running on the loop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the service's loop and wait for it (from the machine's thread).

        Every call and wait inside has its own bound; a step that still takes longer than
        ``STEP_TIMEOUT`` raises ``StepHung``, saying where it waits. It is cancelled and
        awaited first (at most ``CANCEL_WAIT``): a step that went on after its cancellation
        (a callee swallowing it) once started a second service beside the next example's.
        """
        future = asyncio.run_coroutine_threadsafe(self._tracked(coro), self.loop)
        try:
            return future.result(timeout=STEP_TIMEOUT)
        except concurrent.futures.TimeoutError:
            pass
        try:
            where = asyncio.run_coroutine_threadsafe(self._stop_step(), self.loop).result(
                timeout=CANCEL_WAIT + 5.0
            )
        except concurrent.futures.TimeoutError:
            where = "nowhere: the event loop itself is blocked"
        raise StepHung(f"a step did not finish in {STEP_TIMEOUT} s; it waited in {where}")

    async def _tracked(self, coro: Coroutine[Any, Any, T]) -> T:
        self.step_task = asyncio.current_task()
        try:
            return await coro
        finally:
            self.step_task = None

    async def _stop_step(self) -> str:
        """Where the hung step waits; then it is cancelled and awaited (bounded)."""
        task = self.step_task
        if task is None:
            return "nothing (it ended just now)"
        where = awaiting(task)
        task.cancel()
        await asyncio.wait({task}, timeout=CANCEL_WAIT)
        if not task.done():
            where += f" (and it did not end in {CANCEL_WAIT} s when cancelled)"
        return where

    async def reset(self) -> None:
        """A fresh service on an empty DB, for one example."""
        await self.stop()
        await self.env.redis.flushdb()
        await self.start()

    async def start(self) -> None:
        self.server = await self.env.start_server(**self.server_options)
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{self.server.port}")
        self.stub = rpc.TableServiceStub(self.channel)
        self.health = health_pb2_grpc.HealthStub(self.channel)

    async def stop(self) -> None:
        if self.channel is not None:
            await self.channel.close()
            self.channel = None
        for server in list(self.env.servers):
            self.env.servers.remove(server)
            await server.stop()
        self.server = None

    async def stored(self, table_id: str, after: int) -> list[epb.StoredEvent]:
        """The table's raw events after sequence ``after``, straight from Redis."""
        try:
            key = events_key(table_id)
        except ValueError:
            return []
        redis: redis_async_lib.Redis = self.env.redis
        entries: list[tuple[bytes, dict[bytes, bytes]]] = await redis.xrange(  # type: ignore[assignment]
            key, min=f"({after}-0"
        )
        return [epb.StoredEvent.FromString(fields[b"e"]) for _, fields in entries]

    async def decision_requests(self, after: str) -> list[tuple[str, ai_pb2.DecisionRequest]]:
        redis: redis_async_lib.Redis = self.env.redis
        # The service publishes to shard 0 of its decision queue (the harness runs one shard).
        entries: list[tuple[bytes, dict[bytes, bytes]]] = await redis.xrange(  # type: ignore[assignment]
            shard_stream(self.env.ai_stream, 0), min=f"({after}" if after else "-"
        )
        self.decisions_read += len(entries)
        return [
            (raw_id.decode(), ai_pb2.DecisionRequest.FromString(fields[b"payload"]))
            for raw_id, fields in entries
        ]

    def record(self, violation: Violation) -> None:
        details = self.found.setdefault(violation.kind, [])
        if len(details) < 3:
            details.append(violation.detail)


def _request_key(request: Message, metadata: tuple[tuple[str, str], ...]) -> str:
    """The key the service records ``request`` under, for the caller ``metadata`` names.

    Computed the documented way (``felt.storage.idempotency``: the caller's principal, the
    call, the id), not read from the service: a call's events must carry exactly it.
    """
    bearer = next((v.removeprefix("Bearer ") for k, v in metadata if k == "authorization"), "")
    as_seat = next((v for k, v in metadata if k == SEAT_TOKEN_HEADER), "")
    seat = int(getattr(request, "seat", 0))
    if isinstance(request, pb.CreateTableRequest | pb.SeatPlayerRequest | pb.CloseTableRequest):
        principal = ADMIN_PRINCIPAL
    elif bearer == ADMIN_TOKEN:
        principal = (
            seat_principal(seat, token_hash(as_seat)) if as_seat else service_principal(seat)
        )
    elif bearer == AI_TOKEN:
        principal = ai_principal(seat)
    else:
        principal = seat_principal(seat, token_hash(bearer))
    return client_key(principal, request).key


def _short(value: Any) -> str:
    """A printable, bounded form of a field value (requests may hold megabyte strings)."""
    if isinstance(value, str | bytes) and len(value) > 40:
        return f"{value[:12]!r}...({len(value)} chars)"
    if isinstance(value, Message):
        return describe(value)
    return repr(value)


def describe(message: Message) -> str:
    fields = ", ".join(f"{d.name}={_short(v)}" for d, v in message.ListFields())
    return f"{type(message).__name__}({fields})".replace("\n", " ")


# ----------------------------------------------------------------- the machine


class ApiFuzzer(RuleBasedStateMachine):
    """Random sequences of every TableService RPC, with the invariants checked after each.

    No rule has a precondition: which rules are enabled must not depend on timing (a
    deal, a timeout), or hypothesis could not replay a sequence; a rule with nothing to
    do returns.
    """

    harness: ClassVar[Harness]

    def __init__(self) -> None:
        super().__init__()
        self.h = self.harness
        self.h.sequences += 1
        self.h.run(self.h.reset())
        self.tables: list[str] = []
        self.ledgers: dict[str, Ledger] = {}
        self.seats: list[SeatRef] = []
        self.my_ids: list[str] = []
        self.first_use: dict[str, str] = {}  # request id -> the call that first used it
        self.seen_ids: list[str] = []
        # (caller, rpc, request bytes) -> (request id, first OK answer's bytes)
        self.answers: dict[tuple[str, str, bytes], bytes] = {}
        self.ai_after = ""
        self.decisions: dict[tuple[str, int], ai_pb2.DecisionRequest] = {}
        self.violations: list[Violation] = []
        self.failed: list[Violation] = []  # violations of kinds not yet known
        self.notes: list[str] = []
        self.restarts = 0
        self.down = False

    # ------------------------------------------------------------- bookkeeping

    def fail(self, kind: str, detail: str) -> None:
        self.violations.append(Violation(kind, detail))

    def _flush(self) -> None:
        """Note what the step broke (kinds not already known fail the sequence at its end).

        The sequence runs to its end even so: when a violation depends on timing, it may
        come a step earlier or later on a replay, and hypothesis needs every replay to
        draw the same steps.
        """
        found, self.violations = self.violations, []
        for v in found:
            self.h.record(v)
        self.failed.extend(v for v in found if v.kind not in self.h.known)

    async def sync(self) -> dict[str, list[epb.StoredEvent]]:
        """Read every table's new raw events into its ledger; returns them by table."""
        out: dict[str, list[epb.StoredEvent]] = {}
        for table_id in self.tables:
            ledger = self.ledgers[table_id]
            fresh = await self.h.stored(table_id, ledger.version)
            for event in fresh:
                ledger.feed(event)
            self.violations.extend(ledger.violations)
            ledger.violations.clear()
            out[table_id] = fresh
        return out

    def current(self, table_id: str, seat: int) -> SeatRef | None:
        """The seat's current occupant as far as we know (the last one seated there)."""
        for ref in reversed(self.seats):
            if ref.table_id == table_id and ref.seat == seat:
                return ref
        return None

    def table_of(self, pick: tuple[Any, ...]) -> str:
        if pick[0] == "table" and self.tables:
            return str(self.tables[pick[1] % len(self.tables)])
        return str(pick[1]) if pick[0] == "odd" else ""

    def request_id(self, spec: tuple[Any, ...], table_id: str) -> str:
        kind = spec[0]
        if kind == "mine" and self.my_ids:
            return str(self.my_ids[spec[1] % len(self.my_ids)])
        if kind == "seen" and self.seen_ids:
            return str(self.seen_ids[spec[1] % len(self.seen_ids)])
        if kind == "server":
            ledger = self.ledgers.get(table_id)
            version = ledger.version if ledger is not None else 0
            return f"{spec[1]}:{table_id}:{max(0, version + spec[2])}"
        if kind == "odd":
            return str(spec[1])
        return uuid.uuid4().hex

    def credential(
        self, caller: tuple[Any, ...], ref: SeatRef | None, table_id: str, seat: int
    ) -> tuple[tuple[tuple[str, str], ...], Viewer, str]:
        """Metadata for ``caller``, who would see what comes back, and a name for it."""
        kind = caller[0]
        spectator = Viewer(table_id)
        if kind == "own" and ref is not None:
            if ref.ai:
                return self._ai(table_id, seat)
            return (("authorization", f"Bearer {ref.token}"),), self._viewer(ref), "own"
        if kind == "service-own" and ref is not None and not ref.ai:
            service: tuple[tuple[str, str], ...] = (
                ("authorization", f"Bearer {ADMIN_TOKEN}"),
                (SEAT_TOKEN_HEADER, ref.token),
            )
            return service, self._viewer(ref), "service as own"
        if kind == "service-own":
            return (("authorization", f"Bearer {ADMIN_TOKEN}"),), spectator, "admin"
        if kind == "other" and self.seats:
            other = self.seats[caller[1] % len(self.seats)]
            md = (("authorization", f"Bearer {other.token}"),)
            return md, self._viewer(other), f"token of {other.table_id}/{other.seat}"
        if kind == "ai" or (kind == "own" and ref is None):
            return self._ai(table_id, seat)
        if kind == "admin":
            return (("authorization", f"Bearer {ADMIN_TOKEN}"),), spectator, "admin"
        if kind == "garbage":
            return (("authorization", f"Bearer {_ascii(str(caller[1]))}"),), spectator, "garbage"
        return (), spectator, "anonymous"

    def _viewer(self, ref: SeatRef) -> Viewer:
        return Viewer(ref.table_id, ref.seat, ref.since)

    def _ai(self, table_id: str, seat: int) -> tuple[tuple[tuple[str, str], ...], Viewer, str]:
        """The AI credential sees the cards of the AI seat it acts for, and no other."""
        ref = self.current(table_id, seat)
        viewer = (
            Viewer(table_id, seat, ref.since) if ref is not None and ref.ai else Viewer(table_id)
        )
        return (("authorization", f"Bearer {AI_TOKEN}"),), viewer, "AI credential"

    # ------------------------------------------------------------- one call

    async def call(
        self,
        method: str,
        request: Message,
        metadata: tuple[tuple[str, str], ...],
        viewer: Viewer,
        who: str,
        request_id: str | None = None,
        table_id: str = "",
    ) -> Message | None:
        """One unary call with every per-call invariant checked; the answer, or None if refused."""
        await self.sync()
        self.h.calls += 1
        error: grpc.aio.AioRpcError | None = None
        response: Message | None = None
        try:
            response = await getattr(self.h.stub, method)(
                request, metadata=metadata, timeout=CALL_TIMEOUT
            )
        except grpc.aio.AioRpcError as err:
            error = err
        fresh = await self.sync()
        if isinstance(response, pb.CreateTableResponse):
            # The service may choose the id (an empty table_id): follow that table from now on.
            table_id = response.table.table_id
            if table_id not in self.ledgers:
                self.new_table(table_id)
                fresh.update(await self.sync())
        elif (
            method == "CreateTable"
            and table_id in self.ledgers
            and not self.ledgers[table_id].version
        ):
            self.forget(table_id)  # a refused CreateTable: no such table
        outcome = "OK" if error is None else f"{error.code().name} {_short(error.details())}"
        self.notes.append(f"{method}({describe(request)}) as {who} -> {outcome}")
        self._check_status(method, error)
        if request_id is not None:
            # A caller is who the service authenticates (a token, the AI credential, the
            # admin), not the label this machine gave the token: a departed player's token
            # retrying its own request is the same caller.
            stored_key = _request_key(request, metadata)
            key = (stored_key, method, request.SerializeToString(deterministic=True))
            self.my_ids.append(request_id)
            self._check_effect(
                method, request_id, stored_key, table_id, fresh, key, response, error, who
            )
            self.first_use.setdefault(request_id, f"{method} as {who}")
        else:
            self._check_quiet(method, fresh, "", error is None)
        if response is not None:
            ledger = self.ledgers.get(viewer.table_id)
            if ledger is not None:
                self.violations.extend(leaks(ledger, viewer, response, method))
            self._harvest(response)
        return response

    def _check_status(self, method: str, error: grpc.aio.AioRpcError | None) -> None:
        if error is None:
            return
        code = error.code()
        if code in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN):
            self.fail(f"{code.name}/{method}", f"{method} answered {code.name}: {error.details()}")
        elif code == grpc.StatusCode.DEADLINE_EXCEEDED:
            self.fail(f"hung/{method}", f"{method} did not answer in {CALL_TIMEOUT} s")
        details = error.details() or ""
        if len(details) > MAX_MESSAGE:
            self.fail(
                f"echoed-input/{method}",
                f"{method} refused with a {len(details)}-character message (written for "
                f"people, it should not echo the input): {_short(details)}",
            )

    def _check_quiet(
        self, method: str, fresh: dict[str, list[epb.StoredEvent]], stored_key: str, ok: bool
    ) -> None:
        """A refused call (or a read) appended nothing: only the service's timers wrote."""
        for table_id, events in fresh.items():
            for e in events:
                if (stored_key and e.request_key == stored_key) or not written_by_server(e):
                    what = "a read" if ok else "a refused call"
                    self.fail(
                        f"refusal-changed/{method}",
                        f"{what} ({method}) was followed by event {e.sequence} "
                        f"({e.WhichOneof('event')}, request key {_short(e.request_key)}) "
                        f"at table {table_id!r}",
                    )
                    return

    def _check_effect(
        self,
        method: str,
        request_id: str,
        stored_key: str,
        table_id: str,
        fresh: dict[str, list[epb.StoredEvent]],
        key: tuple[str, str, bytes],
        response: Message | None,
        error: grpc.aio.AioRpcError | None,
        who: str,
    ) -> None:
        if error is not None:
            self._check_quiet(method, fresh, stored_key, False)
            return
        assert response is not None
        mine = [e for e in fresh.get(table_id, []) if e.request_key == stored_key]
        others = [
            e
            for events in fresh.values()
            for e in events
            if e.request_key != stored_key and not written_by_server(e)
        ]
        if others:
            e = others[0]
            self.fail(
                f"foreign-events/{method}",
                f"{method} with request id {_short(request_id)} was followed by event "
                f"{e.sequence} ({e.WhichOneof('event')}) with request key {_short(e.request_key)}",
            )
        answer = response.SerializeToString(deterministic=True)
        first = self.answers.get(key)
        if mine:
            if first is None:
                self.answers[key] = answer
            return
        if first is None:
            earlier = self.first_use.get(request_id)
            origin = (
                f"the id was first used by {earlier}"
                if earlier is not None
                else "the id is the service's own"
                if ":" in request_id
                else "the id was never used before"
            )
            kind = "ai-answer-swallowed" if who.startswith("AI worker") else "ok-without-effect"
            self.fail(
                f"{kind}/{method}",
                f"{method} as {who} with request id {_short(request_id)} answered OK and "
                f"changed nothing; this caller never sent this request before ({origin}); "
                f"answer: {describe(response)[:300]}",
            )
        elif first != answer:
            self.fail(
                f"retry-answer/{method}",
                f"a retry of {method} got {describe(response)}, not its first answer",
            )

    def _harvest(self, message: Message) -> None:
        """Remember request ids a caller could read from what came back."""
        if isinstance(message, epb.StoredEvent):
            if message.request_id and message.request_id not in self.seen_ids[-200:]:
                self.seen_ids.append(message.request_id)
            return
        for descriptor, value in message.ListFields():
            if descriptor.message_type is None:
                continue
            items = value if descriptor.is_repeated else [value]
            for item in items:
                self._harvest(item)

    def new_table(self, table_id: str) -> None:
        if table_id not in self.ledgers:
            self.tables.append(table_id)
            self.ledgers[table_id] = Ledger(table_id)

    def forget(self, table_id: str) -> None:
        self.tables.remove(table_id)
        del self.ledgers[table_id]

    def step(self, coro: Coroutine[Any, Any, None]) -> None:
        if self.down:
            coro.close()
            return
        try:
            self.h.run(coro)
        except StepHung as exc:
            self.fail("hung/step", f"{exc} (its calls are the notes before it)")
            self.down = True  # the loop may be stuck: the rest of this sequence is skipped
        finally:
            # hypothesis notes (printed with a failing example) only work in its own thread
            for line in self.notes:
                note(line)
            self.notes.clear()
        self._flush()

    def teardown(self) -> None:
        self.h.hands += sum(ledger.hands_started for ledger in self.ledgers.values())
        self.h.showdowns += sum(ledger.showdowns for ledger in self.ledgers.values())
        if self.failed:
            lines = list(dict.fromkeys(str(v) for v in self.failed))
            raise AssertionError("invariant violated:\n" + "\n".join(lines))

    # ------------------------------------------------------------- set-up

    @initialize(
        config=sane_configs, tweak=tweaks, kinds=st.lists(st.booleans(), min_size=2, max_size=3)
    )
    def start(self, config: dict[str, Any], tweak: dict[str, Any], kinds: list[bool]) -> None:
        """A table to play at (sane, or sane with one hostile setting), and 2-3 players."""

        async def go() -> None:
            spec = {**config, **tweak}
            table_id = await self._create(
                spec, f"f-{uuid.uuid4().hex[:10]}", ("fresh",), ("admin",)
            )
            if table_id is None:
                table_id = await self._create(
                    config, f"f-{uuid.uuid4().hex[:10]}", ("fresh",), ("admin",)
                )
            if table_id is None:
                self.fail("setup", f"a sane table was refused: {config}")
                return
            for seat, ai in enumerate(kinds):
                await self._seat(
                    table_id, seat, None, None, 1000, 1 if ai else 0, ("fresh",), ("admin",)
                )

        self.step(go())

    async def _create(
        self,
        spec: dict[str, Any],
        table_id: str,
        rid: tuple[Any, ...],
        caller: tuple[Any, ...],
        name: str = "fuzz",
    ) -> str | None:
        request_id = self.request_id(rid, table_id)
        md, _, who = self.credential(caller, None, table_id, 0)
        request = pb.CreateTableRequest(
            table_id=table_id, name=name, config=config_proto(spec), request_id=request_id
        )
        if table_id:
            self.new_table(table_id)
        response = await self.call(
            "CreateTable", request, md, Viewer(table_id), who, request_id, table_id
        )
        if response is None:
            return None
        assert isinstance(response, pb.CreateTableResponse)
        created = response.table.table_id
        self.new_table(created)
        await self.sync()
        return created

    async def _seat(
        self,
        table_id: str,
        seat: int | None,
        player_id: str | None,
        name: str | None,
        stack: int,
        ai_level: int,
        rid: tuple[Any, ...],
        caller: tuple[Any, ...],
    ) -> None:
        request_id = self.request_id(rid, table_id)
        md, _, who = self.credential(caller, None, table_id, seat or 0)
        pid = player_id if player_id is not None else f"p-{uuid.uuid4().hex[:8]}"
        request = pb.SeatPlayerRequest(
            table_id=table_id,
            player_id=pid,
            display_name=name if name is not None else f"Player {pid[-4:]}",
            stack=stack,
            ai_level=ai_level,  # type: ignore[arg-type]
            request_id=request_id,
        )
        if seat is not None:
            request.seat = seat
        response = await self.call(
            "SeatPlayer", request, md, Viewer(table_id), who, request_id, table_id
        )
        if isinstance(response, pb.SeatPlayerResponse) and table_id in self.ledgers:
            since = response.sequence
            known = self.current(table_id, response.seat)
            if known is None or known.since != since:
                self.seats.append(
                    SeatRef(table_id, response.seat, pid, response.seat_token, ai_level != 0, since)
                )

    # ------------------------------------------------------------- admin rules

    @rule(
        config=configs,
        table_id=st.one_of(st.just(""), st.just("fresh"), st.just("fresh"), odd_text),
        rid=request_ids,
        caller=admin_callers,
        name=st.one_of(st.just("fuzz"), odd_text),
    )
    def create_table(
        self,
        config: dict[str, Any],
        table_id: str | Big,
        rid: tuple[Any, ...],
        caller: tuple[Any, ...],
        name: str | Big,
    ) -> None:
        if len(self.tables) >= MAX_TABLES:
            return
        tid = f"f-{uuid.uuid4().hex[:10]}" if table_id == "fresh" else str(table_id)
        self.step(self._created(config, tid, rid, caller, str(name)))

    async def _created(self, *args: Any) -> None:
        await self._create(*args)

    @rule(
        table=table_picks,
        seat=st.one_of(st.none(), st.integers(0, 8), st.integers(0, 8), int32s),
        player_id=st.one_of(st.none(), st.none(), st.none(), odd_text),
        name=st.one_of(st.none(), st.none(), odd_text),
        stack=stacks,
        ai_level=st.sampled_from([0, 0, 1, 2, 3, 7, -1]),
        rid=request_ids,
        caller=admin_callers,
    )
    def seat_player(
        self,
        table: tuple[Any, ...],
        seat: int | None,
        player_id: str | Big | None,
        name: str | Big | None,
        stack: int,
        ai_level: int,
        rid: tuple[Any, ...],
        caller: tuple[Any, ...],
    ) -> None:
        if len(self.seats) >= MAX_SEATS:
            return
        table_id = self.table_of(table)
        pid = None if player_id is None else str(player_id)
        display = None if name is None else str(name)
        self.step(self._seat(table_id, seat, pid, display, stack, ai_level, rid, caller))

    # ------------------------------------------------------------- seat rules

    def _seat_call(
        self,
        who: int,
        caller: tuple[Any, ...],
        seat: int | None,
        table: tuple[Any, ...] | None = None,
    ) -> tuple[str, int, tuple[tuple[str, str], ...], Viewer, str]:
        ref = self.seats[who % len(self.seats)] if self.seats else None
        table_id = self.table_of(table) if table is not None else (ref.table_id if ref else "")
        number = seat if seat is not None else (ref.seat if ref is not None else 0)
        md, viewer, name = self.credential(caller, ref, table_id, number)
        return table_id, number, md, viewer, name

    @rule(who=st.integers(0, MAX_SEATS), caller=callers, seat=seat_numbers, rid=request_ids)
    def leave_seat(
        self, who: int, caller: tuple[Any, ...], seat: int | None, rid: tuple[Any, ...]
    ) -> None:
        table_id, number, md, viewer, name = self._seat_call(who, caller, seat)
        request_id = self.request_id(rid, table_id)
        request = pb.LeaveSeatRequest(table_id=table_id, seat=number, request_id=request_id)
        self.step(self._unit("LeaveSeat", request, md, viewer, name, request_id, table_id))

    @rule(who=st.integers(0, MAX_SEATS), caller=callers, seat=seat_numbers, rid=request_ids)
    def sit_out(
        self, who: int, caller: tuple[Any, ...], seat: int | None, rid: tuple[Any, ...]
    ) -> None:
        table_id, number, md, viewer, name = self._seat_call(who, caller, seat)
        request_id = self.request_id(rid, table_id)
        request = pb.SitOutRequest(table_id=table_id, seat=number, request_id=request_id)
        self.step(self._unit("SitOut", request, md, viewer, name, request_id, table_id))

    @rule(who=st.integers(0, MAX_SEATS), caller=callers, seat=seat_numbers, rid=request_ids)
    def sit_in(
        self, who: int, caller: tuple[Any, ...], seat: int | None, rid: tuple[Any, ...]
    ) -> None:
        table_id, number, md, viewer, name = self._seat_call(who, caller, seat)
        request_id = self.request_id(rid, table_id)
        request = pb.SitInRequest(table_id=table_id, seat=number, request_id=request_id)
        self.step(self._unit("SitIn", request, md, viewer, name, request_id, table_id))

    @rule(
        who=st.integers(0, MAX_SEATS),
        caller=callers,
        seat=seat_numbers,
        amount=amounts,
        rid=request_ids,
    )
    def add_chips(
        self,
        who: int,
        caller: tuple[Any, ...],
        seat: int | None,
        amount: int,
        rid: tuple[Any, ...],
    ) -> None:
        table_id, number, md, viewer, name = self._seat_call(who, caller, seat)
        request_id = self.request_id(rid, table_id)
        request = pb.AddChipsRequest(
            table_id=table_id, seat=number, amount=amount, request_id=request_id
        )
        self.step(self._unit("AddChips", request, md, viewer, name, request_id, table_id))

    @rule(
        who=st.integers(0, MAX_SEATS),
        caller=callers,
        seat=seat_numbers,
        hand=hand_picks,
        rid=request_ids,
    )
    def show_cards(
        self,
        who: int,
        caller: tuple[Any, ...],
        seat: int | None,
        hand: tuple[Any, ...],
        rid: tuple[Any, ...],
    ) -> None:
        table_id, number, md, viewer, name = self._seat_call(who, caller, seat)
        request_id = self.request_id(rid, table_id)
        request = pb.ShowCardsRequest(
            table_id=table_id,
            seat=number,
            hand_id=self.hand_id(hand, table_id),
            request_id=request_id,
        )
        self.step(self._unit("ShowCards", request, md, viewer, name, request_id, table_id))

    def hand_id(self, pick: tuple[Any, ...], table_id: str) -> str:
        if pick[0] == "odd":
            return str(pick[1])
        ledger = self.ledgers.get(table_id)
        if pick[0] == "latest" or ledger is None:
            return ""
        return f"{table_id}:{ledger.hands_started + pick[1]}"

    async def _unit(
        self,
        method: str,
        request: Message,
        md: tuple[tuple[str, str], ...],
        viewer: Viewer,
        who: str,
        request_id: str,
        table_id: str,
    ) -> None:
        await self.call(method, request, md, viewer, who, request_id, table_id)

    @rule(
        who=st.integers(0, MAX_SEATS),
        caller=callers,
        seat=seat_numbers,
        action=actions,
        expected=expected_sequences,
        rid=request_ids,
    )
    def submit_action(
        self,
        who: int,
        caller: tuple[Any, ...],
        seat: int | None,
        action: dict[str, Any],
        expected: tuple[Any, ...],
        rid: tuple[Any, ...],
    ) -> None:
        """Any action, by anyone, with any request id and sequence."""
        table_id, number, md, viewer, name = self._seat_call(who, caller, seat)
        request_id = self.request_id(rid, table_id)
        ledger = self.ledgers.get(table_id)
        version = ledger.version if ledger is not None else 0
        if expected[0] == "current":
            sequence = max(0, version + expected[1])
        else:
            sequence = 0 if expected[0] == "zero" else expected[1]
        request = pb.SubmitActionRequest(
            table_id=table_id,
            seat=number,
            request_id=request_id,
            expected_sequence=sequence,
            action=_action(action),
        )
        self.step(self._unit("SubmitAction", request, md, viewer, name, request_id, table_id))

    @rule(table=st.integers(0, MAX_TABLES), moves=st.integers(1, 8), seed=st.integers(0, 2**16))
    def play(self, table: int, moves: int, seed: int) -> None:
        """Legal play for whoever is to act, so that hands reach their showdowns."""
        self._play_at(table, moves, seed)

    # The same rule twice more, so that legal play is a good share of all steps (hypothesis
    # picks rules uniformly) and hands reach their showdowns.
    @rule(table=st.integers(0, MAX_TABLES), moves=st.integers(1, 8), seed=st.integers(0, 2**16))
    def play_on(self, table: int, moves: int, seed: int) -> None:
        self._play_at(table, moves, seed)

    @rule(table=st.integers(0, MAX_TABLES), moves=st.integers(1, 8), seed=st.integers(0, 2**16))
    def play_more(self, table: int, moves: int, seed: int) -> None:
        self._play_at(table, moves, seed)

    def _play_at(self, table: int, moves: int, seed: int) -> None:
        if self.tables:
            table_id = self.tables[table % len(self.tables)]
            self.step(self._play(table_id, moves, random.Random(seed)))

    async def _play(self, table_id: str, moves: int, rng: random.Random) -> None:
        for _ in range(moves):
            view = await self.call(
                "GetTableView",
                pb.GetTableViewRequest(table_id=table_id),
                (),
                Viewer(table_id),
                "spectator",
            )
            if not isinstance(view, pb.GetTableViewResponse):
                return
            hand = view.view.hand
            if not hand.HasField("to_act") or hand.street == epb.STREET_COMPLETE:
                if self.ledgers[table_id].can_deal():
                    await self._await_event(table_id, 2.0)
                    continue
                return
            ref = self.current(table_id, hand.to_act)
            if ref is None:
                return
            if ref.ai:
                await self._play_ai(table_id, ref, view.view.table.sequence, rng)
                continue
            md = (("authorization", f"Bearer {ref.token}"),)
            mine = await self.call(
                "GetTableView",
                pb.GetTableViewRequest(table_id=table_id, seat=ref.seat),
                md,
                self._viewer(ref),
                "own",
            )
            if not isinstance(mine, pb.GetTableViewResponse) or not mine.view.hand.legal_actions:
                return
            # Legal play, sometimes with the id the service will give the next AI decision
            # (an attacker who plays by the rules but squats the server's ids).
            sequence = mine.view.table.sequence
            roll = rng.random()
            request_id = f"ai:{table_id}:{sequence + 1}" if roll < 0.1 else uuid.uuid4().hex
            request = pb.SubmitActionRequest(
                table_id=table_id,
                seat=ref.seat,
                request_id=request_id,
                expected_sequence=mine.view.table.sequence,
                action=_choose(mine.view, rng),
            )
            await self.call(
                "SubmitAction", request, md, self._viewer(ref), "own", request_id, table_id
            )

    async def _play_ai(
        self, table_id: str, ref: SeatRef, sequence: int, rng: random.Random
    ) -> None:
        """Answer the service's decision request as an AI worker would."""
        deadline = time.monotonic() + 3.0
        while (decision := self.decisions.get((table_id, sequence))) is None:
            await self.read_decisions()
            if time.monotonic() > deadline:
                return  # none published (yet): not ours to judge here
            await asyncio.sleep(0.02)
        request = pb.SubmitActionRequest(
            table_id=table_id,
            seat=decision.seat,
            request_id=decision.request_id,
            expected_sequence=decision.expected_sequence,
            action=_choose(decision.view, rng),
        )
        md, viewer, _ = self._ai(table_id, decision.seat)
        await self.call(
            "SubmitAction", request, md, viewer, "AI worker", decision.request_id, table_id
        )

    async def _await_event(self, table_id: str, seconds: float) -> bool:
        """Wait (bounded) for the table's stream to grow; whether it did."""
        start = self.ledgers[table_id].version
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            await self.sync()
            if self.ledgers[table_id].version > start:
                return True
            await asyncio.sleep(0.05)
        return False

    # ------------------------------------------------------------- reads

    @rule(table=table_picks)
    def get_table(self, table: tuple[Any, ...]) -> None:
        table_id = self.table_of(table)
        self.step(
            self._read(
                "GetTable", pb.GetTableRequest(table_id=table_id), (), Viewer(table_id), "anyone"
            )
        )

    async def _read(
        self,
        method: str,
        request: Message,
        md: tuple[tuple[str, str], ...],
        viewer: Viewer,
        who: str,
    ) -> None:
        await self.call(method, request, md, viewer, who)

    @rule(who=st.one_of(st.none(), st.integers(0, MAX_SEATS)), caller=callers, seat=seat_numbers)
    def get_table_view(self, who: int | None, caller: tuple[Any, ...], seat: int | None) -> None:
        request, md, viewer, name = self._view_request(pb.GetTableViewRequest, who, caller, seat)
        self.step(self._read("GetTableView", request, md, viewer, name))

    def _view_request(
        self,
        kind: Callable[..., Message],
        who: int | None,
        caller: tuple[Any, ...],
        seat: int | None,
    ) -> tuple[Any, tuple[tuple[str, str], ...], Viewer, str]:
        if who is None or not self.seats:
            table_id = self.tables[0] if self.tables else ""
            return kind(table_id=table_id), (), Viewer(table_id), "spectator"
        table_id, number, md, viewer, name = self._seat_call(who, caller, seat)
        return kind(table_id=table_id, seat=number), md, viewer, name

    @rule(
        who=st.one_of(st.none(), st.integers(0, MAX_SEATS)),
        caller=callers,
        seat=seat_numbers,
        hand=hand_picks,
    )
    def get_hand_history(
        self, who: int | None, caller: tuple[Any, ...], seat: int | None, hand: tuple[Any, ...]
    ) -> None:
        request, md, viewer, name = self._view_request(pb.GetHandHistoryRequest, who, caller, seat)
        request.hand_id = self.hand_id(hand, request.table_id)
        self.step(self._read("GetHandHistory", request, md, viewer, name))

    @rule(
        who=st.one_of(st.none(), st.integers(0, MAX_SEATS)),
        caller=callers,
        seat=seat_numbers,
        start=st.one_of(
            st.just(0), st.just(1), st.integers(-3, 3), st.sampled_from([2**63, 2**64 - 1])
        ),
        count=st.integers(1, 40),
    )
    def watch_table(
        self, who: int | None, caller: tuple[Any, ...], seat: int | None, start: int, count: int
    ) -> None:
        """A bounded number of watch-stream items, from the start, a resume point or beyond."""
        request, md, viewer, name = self._view_request(pb.WatchTableRequest, who, caller, seat)
        ledger = self.ledgers.get(request.table_id)
        version = ledger.version if ledger is not None else 0
        request.from_sequence = start if start > 3 or start in (0, 1) else max(0, version + start)
        self.step(self._watch(request, md, viewer, name, count))

    async def _watch(
        self,
        request: pb.WatchTableRequest,
        md: tuple[tuple[str, str], ...],
        viewer: Viewer,
        who: str,
        count: int,
    ) -> None:
        await self.sync()
        self.h.calls += 1
        ledger = self.ledgers.get(request.table_id)
        until = ledger.version if ledger is not None else 0
        stream = self.h.stub.WatchTable(request, metadata=md, timeout=CALL_TIMEOUT)
        items: list[pb.WatchTableResponse] = []
        error: grpc.aio.AioRpcError | None = None
        try:
            while len(items) < count:
                try:
                    item = await asyncio.wait_for(stream.read(), 2.0)
                except TimeoutError:
                    break  # nothing more for now: fine
                if item is grpc.aio.EOF:
                    break
                items.append(item)
                last = (
                    item.event.sequence if item.HasField("event") else item.snapshot.table.sequence
                )
                if last >= until and (items[0].HasField("event") or len(items) > 1):
                    break
        except grpc.aio.AioRpcError as err:
            error = err
        finally:
            stream.cancel()
        fresh = await self.sync()
        self.notes.append(
            f"WatchTable({describe(request)}) as {who} -> {len(items)} items"
            + (f", then {error.code().name}" if error is not None else "")
        )
        self._check_status("WatchTable", error)
        self._check_quiet("WatchTable", fresh, "", True)
        ledger = self.ledgers.get(viewer.table_id)
        for item in items:
            if ledger is not None:
                self.violations.extend(leaks(ledger, viewer, item, "WatchTable"))
            self._harvest(item)

    # ------------------------------------------------------------- service life

    @rule()
    def restart_service(self) -> None:
        """Stop the service and start another on the same Redis: it must come back."""
        if self.restarts >= 1:
            return
        self.restarts += 1
        self.step(self._restart())

    async def _restart(self) -> None:
        self.notes.append("restart the service")
        await self.h.stop()
        try:
            await self.h.start()
        except Exception as exc:
            self.fail("start-fails", f"the service does not start again: {exc!r}")
            self.down = True  # the remaining steps of this example have nothing to call

    @rule()
    def await_deal(self) -> None:
        """A table whose events say a hand is due deals it (or moves on) in good time."""
        self.step(self._await_deal())

    async def _await_deal(self) -> None:
        for table_id in self.tables:
            ledger = self.ledgers[table_id]
            if ledger.can_deal() and not await self._await_event(table_id, LIVENESS_S):
                self.fail(
                    "stalled",
                    f"table {table_id!r} has two seats in with chips and no hand, "
                    f"but nothing happened for {LIVENESS_S} s (at sequence {ledger.version})",
                )

    # ------------------------------------------------------------- invariants

    @invariant()
    def service_holds(self) -> None:
        """Health answers; chips are conserved and agree with the view; AI requests leak nothing."""
        self.step(self._holds())

    async def _holds(self) -> None:
        if self.h.health is None:
            return
        for service in ("", SERVICE_NAME):
            try:
                answer = await self.h.health.Check(
                    health_pb2.HealthCheckRequest(service=service), timeout=CALL_TIMEOUT
                )
                if answer.status != health_pb2.HealthCheckResponse.SERVING:
                    self.fail("health", f"health of {service!r} is {answer.status}")
            except grpc.aio.AioRpcError as err:
                self.fail("health", f"health check of {service!r}: {err.code().name}")
        await self.sync()
        await self.read_decisions()
        for table_id in self.tables:
            await self._chips_agree(table_id)

    async def _chips_agree(self, table_id: str) -> None:
        ledger = self.ledgers[table_id]
        if not ledger.created:
            return
        if ledger.total() != ledger.expected_total():
            self.fail(
                "chips",
                f"table {table_id!r}: stacks and pot hold {ledger.total()} chips, "
                f"seating and AddChips minus leaving gives {ledger.expected_total()}",
            )
        try:
            answer = await self.h.stub.GetTableView(
                pb.GetTableViewRequest(table_id=table_id), timeout=CALL_TIMEOUT
            )
        except grpc.aio.AioRpcError as err:
            self._check_status("GetTableView", err)
            return
        view = answer.view
        await self.sync()  # the view may already hold a hand dealt since the last read
        self.violations.extend(leaks(ledger, Viewer(table_id), view, "GetTableView"))
        at = view.table.sequence
        expected = ledger.totals.get(at)
        if expected is None:
            return
        on_table = sum(s.stack for s in view.table.seats)
        hand = view.hand
        if hand.hand_id and hand.street != epb.STREET_COMPLETE:
            on_table += sum(s.committed for s in hand.seats)
        if on_table != expected:
            self.fail(
                "chips-view",
                f"table {table_id!r} at {at}: the view holds {on_table} chips "
                f"(stacks and committed), the events {expected}",
            )

    async def read_decisions(self) -> None:
        """Check every new AI decision request: only its own seat's cards, no secrets."""
        entries = await self.h.decision_requests(self.ai_after)
        if entries:
            # A request is published after its events were appended: read them now, so that
            # the oracle knows every hand the requests can name.
            await self.sync()
        for entry_id, request in entries:
            self.ai_after = entry_id
            self.decisions[(request.table_id, request.expected_sequence)] = request
            ledger = self.ledgers.get(request.table_id)
            if ledger is not None:
                viewer = Viewer(request.table_id, request.seat)
                self.violations.extend(leaks(ledger, viewer, request, "DecisionRequest"))


# ----------------------------------------------------------------- actions


def _action(spec: dict[str, Any]) -> tpb.Action:
    action = tpb.Action()
    for kind, fields in spec.items():
        getattr(action, kind).SetInParent()
        for name, value in fields.items():
            if name == "cards":
                getattr(action, kind).cards.extend(value)
            else:
                setattr(getattr(action, kind), name, value)
    return action


def _choose(view: tpb.TableView, rng: random.Random) -> tpb.Action:
    """Mostly the tests' random policy; sometimes any legal action at any legal amount."""
    legal = list(view.hand.legal_actions)
    if not legal or rng.random() < 0.75:
        return random_policy(view, rng)
    pick = rng.choice(legal)
    kinds: dict[int, Callable[[], tpb.Action]] = {
        tpb.ACTION_TYPE_FOLD: lambda: tpb.Action(fold=tpb.Action.Fold()),
        tpb.ACTION_TYPE_CHECK: lambda: tpb.Action(check=tpb.Action.Check()),
        tpb.ACTION_TYPE_CALL: lambda: tpb.Action(call=tpb.Action.Call()),
        tpb.ACTION_TYPE_ALL_IN: lambda: tpb.Action(all_in=tpb.Action.AllIn()),
        tpb.ACTION_TYPE_BET: lambda: tpb.Action(
            bet_to=tpb.Action.BetTo(amount=rng.randint(pick.min_to, max(pick.min_to, pick.max_to)))
        ),
        tpb.ACTION_TYPE_RAISE: lambda: tpb.Action(
            raise_to=tpb.Action.RaiseTo(
                amount=rng.randint(pick.min_to, max(pick.min_to, pick.max_to))
            )
        ),
    }
    make = kinds.get(pick.type)
    return make() if make is not None else random_policy(view, rng)


def _ascii(text: str) -> str:
    """Metadata values must be printable ASCII; keep the hostility, drop what gRPC refuses."""
    cleaned = "".join(c for c in text if 32 <= ord(c) < 127)
    return cleaned[:8000] or "x"


def machine_for(harness: Harness) -> type[ApiFuzzer]:
    """The state machine class bound to a running harness (hypothesis instantiates it)."""
    return type("ApiFuzzer", (ApiFuzzer,), {"harness": harness})
