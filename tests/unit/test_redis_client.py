"""``felt.storage.redis_client``: which URLs mean a Redis Cluster, and the client each gives."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from redis.asyncio import Redis, RedisCluster
from redis.exceptions import RedisClusterException, SlotNotCoveredError

from felt.storage.redis_client import (
    REDIS_ERRORS,
    cancel_requested,
    is_cluster,
    is_cluster_url,
    node_url,
    raise_if_cancelling,
    redis_from_url,
)
from services.table.interceptors import call_interceptor


def test_cluster_urls_are_named_by_their_scheme() -> None:
    assert is_cluster_url("redis+cluster://10.0.0.1:7000")
    assert is_cluster_url("REDISS+CLUSTER://node:7000")
    assert not is_cluster_url("redis://127.0.0.1:6379/0")
    assert not is_cluster_url("unix:///run/redis.sock")
    assert not is_cluster_url("redis+cluster")
    assert node_url("redis+cluster://u:p@node:7000") == "redis://u:p@node:7000"
    assert node_url("rediss+cluster://node:7000") == "rediss://node:7000"
    assert node_url("redis://node:6379/2") == "redis://node:6379/2"


def test_the_client_follows_the_url() -> None:
    # Nothing connects until a command: building the clients needs no server.
    cluster = redis_from_url("redis+cluster://127.0.0.1:7000", socket_timeout=3)
    single = redis_from_url("redis://127.0.0.1:6379/0")
    assert isinstance(cluster, RedisCluster) and is_cluster(cluster)
    assert isinstance(single, Redis) and not is_cluster(single)


def test_an_outage_of_a_cluster_is_caught_like_one_of_a_server() -> None:
    # redis-py's cluster errors are not RedisError: a handler of RedisError alone let a
    # cluster with no node for a slot through as a bug (quarantine, INTERNAL, dead loops).
    for error in (SlotNotCoveredError("no node"), RedisClusterException("down"), OSError()):
        assert isinstance(error, REDIS_ERRORS)
    table = call_interceptor("poker.v1.TableService")
    assert isinstance(SlotNotCoveredError("no node"), table.unavailable)


def test_a_pending_cancel_request_is_honoured_after_a_read_that_lost_it() -> None:
    """What a loop calls after a blocking read whose cancellation redis-py (Python 3.11's
    ``wait_for``) may have swallowed: the task still counts the request."""
    seen: list[bool] = []

    async def read_that_loses_it() -> None:
        with contextlib.suppress(asyncio.CancelledError):  # lost, as inside redis-py
            await asyncio.sleep(10)
        seen.append(cancel_requested())
        raise_if_cancelling()
        seen.append(False)  # not reached

    async def main() -> None:
        raise_if_cancelling()  # a task not asked to cancel goes on
        assert not cancel_requested()
        task = asyncio.create_task(read_that_loses_it())
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert seen == [True]

    asyncio.run(main())
