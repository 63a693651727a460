"""Bust, then add chips or wait out the grace: a busted seat in a real browser (Chromium)
against the whole stack as processes.

The player signs up as a guest, makes a heads-up lounge against one AI player whose buy-in
range starts at one big blind (through the gateway's Connect API with the page's own
credentials: the lobby form's range is the default one), sits down with one big blind, and
checks and folds until the seat is out of chips. Then either it sees "You are out of chips"
with its two ways on (add chips, leave), adds chips through the form, and plays on at the
same seat: the chips come from the balance exactly once (issue #21); or it does nothing,
and once the lounge's grace (one minute, the least a lounge may set) has passed the lobby
frees the seat and the page says so in the lobby, with nothing taken from the balance.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from .conftest import ARTIFACTS, WebStack
from .test_browser import (
    DESKTOP,
    PLAY_S,
    hands_finished,
    lobby_call,
    set_language,
    shoot,
    visible,
)

PlaywrightError: type[Exception] = pytest.importorskip("playwright.sync_api").Error
pytestmark = pytest.mark.timeout(600)

ADDED = 50


def balance(page: Any) -> int:
    return int(lobby_call(page, "GetBalance", {}).get("balance", "0"))


@pytest.fixture
def page(browser: Any) -> Any:
    context = browser.new_context(viewport=DESKTOP, locale="en-US")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    yield page
    context.close()
    assert errors == [], f"the page threw: {errors}"


def sit_down_and_bust(web_stack: WebStack, page: Any, **lounge_fields: Any) -> str:
    """Sign up, make the heads-up lounge (``lounge_fields`` added to its ``CreateLounge``),
    sit down with one big blind and check or fold until out of chips; returns the lounge's
    name."""
    page.goto(web_stack.url)
    page.get_by_test_id("name").fill(f"Web{uuid.uuid4().hex[:6]}")
    page.get_by_test_id("enter").click()
    page.get_by_test_id("balance").wait_for()
    lounge = f"Bust {uuid.uuid4().hex[:4]}"
    lobby_call(
        page,
        "CreateLounge",
        {
            "name": lounge,
            "config": {
                "variant": "VARIANT_NLHE",
                "seatCount": 2,
                "smallBlind": "5",
                "bigBlind": "10",
            },
            "minBuyIn": "10",
            "maxBuyIn": "100",
            "aiSeats": [{"level": "AI_LEVEL_EASY"}],
            "requestId": str(uuid.uuid4()),
            **lounge_fields,
        },
    )
    page.reload()
    row = page.get_by_test_id("lounge-row").filter(has_text=lounge)
    row.get_by_role("button", name="Join").click()
    dialog = page.get_by_role("dialog")
    dialog.locator(".buy-in input[type=range]").fill("10")
    assert dialog.get_by_test_id("buy-in-value").inner_text() == "10"
    page.get_by_test_id("join-confirm").click()
    page.get_by_test_id("table").wait_for(timeout=30_000)

    # Check, else fold: one big blind goes soon.
    deadline = time.monotonic() + PLAY_S
    while not visible(page, "out-of-chips"):
        assert time.monotonic() < deadline, page.inner_text("body")
        if visible(page, "act-check"):
            page.get_by_test_id("act-check").click()
        elif visible(page, "act-fold"):
            page.get_by_test_id("act-fold").click()
        page.wait_for_timeout(150)
    return lounge


def test_bust_add_chips_and_play_on(web_stack: WebStack, page: Any) -> None:
    sit_down_and_bust(web_stack, page)
    panel = page.get_by_test_id("bust")
    assert "You are out of chips" in panel.inner_text()
    assert visible(page, "out-of-chips")  # the add-chips form, inside the bust panel
    assert visible(page, "bust-leave") and visible(page, "add-chips-max")
    assert not visible(page, "add-chips")  # the quiet control gives way to the panel
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shoot(page, "add-chips")
    before = balance(page)

    page.get_by_test_id("add-chips-amount").fill(str(ADDED))
    page.get_by_test_id("add-chips-send").click()
    # The seat has chips again: the out-of-chips panel (with its form) gives way to play.
    page.get_by_test_id("bust").wait_for(state="detached", timeout=20_000)
    assert balance(page) == before - ADDED

    # Plays on at the same seat: hands end with the seat in them.
    hands = hands_finished(page)
    deadline = time.monotonic() + PLAY_S
    while hands_finished(page) < hands + 2 and not visible(page, "out-of-chips"):
        assert time.monotonic() < deadline, page.inner_text("body")
        if visible(page, "act-check"):
            page.get_by_test_id("act-check").click()
        elif visible(page, "act-call"):
            page.get_by_test_id("act-call").click()
        elif visible(page, "act-fold"):
            page.get_by_test_id("act-fold").click()
        page.wait_for_timeout(150)
    assert balance(page) == before - ADDED  # once, whatever the page re-rendered


def test_a_busted_seat_is_freed_after_the_grace_and_the_page_says_so(
    web_stack: WebStack, page: Any
) -> None:
    lounge = sit_down_and_bust(web_stack, page, bustedGraceS=60)
    before = balance(page)
    assert page.get_by_test_id("bust").is_visible()
    # The lobby's pass frees the seat once the minute is over (it looks every 2 s here): the
    # table's PlayerLeft (busted) takes the page to the lobby with the lounge's grace said.
    notice = page.get_by_test_id("notice")
    notice.wait_for(timeout=180_000)
    assert "Your seat was freed after 1 min without chips" in notice.inner_text()
    assert not visible(page, "table")
    # The notice follows a language switch, as the rest of the page does.
    set_language(page, "lt")
    assert "Jūsų vieta atlaisvinta po 1 min be žetonų" in notice.inner_text()
    set_language(page, "en")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shoot(page, "busted-freed")
    # Nothing to cash out: the balance is what it was once the chips were lost, and the seat
    # is free again (the lounge lists one of its two seats taken, the AI's).
    assert balance(page) == before
    row = page.get_by_test_id("lounge-row").filter(has_text=lounge)
    assert "1/2" in row.inner_text(), row.inner_text()
