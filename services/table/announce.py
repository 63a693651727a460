"""This instance's address in the instance directory, kept fresh while it serves.

Every caller finds a table's owner by its lease (an instance id) and the owner's address
here (``felt.storage.instances``, read by ``felt.service.table_router``): the gateway the
public address, the lobby and the AI workers the internal one (``FELT_TABLE_INTERNAL_ADDR``;
without an internal port, the public address serves them too), each in its own directory.
The entries live three lease TTLs and are renewed every third of one, so they outlive every
lease the instance holds; a stopping instance withdraws them after handing its tables back.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket

import structlog

from felt.service.tasks import ended_within
from felt.storage.instances import TableInstances
from felt.storage.redis_client import REDIS_ERRORS

log = structlog.get_logger("felt.table")

# How long stopping waits for a renewal round in flight (its Redis commands) to end.
ABANDON_WAIT_S = 2.0

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
    """Announces ``address`` under ``instance_id`` until stopped (and the internal address in
    the internal directory, if given)."""

    def __init__(
        self,
        instances: TableInstances,
        instance_id: str,
        address: str,
        lease_ttl_ms: int,
        internal: tuple[TableInstances, str] | None = None,
    ) -> None:
        self.instances = instances
        self.instance_id = instance_id
        self.address = address
        self.entries = [(instances, address), *([internal] if internal is not None else [])]
        self.ttl_ms = 3 * lease_ttl_ms
        self.every_s = lease_ttl_ms / 3000
        self._task: asyncio.Task[None] | None = None
        self._stopping = False

    async def _announce(self) -> None:
        for directory, address in self.entries:
            await directory.announce(self.instance_id, address, self.ttl_ms)

    async def start(self) -> None:
        self._stopping = False
        await self._announce()
        self._task = asyncio.get_running_loop().create_task(self._renew())
        log.info("table_instance_announced", instance=self.instance_id, address=self.address)

    async def _renew(self) -> None:
        while not self._stopping:
            await asyncio.sleep(self.every_s)
            if self._stopping:
                return
            try:
                await self._announce()
            except REDIS_ERRORS as exc:  # Redis away: the next round tries again
                log.warning("table_instance_announce_failed", error=str(exc))

    async def abandon(self) -> None:
        """Stop renewing, leaving the entry to lapse (what a crash does; tests).

        The renewals end at their next check of ``_stopping`` even when the cancellation is
        lost: one that lands while redis-py writes a command is (Python 3.11's
        ``asyncio.wait_for``, which redis-py writes through, returns the write's result
        instead), and the loop went on for ever, the service's stop with it. The wait is
        bounded all the same (a command is bounded by the socket timeout), and the caller's
        own cancellation is not swallowed.
        """
        task, self._task = self._task, None
        if task is None:
            return
        self._stopping = True
        task.cancel()
        if await ended_within([task], ABANDON_WAIT_S):
            log.warning("table_instance_announce_slow_stop", instance=self.instance_id)

    async def stop(self) -> None:
        """Stop renewing and withdraw the entry."""
        await self.abandon()
        for directory, address in self.entries:
            with contextlib.suppress(*REDIS_ERRORS):
                await directory.withdraw(self.instance_id, address)
