"""The embedded Redis/PostgreSQL of ``felt_dev.devserver`` and the fixtures built on them."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import redis as redis_sync_lib
import redis.asyncio as redis_async_lib

from felt_dev import devserver
from felt_dev.devserver import EmbeddedPostgres, EmbeddedRedis, ensure_redis


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def test_ensure_redis_starts_embedded_server_when_redis_url_unset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    url = ensure_redis()
    assert url.startswith("redis://127.0.0.1:")
    client = redis_sync_lib.Redis.from_url(url)
    try:
        assert client.ping() is True
    finally:
        client.close()
    assert ensure_redis() == url  # one server per process


def test_ensure_redis_uses_redis_url_when_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_URL", "redis://redis.invalid:6390/3")
    assert ensure_redis() == "redis://redis.invalid:6390/3"


def test_embedded_redis_lifecycle() -> None:
    with EmbeddedRedis() as server:
        assert server.port is not None and server.tmpdir is not None
        port, tmpdir = server.port, server.tmpdir
        client = redis_sync_lib.Redis.from_url(server.url)
        try:
            assert client.ping() is True
            client.set("k", "v")
            assert client.get("k") == b"v"
            assert client.config_get("save") == {"save": ""}
            assert client.config_get("appendonly") == {"appendonly": "no"}
        finally:
            client.close()
    assert not _port_open(port)
    assert not tmpdir.exists()


def test_devserver_cli_exports_redis_url(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    script = (
        "import os, redis; url = os.environ['REDIS_URL']; "
        "assert redis.Redis.from_url(url).ping(); print(url)"
    )
    out = subprocess.run(
        [sys.executable, "-m", "felt_dev.devserver", "--", sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    url = out.stdout.strip()
    assert url.startswith("redis://127.0.0.1:")
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    assert not _port_open(port)  # stopped when the command exited


def test_devserver_cli_propagates_exit_code() -> None:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "felt_dev.devserver",
            "--",
            sys.executable,
            "-c",
            "raise SystemExit(3)",
        ],
        env=env,
        capture_output=True,
        timeout=60,
    )
    assert res.returncode == 3


async def test_redis_fixture_uses_dedicated_db(
    redis: redis_async_lib.Redis, redis_url: str, redis_prefix: str
) -> None:
    assert not redis_url.endswith("/0")
    assert await redis.dbsize() == 0  # flushed before the test
    await redis.set(f"{redis_prefix}k", "v")
    assert await redis.get(f"{redis_prefix}k") == b"v"


def test_redis_sync_fixture_is_flushed(redis_sync: redis_sync_lib.Redis) -> None:
    assert redis_sync.dbsize() == 0
    assert redis_sync.ping() is True


@pytest.mark.skipif(devserver.find_postgres_bindir() is None, reason="no PostgreSQL binaries")
def test_embedded_postgres_lifecycle() -> None:
    bindir = devserver.find_postgres_bindir()
    assert bindir is not None
    with EmbeddedPostgres() as server:
        assert server.port is not None and server.tmpdir is not None
        port, tmpdir = server.port, server.tmpdir
        out = subprocess.run(
            [str(bindir / "psql"), server.url, "-tAc", "SELECT current_database(), 6 * 7"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert out.stdout.strip() == "test|42"
    assert not _port_open(port)
    assert not tmpdir.exists()


def test_database_url_fixture(database_url: str) -> None:
    assert database_url.startswith(("postgresql://", "postgres://"))


@pytest.mark.skipif(devserver.find_postgres_bindir() is None, reason="no PostgreSQL binaries")
def test_an_initdb_killed_by_a_signal_is_tried_once_more() -> None:
    """Debian's initdb once died of SIGSEGV on a loaded CI machine: a crash (not a refusal)
    gets a fresh directory and a second try."""
    real = devserver.find_postgres_bindir()
    assert real is not None
    # Not pytest's tmp_path: as root the cluster runs as the postgres user, who must reach it.
    with tempfile.TemporaryDirectory(prefix="felt-initdb-") as tmp:
        _crash_once_then_start(Path(tmp), real)


def _crash_once_then_start(tmp_path: Path, real: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    crashed = tmp_path / "crashed"
    (bindir / "initdb").write_text(
        f"#!/bin/sh\nif [ ! -e {crashed} ]; then : > {crashed}; kill -SEGV $$; fi\n"
        f'exec {real / "initdb"} "$@"\n'
    )
    (bindir / "initdb").chmod(0o755)
    for exe in ("postgres", "pg_isready", "psql"):
        (bindir / exe).symlink_to(real / exe)
    tmp_path.chmod(0o777)  # the cluster runs as the postgres user when we are root
    bindir.chmod(0o755)
    with EmbeddedPostgres(bindir=bindir) as server:
        assert crashed.exists() and server.port is not None
        assert _port_open(server.port)
