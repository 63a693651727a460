"""A redis-server of a test's own, on a free loopback port and a temp dir, to stop and restart.

The shared test Redis must never be killed (other engineers' tests use it), so the tests
that take Redis away start one of their own: the ``redis-server`` on the PATH (Debian's
package; there is no other fallback) with append-only persistence in ``dir``, stopped by its
pid with SIGTERM (a clean shutdown: the AOF is flushed) or SIGKILL (a crash: with
``appendfsync everysec`` up to a second of acknowledged writes can be gone), then started
again on the same port and directory, where it loads what the AOF kept.

Its port is below the kernel's ephemeral range (``stable_port``): while the server is down,
no process's outgoing connection can be given that port, as one from the ephemeral range
could (the services reconnecting to it, for a start). Another test may still pick the same
port by chance: the first start then tries another one.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import signal
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis.asyncio as redis_async_lib

WAIT_S = 20.0
FIRST_START_TRIES = 5


def free_port() -> int:
    """A free loopback port for a service to listen on: ``stable_port``, since a port from
    the ephemeral range, free when looked at, can be another connection's local port by the
    time the service binds it."""
    return stable_port()


def ephemeral_range() -> tuple[int, int]:
    """The kernel's range of ports for outgoing connections (Linux's default if unknown)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def stable_port() -> int:
    """A free loopback port below the ephemeral range (see the module docstring)."""
    low, _ = ephemeral_range()
    rng = random.SystemRandom()
    for _ in range(200):
        port = rng.randrange(max(1024, low - 12_000), low)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port below the ephemeral range")


def redis_server_binary() -> str:
    found = shutil.which("redis-server")
    if found is None:
        raise RuntimeError("redis-server is not installed (apt-get install redis-server)")
    return found


@dataclass
class OwnRedis:
    """One redis-server process, restartable on the same port and data directory."""

    dir: Path
    fsync: str = "always"  # appendfsync: always, everysec or no
    port: int = field(default_factory=stable_port)
    process: asyncio.subprocess.Process | None = None
    starts: int = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self) -> None:
        """Start the server (loading its AOF, if any) and wait until it answers PING; the first
        start moves to another port if this one was taken meanwhile."""
        for _ in range(FIRST_START_TRIES if self.starts == 0 else 1):
            if await self._start_once():
                return
            self.port = stable_port()  # the first start only: nobody knows the port yet
        raise RuntimeError(f"redis-server did not start; see {self.dir}")

    async def _start_once(self) -> bool:
        """One start; False if the server exited before it answered (its port taken)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        log = (self.dir / f"redis-{self.starts}.log").open("wb")
        self.starts += 1
        self.process = await asyncio.create_subprocess_exec(
            redis_server_binary(),
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.dir),
            "--appendonly",
            "yes",
            "--appendfsync",
            self.fsync,
            "--save",
            "",
            "--daemonize",
            "no",
            stdout=log,
            stderr=log,
        )
        log.close()
        deadline = time.monotonic() + WAIT_S
        client = redis_async_lib.Redis.from_url(self.url)
        try:
            while True:
                try:
                    if await client.ping():
                        return True
                except (OSError, redis_async_lib.RedisError):
                    pass
                if self.process.returncode is not None:
                    return False
                if time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not start; see {self.dir}")
                await asyncio.sleep(0.05)
        finally:
            await client.aclose()

    async def stop(self, sig: signal.Signals = signal.SIGTERM) -> int:
        """Stop the server with ``sig`` and wait for it; its exit status."""
        assert self.process is not None
        if self.process.returncode is None:
            self.process.send_signal(sig)
        code = await asyncio.wait_for(self.process.wait(), WAIT_S)
        return code

    async def restart(self, sig: signal.Signals, down_s: float = 0.5) -> None:
        """Stop with ``sig``, stay down ``down_s`` seconds, start again on the same port."""
        await self.stop(sig)
        await asyncio.sleep(down_s)
        await self.start()

    def aof_tail(self) -> Path:
        """The AOF file Redis appends to now (Redis 7: the newest ``*.incr.aof``)."""
        files = sorted(
            (self.dir / "appendonlydir").glob("*.incr.aof"),
            key=lambda f: int(f.name.split(".")[-3]),
        )
        if not files:
            raise RuntimeError(f"no incremental AOF file in {self.dir}")
        return files[-1]

    async def crash_host(self, lose_s: float, sizes: list[tuple[float, int]]) -> int:
        """A host crash under ``appendfsync everysec``: SIGKILL, then the AOF cut back to its
        size ``lose_s`` seconds ago (``sizes``: (monotonic time, size) samples of
        :meth:`aof_tail`), as if the page cache had not reached the disk; bytes cut. Redis
        loads a cut AOF, a command cut in two dropped (``aof-load-truncated``, default)."""
        await self.stop(signal.SIGKILL)
        tail = self.aof_tail()
        cutoff = time.monotonic() - lose_s
        kept = [size for at, size in sizes if at <= cutoff]
        size = tail.stat().st_size
        keep = kept[-1] if kept else size
        with tail.open("r+b") as f:
            f.truncate(min(keep, size))
        return size - min(keep, size)

    async def close(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.kill()
            await self.process.wait()
