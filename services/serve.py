"""``felt serve``: the whole product in one process, for a laptop (what ``make run`` starts).

A table service and a few AI workers share one event loop and one Redis
(``REDIS_URL``; ``make run`` starts a private one when it is unset). With
``--demo`` (the default) it also opens two tables where AI players of all
three levels play, one of each game, with a free seat to join. In production
the same pieces run as separate processes (``felt table-service``,
``felt ai-worker``), scaled independently; see ``deploy/``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import secrets
import signal
import uuid

import grpc
import structlog

from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from services.ai_worker.worker import AiWorker, WorkerConfig
from services.table.server import TableServerConfig, start_table_server

log = structlog.get_logger("felt.serve")

DEMO_TABLES = {
    "demo-holdem": epb.TableConfig(
        variant=epb.VARIANT_NLHE, seat_count=6, small_blind=5, big_blind=10
    ),
    "demo-draw": epb.TableConfig(
        variant=epb.VARIANT_DRAW5, seat_count=5, ante=1, small_bet=10, big_bet=20
    ),
}
DEMO_BOTS = (epb.AI_LEVEL_HARD, epb.AI_LEVEL_NORMAL, epb.AI_LEVEL_EASY)


def run(args: argparse.Namespace) -> int:
    from felt.logging import configure_logging

    configure_logging(json=False)
    return asyncio.run(serve_all(args.workers, args.demo))


async def serve_all(workers: int, demo: bool) -> int:
    """Run until SIGTERM/SIGINT; then drain the workers and stop the table service."""
    # The AI token only has to be shared inside this process unless one is given.
    ai_token = os.environ.get("FELT_AI_TOKEN") or secrets.token_urlsafe(24)
    config = TableServerConfig.from_env()
    config.secrets = dataclasses.replace(config.secrets, ai_token=ai_token)
    table = await start_table_server(config)
    target = f"127.0.0.1:{table.port}"
    pool = [
        AiWorker(
            WorkerConfig(
                redis_url=config.redis_url,
                table_target=target,
                ai_token=ai_token,
                metrics_port=None,
                stream=config.ai_stream,
            )
        )
        for _ in range(max(0, workers))
    ]
    for worker in pool:
        await worker.start()
    if demo:
        await open_demo_tables(target, config.secrets.admin_token)
    print(
        f"Felt is running: table service on {target} (gRPC, reflection on), "
        f"{len(pool)} AI workers. Ctrl-C stops it.",
        flush=True,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    for worker in pool:
        worker.request_stop()
    for worker in pool:
        await worker.stop()
    await table.stop()
    return 0


async def open_demo_tables(target: str, admin_token: str) -> None:
    """Open (or find, after a restart) the demo tables and seat AI players at them."""
    metadata = (("authorization", f"Bearer {admin_token}"),) if admin_token else ()
    async with grpc.aio.insecure_channel(target) as channel:
        stub = rpc.TableServiceStub(channel)
        for table_id, table_config in DEMO_TABLES.items():
            try:
                await stub.CreateTable(
                    pb.CreateTableRequest(
                        table_id=table_id,
                        name=table_id,
                        config=table_config,
                        request_id=f"demo-create-{table_id}",
                    ),
                    metadata=metadata,
                )
            except grpc.aio.AioRpcError as exc:
                if exc.code() != grpc.StatusCode.ALREADY_EXISTS:
                    raise
                continue  # kept from an earlier run (same Redis): its players are there
            for level in DEMO_BOTS:
                name = epb.AiLevel.Name(level).removeprefix("AI_LEVEL_").lower()
                await stub.SeatPlayer(
                    pb.SeatPlayerRequest(
                        table_id=table_id,
                        player_id=f"bot-{name}-{uuid.uuid4().hex[:6]}",
                        display_name=f"{name.capitalize()} bot",
                        stack=1000,
                        ai_level=level,
                        request_id=f"demo-seat-{table_id}-{name}",
                    ),
                    metadata=metadata,
                )
            log.info("demo_table_opened", table_id=table_id)
