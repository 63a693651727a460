"""The refresh token in the browser (issue #20): in an HttpOnly cookie no script reads,
used by the client's own refresh once the access token (60 s here) expires, cleared by
signing out (docs/gateway.md, "Sessions in a browser")."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import pytest

from .conftest import WebStack

pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.timeout(300)

EXPIRY_WAIT_S = 150.0  # a bound: the access token lives 60 s, the lobby page polls every 5 s


def refresh_cookie(context: Any) -> dict[str, Any] | None:
    cookies = [c for c in context.cookies() if c["name"] == "felt_refresh"]
    return cookies[0] if cookies else None


def test_the_refresh_token_is_out_of_scripts_reach_and_renews_the_session(
    web_stack: WebStack, browser: Any
) -> None:
    context = browser.new_context(locale="en-US")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(web_stack.url)
        page.get_by_test_id("name").fill(f"Ck{uuid.uuid4().hex[:6]}")
        page.get_by_test_id("enter").click()
        page.get_by_test_id("balance").wait_for()

        cookie = refresh_cookie(context)
        assert cookie is not None
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert cookie["path"] == "/poker.v1.LobbyService/RefreshSession"
        assert cookie["value"].startswith("r1.")
        assert "felt_refresh" not in page.evaluate("document.cookie")
        stored = json.loads(page.evaluate("localStorage.getItem('felt.session')"))
        assert "refresh" not in stored and stored["access"]
        assert cookie["value"] not in json.dumps(page.evaluate("Object.assign({}, localStorage)"))

        # The access token expires; the lobby page's next call is refused TOKEN_EXPIRED and
        # the client refreshes with the cookie alone: the cookie rotates, the page goes on.
        deadline = time.monotonic() + EXPIRY_WAIT_S
        while (now := refresh_cookie(context)) is not None and now["value"] == cookie["value"]:
            assert time.monotonic() < deadline, "the session was never refreshed"
            page.wait_for_timeout(1000)
        assert now is not None and now["httpOnly"]
        renewed = json.loads(page.evaluate("localStorage.getItem('felt.session')"))
        assert renewed["access"] != stored["access"] and "refresh" not in renewed
        page.reload()
        page.get_by_test_id("balance").wait_for()
        assert page.get_by_role("alert").count() == 0

        page.get_by_role("button", name="Sign out").click()
        page.get_by_test_id("name").wait_for()
        assert refresh_cookie(context) is None  # cleared by the gateway's answer
        assert errors == []
    finally:
        context.close()
