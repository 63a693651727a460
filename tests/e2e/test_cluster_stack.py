"""The stack on a Redis Cluster of three masters, as processes (issue 24, item 2).

``felt serve --dev`` (the table service and two AI workers, its two demo tables) and a
``felt projector``, all with ``REDIS_URL=redis+cluster://...``, plus two more tables of
bots opened over gRPC: the tables play (appends, leases, snapshots, request records on
the node of each table's slot), the AI seats are answered through the decision streams
sharded by table, and the projector archives their hands. Then: the tables' keys are
spread over more than one node, each table's requests went to its shard only, every
archived hand equals its stream's projection, and everything stops cleanly.
"""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import asyncpg
import pytest
from redis.asyncio import RedisCluster

from felt.storage.archive.postgres import PostgresHandArchive
from felt.storage.decisions import AI_GROUP, AI_STREAM, shard_of, shard_stream
from felt.storage.eventstore import RedisEventStore, events_key
from felt.storage.redis_client import connect_redis
from poker.events.v1 import events_pb2 as epb
from tests.e2e.test_projector_kill import (  # noqa: F401 - the fixture
    _open_table,
    _start_projector,
    archive_db,
)
from tests.e2e.test_serve import READY, Launcher, _free_port
from tests.unit.archive.streams import archived

pytestmark = pytest.mark.timeout(120)
SHARDS = 3
HANDS = 12  # archived hands to wait for (bots play about ten a second in all)


async def test_the_stack_plays_and_archives_on_a_redis_cluster(
    redis_cluster_url: str,
    archive_db: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    launcher = Launcher(redis_cluster_url, tmp_path)
    port = _free_port()
    redis = await connect_redis(redis_cluster_url)
    store = RedisEventStore(redis)
    pool = await asyncpg.create_pool(archive_db, min_size=1, max_size=2)
    try:
        serve = await launcher.start(
            "serve",
            "--dev",
            "--workers",
            "2",
            FELT_TABLE_ADDR=f"127.0.0.1:{port}",
            FELT_DECISION_SHARDS=str(SHARDS),
            FELT_TRIM_RETAIN_S="3600",  # the whole streams stay, to compare the archive with
        )
        assert serve.first_line.startswith(READY), (serve.first_line, serve.log.read_text())
        projector = await _start_projector(launcher, archive_db, "p-cluster")
        opened = [f"cluster-{n}" for n in range(2)]
        for table_id, variant in zip(opened, (epb.VARIANT_NLHE, epb.VARIANT_DRAW5), strict=True):
            await _open_table(table_id, variant, port)
        tables = ["demo-holdem", "demo-draw", *opened]

        deadline = time.monotonic() + 60
        while await pool.fetchval("SELECT count(*) FROM archived_hands") < HANDS:
            assert time.monotonic() < deadline, serve.log.read_text()[-3000:]
            await asyncio.sleep(0.5)
        serve.process.send_signal(signal.SIGTERM)
        assert await serve.process.wait() == 0, serve.log.read_text()[-3000:]

        cluster = redis
        assert isinstance(cluster, RedisCluster)
        nodes = {cluster.get_node_from_key(events_key(t)).name for t in tables}
        assert len(nodes) > 1, "the tables' keys all hashed to one node"

        # Each AI table's requests went to its own shard (a shard's consumer group saw them).
        for table_id in opened:
            shard = shard_stream(AI_STREAM, shard_of(table_id, SHARDS))
            groups = await cluster.xinfo_groups(shard)
            [group] = [g for g in groups if g["name"] == AI_GROUP.encode()]
            assert int(group["entries-read"] or 0) > 0, (table_id, shard, group)

        archive = PostgresHandArchive(pool)
        deadline = time.monotonic() + 30
        expected = {t: archived(t, await store.read(t)) for t in tables}
        while True:  # the projector catches up with the ended streams
            counts = {
                t: await pool.fetchval("SELECT count(*) FROM archived_hands WHERE table_id=$1", t)
                for t in tables
            }
            if all(counts[t] == len(expected[t]) for t in tables):
                break
            assert time.monotonic() < deadline, (counts, {t: len(h) for t, h in expected.items()})
            await asyncio.sleep(0.5)
        for hands in expected.values():
            for hand in hands:
                assert await archive.hand(hand.hand_id) == hand
        assert sum(len(h) for h in expected.values()) >= HANDS

        projector.process.send_signal(signal.SIGTERM)
        assert await projector.process.wait() == 0
        for proc in (serve, projector):
            log = proc.log.read_text()
            assert "Traceback" not in log, log[-3000:]
    finally:
        await launcher.stop_all()
        await pool.close()
        await store.aclose()
        await redis.aclose()
