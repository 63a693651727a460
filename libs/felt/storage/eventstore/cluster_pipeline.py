"""The event store's pipelined connections on a Redis Cluster: one per master.

On one server the store appends and reads over one pipelined connection of its own
(``pipeline``), about 6x cheaper in CPU than redis-py. On a cluster a table's keys live
on the master of its slot, so :class:`ClusterPipelines` keeps one such connection per
master and picks it from redis-py's ``RedisCluster`` slot map (``get_node_from_key``).
The store still goes through redis-py whenever that map cannot be trusted:

* a reply ``MOVED``/``ASK`` (the slot is moving or moved: Redis ran nothing), or
  ``TRYAGAIN``/``CLUSTERDOWN``: :func:`redirected`; the store then makes the call through
  redis-py, which follows the redirection and updates the map;
* a lost connection to a master (it failed): :meth:`ClusterPipelines.refresh` asks
  redis-py to read the slot map again, so the next call goes to the promoted replica;
  the failed call itself raises, as on one server;
* TLS or a credential provider, which the pipelined connection does not do: none is made.
"""

from __future__ import annotations

import contextlib
from typing import Any

from redis.asyncio import Redis, RedisCluster
from redis.asyncio.connection import Connection
from redis.exceptions import ResponseError

from felt.storage.eventstore.pipeline import Endpoint, RedisPipeline
from felt.storage.redis_client import REDIS_ERRORS

_REDIRECTIONS = ("MOVED ", "ASK ", "TRYAGAIN", "CLUSTERDOWN")


def redirected(exc: ResponseError) -> bool:
    """Whether a reply error says the slot map was wrong or the cluster busy (nothing ran)."""
    return str(exc).startswith(_REDIRECTIONS)


class ClusterPipelines:
    """A :class:`RedisPipeline` per master of a ``RedisCluster``, with ``scripts`` registered."""

    def __init__(self, redis: RedisCluster, scripts: list[str]) -> None:
        self._redis = redis
        self._scripts = scripts
        self._pipes: dict[str, RedisPipeline] = {}
        kwargs: dict[str, Any] = redis.nodes_manager.connection_kwargs
        self._usable = (
            kwargs.get("connection_class", Connection) is Connection
            and kwargs.get("credential_provider") is None
        )
        timeout = kwargs.get("socket_timeout", 5.0)
        self._common: dict[str, Any] = {
            "username": kwargs.get("username"),
            "password": kwargs.get("password"),
            "connect_timeout": kwargs.get("socket_connect_timeout", timeout),
            "timeout": timeout,
        }

    @classmethod
    def for_client(cls, redis: Redis, scripts: list[str]) -> ClusterPipelines | None:
        """Pipelines for ``redis`` if it is a cluster client."""
        return cls(redis, scripts) if isinstance(redis, RedisCluster) else None

    def for_key(self, key: str) -> RedisPipeline | None:
        """The pipelined connection to the master of ``key``'s slot (None: use redis-py)."""
        if not self._usable:
            return None
        try:
            node = self._redis.get_node_from_key(key)
        except REDIS_ERRORS:  # the slot map is not known yet (or not whole): SlotNotCoveredError
            return None
        if node is None:
            return None
        pipe = self._pipes.get(node.name)
        if pipe is None:
            endpoint = Endpoint(host=node.host, port=int(node.port), **self._common)
            pipe = RedisPipeline(endpoint)
            for body in self._scripts:
                pipe.script(body)
            self._pipes[node.name] = pipe
        return pipe

    async def refresh(self) -> None:
        """Read the slot map again (a master was lost: its replica may have taken over)."""
        with contextlib.suppress(*REDIS_ERRORS):
            await self._redis.nodes_manager.initialize()
        await self._close_stale()

    async def _close_stale(self) -> None:
        """Close the pipes to nodes that are no longer the master of any slot (failed over)."""
        masters = {node.name for node in self._redis.get_primaries()}
        stale = [name for name in self._pipes if name not in masters]
        for name in stale:
            await self._pipes.pop(name).aclose()

    async def aclose(self) -> None:
        pipes, self._pipes = list(self._pipes.values()), {}
        for pipe in pipes:
            await pipe.aclose()
