"""``felt play``'s **w** (issue #21): sitting out, the player sits back in waiting for the big
blind, and is dealt in first at a hand where it posts the big blind. Driven by Textual's
headless pilot against a real stack on loopback (the fixtures of test_play_client)."""

from __future__ import annotations

import asyncio

from felt.tools.client.play import model
from felt.tools.client.play.app import LoungePlan, PlayApp
from felt.tools.client.play.session import PlaySession
from felt.tools.client.play.tables import table_config
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb

from .test_play_client import BUY_IN, Stack, log_of, seated_and_dealt, stack

__all__ = ["stack"]  # the fixture, used by name


async def test_w_sits_back_in_at_the_big_blind(stack: Stack) -> None:
    name = "Tui waits"
    plan = LoungePlan(
        config=table_config("holdem", seats=4),
        ai_levels=(epb.AI_LEVEL_EASY,) * 3,
        buy_in=BUY_IN,
        player_name=name,
    )
    session = PlaySession(stack.lobby, stack.table)
    app = PlayApp(session, plan)
    async with app.run_test(size=(100, 40)) as pilot:
        await seated_and_dealt(app, pilot)
        assert session.seat is not None
        mine = session.seat.seat
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 120
        await pilot.press("w")  # not sitting out: nothing sent, the player is told how
        await pilot.press("s")
        # The hand it holds cards in is played out (check, else fold); then it sits out.
        while True:
            assert app.failure is None, app.failure
            assert loop.time() < deadline, log_of(app)
            view = app.view
            if view is not None:
                seat = view.table.seats[mine]
                dealt = any(s.seat == mine for s in view.hand.seats)
                ended = view.hand.street == epb.STREET_COMPLETE
                if seat.status == tpb.SEAT_STATUS_SITTING_OUT and (not dealt or ended):
                    break
                if offered := model.choices(view):
                    # Check, else fold: "c" also calls, and calling every bet down once lost
                    # the whole stack (CI), leaving a busted seat that never posts a blind.
                    checks = any(c.key == "c" and c.label == "Check" for c in offered)
                    await pilot.press("c" if checks else "f")
            await pilot.pause(0.05)
        before = len(log_of(app))
        await pilot.press("w")
        while not any(f"{name} posts blind" in line for line in log_of(app)[before:]):
            assert app.failure is None, app.failure
            assert loop.time() < deadline, log_of(app)
            await pilot.pause(0.05)
        lines = log_of(app)[before:]
        assert f"{name} waits for the big blind" in lines, lines
        own = [
            line
            for line in lines
            if line.startswith(name)
            and line not in (f"{name} sits in", f"{name} waits for the big blind")
        ]
        assert own[0] == f"{name} posts blind 10", own  # nothing of its own before it
        await pilot.press("q")


async def test_joining_waiting_for_the_big_blind(stack: Stack) -> None:
    """``felt play --wait-for-big-blind`` (JoinLoungeRequest.wait_for_big_blind through the
    real lobby and table service) at a lounge where hands are already dealt: the newcomer's
    seat shows waiting in the table's view, is not dealt in meanwhile, and its first hand is
    one where it posts the big blind."""
    config = table_config("holdem", seats=4)
    config.action_clock.FromMilliseconds(300)  # the first player never acts: hands go on
    first = PlaySession(stack.lobby, stack.table)
    await first.guest("Tui sits first")
    lounge = await first.create_lounge("waiting", config, (epb.AI_LEVEL_EASY,) * 2, (0, 0))
    await first.join(lounge, BUY_IN)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60
    while not (await first.view()).hand.hand_id:  # a table starting fresh deals everyone in
        assert loop.time() < deadline
        await asyncio.sleep(0.02)
    name = "Tui joins waiting"
    plan = LoungePlan(
        config=config,
        ai_levels=(),
        buy_in=BUY_IN,
        player_name=name,
        lounge_id=lounge.lounge_id,
        wait_for_big_blind=True,
    )
    session = PlaySession(stack.lobby, stack.table)
    app = PlayApp(session, plan)
    async with app.run_test(size=(100, 40)) as pilot:
        deadline = loop.time() + 120
        seen_waiting = False
        while not any(f"{name} posts blind" in line for line in log_of(app)):
            assert app.failure is None, app.failure
            assert loop.time() < deadline, log_of(app)
            view = app.view
            if view is not None and session.seat is not None:
                mine = session.seat.seat
                if view.table.seats[mine].waiting_for_big_blind:
                    seen_waiting = True
                    assert not any(s.seat == mine for s in view.hand.seats), "dealt while waiting"
            await pilot.pause(0.02)
        lines = log_of(app)
        assert seen_waiting, lines
        own = [
            line
            for line in lines
            if line.startswith(name) and line != f"{name} waits for the big blind"
        ]
        assert own[0] == f"{name} posts blind 10", lines  # nothing of its own before it
        await pilot.press("q")
