"""What the service benchmarks share: child processes, their CPU time, the benchmark's Redis.

Not a benchmark itself (``make bench`` skips ``bench/_*.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from felt_dev.devserver import ensure_postgres, ensure_redis

REPO = Path(__file__).resolve().parents[1]
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process has used (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def bench_redis_url(db_env: str, default_db: str) -> str:
    """``$REDIS_URL`` (else a private embedded server) with database ``$db_env``.

    The benchmarks empty that database before and after, so each has its own.
    """
    parts = urlsplit(ensure_redis())
    return urlunsplit(parts._replace(path=f"/{os.environ.get(db_env, default_db)}"))


@dataclass(frozen=True)
class Scratch:
    """A benchmark's own PostgreSQL database: its URL, its name and the server's version."""

    dsn: str
    name: str
    version: str


@contextlib.asynccontextmanager
async def scratch_database() -> AsyncIterator[Scratch]:
    """A database ``felt_bench_<hex>`` on ``$DATABASE_URL``'s server (unset: a private one),
    announced on stdout and dropped afterwards whatever happens."""
    server = ensure_postgres()
    name = f"felt_bench_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(server)
    try:
        version = str(await admin.fetchval("SHOW server_version"))
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    print(f"PostgreSQL {version}, scratch database {name}; {os.cpu_count()} CPUs")
    try:
        yield Scratch(urlunsplit(urlsplit(server)._replace(path=f"/{name}")), name, version)
    finally:
        admin = await asyncpg.connect(server)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()


@dataclass
class Child:
    """A child process and the port it announced on its first line of output."""

    name: str
    process: asyncio.subprocess.Process
    port: int

    @property
    def pid(self) -> int:
        return self.process.pid

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.pid)

    async def stop(self, timeout: float = 30) -> int:
        """SIGTERM (graceful shutdown), then SIGKILL after ``timeout``; the exit status."""
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), timeout)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        return int(self.process.returncode or 0)


async def spawn(
    name: str, args: list[str], env: dict[str, str], port_pattern: str, log: Path | None = None
) -> Child:
    """Start ``python ARGS`` in the repository with ``env`` added; wait for its port line.
    Its log (stderr) is dropped, or appended to ``log``."""
    with open(log, "ab") if log is not None else contextlib.nullcontext() as sink:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            *args,
            cwd=REPO,
            env={**os.environ, **env},
            stdout=asyncio.subprocess.PIPE,
            stderr=sink if sink is not None else asyncio.subprocess.DEVNULL,
        )
    assert process.stdout is not None
    line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
    match = re.search(port_pattern, line)
    if match is None:
        process.kill()
        raise RuntimeError(f"{name} did not start: {line!r}")
    return Child(name, process, int(match.group(1)))
