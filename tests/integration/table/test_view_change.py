"""WatchTable's ``ViewChange``: with every event, what the rules made of the table then.

Random hands of both variants (seeded), watched by every seat and a spectator asking for
``view_changes``: each
event's ``view_change`` must be what ``GetTableView`` (``fill_table_view``) gives that
viewer at that event's sequence (the table's state, the seat to act, its deadline, the
pots, and the seat's own legal actions when it is to act; a spectator's never any), the
expected views folded from the stored stream event by event, with the action clock
counted from the event that started the turn (as the runtime does). A stream that did not
ask for them gets none: its bytes are what they were.
"""

from __future__ import annotations

import pytest

from felt.core.table.aggregate import TableState, apply_event
from felt.messages.events import from_stored_event
from felt.wire.convert import fill_table_view
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from services.table.stream import deadline_of, starts_turn
from tests.integration.table.harness import TableEnv, Watcher, random_policy


def _expected(stored: list[epb.StoredEvent], viewer: int | None) -> dict[int, tpb.TableView]:
    """The viewer's TableView after each event of the table's stream, by sequence."""
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


def _as_change(view: tpb.TableView) -> pb.ViewChange:
    change = pb.ViewChange(table_state=view.table.state)
    if view.HasField("hand"):
        hand = view.hand
        change.pots.extend(hand.pots)
        if hand.HasField("to_act"):
            change.to_act = hand.to_act
        if hand.HasField("action_deadline"):
            change.action_deadline.CopyFrom(hand.action_deadline)
        change.legal_actions.extend(hand.legal_actions)
    return change


def _check(watcher: Watcher, expected: dict[int, tpb.TableView], who: str) -> int:
    checked = 0
    live = False  # events caught up from the stream before the live feed carry none
    for item in watcher.items:
        if not item.HasField("event"):
            continue
        sequence = item.event.sequence
        if sequence > max(expected):
            continue  # the table went on (the next deal) after the stream was read
        if not live and not item.HasField("view_change"):
            continue
        live = True
        assert item.HasField("view_change"), f"{who}: event {sequence} without its ViewChange"
        want = _as_change(expected[sequence])
        assert item.view_change == want, (
            f"{who} at {sequence} ({item.event.WhichOneof('event')}):\n"
            f"got {item.view_change}\nwant {want}"
        )
        checked += 1
    return checked


@pytest.mark.parametrize("variant", ["nlhe", "draw"])
async def test_every_event_carries_what_get_table_view_would_say(
    table_env: TableEnv, variant: str
) -> None:
    server = await table_env.start_server()
    stub = table_env.stub(server)
    config = TableEnv.nlhe(3, clock_ms=60_000) if variant == "nlhe" else TableEnv.draw(3, 60_000)
    table_id = await table_env.create_table(stub, config)
    seats = await table_env.seat_all(stub, table_id, 3)
    watchers = {
        s: table_env.watch(stub, table_id, key, view_changes=True) for s, key in seats.items()
    }
    spectator = table_env.watch(stub, table_id, view_changes=True)
    plain = table_env.watch(stub, table_id, seats[0])  # not asked for: none sent
    await table_env.play(stub, table_id, seats, random_policy, hands=4, seed=23)
    stored = await table_env.stored(table_id)
    last = stored[-1].sequence
    for w in (*watchers.values(), spectator, plain):
        await w.wait_sequence(last)
    turns = 0
    for seat, watcher in watchers.items():
        assert _check(watcher, _expected(stored, seat), f"seat {seat}") > 0
        turns += sum(1 for i in watcher.items if i.view_change.legal_actions)
    assert turns > 0, "no seat was ever sent its legal actions"
    assert _check(spectator, _expected(stored, None), "spectator") > 0
    assert not any(i.view_change.legal_actions for i in spectator.items)
    assert plain.events and not any(i.HasField("view_change") for i in plain.items)
