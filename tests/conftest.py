"""Shared fixtures: Redis and PostgreSQL for tests.

* ``redis_url`` (session): ``$REDIS_URL`` if set, else a private embedded redis-server
  (``felt_dev.devserver``). The URL points at a dedicated test DB index (``$FELT_TEST_REDIS_DB``,
  default 15; one per pytest-xdist worker below that), never at db 0 of a shared server.
* ``redis`` (function, async) / ``redis_sync`` (function, sync): clients on that DB, which is
  emptied (FLUSHDB, that DB only) before each test that uses them.
* ``redis_prefix`` (function): a unique ``t<hex>:`` prefix for keys and for pub/sub channels,
  which Redis does not scope by DB.
* ``redis_cluster_url`` (session): a private Redis Cluster of three masters on loopback
  (``felt_dev.redis_cluster``), ``redis+cluster://...``; skipped (with the reason) without
  ``redis-server``/``redis-cli``. Started on first use, stopped (by pid) at the session's end.
* ``database_url`` (session): ``$DATABASE_URL`` if set, else a private embedded PostgreSQL;
  the test is skipped (with the reason) if neither can be had.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest
import redis as redis_sync_lib
import redis.asyncio as redis_async_lib

from felt.config.settings import FELT_TEST_REDIS_DB
from felt_dev.devserver import EmbeddedServerError, ensure_postgres, ensure_redis
from felt_dev.redis_cluster import EmbeddedRedisCluster


def _test_redis_db(worker_id: str) -> int:
    base = FELT_TEST_REDIS_DB.read()
    if worker_id.startswith("gw"):  # pytest-xdist: one DB per worker
        db = base - int(worker_id[2:])
        if db < 1:  # two workers on one DB would flush each other's data
            raise pytest.UsageError(
                f"xdist worker {worker_id} has no Redis DB of its own: FELT_TEST_REDIS_DB="
                f"{base} leaves DBs 1 to {base} for at most {base} workers"
            )
        return db
    return base


def with_redis_db(url: str, db: int) -> str:
    """``url`` with its database index replaced by ``db`` (redis://, rediss://, unix://)."""
    parts = urlsplit(url)
    if parts.scheme == "unix":
        query = dict(parse_qsl(parts.query))
        query["db"] = str(db)
        return urlunsplit(parts._replace(query=urlencode(query)))
    return urlunsplit(parts._replace(path=f"/{db}"))


@pytest.fixture(scope="session")
def redis_url(request: pytest.FixtureRequest) -> str:
    try:
        base = ensure_redis()
    except EmbeddedServerError as e:
        pytest.fail(f"REDIS_URL is unset and no embedded redis-server could start: {e}")
    worker_id = getattr(request.config, "workerinput", {}).get("workerid", "master")
    return with_redis_db(base, _test_redis_db(worker_id))


@pytest.fixture(scope="session")
def redis_cluster_url() -> Iterator[str]:
    cluster = EmbeddedRedisCluster()
    try:
        url = cluster.start()
    except EmbeddedServerError as e:
        if os.environ.get("CI", "").lower() == "true":  # CI must not lose cluster coverage quietly
            pytest.fail(f"no Redis Cluster could start in CI: {e}")
        pytest.skip(f"no Redis Cluster could start: {e}")
    try:
        yield url
    finally:
        cluster.stop()


@pytest.fixture
def redis_prefix() -> str:
    return f"t{uuid.uuid4().hex[:12]}:"


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[redis_async_lib.Redis]:
    client = redis_async_lib.Redis.from_url(redis_url)
    await client.flushdb()
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
def redis_sync(redis_url: str) -> Iterator[redis_sync_lib.Redis]:
    client = redis_sync_lib.Redis.from_url(redis_url)
    client.flushdb()
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="session")
def database_url() -> str:
    try:
        return ensure_postgres()
    except EmbeddedServerError as e:
        pytest.skip(f"DATABASE_URL is unset and no embedded PostgreSQL could start: {e}")
