"""The one place a service turns a Redis URL into a client: a single server or a Redis Cluster.

``redis://``, ``rediss://`` and ``unix://`` URLs give ``redis.asyncio.Redis``, as before.
``redis+cluster://host:port`` (``rediss+cluster://`` with TLS) gives
``redis.asyncio.RedisCluster``, which learns the other nodes from the one named
(``CLUSTER SLOTS``), sends each command to the master of its key's hash slot and
follows ``MOVED``/``ASK`` redirections when slots move or a replica is promoted.
A cluster has one database, so a cluster URL names none (or ``/0``).

The stores take the client typed as ``Redis``: ``RedisCluster`` offers the same
command methods (keyed commands, ``register_script``, ``pipeline``), and the few
places that must behave differently on a cluster ask :func:`is_cluster` (multi-key
reads across hash slots, the event store's own pipelined connection). Keeping this
helper the only constructor is what lets one setting (the URL) switch every service.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, cast

from redis.asyncio import Redis, RedisCluster
from redis.exceptions import (
    BusyLoadingError,
    ClusterDownError,
    ReadOnlyError,
    RedisClusterException,
    RedisError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
"""URL schemes that mean a Redis Cluster, and the plain scheme of each node's URL."""

REDIS_ERRORS = (RedisError, RedisClusterException, OSError)
"""What "Redis is unreachable or not serving" raises: catch this tuple wherever an outage
is handled. redis-py's cluster errors (``RedisClusterException``, ``SlotNotCoveredError``:
no node known for a slot) derive from ``Exception``, not ``RedisError``, so a handler of
``RedisError`` alone lets a cluster outage through as if it were a bug."""

REDIS_OUTAGE_ERRORS: tuple[type[Exception], ...] = (
    RedisConnectionError,  # BusyLoadingError (a restart loading its AOF) is one
    RedisTimeoutError,
    BusyLoadingError,
    ReadOnlyError,  # a replica answering while a failover promotes another
    ClusterDownError,  # MasterDownError is one
    TryAgainError,
    RedisClusterException,
    OSError,
    TimeoutError,
)
"""What a service may take for "Redis is away for now" and retry (issue #24): connections
refused, dropped or timed out, a server still loading, a cluster moving. Every other
``RedisError`` (``WRONGTYPE``, ``OOM``, ``BUSY`` script, a ``DataError``) is a bug or a full
server, and must reach ``log.exception``, never a quiet retry."""


def cancel_requested() -> bool:
    """Whether the current task has been asked to cancel (``task.cancelling()``: requests
    not withdrawn by ``uncancel``), whether or not a ``CancelledError`` reached it.

    See :func:`raise_if_cancelling`; for a handler of ``CancelledError`` that must tell the
    task's own cancellation (re-raise it) from a callee's (carry on).
    """
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def raise_if_cancelling() -> None:
    """Raise ``asyncio.CancelledError`` if the current task has been asked to cancel.

    Call it after every blocking Redis read (``XREAD``/``XREADGROUP`` with ``BLOCK``) in a
    loop. redis-py awaits each reply through ``asyncio.wait_for``, which on Python 3.11
    returns the reply when a cancellation lands just as the read ends: the cancellation is
    lost (the read returns normally), though the task still counts the request
    (``task.cancelling()``). A loop that then blocks again on an idle stream runs for
    ever, and whoever awaits the cancelled task hangs (a cancelled subscription hung a CI
    run). Here the request is honoured instead. Call it from a coroutine: it asks the running
    loop for the current task (with no running loop, ``asyncio`` raises ``RuntimeError``).
    """
    if cancel_requested():
        raise asyncio.CancelledError


def is_cluster_url(url: str) -> bool:
    """Whether ``url`` names a Redis Cluster (``redis+cluster://``, ``rediss+cluster://``)."""
    scheme, sep, _ = url.partition("://")
    return bool(sep) and scheme.lower() in CLUSTER_SCHEMES


def node_url(url: str) -> str:
    """``url`` with its cluster scheme replaced by the plain one (what redis-py parses)."""
    scheme, sep, rest = url.partition("://")
    plain = CLUSTER_SCHEMES.get(scheme.lower())
    return f"{plain}://{rest}" if sep and plain else url


def redis_from_url(url: str, **kwargs: Any) -> Redis:
    """A client for ``url``: ``RedisCluster`` for a cluster URL, else ``Redis``.

    ``kwargs`` are connection options both take (``socket_timeout``, ...); the
    caller closes the client (``aclose``).
    """
    if is_cluster_url(url):
        # Typed as Redis on purpose: see the module docstring.
        return cast(Redis, RedisCluster.from_url(node_url(url), **kwargs))
    return Redis.from_url(url, **kwargs)


async def ready(redis: Redis) -> None:
    """Make a cluster client learn the slot map now, before its first concurrent use.

    redis-py 8.1's ``RedisCluster`` learns it on its first command; many commands started
    at once on a fresh client were seen to fail (a connection closed under another command)
    or to run twice (its retry of a script that had run), which the event store reports as
    a version conflict. Initialized first, neither happened. Nothing to do for one server.
    """
    if isinstance(redis, RedisCluster):
        await redis.initialize()


CONNECT_PATIENCE_S = 30.0
"""How long :func:`connect_redis` keeps trying to reach a cluster before giving up."""


async def connect_redis(
    url: str, *, patience_s: float = CONNECT_PATIENCE_S, **kwargs: Any
) -> Redis:
    """:func:`redis_from_url`, then :func:`ready`: how a service opens its client.

    A cluster that cannot be reached yet (its nodes starting with the services, a failover)
    is tried again with a doubling delay for ``patience_s`` before the error is raised, so a
    service started alongside Redis does not exit at once. One server needs nothing now:
    its client connects on its first command.
    """
    client = redis_from_url(url, **kwargs)
    deadline = time.monotonic() + patience_s
    delay = 0.1
    while True:
        try:
            await ready(client)
            return client
        except REDIS_ERRORS:
            left = deadline - time.monotonic()
            if left <= 0:
                await client.aclose()
                raise
            await asyncio.sleep(min(delay, left))
            delay = min(delay * 2, 2.0)


def is_cluster(redis: object) -> bool:
    """Whether ``redis`` talks to a Redis Cluster (keys of different slots never mix)."""
    return isinstance(redis, RedisCluster)


def socket_timeout_of(redis: Redis, default: float | None = 5.0) -> float | None:
    """The client's socket timeout (seconds; None: none): a blocking read must return before it."""
    pool = getattr(redis, "connection_pool", None)
    if pool is not None:
        kwargs: dict[str, Any] = pool.connection_kwargs
    else:  # a cluster keeps one set of connection options for every node
        kwargs = getattr(getattr(redis, "nodes_manager", None), "connection_kwargs", {}) or {}
    timeout = kwargs.get("socket_timeout", default)
    return None if timeout is None else float(timeout)
