"""The table's stream refused for load (RESOURCE_EXHAUSTED: the gateway's TOO_MANY_WATCHES, a
rate limit), in a real browser (Chromium) against the whole stack as processes: the page
says why, translated, instead of reconnecting silently, waits longer before it tries again,
and goes live once the stream is let through.

The refusal is the gateway's own answer as Connect sends it (an end-of-stream message with
the error and its ``ErrorInfo``), put in place of the stream by the browser's routing.
"""

from __future__ import annotations

import base64
import json
import struct
import time
from typing import Any

import pytest
from google.rpc import error_details_pb2  # type: ignore[import-untyped]

from .conftest import WebStack
from .test_browser import page as page  # the fixture: a page that must not throw
from .test_browser import sign_up_and_create

pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.timeout(600)


def too_many_watches() -> bytes:
    """A Connect server stream that ends at once with RESOURCE_EXHAUSTED TOO_MANY_WATCHES."""
    info = error_details_pb2.ErrorInfo(reason="TOO_MANY_WATCHES", domain="felt.poker")
    error = {
        "code": "resource_exhausted",
        "message": "at most 4 watch streams per token; close one first",
        "details": [
            {
                "type": "google.rpc.ErrorInfo",
                "value": base64.b64encode(info.SerializeToString()).decode(),
            }
        ],
    }
    end = json.dumps({"error": error}).encode()
    return struct.pack(">BI", 0x02, len(end)) + end


def test_a_stream_refused_for_load_is_said_and_retried_later(
    web_stack: WebStack, page: Any
) -> None:
    sign_up_and_create(page, web_stack, "nlhe")
    tries: list[float] = []

    def refuse(route: Any) -> None:
        tries.append(time.monotonic())
        route.fulfill(
            status=200,
            headers={"content-type": route.request.headers["content-type"]},
            body=too_many_watches(),
        )

    page.route("**/poker.v1.TableService/WatchTable", refuse)
    page.reload()
    status = page.get_by_test_id("connection")
    deadline = time.monotonic() + 30
    while "Too many open tables" not in status.inner_text():
        assert time.monotonic() < deadline, status.inner_text()
        page.wait_for_timeout(100)
    assert "Trying again" in status.inner_text()
    page.wait_for_timeout(3_000)
    assert len(tries) == 1, "retried at the usual pace (0.5 s), not after a longer wait"
    page.unroute("**/poker.v1.TableService/WatchTable")
    deadline = time.monotonic() + 60
    while status.inner_text() != "Live":
        assert time.monotonic() < deadline, status.inner_text()
        page.wait_for_timeout(200)
    page.get_by_test_id("my-seat").wait_for()
