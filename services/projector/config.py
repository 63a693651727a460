"""The projector's configuration: defaults and the documented environment variables."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass

from felt.config import settings as S
from felt.config.settings import environment
from services.settings import ConfigError


def default_member_id() -> str:
    """Host and pid: unique among live projectors (set ``FELT_PROJECTOR_ID`` to keep it across
    restarts, so a restarted projector takes its tables back without waiting out their leases)."""
    return f"{socket.gethostname()}-{os.getpid()}"


@dataclass(frozen=True)
class ProjectorConfig:
    """How a projector runs; ``from_env`` reads the documented environment variables."""

    database_url: str
    redis_url: str = S.LOCAL_REDIS
    member_id: str = ""
    # None: no HTTP server; 0: any free port (tests, the benchmark).
    metrics_port: int | None = S.FELT_PROJECTOR_METRICS_PORT.default
    metrics_host: str = S.FELT_PROJECTOR_METRICS_HOST.default
    lease_ms: int = S.FELT_PROJECTOR_LEASE_MS.default
    scan_ms: int = S.FELT_PROJECTOR_SCAN_MS.default
    read_count: int = S.FELT_PROJECTOR_READ_COUNT.default
    block_ms: int = S.FELT_PROJECTOR_BLOCK_MS.default
    pool_size: int = S.FELT_PROJECTOR_POOL_SIZE.default
    # Write lanes: tables split by hash, each lane one transaction in flight at a time.
    writers: int = S.FELT_PROJECTOR_WRITERS.default
    # Development mode: wait (a minute) for the schema instead of refusing to start.
    dev_mode: bool = False

    @property
    def member(self) -> str:
        return self.member_id or default_member_id()

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ProjectorConfig:
        """``DATABASE_URL`` (required), ``REDIS_URL``, ``FELT_PROJECTOR_ID``,
        ``FELT_PROJECTOR_METRICS_PORT`` (``off`` disables it), ``FELT_PROJECTOR_METRICS_HOST``,
        ``FELT_PROJECTOR_LEASE_MS``, ``FELT_PROJECTOR_SCAN_MS``, ``FELT_PROJECTOR_READ_COUNT``,
        ``FELT_PROJECTOR_BLOCK_MS``, ``FELT_PROJECTOR_POOL_SIZE``, ``FELT_PROJECTOR_WRITERS``,
        ``FELT_DEV_MODE``."""
        e = environment(env)
        database_url = S.DATABASE_URL.read(e)
        if not database_url:
            raise ConfigError("DATABASE_URL is unset")
        lease_ms = S.FELT_PROJECTOR_LEASE_MS.read(e)
        scan_ms = S.FELT_PROJECTOR_SCAN_MS.read(e)
        if scan_ms * 3 > lease_ms:
            raise ConfigError("FELT_PROJECTOR_SCAN_MS must be at most a third of the lease")
        return cls(
            database_url=database_url,
            redis_url=S.REDIS_URL.read(e) or S.LOCAL_REDIS,
            member_id=S.FELT_PROJECTOR_ID.read(e),
            metrics_port=S.FELT_PROJECTOR_METRICS_PORT.read(e),
            metrics_host=S.FELT_PROJECTOR_METRICS_HOST.read(e),
            lease_ms=lease_ms,
            scan_ms=scan_ms,
            read_count=S.FELT_PROJECTOR_READ_COUNT.read(e),
            block_ms=S.FELT_PROJECTOR_BLOCK_MS.read(e),
            pool_size=S.FELT_PROJECTOR_POOL_SIZE.read(e),
            writers=S.FELT_PROJECTOR_WRITERS.read(e),
            dev_mode=S.FELT_DEV_MODE.read(e),
        )
