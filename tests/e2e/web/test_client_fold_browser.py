"""The web client keeps its table view from the watch stream alone (issue #23), in Chromium.

For each variant a guest creates a lounge with two AI players and plays random hands
(seeded choices among the buttons the page offers: fold, check, call, raise, all-in, and
0-3 discards in the draw) until three hands have ended. The page records every view it
takes (``window.feltViews``, set before the client loads: ``table.tsx``'s ``recordView``):
folded from an event and its ``ViewChange`` (``fold.ts``), or given by the server (the
snapshot on connect, ``GetTableView``, an action's answer).

After every event, the client's folded view must equal what ``GetTableView`` returns for
that seat at that sequence: ``fill_table_view`` (the function behind ``GetTableView``) over
the table's stored stream folded up to the event, the action clock counted from the event
that started the turn, as the table service does. The first difference is reported field by
field. The person's own actions are answered with their sequence alone (``sequence_only``),
so their events are folded from the stream like everyone else's: after the view the stream
opens with, every event of the stream is folded, one by one, up to the stream's last, which
the page must reach. One real ``GetTableView`` call (the RPC, for that seat) is compared too,
so the expectation is ``GetTableView``'s own. The requests the page sent are counted per
hand, all of them: one ``SubmitAction`` per action the person takes and no ``GetTableView``
(no reconnect happens here; the client before issue #23 asked for one after every event).
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from typing import Any

import pytest
import redis as redis_sync_lib
from google.protobuf import json_format

from felt.core.table.aggregate import TableState, apply_event
from felt.messages.events import from_stored_event
from felt.storage.eventstore import events_key
from felt.wire.convert import fill_table_view
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as tspb
from services.table.stream import deadline_of, starts_turn

from .conftest import WebStack
from .test_browser import (
    DESKTOP,
    MAX_CALL,
    call_amount,
    hands_finished,
    sign_up_and_create,
    visible,
)

pytest.importorskip("playwright.sync_api")

pytestmark = pytest.mark.timeout(300)

HANDS = 3
PLAY_S = 120.0  # a bound for a loaded machine, not a measurement
BUTTONS = ("act-fold", "act-check", "act-call", "act-raise", "act-allin")
# How often each offered button is pressed: all-in rarely (it ends the game for whoever
# loses it), folding now and then, mostly checks, calls and raises.
WEIGHTS = {"act-fold": 1.0, "act-check": 4.0, "act-call": 4.0, "act-raise": 2.0, "act-allin": 0.2}


def stored_stream(redis_url: str, table_id: str) -> list[epb.StoredEvent]:
    """The table's unredacted stream, straight from Redis."""
    client = redis_sync_lib.Redis.from_url(redis_url)
    try:
        entries: list[tuple[bytes, dict[bytes, bytes]]] = client.xrange(  # type: ignore[assignment]
            events_key(table_id)
        )
    finally:
        client.close()
    return [epb.StoredEvent.FromString(fields[b"e"]) for _, fields in entries]


def expected_views(stored: list[epb.StoredEvent], viewer: int) -> dict[int, tpb.TableView]:
    """``GetTableView`` for ``viewer`` after each event of the stream, by sequence."""
    state: TableState | None = None
    turn_at = None
    views: dict[int, tpb.TableView] = {}
    for message in stored:
        event, meta = from_stored_event(message)
        state = apply_event(state, event)
        if starts_turn(event):
            turn_at = meta.recorded_at
        view = tpb.TableView()
        fill_table_view(view, state, viewer, message.sequence, deadline_of(state, turn_at))
        views[message.sequence] = view
    return views


def first_difference(got: Any, want: Any, path: str = "view") -> str:
    """Where two JSON-like values first differ ("" when equal)."""
    if isinstance(got, dict) and isinstance(want, dict):
        for key in sorted(set(got) | set(want)):
            found = first_difference(got.get(key), want.get(key), f"{path}.{key}")
            if found:
                return found
        return ""
    if isinstance(got, list) and isinstance(want, list):
        for i, (g, w) in enumerate(zip(got, want, strict=False)):
            found = first_difference(g, w, f"{path}[{i}]")
            if found:
                return found
        if len(got) != len(want):
            return f"{path}: {len(got)} items, GetTableView has {len(want)}"
        return ""
    return "" if got == want else f"{path}: client {got!r}, GetTableView {want!r}"


def play_randomly(page: Any, rng: random.Random, hands: int) -> int:
    """Acts at random whenever the page offers actions until `hands` hands have ended."""
    actions = 0
    deadline = time.monotonic() + PLAY_S
    while hands_finished(page) < hands:
        assert time.monotonic() < deadline, f"{hands} hands did not end: {page.inner_text('body')}"
        if visible(page, "act-discard"):
            cards = page.get_by_test_id("discard-card")
            for i in rng.sample(range(cards.count()), rng.randint(0, min(3, cards.count()))):
                cards.nth(i).click()
            page.get_by_test_id("act-discard").click()
            actions += 1
        elif visible(page, "actions"):
            offered = [b for b in BUTTONS if visible(page, b)]
            if "act-call" in offered and call_amount(page) > MAX_CALL:
                offered.remove("act-call")  # the stack lasts the hands the test needs
            weights = {
                "act-fold": 1,
                "act-check": 4,
                "act-call": 4,
                "act-raise": 2,
                "act-allin": 0.2,
            }
            if offered:
                choice = rng.choices(offered, [weights[b] for b in offered])[0]
                page.get_by_test_id(choice).click()
                actions += 1
        page.wait_for_timeout(100)
    return actions


