"""``felt play`` shows the seat's turn even when the view read for an event is behind it.

Found by CI (``test_l_leaves_cleanly_at_80_columns_and_the_chips_come_back[holdem]``) and
reproduced under load: the AI's fold that gave the person the turn (sequence 25) was in the
seat's stream, and the table service answered the view read for it from its copy of the
table still at 24 (the AI to act). The app showed that view: no choices, and no later event
to redraw it while the table waited for the person. Now a view behind its event is read
again until it holds it. On a stand-in session: the app's own code is what is tested.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from felt.tools.client.play import model
from felt.tools.client.play.app import LoungePlan, PlayApp
from poker.events.v1 import events_pb2 as epb
from poker.v1 import lobby_pb2 as lpb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as table

ME, AI = 2, 1


def view_at(sequence: int, to_act: int) -> tpb.TableView:
    view = tpb.TableView(table=tpb.Table(sequence=sequence), viewer_seat=ME)
    view.hand.hand_id = "h:2"
    view.hand.to_act = to_act
    if to_act == ME:
        view.hand.legal_actions.add(type=tpb.ACTION_TYPE_FOLD)
        view.hand.legal_actions.add(type=tpb.ACTION_TYPE_CALL, amount=5)
    return view


@dataclass
class Seat:
    lounge_id: str = "l"
    table_id: str = "l"
    seat: int = ME
    token: str = "t"
    expires_at: float = 0.0


class BehindSession:
    """Seated; its stream brings the AI's fold at 25, and the first view read after it is
    the table at 24 (the AI still to act); later reads are at 25, the seat's turn."""

    def __init__(self) -> None:
        self.seat: Seat | None = None
        self.player = lpb.Player(display_name="p")
        self.views = 0

    async def guest(self, name: str) -> lpb.Player:
        return self.player

    async def balance(self) -> int:
        return 0

    async def create_lounge(self, *args: Any) -> lpb.Lounge:
        return lpb.Lounge(lounge_id="l", name="l")

    async def join(self, *args: Any) -> Seat:
        self.seat = Seat()
        return self.seat

    async def watch(self) -> AsyncIterator[table.WatchTableResponse]:
        yield table.WatchTableResponse(snapshot=view_at(24, AI))
        fold = epb.StoredEvent(sequence=25)
        fold.player_folded.seat = AI
        yield table.WatchTableResponse(event=fold)
        await asyncio.Event().wait()  # the table waits for this seat

    async def view(self) -> tpb.TableView:
        self.views += 1
        return view_at(24, AI) if self.views == 1 else view_at(25, ME)


async def test_a_view_behind_its_event_is_read_again_and_the_turn_shown() -> None:
    session = BehindSession()
    plan = LoungePlan(config=epb.TableConfig(), ai_levels=(), buy_in=100, player_name="p")
    app = PlayApp(session, plan)  # type: ignore[arg-type]
    async with app.run_test(size=(100, 40)) as pilot:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10
        while session.views < 2 or app.view is None or app.view.table.sequence < 25:
            assert app.failure is None, app.failure
            assert loop.time() < deadline, (session.views, app.view)
            await pilot.pause(0.02)
        assert [c.key for c in model.choices(app.view)] == ["f", "c"]
        app.exit(0)
