"""The whole stack as processes for the browser tests, and a Chromium driven by Playwright.

``web_stack`` (module) migrates a throw-away PostgreSQL database, then starts
``felt serve --dev --no-demo`` (table service and AI workers), ``felt lobby``,
``felt projector`` (it archives finished hands, which the client's hand lists read) and
``felt gateway`` on free loopback ports (within ``FELT_E2E_PORTS``, e.g. ``29000-29999``,
when set, so concurrent runs keep to their lanes), on the test Redis DB, with seat tokens
that live a minute (``FELT_SEAT_TOKEN_TTL_S=60``), and waits for the
gateway's ``/healthz``; the gateway serves the built client (``make web``, which
``make test`` runs first). ``FELT_E2E_URL`` points the tests at a stack already
running instead.

``browser`` (module) is Debian's ``/usr/bin/chromium`` (``FELT_CHROMIUM`` to
override) driven by Playwright for Python: no browser download. Without that
binary or ``web/dist`` the tests are skipped with the reason (.ci/run installs
chromium, so in CI they run). Screenshots go to ``tests/e2e/artifacts/``.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Generator, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
import redis as redis_sync_lib

REPO = Path(__file__).resolve().parents[3]
ARTIFACTS = REPO / "tests" / "e2e" / "artifacts"
CHROMIUM = os.environ.get("FELT_CHROMIUM", "/usr/bin/chromium")
READY_S = 90.0  # a loaded 2-core machine starting four Python processes


def _free_port() -> int:
    lanes = os.environ.get("FELT_E2E_PORTS", "")
    candidates = [0]
    if lanes:
        low, high = (int(x) for x in lanes.split("-"))
        candidates = random.sample(range(low, high + 1), min(64, high - low + 1))
    for port in candidates:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(s.getsockname()[1])
    raise RuntimeError(f"no free port in FELT_E2E_PORTS={lanes}")


def _with_database(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


async def _admin(url: str, sql: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def _run_admin(url: str, sql: str) -> None:
    """``_admin`` from sync code, in a thread of its own: Playwright's sync API keeps an event
    loop running in the test's thread, where ``asyncio.run`` is refused."""
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, _admin(url, sql)).result()


@dataclass
class WebStack:
    url: str
    logs: Path


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=2) as r:
            return bool(r.status == 200)
    except OSError:
        return False


