"""WatchTable and GetHandHistory: gap-free resumes, redaction, and card proofs that verify."""

from __future__ import annotations

import random
from typing import Any

import pytest

from felt.core.table.deals import verify_hand
from felt.messages.events import from_stored_event
from felt.wire.convert import proof_from_proto
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from tests.integration.table.harness import TableEnv


def _draw_two(view: tpb.TableView, rng: random.Random) -> tpb.Action:
    """Check or call to the showdown; in the draw, throw away two cards."""
    legal = {a.type for a in view.hand.legal_actions}
    if tpb.ACTION_TYPE_DISCARD in legal:
        me = next(s for s in view.hand.seats if s.seat == view.viewer_seat)
        return tpb.Action(discard=tpb.Action.Discard(cards=[c.code for c in me.cards][:2]))
    if tpb.ACTION_TYPE_CHECK in legal:
        return tpb.Action(check=tpb.Action.Check())
    return tpb.Action(call=tpb.Action.Call())


def _assert_redacted(event: epb.StoredEvent, viewer: int | None) -> None:
    """Nothing the viewer may not see: others' hole and drawn cards, deck, seed, token hash."""
    kind = event.WhichOneof("event")
    assert kind is not None
    body = getattr(event, kind)
    if kind == "hole_cards_dealt":
        hidden = body.seat != viewer
        assert all(c.hidden == hidden for c in body.cards), event
    elif kind == "cards_drawn":
        hidden = body.seat != viewer
        assert all(c.hidden == hidden for c in (*body.discarded, *body.drawn)), event
    elif kind == "hand_started":
        assert not body.setup.deck
    elif kind == "deck_committed":
        assert not body.seed and len(body.root) == 64
    elif kind == "player_seated":
        assert not body.token_hash


def _hand_items(items: list[pb.WatchTableResponse], hand_id: str) -> list[Any]:
    """(event, proofs) of one hand, as verify_hand takes them."""
    out = []
    for item in items:
        if item.HasField("event") and item.event.hand_id == hand_id:
            event, _ = from_stored_event(item.event)
            out.append((event, [proof_from_proto(p) for p in item.card_proofs]))
    return out


@pytest.mark.parametrize("variant", ["nlhe", "draw"])
async def test_a_resumed_watch_misses_nothing_and_sees_nothing_it_may_not(
    table_env: TableEnv, variant: str
) -> None:
    server = await table_env.start_server(between_hands_ms=10)
    stub = table_env.stub(server)
    config = table_env.nlhe(2) if variant == "nlhe" else table_env.draw(2)
    table_id = await table_env.create_table(stub, config)
    keys = {0: await table_env.seat(stub, table_id, 0)}
    seat0 = table_env.watch(stub, table_id, keys[0])
    spectator = table_env.watch(stub, table_id)
    await seat0.wait(lambda: bool(seat0.items), "the snapshot")
    await spectator.wait(lambda: bool(spectator.items), "the snapshot")
    keys[1] = await table_env.seat(stub, table_id, 1)  # the first hand begins
    snapshot = seat0.items[0].snapshot
    assert snapshot.viewer_seat == 0
    start = snapshot.table.sequence

    # A few actions of hand 1, then the seat's watcher disconnects.
    for _ in range(3):
        await table_env.act(stub, table_id, keys, _draw_two)
    last = await table_env.view(stub, table_id)
    await seat0.wait_sequence(last.table.sequence)
    await seat0.close()
    cut = seat0.last_sequence
    # The hand goes on to its end and the next hand begins; then the watcher resumes.
    rng = random.Random(3)
    while True:
        response = await table_env.act(stub, table_id, keys, _draw_two, rng)
        if response.view.hand.hand_id.endswith(":2"):
            break
    resumed = table_env.watch(stub, table_id, keys[0], from_sequence=cut)
    now = (await table_env.view(stub, table_id)).table.sequence
    await resumed.wait_sequence(now)
    await spectator.wait_sequence(now)

    assert not resumed.items[0].HasField("snapshot")
    items = seat0.items + resumed.items
    events = [i.event for i in items if i.HasField("event")]
    assert [e.sequence for e in events] == list(range(start + 1, now + 1)), "gap or repeat"
    for event in events:
        _assert_redacted(event, 0)
    for event in spectator.events:
        _assert_redacted(event, None)
    assert all(c.hidden for s in snapshot.hand.seats if s.seat != 0 for c in s.cards)
    # What the seat saw of hand 1 (across the reconnection) proves against the commitment.
    hand_id = f"{table_id}:1"
    check = verify_hand(_hand_items(items, hand_id))
    assert check.ok, check.problems
    shown = [e for e in events if e.hand_id == hand_id and e.HasField("cards_shown")]
    dealt = 2 if variant == "nlhe" else 5
    board = 5 if variant == "nlhe" else 0
    drawn = 0 if variant == "nlhe" else 2
    others = sum(len(e.cards_shown.cards) for e in shown if e.cards_shown.seat != 0)
    assert check.verified == dealt + board + drawn + others
    spectator_check = verify_hand(_hand_items(spectator.items, hand_id))
    assert spectator_check.ok, spectator_check.problems
    assert spectator_check.verified == board + sum(len(e.cards_shown.cards) for e in shown)

    # The hand's history, as the seat and as a spectator.
    for seat, watched in ((0, items), (None, spectator.items)):
        request = pb.GetHandHistoryRequest(table_id=table_id, hand_id=hand_id)
        md: tuple[tuple[str, str], ...] = ()
        if seat is not None:
            request.seat = seat
            md = keys[0].md
        history = await stub.GetHandHistory(request, metadata=md)
        kinds = [i.event.WhichOneof("event") for i in history.events]
        assert kinds[0] == "deck_committed" and kinds[1] == "hand_started"
        assert kinds[-1] == "hand_ended"
        for item in history.events:
            _assert_redacted(item.event, seat)
        check = verify_hand(_hand_items(list(history.events), hand_id))
        assert check.ok, check.problems
        same = [i for i in watched if i.HasField("event") and i.event.hand_id == hand_id]
        assert [i.SerializeToString() for i in history.events] == [
            i.SerializeToString() for i in same
        ]
    latest = await stub.GetHandHistory(pb.GetHandHistoryRequest(table_id=table_id))
    assert latest.hand_id == f"{table_id}:2"


async def test_a_snapshot_is_followed_by_the_next_event(table_env: TableEnv) -> None:
    server = await table_env.start_server()
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.nlhe(2))
    keys = await table_env.seat_all(stub, table_id, 2)
    await table_env.act(stub, table_id, keys, _draw_two)
    watcher = table_env.watch(stub, table_id, keys[1])
    await watcher.wait(lambda: bool(watcher.items), "the snapshot")
    snapshot = watcher.items[0].snapshot
    assert snapshot.hand.hand_id and snapshot.viewer_seat == 1
    mine = next(s for s in snapshot.hand.seats if s.seat == 1)
    assert all(c.HasField("code") for c in mine.cards)
    response = await table_env.act(stub, table_id, keys, _draw_two)
    await watcher.wait_sequence(response.sequence)
    assert watcher.items[1].event.sequence == snapshot.table.sequence + 1
