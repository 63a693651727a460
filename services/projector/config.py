"""The projector's configuration: defaults and the documented environment variables."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass

from services.settings import TRUE, ConfigError, int_setting


def default_member_id() -> str:
    """Host and pid: unique among live projectors (set ``FELT_PROJECTOR_ID`` to keep it across
    restarts, so a restarted projector takes its tables back without waiting out their leases)."""
    return f"{socket.gethostname()}-{os.getpid()}"


@dataclass(frozen=True)
class ProjectorConfig:
    """How a projector runs; ``from_env`` reads the documented environment variables."""

    database_url: str
    redis_url: str = "redis://127.0.0.1:6379/0"
    member_id: str = ""
    # None: no HTTP server; 0: any free port (tests, the benchmark).
    metrics_port: int | None = 9465
    metrics_host: str = "0.0.0.0"
    lease_ms: int = 10_000
    scan_ms: int = 1_000
    read_count: int = 1_000
    block_ms: int = 200
    pool_size: int = 4
    # Write lanes: tables split by hash, each lane one transaction in flight at a time.
    writers: int = 2
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
        e = os.environ if env is None else env
        database_url = e.get("DATABASE_URL", "").strip()
        if not database_url:
            raise ConfigError("DATABASE_URL is unset")
        port_text = e.get("FELT_PROJECTOR_METRICS_PORT", "9465").strip().lower()
        metrics_port = (
            None
            if port_text in ("", "off", "none", "-1")
            else int_setting(e, "FELT_PROJECTOR_METRICS_PORT", 9465, 0, 65535)
        )
        lease_ms = int_setting(e, "FELT_PROJECTOR_LEASE_MS", cls.lease_ms, 1_000, 600_000)
        scan_ms = int_setting(e, "FELT_PROJECTOR_SCAN_MS", cls.scan_ms, 50, 60_000)
        if scan_ms * 3 > lease_ms:
            raise ConfigError("FELT_PROJECTOR_SCAN_MS must be at most a third of the lease")
        return cls(
            database_url=database_url,
            redis_url=e.get("REDIS_URL", cls.redis_url),
            member_id=e.get("FELT_PROJECTOR_ID", "").strip(),
            metrics_port=metrics_port,
            metrics_host=e.get("FELT_PROJECTOR_METRICS_HOST", cls.metrics_host),
            lease_ms=lease_ms,
            scan_ms=scan_ms,
            read_count=int_setting(e, "FELT_PROJECTOR_READ_COUNT", cls.read_count, 1, 10_000),
            block_ms=int_setting(e, "FELT_PROJECTOR_BLOCK_MS", cls.block_ms, 1, 5_000),
            pool_size=int_setting(e, "FELT_PROJECTOR_POOL_SIZE", cls.pool_size, 1, 64),
            writers=int_setting(e, "FELT_PROJECTOR_WRITERS", cls.writers, 1, 16),
            dev_mode=e.get("FELT_DEV_MODE", "").strip().lower() in TRUE,
        )
