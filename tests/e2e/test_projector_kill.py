"""The projector as a real process against a real bot run (issue 12): killed with SIGKILL at
random moments and restarted, and two projectors at once, every finished hand is archived
exactly once and equal to its stream; tables created during the run are found.

``felt serve`` (table service and AI workers, bots playing the demo tables and tables this
test opens later) writes to the test's Redis DB; projectors archive into a throw-away
migrated PostgreSQL database. At the end the table service stops, the last projector
catches up, and the archive is compared with the projection of every whole stream.
"""

from __future__ import annotations

import asyncio
import random
import signal
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
import grpc
import pytest
import redis.asyncio as redis_async_lib

from felt.storage.archive.postgres import PostgresHandArchive
from felt.storage.eventstore import RedisEventStore, archived_key
from felt.storage.migrations import migrate
from felt.storage.registry import RedisTableRegistry
from felt.wire.tokens import DEV_SERVICE_TOKEN
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from services.lobby.db_cli import MIGRATIONS
from tests.e2e.test_serve import READY, Launcher, Proc, _free_port, launcher  # noqa: F401
from tests.integration.lobby.conftest import _create, _drop, with_database
from tests.unit.archive.streams import archived

pytestmark = pytest.mark.timeout(300)
RUN_S = 35.0


@asynccontextmanager
async def archive_database(database_url: str, prefix: str = "felt_projector") -> AsyncIterator[str]:
    """A throw-away database on ``database_url``'s server, migrated; dropped afterwards."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    await _create(database_url, name)
    dsn = with_database(database_url, name)
    try:
        await migrate(dsn, MIGRATIONS)
        yield dsn
    finally:
        await _drop(database_url, name)


@pytest.fixture
async def archive_db(database_url: str) -> AsyncIterator[str]:
    async with archive_database(database_url) as dsn:
        yield dsn


async def _start_projector(procs: Launcher, dsn: str, member: str) -> Proc:
    proc = await procs.start(
        "projector",
        "--metrics-port",
        "off",
        DATABASE_URL=dsn,
        FELT_PROJECTOR_ID=member,
        FELT_PROJECTOR_SCAN_MS="200",
        FELT_PROJECTOR_LEASE_MS="1000",
    )
    assert proc.first_line.startswith("projector "), (proc.first_line, proc.log.read_text())
    return proc


# `felt serve --dev`'s public service credential: opening tables is an internal call.
SERVICE = (("authorization", f"Bearer {DEV_SERVICE_TOKEN}"),)


async def _open_table(table_id: str, variant: epb.Variant.ValueType, port: int) -> None:
    """A table of three easy bots, as an operator opens one mid-run."""
    config = (
        epb.TableConfig(variant=variant, seat_count=6, small_blind=5, big_blind=10)
        if variant == epb.VARIANT_NLHE
        else epb.TableConfig(variant=variant, seat_count=5, ante=1, small_bet=10, big_bet=20)
    )
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = rpc.TableServiceStub(channel)
        await stub.CreateTable(
            pb.CreateTableRequest(
                table_id=table_id, name=table_id, config=config, request_id=f"c-{table_id}"
            ),
            metadata=SERVICE,
            timeout=10,
        )
        for n in range(3):
            await stub.SeatPlayer(
                pb.SeatPlayerRequest(
                    table_id=table_id,
                    player_id=f"bot-{table_id}-{n}",
                    display_name=f"Bot {n}",
                    stack=1000,
                    ai_level=epb.AI_LEVEL_EASY,
                    request_id=f"s-{table_id}-{n}",
                ),
                metadata=SERVICE,
                timeout=10,
            )


async def test_killed_and_doubled_projectors_archive_every_hand_exactly_once(
    launcher: Launcher,  # noqa: F811
    redis: redis_async_lib.Redis,
    archive_db: str,
) -> None:
    rng = random.Random(12)
    port = _free_port()  # a fixed one in the ephemeral range was taken, now and then
    serve = await launcher.start(
        "serve",
        "--dev",
        "--workers",
        "2",
        FELT_TABLE_ADDR=f"127.0.0.1:{port}",
        FELT_TRIM_RETAIN_S="3600",  # the whole streams stay, to compare the archive with
    )
    assert serve.first_line.startswith(READY), (serve.first_line, serve.log.read_text())
    projectors = [await _start_projector(launcher, archive_db, "p-a")]
    kills = 0
    started = time.monotonic()
    opened: list[str] = []
    while time.monotonic() - started < RUN_S:
        await asyncio.sleep(rng.uniform(0.3, 2.0))
        if len(opened) < 2 and time.monotonic() - started > 4 * (len(opened) + 1):
            table_id = f"late-{len(opened)}"
            await _open_table(table_id, [epb.VARIANT_NLHE, epb.VARIANT_DRAW5][len(opened)], port)
            opened.append(table_id)
        victim = rng.choice(projectors)
        victim.process.send_signal(signal.SIGKILL)
        assert await victim.process.wait() == -signal.SIGKILL
        kills += 1
        projectors.remove(victim)
        # Restart under the same id or a new one; now and then run two at once.
        count = 2 if rng.random() < 0.4 else 1
        while len(projectors) < count:
            member = rng.choice(["p-a", "p-b", f"p-{kills}"])
            if any(member in p.log.read_text() for p in projectors):
                member = f"p-x{kills}"
            projectors.append(await _start_projector(launcher, archive_db, member))
    serve.process.send_signal(signal.SIGTERM)
    assert await serve.process.wait() == 0, serve.log.read_text()[-3000:]
    assert kills >= 4

    registry = RedisTableRegistry(redis)
    tables = await registry.table_ids()
    assert {"demo-holdem", "demo-draw", *opened} <= tables
    store = RedisEventStore(redis)
    pool = await asyncpg.create_pool(archive_db, min_size=1, max_size=4)
    try:
        archive = PostgresHandArchive(pool)
        streams = {t: await store.read(t) for t in tables}
        expected = {t: archived(t, records) for t, records in streams.items()}
        # The last projectors catch up with the ended streams.
        deadline = time.monotonic() + 60
        while True:
            counts = {
                t: await pool.fetchval("SELECT count(*) FROM archived_hands WHERE table_id=$1", t)
                for t in tables
            }
            if all(counts[t] == len(expected[t]) for t in tables):
                break
            assert time.monotonic() < deadline, (counts, {t: len(h) for t, h in expected.items()})
            await asyncio.sleep(0.5)
        await asyncio.sleep(1.0)  # late shows, marks
        total = 0
        for t in tables:
            for hand in expected[t]:
                assert await archive.hand(hand.hand_id) == hand
            total += len(expected[t])
            cursor = await archive.cursor(t)
            assert int(await redis.get(archived_key(t)) or 0) == cursor.position
        assert total >= 40, f"only {total} hands were played"
        for opened_table in opened:
            assert expected[opened_table], f"{opened_table} played no hand"
        print(f"{total} hands at {len(tables)} tables, {kills} projectors killed")
        events = await pool.fetchval("SELECT count(*) FROM archived_events")
        assert events == sum(len(h.events) for hs in expected.values() for h in hs)
    finally:
        await pool.close()
        await store.aclose()
    for p in projectors:
        p.process.send_signal(signal.SIGTERM)
        assert await p.process.wait() == 0
        log = p.log.read_text()
        assert "Traceback" not in log, log[-3000:]


async def test_the_projector_refuses_a_bad_start_serves_health_and_lets_go_on_sigterm(
    launcher: Launcher,  # noqa: F811
    redis: redis_async_lib.Redis,
    archive_db: str,
    database_url: str,
) -> None:
    unset = await launcher.start("projector", DATABASE_URL="")
    assert await unset.process.wait() == 2
    assert "DATABASE_URL is unset" in unset.log.read_text()
    unmigrated = await launcher.start("projector", DATABASE_URL=database_url)
    assert await unmigrated.process.wait() == 2
    assert "felt db migrate" in unmigrated.log.read_text()

    await RedisTableRegistry(redis).add("quiet")
    metrics = _free_port()
    proc = await launcher.start(
        "projector", "--metrics-port", str(metrics), DATABASE_URL=archive_db, FELT_PROJECTOR_ID="h"
    )
    assert proc.first_line.startswith("projector h archiving"), proc.log.read_text()
    deadline = time.monotonic() + 20
    while await redis.get("table:{quiet}:projector") != b"h":
        assert time.monotonic() < deadline
        await asyncio.sleep(0.1)
    health = await _get(metrics, "/healthz")
    assert health.startswith("HTTP/1.1 200") and '"tables": 1' in health
    assert "felt_projector_lag_seconds" in await _get(metrics, "/metrics")
    proc.process.send_signal(signal.SIGTERM)
    assert await proc.process.wait() == 0
    assert await redis.get("table:{quiet}:projector") is None  # released for the others
    assert not await redis.zrange("felt:projectors", 0, -1)


async def _get(port: int, path: str) -> str:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    await writer.drain()
    body = (await reader.read()).decode()
    writer.close()
    return body
