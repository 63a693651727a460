"""Wait for the big blind (issue #21) in a real browser (Chromium) against the whole stack.

The player signs up as a guest, makes a four-seat Hold'em lounge against three AI players,
sits out, ticks "Wait for the big blind" beside "Sit in" and sits back in. From then on the
seat holds no cards while it shows "Waiting for the big blind"; the first hand that deals it
in has it post the big blind (10), and nothing of its own before that in that hand. A newcomer
joining with the box ticked in the join dialog (a lounge whose hands already run) does the same.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from .conftest import ARTIFACTS, WebStack
from .test_browser import DESKTOP, PLAY_S, hands_finished, lobby_call, shoot, visible

PlaywrightError: type[Exception] = pytest.importorskip("playwright.sync_api").Error
pytestmark = pytest.mark.timeout(600)


@pytest.fixture
def page(browser: Any) -> Any:
    context = browser.new_context(viewport=DESKTOP, locale="en-US")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    yield page
    context.close()
    assert errors == [], f"the page threw: {errors}"


def passive(page: Any) -> None:
    """Check, else fold, when the page offers it (the seat's own hand goes quietly)."""
    if visible(page, "act-check"):
        page.get_by_test_id("act-check").click()
    elif visible(page, "act-fold"):
        page.get_by_test_id("act-fold").click()


def my_cards(page: Any) -> int:
    return int(page.get_by_test_id("my-seat").locator(".seat-cards .card").count())


def own_hand_lines(page: Any, me: str) -> list[str]:
    """The current hand's log lines about the seat's play (not its sitting out or in)."""
    table_lines = (f"{me} sits in", f"{me} sits out", f"{me} waits for the big blind")
    log = page.get_by_test_id("log").inner_text().splitlines()
    return [line for line in log if me in line and line not in table_lines]


def test_waiting_for_the_big_blind_deals_the_seat_in_at_its_big_blind(
    web_stack: WebStack, page: Any
) -> None:
    page.goto(web_stack.url)
    me = f"Web{uuid.uuid4().hex[:6]}"
    page.get_by_test_id("name").fill(me)
    page.get_by_test_id("enter").click()
    page.get_by_test_id("balance").wait_for()
    lounge = f"Wait {uuid.uuid4().hex[:4]}"
    lobby_call(
        page,
        "CreateLounge",
        {
            "name": lounge,
            "config": {
                "variant": "VARIANT_NLHE",
                "seatCount": 4,
                "smallBlind": "5",
                "bigBlind": "10",
            },
            "aiSeats": [{"level": "AI_LEVEL_EASY"}] * 3,
            "requestId": str(uuid.uuid4()),
        },
    )
    page.reload()
    row = page.get_by_test_id("lounge-row").filter(has_text=lounge)
    row.get_by_role("button", name="Join").click()
    page.get_by_test_id("join-confirm").click()
    page.get_by_test_id("table").wait_for(timeout=30_000)

    # Sit out (from the next hand: a hand the seat holds cards in is played out, passively).
    page.get_by_test_id("sit-out").click()
    deadline = time.monotonic() + PLAY_S
    while not visible(page, "wait-for-big-blind") or my_cards(page):
        assert time.monotonic() < deadline, page.inner_text("body")
        passive(page)
        page.wait_for_timeout(150)
    assert page.get_by_test_id("sit-out").inner_text() == "Sit in"
    page.get_by_test_id("wait-for-big-blind").check()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shoot(page, "wait-for-big-blind")
    page.get_by_test_id("sit-out").click()

    # Until the big blind reaches the seat: no cards while it shows that it waits.
    waited = 0
    hands = hands_finished(page)
    deadline = time.monotonic() + PLAY_S
    tag = page.get_by_test_id("my-seat").get_by_test_id("waiting-for-big-blind")
    while True:
        assert time.monotonic() < deadline, page.inner_text("body")
        if my_cards(page) or own_hand_lines(page, me):
            break
        if tag.count():
            waited += 1
        page.wait_for_timeout(100)
    # Dealt in: the hand's log (the page keeps the current hand's) has the seat post the
    # big blind, and the seat says nothing else before it (no small blind, no action).
    deadline = time.monotonic() + 30
    while f"{me} posts a blind of" not in page.get_by_test_id("log").inner_text():
        assert time.monotonic() < deadline, page.get_by_test_id("log").inner_text()
        page.wait_for_timeout(100)
    lines = own_hand_lines(page, me)
    assert lines[0] == f"{me} posts a blind of 10", lines
    assert waited > 0, "the seat never showed that it waited for the big blind"
    assert tag.count() == 0
    assert hands_finished(page) >= hands


_WAITING_AND_CARDS = """seat => [
  seat.querySelector('[data-testid="waiting-for-big-blind"]') !== null,
  seat.querySelectorAll(".seat-cards .card").length,
]"""


def test_joining_with_the_box_ticked_waits_for_the_big_blind(
    web_stack: WebStack, page: Any, browser: Any
) -> None:
    """A first player sits at a Hold'em lounge (its actions time out fast: hands go on); the
    newcomer joins with "Wait for the big blind" ticked in the join dialog: no cards while
    its seat shows that it waits, then its first hand has it post the big blind."""
    first = browser.new_context(viewport=DESKTOP, locale="en-US").new_page()
    first.goto(web_stack.url)
    first.get_by_test_id("name").fill(f"First{uuid.uuid4().hex[:6]}")
    first.get_by_test_id("enter").click()
    first.get_by_test_id("balance").wait_for()
    lounge = f"Join waiting {uuid.uuid4().hex[:4]}"
    config = {
        "variant": "VARIANT_NLHE",
        "seatCount": 4,
        "smallBlind": "5",
        "bigBlind": "10",
        "actionClock": "0.3s",
    }
    made = lobby_call(
        first,
        "CreateLounge",
        {
            "name": lounge,
            "config": config,
            "aiSeats": [{"level": "AI_LEVEL_EASY"}] * 2,
            "requestId": str(uuid.uuid4()),
        },
    )
    lobby_call(
        first,
        "JoinLounge",
        {"loungeId": made["lounge"]["loungeId"], "buyIn": "500", "requestId": str(uuid.uuid4())},
    )
    page.goto(web_stack.url)
    me = f"Web{uuid.uuid4().hex[:6]}"
    page.get_by_test_id("name").fill(me)
    page.get_by_test_id("enter").click()
    page.get_by_test_id("balance").wait_for()
    page.wait_for_timeout(2_000)  # the first hand is dealt (a fresh table deals everyone in)
    page.reload()
    row = page.get_by_test_id("lounge-row").filter(has_text=lounge)
    row.get_by_role("button", name="Join").click()
    page.get_by_role("dialog").get_by_test_id("join-wait-for-big-blind").check()
    shoot(page, "join-wait-for-big-blind")
    page.get_by_test_id("join-confirm").click()
    page.get_by_test_id("table").wait_for(timeout=30_000)
    waited = 0
    deadline = time.monotonic() + PLAY_S
    while f"{me} posts a blind of" not in page.get_by_test_id("log").inner_text():
        assert time.monotonic() < deadline, page.inner_text("body")
        # Read at once (two look-ups could straddle the deal that ends the wait).
        tagged, cards = page.get_by_test_id("my-seat").evaluate(_WAITING_AND_CARDS)
        if tagged:
            waited += 1
            assert cards == 0, "dealt in while waiting"
        page.wait_for_timeout(100)
    lines = own_hand_lines(page, me)
    assert lines[0] == f"{me} posts a blind of 10", lines
    assert waited > 0, "the seat never showed that it waited for the big blind"
    first.context.close()
