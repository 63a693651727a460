"""A real restart of the servers, met in a real browser (Chromium): issue #21's last gap.

The module's ``web_stack`` can restart the whole stack (serve, lobby, projector, gateway,
stopped with SIGTERM and started again on the same ports) as a ``make run`` user meets it:

1. with its data kept (the same PostgreSQL database and Redis DB): the signed-in page,
   left open at a table, reconnects by itself and carries on: the table comes back, and the
   lobby shows the balance (never stuck at "…") and is usable;
2. with its data gone (a new database and an emptied Redis DB, as ``make run``'s private
   embedded servers start): the page ends on the sign-in screen with the translated
   sentence that the session ended, and signing up again works.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from subprocess import Popen
from typing import Any

import pytest

from .conftest import (
    REPO,
    WebStack,
    _free_port,
    _with_database,
    drop_database,
    empty_data,
    migrate,
    stack_env,
    start_stack,
    stop_stack,
)
from .test_browser import DESKTOP, hands_finished, visible

pytestmark = pytest.mark.timeout(300)

PLAY_S = 90.0  # a bound, not a measurement: AI players on a loaded machine
DIGITS = "() => /\\d/.test(document.querySelector('[data-testid=balance]')?.textContent ?? '')"


@dataclass
class RestartableStack(WebStack):
    redis_url: str = ""
    database_url: str = ""
    env: dict[str, str] = field(default_factory=dict)
    databases: list[str] = field(default_factory=list)
    procs: list[Popen[bytes]] = field(default_factory=list)

    def stop(self) -> None:
        """SIGTERM to every process (a ``make run`` user's Ctrl-C)."""
        stop_stack(self.procs)
        self.procs = []

    def start(self, keep_data: bool) -> None:
        """The same processes on the same ports again: on the same data, or on a new
        database and an emptied Redis DB."""
        if not keep_data:
            name = empty_data(self.redis_url, self.database_url)
            self.databases.append(name)
            self.env["DATABASE_URL"] = _with_database(self.database_url, name)
            migrate(self.env)
        self.procs = start_stack(self.env, self.logs)


@pytest.fixture(scope="module")
def web_stack(
    redis_url: str, database_url: str, tmp_path_factory: Any
) -> Iterator[RestartableStack]:
    if not (REPO / "web" / "dist" / "index.html").exists():
        pytest.skip("web/dist is not built: run `make web`")
    logs = tmp_path_factory.mktemp("restart-stack")
    name = empty_data(redis_url, database_url)
    gateway = _free_port()
    dsn = _with_database(database_url, name)
    env = stack_env(redis_url, dsn, _free_port(), _free_port(), gateway)
    stack = RestartableStack(
        f"http://127.0.0.1:{gateway}", logs, redis_url, database_url, env, [name]
    )
    try:
        migrate(env)
        stack.procs = start_stack(env, logs)
        yield stack
    finally:
        stop_stack(stack.procs)
        for db in stack.databases:
            drop_database(database_url, db)


@pytest.fixture
def page(browser: Any) -> Any:
    context = browser.new_context(viewport=DESKTOP, locale="en-US")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    yield page
    context.close()
    assert errors == [], f"the page threw: {errors}"


def play_until_a_hand_ends(page: Any, seen: int) -> None:
    """Checks, else folds, until the table has seen more than ``seen`` hands end: the table
    is live (its stream and actions work), not a picture of the one before the restart."""
    deadline = time.monotonic() + PLAY_S
    while hands_finished(page) <= seen:
        assert time.monotonic() < deadline, page.inner_text("body")
        if visible(page, "act-check"):
            page.get_by_test_id("act-check").click()
        elif visible(page, "act-fold"):
            page.get_by_test_id("act-fold").click()
        page.wait_for_timeout(150)


def test_restarts_with_data_kept_then_gone(web_stack: RestartableStack, page: Any) -> None:
    page.goto(web_stack.url)
    page.get_by_test_id("name").fill(f"Rs{uuid.uuid4().hex[:6]}")
    page.get_by_test_id("enter").click()
    page.wait_for_function(DIGITS)
    lounge = f"Restart {uuid.uuid4().hex[:4]}"
    page.get_by_test_id("lounge-name").fill(lounge)
    page.get_by_test_id("create").click()
    page.get_by_test_id("table").wait_for(timeout=60_000)
    table_url = page.url

    # 1. Data kept: the open table carries on by itself, then the lobby is whole and usable.
    hands = hands_finished(page)
    web_stack.stop()
    web_stack.start(keep_data=True)
    play_until_a_hand_ends(page, hands)
    page.get_by_role("link", name="to the lobby").click()
    page.wait_for_function(DIGITS, timeout=30_000)
    assert not page.get_by_test_id("session-lost").is_visible()
    row = page.get_by_test_id("lounge-row").filter(has_text=lounge)
    row.wait_for(timeout=30_000)
    page.goto(table_url)  # the table again, from its link: the seat is still this page's
    play_until_a_hand_ends(page, 0)  # a fresh load counts from 0
    page.get_by_role("link", name="to the lobby").click()
    page.wait_for_function(DIGITS, timeout=30_000)

    # Down while the lobby is open: it says the servers cannot be reached, keeps the balance
    # it knew, and once they are back the lobby is whole again by itself (no reload).
    web_stack.stop()
    alert = page.get_by_test_id("lobby-stale")
    alert.wait_for(timeout=30_000)  # the lobby asks every 5 s
    assert "cannot be reached" in alert.inner_text(), alert.inner_text()
    page.wait_for_function(DIGITS)
    web_stack.start(keep_data=True)
    alert.wait_for(state="detached", timeout=30_000)
    page.wait_for_function(DIGITS)
    assert not page.get_by_test_id("session-lost").is_visible()

    # 2. Data gone: the sign-in screen, saying the session ended; signing up again works.
    web_stack.stop()
    alert.wait_for(timeout=30_000)
    web_stack.start(keep_data=False)
    lost = page.get_by_test_id("session-lost")
    lost.wait_for(timeout=30_000)
    assert "please sign in again" in lost.inner_text(), lost.inner_text()
    assert page.get_by_test_id("name").is_visible()
    assert not page.get_by_test_id("balance").is_visible()
    page.get_by_test_id("name").fill(f"Rs{uuid.uuid4().hex[:6]}")
    page.get_by_test_id("enter").click()
    page.wait_for_function(DIGITS, timeout=30_000)
    assert not lost.is_visible()
