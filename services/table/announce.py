"""This instance's address in the instance directory, kept fresh while it serves.

The gateway finds a table's owner by its lease (an instance id) and the
owner's address here (``felt.storage.instances``). The entry lives three lease TTLs
and is renewed every third of one, so it outlives every lease the instance
holds; a stopping instance withdraws it after handing its tables back.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket

import structlog
from redis.exceptions import RedisError

from felt.storage.instances import TableInstances

log = structlog.get_logger("felt.table")

_ANY_HOST = ("", "0.0.0.0", "::", "[::]")


def advertised_address(listen: str, port: int, advertise: str = "") -> str:
    """Where other processes reach this instance: ``advertise`` if set
    (``FELT_TABLE_ADVERTISE_ADDR``), else the listen host (the host name for a wildcard
    address) and the bound port."""
    if advertise:
        return advertise
    host = listen.rsplit(":", 1)[0] if ":" in listen else listen
    if host in _ANY_HOST:
        host = socket.gethostname()
    return f"{host}:{port}"


class Announcer:
    """Announces ``address`` under ``instance_id`` until stopped."""

    def __init__(
        self, instances: TableInstances, instance_id: str, address: str, lease_ttl_ms: int
    ) -> None:
        self.instances = instances
        self.instance_id = instance_id
        self.address = address
        self.ttl_ms = 3 * lease_ttl_ms
        self.every_s = lease_ttl_ms / 3000
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.instances.announce(self.instance_id, self.address, self.ttl_ms)
        self._task = asyncio.get_running_loop().create_task(self._renew())
        log.info("table_instance_announced", instance=self.instance_id, address=self.address)

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(self.every_s)
            try:
                await self.instances.announce(self.instance_id, self.address, self.ttl_ms)
            except (RedisError, OSError) as exc:  # Redis away: the next round tries again
                log.warning("table_instance_announce_failed", error=str(exc))

    async def abandon(self) -> None:
        """Stop renewing, leaving the entry to lapse (what a crash does; tests)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def stop(self) -> None:
        """Stop renewing and withdraw the entry."""
        await self.abandon()
        with contextlib.suppress(RedisError, OSError):
            await self.instances.withdraw(self.instance_id, self.address)
