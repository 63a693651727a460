"""A private Redis Cluster on loopback: three masters, no replicas, no persistence.

What the tests (and anyone trying the cluster locally) run the stores on: each
node is a ``redis-server --cluster-enabled yes`` on a free port, in a temporary
directory of its own (its ``nodes.conf`` lives there); ``redis-cli --cluster
create`` shares the 16384 hash slots out among them, and :meth:`start` returns
once every node reports ``cluster_state:ok``. :meth:`stop` stops the nodes it
started, by their process, and removes the directory.

Its URL is ``redis+cluster://127.0.0.1:<first node's port>``, which
``felt.storage.redis_client.redis_from_url`` turns into a cluster client.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Self

from felt_dev.devserver import (
    START_TIMEOUT,
    EmbeddedServerError,
    _free_port,
    _preexec,
    _redis_ping,
    _stop_process,
    _tail,
    find_redis_server,
)


def find_redis_cli(server: str | None = None) -> str | None:
    """``redis-cli`` next to ``server``, else on the PATH, else None."""
    if server:
        beside = Path(server).with_name("redis-cli")
        if os.access(beside, os.X_OK):
            return str(beside)
    return shutil.which("redis-cli")


def _cluster_ok(port: int, host: str = "127.0.0.1") -> bool:
    """Whether the node on ``port`` says ``cluster_state:ok`` (all slots served)."""
    try:
        with socket.create_connection((host, port), timeout=0.5) as s:
            s.sendall(b"CLUSTER INFO\r\n")
            return b"cluster_state:ok" in s.recv(4096)
    except OSError:
        return False


class EmbeddedRedisCluster:
    """``masters`` cluster-enabled redis-servers on free loopback ports, joined as one cluster."""

    host = "127.0.0.1"

    def __init__(self, masters: int = 3, binary: str | None = None) -> None:
        if masters < 3:
            raise ValueError("redis-cli --cluster create needs at least 3 masters")
        self.masters = masters
        self.binary = binary
        self.ports: list[int] = []
        self.procs: list[subprocess.Popen[bytes]] = []
        self.tmpdir: Path | None = None

    @property
    def url(self) -> str:
        if not self.ports:
            raise EmbeddedServerError("the embedded Redis Cluster is not running")
        return f"redis+cluster://{self.host}:{self.ports[0]}"

    def start(self) -> str:
        """Start the nodes, create the cluster, wait until it serves every slot; its URL."""
        if self.procs:
            return self.url
        binary = self.binary or find_redis_server()
        cli = find_redis_cli(binary)
        if binary is None or cli is None:
            raise EmbeddedServerError(
                "a Redis Cluster needs redis-server and redis-cli (Debian's redis-server package)"
            )
        self.tmpdir = Path(tempfile.mkdtemp(prefix="felt-redis-cluster-"))
        try:
            for index in range(self.masters):
                self._start_node(binary, index)
            nodes = [f"{self.host}:{port}" for port in self.ports]
            created = subprocess.run(
                [cli, "--cluster", "create", *nodes, "--cluster-replicas", "0", "--cluster-yes"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=START_TIMEOUT,
                check=False,
            )
            if created.returncode != 0:
                raise EmbeddedServerError(
                    "redis-cli --cluster create failed:\n"
                    + created.stdout.decode(errors="replace")[-2000:]
                    + created.stderr.decode(errors="replace")[-2000:]
                )
            deadline = time.monotonic() + START_TIMEOUT
            while not all(_cluster_ok(port) for port in self.ports):
                if time.monotonic() >= deadline:
                    raise EmbeddedServerError("the Redis Cluster never reached cluster_state:ok")
                time.sleep(0.05)
        except BaseException:
            self.stop()
            raise
        return self.url

    def _start_node(self, binary: str, index: int) -> None:
        assert self.tmpdir is not None
        node_dir = self.tmpdir / f"node{index}"
        node_dir.mkdir()
        log = node_dir / "redis.log"
        for _attempt in range(5):  # the free port can be taken between probe and bind
            port = _free_port(self.host)
            # The cluster bus listens on port + 10000: that one must be free as well.
            if port + 10000 > 65535:
                continue
            proc = subprocess.Popen(
                [
                    binary,
                    "--port",
                    str(port),
                    "--bind",
                    self.host,
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    str(node_dir / "nodes.conf"),
                    "--cluster-node-timeout",
                    "2000",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--dir",
                    str(node_dir),
                    "--logfile",
                    str(log),
                    "--daemonize",
                    "no",
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_preexec(),
            )
            deadline = time.monotonic() + START_TIMEOUT
            while time.monotonic() < deadline and proc.poll() is None:
                if _redis_ping(self.host, port):
                    self.procs.append(proc)
                    self.ports.append(port)
                    return
                time.sleep(0.02)
            _stop_process(proc, signal.SIGTERM)
        raise EmbeddedServerError(f"cluster node {index} did not start:\n{_tail(log)}")

    def stop(self) -> None:
        """Stop every node this object started (by its process) and remove their files."""
        for proc in self.procs:
            _stop_process(proc, signal.SIGTERM)
        self.procs.clear()
        self.ports.clear()
        if self.tmpdir is not None:
            with contextlib.suppress(OSError):
                shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