def stack_env(redis_url: str, dsn: str, table: int, lobby: int, gateway: int) -> dict[str, str]:
    """The environment of the stack's processes: the test Redis DB, the database ``dsn``,
    the three loopback ports, dev mode and the short token lives the browser tests rely on."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FELT_")}
    path = f"{REPO / 'libs'}{os.pathsep}{REPO}"
    env["PYTHONPATH"] = path + (os.pathsep + env["PYTHONPATH"] if "PYTHONPATH" in env else "")
    env.update(
        REDIS_URL=redis_url,
        DATABASE_URL=dsn,
        FELT_DEV_MODE="1",
        FELT_ADMIN_TOKEN=f"web-e2e-{uuid.uuid4().hex}",
        FELT_BETWEEN_HANDS_MS="600",
        FELT_TABLE_ADDR=f"127.0.0.1:{table}",
        FELT_LOBBY_ADDR=f"127.0.0.1:{lobby}",
        FELT_TABLE_TARGET=f"127.0.0.1:{table}",
        FELT_LOBBY_TARGET=f"127.0.0.1:{lobby}",
        FELT_GATEWAY_ADDR=f"127.0.0.1:{gateway}",
        FELT_PROJECTOR_METRICS_PORT="off",
        # The shortest seat token the table issues: it expires mid-test, so the client's
        # renewal (RefreshSeatToken, half-way through) is part of every game played here.
        FELT_SEAT_TOKEN_TTL_S="60",
        # The shortest access token too: the client's session refresh (RefreshSession with
        # the HttpOnly cookie, test_session_cookie.py) happens in every longer flow.
        FELT_LOBBY_ACCESS_TTL_S="60",
        # Every browser here is one client address (127.0.0.1), and several flows send
        # unknown tokens on purpose: per-address throttling of failed credentials
        # (AUTH_THROTTLED, tested in tests/integration/gateway) would otherwise tie the tests
        # to their order.
        FELT_AUTH_FAILURE_BURST="10000",
        FELT_AUTH_FAILURE_PER_MIN="10000",
    )
    return env


def empty_data(redis_url: str, database_url: str) -> str:
    """Empties the test Redis DB and creates a new PostgreSQL database: its name."""
    flush = redis_sync_lib.Redis.from_url(redis_url)
    try:
        flush.flushdb()
    finally:
        flush.close()
    name = f"felt_web_{uuid.uuid4().hex[:12]}"
    _run_admin(database_url, f'CREATE DATABASE "{name}"')
    return name


def drop_database(database_url: str, name: str) -> None:
    _run_admin(database_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def migrate(env: dict[str, str]) -> None:
    """``felt db migrate`` on the database of ``env``."""
    cli = [sys.executable, "-m", "services.cli", "db", "migrate"]
    subprocess.run(cli, env=env, check=True, capture_output=True)


def start_stack(env: dict[str, str], logs: Path) -> list[subprocess.Popen[bytes]]:
    """Starts serve, lobby, projector and gateway with ``env`` (logs appended to
    ``logs/<name>.log``) and waits for the gateway's ``/healthz``; fails the test with the
    logs' tails when the stack does not come up."""
    felt = [sys.executable, "-m", "services.cli"]
    procs: list[subprocess.Popen[bytes]] = []
    for what, args in (
        ("serve", ["serve", "--dev", "--no-demo"]),
        ("lobby", ["lobby"]),
        ("projector", ["projector", "--dev"]),
        ("gateway", ["gateway"]),
    ):
        out = (logs / f"{what}.log").open("ab")
        procs.append(subprocess.Popen([*felt, *args], env=env, stdout=out, stderr=out))
    url = f"http://{env['FELT_GATEWAY_ADDR']}"
    deadline = time.monotonic() + READY_S
    while not _healthy(url):
        dead = [p.args for p in procs if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            stop_stack(procs)
            tails = {p.name: p.read_text(errors="replace")[-2000:] for p in logs.glob("*.log")}
            pytest.fail(f"the stack did not come up (exited: {dead}): {tails}")
        time.sleep(0.3)
    return procs


def stop_stack(procs: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM to every process (as a ``make run`` user's Ctrl-C), SIGKILL after 15 s."""
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()


@pytest.fixture(scope="module")
def web_stack(redis_url: str, database_url: str, tmp_path_factory: Any) -> Iterator[WebStack]:
    logs = tmp_path_factory.mktemp("web-stack")
    if os.environ.get("FELT_E2E_URL"):
        yield WebStack(os.environ["FELT_E2E_URL"].rstrip("/"), logs)
        return
    if not (REPO / "web" / "dist" / "index.html").exists():
        pytest.skip("web/dist is not built: run `make web`")
    # The stack starts on an empty Redis DB: a table service adopts every table whose lease
    # has lapsed, so tables an earlier test left behind (AI seats playing on) would load
    # this stack's one table service and slow every page (seen in CI: a lounge that did not
    # open in 30 s).
    name = empty_data(redis_url, database_url)
    dsn = _with_database(database_url, name)
    table, lobby, gateway = _free_port(), _free_port(), _free_port()
    env = stack_env(redis_url, dsn, table, lobby, gateway)
    migrate(env)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        procs = start_stack(env, logs)
        yield WebStack(f"http://127.0.0.1:{gateway}", logs)
    finally:
        stop_stack(procs)
        drop_database(database_url, name)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    """A failed browser test explains itself: what the page showed (its address, its visible
    text and a screenshot, ``failure-<test>.png`` among the artifacts) and the last lines of
    every process log of the stack, while the page is still open."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    funcargs = getattr(item, "funcargs", {})
    page, stack = funcargs.get("page"), funcargs.get("web_stack")
    if page is not None:
        try:
            shot = ARTIFACTS / f"failure-{item.name}.png"
            page.screenshot(path=str(shot))
            text = page.locator("body").inner_text(timeout=2000)
            report.sections.append(("page", f"url: {page.url}\nscreenshot: {shot}\n{text[-3000:]}"))
        except Exception as exc:  # a diagnostic must never hide the failure
            report.sections.append(("page", f"(could not read the page: {exc})"))
    if isinstance(stack, WebStack):
        for log in sorted(stack.logs.glob("*.log")):
            lines = log.read_text(errors="replace").splitlines()[-40:]
            report.sections.append((f"log {log.name}", "\n".join(lines)))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    in_ci = os.environ.get("CI", "").lower() == "true"
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        # CI must not lose the browser tests quietly (the client-fold test among them).
        if in_ci:
            pytest.fail(f"no Chromium at {CHROMIUM} in CI (.ci/run installs it as root)")
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does)")
    if in_ci:
        import playwright.sync_api as sync_api  # a dev dependency: CI fails without it
    else:
        sync_api = pytest.importorskip("playwright.sync_api")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()
