"""Whole games through the gRPC API: hands back to back, chips conserved, button and blinds moving.

A generic client acts for every seat whenever it is its turn (any legal action,
chosen at random; in the draw, a random discard), and the checks read the
table's unredacted stream straight from Redis.
"""

from __future__ import annotations

from typing import Any

import pytest

from felt.core.rules.events import CardsDrawn
from felt.messages.events import from_stored_event
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from tests.integration.table.harness import TableEnv

STACK = 1000


def _hands(stored: list[epb.StoredEvent]) -> list[list[epb.StoredEvent]]:
    """The stream cut into hands: each from its HandStarted to its HandEnded."""
    hands: list[list[epb.StoredEvent]] = []
    current: list[epb.StoredEvent] | None = None
    for e in stored:
        kind = e.WhichOneof("event")
        if kind == "hand_started":
            assert current is None, f"hand started at {e.sequence} before the last one ended"
            current = []
        if current is not None:
            current.append(e)
        if kind == "hand_ended":
            assert current is not None
            hands.append(current)
            current = None
    return hands


def _next(seat: int, active: list[int], seat_count: int) -> int:
    return min(active, key=lambda s: (s - seat - 1) % seat_count)


def _check_hands(stored: list[epb.StoredEvent], seats: int, variant: int) -> int:
    """Chips conserved in every hand and overall; hands numbered and dealt back to back;
    button (and blinds) moving one seat clockwise while the same seats play."""
    hands = _hands(stored)
    previous: epb.HandSetup | None = None
    table_id = stored[0].table_created.table_id
    for number, events in enumerate(hands, start=1):
        setup = events[0].hand_started.setup
        assert setup.hand_id == f"{table_id}:{number}"
        assert all(e.hand_id == setup.hand_id for e in events)
        before = sum(s.stack for s in setup.seats)
        after = sum(s.stack for s in events[-1].hand_ended.stacks)
        assert before == after, f"hand {setup.hand_id}: {before} chips in, {after} out"
        awarded = sum(e.pot_awarded.amount for e in events if e.HasField("pot_awarded"))
        shares = sum(
            share.amount
            for e in events
            if e.HasField("pot_awarded")
            for share in e.pot_awarded.shares
        )
        assert awarded == shares
        active = [s.seat for s in setup.seats]
        assert active == sorted(active, key=lambda s: (s - setup.button - 1) % seats)
        if previous is not None and {s.seat for s in previous.seats} == set(active):
            assert setup.button == _next(previous.button, active, seats), "button did not move"
        if variant == epb.VARIANT_NLHE:
            blinds = [s.seat for s in setup.seats if s.blind]
            if len(active) == 2:
                assert setup.seats[-1].seat == setup.button
                assert {s.seat: s.blind for s in setup.seats}[setup.button] == 5
            else:
                small = _next(setup.button, active, seats)
                assert blinds == [small, _next(small, active, seats)]
        else:
            assert all(s.ante == 1 for s in setup.seats)
            assert not any(s.blind for s in setup.seats)
        previous = setup
    return len(hands)


@pytest.mark.parametrize("variant", ["nlhe", "draw"])
async def test_a_game_of_several_hands_end_to_end(
    table_env: TableEnv, policies: dict[str, Any], variant: str
) -> None:
    server = await table_env.start_server()
    stub = table_env.stub(server)
    seats = 3
    config = table_env.nlhe(seats) if variant == "nlhe" else table_env.draw(seats)
    table_id = await table_env.create_table(stub, config)
    keys = await table_env.seat_all(stub, table_id, seats, STACK)

    log = await table_env.play(stub, table_id, keys, policies["random"], hands=6, seed=7)

    table = (await stub.GetTable(pb.GetTableRequest(table_id=table_id))).table
    stored = await table_env.stored(table_id)
    played = _check_hands(stored, seats, config.variant)
    assert played == table.hands_played >= 6
    # Between hands (or in the next one) every chip is somewhere: behind or in the pot.
    assert await table_env.chips(stub, table_id) == seats * STACK
    # Sequences are consecutive and every client action is in the stream exactly once.
    assert [e.sequence for e in stored] == list(range(1, len(stored) + 1))
    seat_actions = ("player_folded", "player_checked", "player_called", "bet_placed", "cards_drawn")
    acted = [e.request_key for e in stored if e.WhichOneof("event") in seat_actions]
    assert acted == [key for _, key, _ in log.actions], "actions lost, doubled or reordered"
    if variant == "draw":
        drawn = [from_stored_event(e)[0] for e in stored if e.HasField("cards_drawn")]
        got = [(d.seat, tuple(d.discarded)) for d in drawn if isinstance(d, CardsDrawn)]
        assert got == log.discards
        assert any(cards for _, cards in log.discards), "nobody discarded anything"
    assert any(a.HasField("raise_to") or a.HasField("bet_to") for _, _, a in log.actions)
    assert table.state == tpb.TABLE_STATE_PLAYING

    await table_env.check_rebuild(server, table_id)
