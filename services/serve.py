"""``felt serve``: the whole product in one process, for a laptop (what ``make run`` starts).

A table service and a few AI workers share one event loop and one Redis
(``REDIS_URL``; ``make run`` starts a private one when it is unset). With
``--demo`` (the default) it also opens two tables where AI players of all
three levels play, one of each game, with a free seat to join; each has an
action clock, so a visitor who sits down and walks away is timed out (and sat
out after a few time-outs) instead of freezing the table. In production the
same pieces run as separate processes (``felt table-service``,
``felt ai-worker``), scaled independently; see ``deploy/``.

``felt serve`` is for development but is no exception to the table service's
rule: without ``FELT_TOKEN_SECRET`` and ``FELT_ADMIN_TOKEN`` it starts only
in development mode, asked for with ``--dev`` (what ``make run`` does) or
``FELT_DEV_MODE=1``.

After a quick restart (a crash, ``kill -9``) on the same Redis the demo
tables are still leased to the previous process. The instance id (host name
and port, see ``services.table.server``) is the same, so the new process
takes its own leases back at once; with another id it waits for them to
expire: the demo set-up retries ``UNAVAILABLE`` for a bounded time.

The demo tables keep playing for as long as the process runs
(``keep_demo_tables_playing``): a bot that loses its last chip is given the
demo stack again, and a bot the action clock sat out is sat in again. Without
it the bots' own play ends every demo table within minutes or hours: once one
bot holds every chip, nobody is dealt in again, and a visitor finds a table
that never moves. These chips belong to no lobby (``felt serve`` runs none;
under ``make run`` the demo tables are not lounges): each refill is a
``ChipsAdded`` in the table's stream, by the service credential, like every
chip a table holds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import secrets
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import TypeVar

import grpc
import structlog
from google.protobuf.duration_pb2 import Duration

from felt.config.settings import FELT_AI_TOKEN
from felt.service.rpc import started_unless_stopped, stop_event, until_stopped
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from services.ai_worker.worker import AiWorker, WorkerConfig
from services.grpc_server import PortInUse
from services.table.server import ConfigError, TableServerConfig, start_table_server

log = structlog.get_logger("felt.serve")
T = TypeVar("T")

# Demo seats have this long to act (bots answer in well under a second), and a seat
# that times out this many hands in a row is sat out, so the bots play on.
DEMO_ACTION_CLOCK = Duration(seconds=20)
DEMO_MAX_TIMEOUTS = 2
DEMO_TABLES = {
    "demo-holdem": epb.TableConfig(
        variant=epb.VARIANT_NLHE,
        seat_count=6,
        small_blind=5,
        big_blind=10,
        action_clock=DEMO_ACTION_CLOCK,
        max_consecutive_timeouts=DEMO_MAX_TIMEOUTS,
    ),
    "demo-draw": epb.TableConfig(
        variant=epb.VARIANT_DRAW5,
        seat_count=5,
        ante=1,
        small_bet=10,
        big_bet=20,
        action_clock=DEMO_ACTION_CLOCK,
        max_consecutive_timeouts=DEMO_MAX_TIMEOUTS,
    ),
}
DEMO_BOTS = (epb.AI_LEVEL_HARD, epb.AI_LEVEL_NORMAL, epb.AI_LEVEL_EASY)
DEMO_STACK = 1000
# How often the demo keeper looks at the demo tables (two GetTable calls a round).
DEMO_KEEPER_EVERY_S = 2.0


def run(args: argparse.Namespace) -> int:
    from felt.service.logging import configure_logging

    configure_logging(dev=args.dev or None)
    try:
        return asyncio.run(serve_all(args.workers, args.demo, dev=args.dev))
    except (ConfigError, PortInUse) as exc:
        print(f"felt serve: {exc}", file=sys.stderr, flush=True)
        return 2


def worker_config(
    table: TableServerConfig, target: str, ai_token: str, env: Mapping[str, str] | None = None
) -> WorkerConfig:
    """The in-process AI workers' settings: the ``FELT_AI_*`` environment an ``felt
    ai-worker`` reads (trim interval, claim idle time, concurrency, ...), with what this
    process decides itself: its table service, Redis, stream and shards, the shared AI
    token, no metrics server of their own (the table service's serves), and a consumer name
    each (``FELT_AI_CONSUMER`` names one process's single worker; here there may be several).

    Built by hand before, ``felt serve`` ignored every ``FELT_AI_*`` setting: the archive
    run's once-a-second trims (``FELT_AI_TRIM_INTERVAL_S=1``) ran every 10 s, the default.
    """
    return dataclasses.replace(
        WorkerConfig.from_env(env),
        redis_url=table.redis_url,
        table_target=target,
        ai_token=ai_token,
        metrics_port=None,
        stream=table.ai_stream,
        shards=table.decision_shards,
        consumer="",
    )


async def serve_all(workers: int, demo: bool, *, dev: bool = False) -> int:
    """Run until SIGTERM/SIGINT; then drain the workers and stop the table service.

    The signals are handled from before the table service starts: it answers calls (and
    holds its tables' leases) while the AI workers start and the demo tables open, so a
    signal then (Ctrl-C as ``make run`` starts) gives up the opening and stops what started
    as any stop does. Left to Python's default, SIGTERM ended the process at once there,
    nothing stopped and no ``table_service_stopped`` logged."""
    # The AI token only has to be shared inside this process unless one is given.
    ai_token = FELT_AI_TOKEN.read() or secrets.token_urlsafe(24)
    config = TableServerConfig.from_env(dev=dev)
    config.secrets = dataclasses.replace(config.secrets, ai_token=ai_token)
    # Read (and check) the workers' settings before anything starts: a bad FELT_AI_* value
    # stops `felt serve` before it listens, not after, and every worker gets the same ones.
    settings = worker_config(config, "", ai_token)
    stop = stop_event()
    table = await started_unless_stopped(stop, start_table_server(config), "table service")
    if table is None:
        return 0
    target = f"127.0.0.1:{table.port}"
    settings = dataclasses.replace(settings, table_target=target)
    pool = [AiWorker(settings) for _ in range(max(0, workers))]
    keeper: asyncio.Task[None] | None = None
    try:
        for worker in pool:
            await started_unless_stopped(stop, worker.start(), "ai worker")
            if stop.is_set():
                break
        # The previous owner's leases (if it crashed under another id) expire within a TTL.
        patience_s = 3 * config.lease_ttl_ms / 1000 + 5
        if not stop.is_set() and (
            not demo
            or await until_stopped(
                stop, open_demo_tables(target, config.secrets.admin_token, patience_s=patience_s)
            )
        ):
            if demo:
                keeper = asyncio.get_running_loop().create_task(
                    keep_demo_tables_playing(target, config.secrets.admin_token, ai_token)
                )
            print(
                f"Felt is running: table service on {target} (gRPC, reflection on), "
                f"{len(pool)} AI workers. Ctrl-C stops it.",
                flush=True,
            )
            await stop.wait()
    finally:
        if keeper is not None:
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await keeper
        for worker in pool:
            worker.request_stop()
        for worker in pool:
            await worker.stop()
        await table.stop()
    return 0


async def open_demo_tables(target: str, admin_token: str, patience_s: float = 20.0) -> None:
    """Open (or find, after a restart) the demo tables and seat AI players at them.

    Idempotent: fixed request ids and player ids, so a restart on the same Redis
    gets the first answers back. A table still leased to a previous process
    answers ``UNAVAILABLE`` until its lease is ours or has expired: each call is
    retried for up to ``patience_s``.
    """
    metadata = (("authorization", f"Bearer {admin_token}"),)
    async with grpc.aio.insecure_channel(target) as channel:
        stub = rpc.TableServiceStub(channel)
        for table_id, table_config in DEMO_TABLES.items():
            create = pb.CreateTableRequest(
                table_id=table_id,
                name=table_id,
                config=table_config,
                request_id=f"demo-create-{table_id}",
            )
            try:
                await _patiently(partial(stub.CreateTable, create, metadata=metadata), patience_s)
            except grpc.aio.AioRpcError as exc:
                if exc.code() != grpc.StatusCode.ALREADY_EXISTS:
                    raise
                continue  # kept from an earlier run (same Redis): its players are there
            for level in DEMO_BOTS:
                name = _level_name(level)
                request = pb.SeatPlayerRequest(
                    table_id=table_id,
                    player_id=_demo_bot_id(table_id, level),
                    display_name=f"{name.capitalize()} bot",
                    stack=DEMO_STACK,
                    ai_level=level,
                    request_id=f"demo-seat-{table_id}-{name}",
                )
                await _patiently(partial(stub.SeatPlayer, request, metadata=metadata), patience_s)
            log.info("demo_table_opened", table_id=table_id)


def _level_name(level: epb.AiLevel.ValueType) -> str:
    return epb.AiLevel.Name(level).removeprefix("AI_LEVEL_").lower()


def _demo_bot_id(table_id: str, level: epb.AiLevel.ValueType) -> str:
    """The player id a demo bot is seated under (the keeper finds its seats by it)."""
    return f"bot-{_level_name(level)}-{table_id}"


async def keep_demo_tables_playing(
    target: str, admin_token: str, ai_token: str, every_s: float = DEMO_KEEPER_EVERY_S
) -> None:
    """Until cancelled: every ``every_s``, ``mend_demo_tables`` (see the module's docstring).

    A round that fails (the table moving to another instance, Redis away) is logged and the
    next one tries again: the keeper never stops the process, nor the process it.
    """
    async with grpc.aio.insecure_channel(target) as channel:
        stub: rpc.TableServiceAsyncStub = rpc.TableServiceStub(channel)
        while True:
            try:
                await mend_demo_tables(stub, admin_token, ai_token)
            except grpc.aio.AioRpcError as exc:
                log.info("demo_keeper_waits", code=exc.code().name, detail=exc.details())
            except Exception as exc:  # never let the keeper die: the next round tries again
                log.warning("demo_keeper_failed", error=repr(exc))
            await asyncio.sleep(every_s)


async def mend_demo_tables(stub: rpc.TableServiceAsyncStub, admin_token: str, ai_token: str) -> int:
    """One round of the demo keeper: each demo bot with no chips gets ``DEMO_STACK`` again
    (``AddChips``, the service credential's), each one sitting out is sat in again
    (``SitIn``, the AI workers' credential, as for any AI seat). Returns how many seats
    it mended.

    Request ids name the table's sequence, so a round repeated on the same state (a retry,
    two keepers after a takeover) mends a seat once. A person's seat is never touched.
    """
    admin = (("authorization", f"Bearer {admin_token}"),)
    ai = (("authorization", f"Bearer {ai_token}"),)
    mended = 0
    for table_id in DEMO_TABLES:
        try:
            table = (await stub.GetTable(pb.GetTableRequest(table_id=table_id), timeout=10)).table
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.NOT_FOUND:
                continue
            raise
        bots = {_demo_bot_id(table_id, level) for level in DEMO_BOTS}
        for seat in table.seats:
            if seat.player_id not in bots:
                continue
            key = f"{table_id}-{seat.seat}-{table.sequence}"
            try:
                if seat.stack == 0:
                    add = pb.AddChipsRequest(
                        table_id=table_id,
                        seat=seat.seat,
                        amount=DEMO_STACK,
                        max_stack=DEMO_STACK,
                        request_id=f"demo-refill-{key}",
                    )
                    await stub.AddChips(add, metadata=admin, timeout=10)
                    log.info("demo_bot_refilled", table_id=table_id, seat=seat.seat)
                    mended += 1
                if seat.status == tpb.SEAT_STATUS_SITTING_OUT:
                    sit_in = pb.SitInRequest(
                        table_id=table_id, seat=seat.seat, request_id=f"demo-sit-in-{key}"
                    )
                    await stub.SitIn(sit_in, metadata=ai, timeout=10)
                    log.info("demo_bot_sat_in", table_id=table_id, seat=seat.seat)
                    mended += 1
            except grpc.aio.AioRpcError as exc:
                # The table moved on since GetTable (a hand started, the bot left): next round.
                if exc.code() not in (
                    grpc.StatusCode.FAILED_PRECONDITION,
                    grpc.StatusCode.ABORTED,
                ):
                    raise
    return mended


async def _patiently(call: Callable[[], Awaitable[T]], patience_s: float) -> T:
    """``call()``, retried while it answers ``UNAVAILABLE`` (a lease changing hands)."""
    deadline = time.monotonic() + patience_s
    delay = 0.1
    while True:
        try:
            return await call()
        except grpc.aio.AioRpcError as exc:
            if exc.code() != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                raise
            log.info("demo_table_busy", detail=exc.details(), retry_in_s=delay)
        await asyncio.sleep(delay)
        delay = min(1.0, delay * 2)
