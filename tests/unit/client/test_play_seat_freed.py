"""``felt play`` says so when the lounge frees the seat after its grace without chips.

RULES.md: a player left with no chips sits out until chips are added; after the lounge's grace
the seat is freed and the player leaves the table. The seat's stream brings its own
``PlayerLeft`` with ``busted`` set and then ends (the token is void): the app tells the player
in words, with the lounge's grace, and never reads the table with the void token (which would
be refused and end play on an error). On a stand-in session: the app's own code is tested.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from felt.tools.client.play import model
from felt.tools.client.play.app import LoungePlan, PlayApp
from poker.events.v1 import events_pb2 as epb
from poker.v1 import lobby_pb2 as lpb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as table

from .test_play_view_behind_stream import ME, Seat


class FreedSession:
    """Seated, busted; the stream brings the seat's PlayerLeft by the lounge's grace."""

    def __init__(self) -> None:
        self.seat: Seat | None = None
        self.player = lpb.Player(display_name="p")
        self.freed_reads = 0

    async def guest(self, name: str) -> lpb.Player:
        return self.player

    async def balance(self) -> int:
        return 0

    async def create_lounge(self, *args: Any) -> lpb.Lounge:
        return lpb.Lounge(lounge_id="l", name="l", busted_grace_s=300)

    async def join(self, *args: Any) -> Seat:
        self.seat = Seat()
        return self.seat

    def seat_freed(self) -> None:
        self.seat = None

    async def watch(self) -> AsyncIterator[table.WatchTableResponse]:
        snapshot = tpb.TableView(table=tpb.Table(sequence=30), viewer_seat=ME)
        yield table.WatchTableResponse(snapshot=snapshot)
        left = epb.StoredEvent(sequence=31)
        left.player_left.seat, left.player_left.busted = ME, True
        yield table.WatchTableResponse(event=left)

    async def view(self) -> tpb.TableView:
        self.freed_reads += 1  # the table would refuse the void token
        raise RuntimeError("read with a void seat token")


async def test_the_player_is_told_the_seat_was_freed_after_the_grace() -> None:
    session = FreedSession()
    plan = LoungePlan(config=epb.TableConfig(), ai_levels=(), buy_in=100, player_name="p")
    app = PlayApp(session, plan)  # type: ignore[arg-type]
    async with app.run_test(size=(100, 40)) as pilot:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10

        def lines() -> list[str]:
            return [str(line.text) for line in app.query_one("#log").lines]  # type: ignore[attr-defined]

        while not any("freed" in line for line in lines()):
            assert app.failure is None, app.failure
            assert loop.time() < deadline, lines()
            await pilot.pause(0.02)
        assert app.failure is None
        assert session.seat is None and session.freed_reads == 0
        shown = " ".join(" ".join(lines()).split())  # the log wraps long lines
        assert model.freed_notice(300) in shown
        app.exit(0)


def test_the_notice_and_the_log_line_read_as_sentences() -> None:
    assert model.freed_notice(300) == (
        "Your seat was freed after 5 minutes without chips: you have left the table. q quits."
    )
    assert "after 1 minute without" in model.freed_notice(60)
    assert "after a while" in model.freed_notice(0)  # a lobby too old to say
    left = epb.StoredEvent(sequence=1)
    left.player_left.seat, left.player_left.busted = 1, True
    line = model.describe_event(left, {1: "Ann"})
    assert line == "Ann leaves: no chips for longer than the lounge allows"
