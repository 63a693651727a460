"""Rebuilt after trimming on Redis, a table is the one its whole stream folds to.

The unit test's check (``tests/unit/services/trimming.py``) on ``RedisEventStore``:
random tables of both variants played by a real ``TableRuntime`` that writes
snapshots and trims through the Lua script, the projector's archived
position (``table:{T}:archived``) raised at random. Plus what Redis holds
for a trimmed table, and the AI decision stream trimmed once acknowledged.
"""

from __future__ import annotations

import asyncio
import uuid

import redis.asyncio as aioredis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from felt.eventstore import RedisEventStore, archived_key, events_key, meta_key, requests_key
from tests.unit.services.trimming import play_archive_trim_rebuild
from tests.unit.table.random_tables import RandomTable, random_table


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    table=random_table(table_id="trim"),
    every=st.integers(1, 3),
    retain_s=st.sampled_from([0, 0, 5]),
    seed=st.integers(0, 2**32),
)
def test_a_table_rebuilt_after_trimming_on_redis_is_the_whole_streams(
    redis_url: str, table: RandomTable, every: int, retain_s: int, seed: int
) -> None:
    async def check() -> None:
        t = f"trim-{uuid.uuid4().hex}"
        client = aioredis.Redis.from_url(redis_url)
        store = RedisEventStore(client)
        try:
            await play_archive_trim_rebuild(store, table, every, retain_s, seed, table_id=t)
        finally:
            await store.aclose()
            await client.delete(events_key(t), meta_key(t), requests_key(t), archived_key(t))
            await client.aclose()

    asyncio.run(check())
