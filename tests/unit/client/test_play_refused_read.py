"""``felt play`` survives an action refused while its seat is being emptied.

Found by CI (``test_a_refused_renewal_is_shown_and_the_app_carries_on``): the owner closed
the lounge while the person was choosing; the action was refused (the seat was settled:
EMPTY_SEAT), and the view read after it was refused too. That read ran on a key press,
outside the game loop's guard, so the refusal ended the app with a traceback. Now the
refusal is said once and play goes on (the seat's stream and its token renewal say the
seat is gone). On a stand-in session: the app's own code is what is tested.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc

from felt.tools.client.play.app import LoungePlan, PlayApp
from felt.tools.client.play.session import Refused
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb


def refusal(code: grpc.StatusCode, details: str) -> Refused:
    return Refused(grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details))


class EmptiedSeatSession:
    """A seated session whose seat is emptied under it: every action and read is refused."""

    def __init__(self) -> None:
        self.seat: object | None = object()
        self.acts = 0
        self.views = 0

    async def guest(self, name: str) -> Any:
        await asyncio.Event().wait()  # the game loop waits here: the test drives the keys

    async def act(self, action: tpb.Action, sequence: int) -> None:
        self.acts += 1
        raise refusal(grpc.StatusCode.NOT_FOUND, "nobody sits at the seat asked for")

    async def view(self) -> tpb.TableView:
        self.views += 1
        raise refusal(grpc.StatusCode.NOT_FOUND, "nobody sits at the seat asked for")


async def test_an_action_and_its_view_refused_leave_the_app_running() -> None:
    session = EmptiedSeatSession()
    plan = LoungePlan(config=epb.TableConfig(), ai_levels=(), buy_in=100, player_name="p")
    app = PlayApp(session, plan)  # type: ignore[arg-type]
    async with app.run_test(size=(100, 40)) as pilot:
        app.view = tpb.TableView(table=tpb.Table(sequence=17))
        await app._send(tpb.Action(check=tpb.Action.Check()))
        await pilot.pause(0.05)
        assert (session.acts, session.views) == (1, 1)  # refused, then read again: refused
        assert app.is_running
        assert app.failure is None
        app.exit(0)
    assert app.return_value == 0