@pytest.mark.parametrize("variant", ["nlhe", "draw"])
def test_the_folded_view_equals_get_table_view_after_every_event(
    web_stack: WebStack, browser: Any, redis_url: str, variant: str
) -> None:
    context = browser.new_context(viewport=DESKTOP, locale="en-US")
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.add_init_script("window.feltViews = []")
        calls: Counter[str] = Counter()
        page.on(  # the RPCs (the page's static files are not counted)
            "request",
            lambda r: calls.update([r.url.rsplit("/", 1)[-1]]) if "/poker.v1." in r.url else None,
        )
        seat_tokens: list[str] = []  # the authorization the page's table calls carry
        page.on(
            "request",
            lambda r: (
                seat_tokens.append(r.headers["authorization"])
                if r.url.endswith("/SubmitAction") and "authorization" in r.headers
                else None
            ),
        )
        sign_up_and_create(page, web_stack, variant)
        at_table = dict(calls)
        actions = play_randomly(page, random.Random(f"clientfold-{variant}"), HANDS)
        table_id = page.url.rsplit("/", 1)[-1]
        played = dict(calls)
        # The page must catch up with the stream: its last view at the stream's last event
        # (the AI players may still be acting, so both are read again until they meet).
        deadline = time.monotonic() + 20
        while True:
            records: list[dict[str, str]] = page.evaluate("window.feltViews")
            shown = int(json.loads(records[-1]["view"])["table"]["sequence"])
            last = stored_stream(redis_url, table_id)[-1].sequence
            if shown == last:
                break
            assert time.monotonic() < deadline, f"the page stayed at {shown}, the stream at {last}"
            page.wait_for_timeout(100)
        # One real GetTableView, the RPC, for the seat: what the expectation below stands for.
        seat_now = json.loads(records[-1]["view"])["viewerSeat"]
        assert seat_tokens, "the page's actions carried no seat token"
        rpc = page.evaluate(
            """async ([tableId, seat, authorization]) => {
                const r = await fetch("/poker.v1.TableService/GetTableView", {
                    method: "POST",
                    headers: {"content-type": "application/json", authorization},
                    body: JSON.stringify({tableId, seat}),
                });
                return [r.status, await r.text()];
            }""",
            [table_id, seat_now, seat_tokens[-1]],
        )
        assert errors == [], errors
    finally:
        context.close()
    views = [(r["how"], json.loads(r["view"])) for r in records]
    seat = views[0][1]["viewerSeat"]
    expected = expected_views(stored_stream(redis_url, table_id), seat)
    folded = 0
    for how, got in views:
        sequence = int(got["table"]["sequence"])
        want = json_format.MessageToDict(expected[sequence])
        # Compared as messages (the two JSON encoders may write a timestamp's digits apart).
        same = json_format.ParseDict(got, tpb.TableView()) == expected[sequence]
        assert same, f"{how} view at {sequence}: {first_difference(got, want)}"
        folded += how == "fold"
    # The stream opens with the server's view (its snapshot); after it every event of the
    # stream, the person's own included, is folded onto the view just before it.
    assert views[0][0] == "snapshot", views[0][0]
    later = [how for how, _ in views[1:] if how != "fold"]
    assert later == [], f"views taken from the server after the stream opened: {later}"
    at = int(views[0][1]["table"]["sequence"])
    for _, got in views[1:]:
        sequence = int(got["table"]["sequence"])
        assert sequence == at + 1, f"folded {sequence} onto the view at {at}"
        at = sequence
    assert folded == at - int(views[0][1]["table"]["sequence"]) and folded > 20, folded
    status, body = rpc
    assert status == 200, (status, body)
    answered = json_format.Parse(body, tspb.GetTableViewResponse(), ignore_unknown_fields=True)
    sequence = answered.view.table.sequence
    assert answered.view == expected[sequence], first_difference(
        json_format.MessageToDict(answered.view), json_format.MessageToDict(expected[sequence])
    )
    hands = HANDS
    during = Counter({k: v - at_table.get(k, 0) for k, v in played.items()})
    during = +during  # the requests sent while the hands were played, by method
    fetched = during["GetTableView"]
    submitted = during["SubmitAction"]
    per_hand = ", ".join(f"{name} {n / hands:.2f}" for name, n in sorted(during.items()))
    print(
        f"\nclient fold ({variant}): {folded} events folded over {hands} hands; "
        f"requests per hand per seated person: {per_hand} ({actions} actions taken); "
        f"events folded per hand {folded / hands:.1f} (the client before asked a view for each)"
    )
    assert submitted == actions
    assert fetched == 0, f"{fetched} GetTableView calls with no reconnect"
