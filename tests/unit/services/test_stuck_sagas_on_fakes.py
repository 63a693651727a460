"""Settling stuck buy-ins (``StuckSagas``) on the in-memory ports: never while a call of the
saga may still land, never without the table service's answer, and never twice."""

from __future__ import annotations

from datetime import timedelta

import pytest

from services.lobby.ports import BuyInState
from services.lobby.recovery import RecoveryPolicy, ResolveRefused, StuckSagas
from services.lobby.seating import SeatingApp

from .test_buy_ins_on_fakes import GRANT, World
from .test_buy_ins_on_fakes import world as world  # the fixture
from .test_lobby_app_on_fakes import refused, req

POLICY = RecoveryPolicy(max_attempts=1)


async def stuck_join(world: World) -> str:
    """A buy-in whose table never answered, stuck after its one attempt."""
    world.app = SeatingApp(world.lounge_app, world.buy_ins, world.tables, POLICY)
    owner, player = await world.player(1), await world.player(2)
    lounge = await world.lounge(owner, 1)
    world.tables.unavailable = True
    await refused(world.app.join(player, req("j"), lounge.lounge_id, None, 500, ""))
    world.lobby.clock.now += timedelta(seconds=1)
    await world.app.recover()
    (saga,) = await world.store.stuck(10)
    return saga.saga_id


async def test_resolve_refuses_what_it_cannot_know(world: World) -> None:
    saga_id = await stuck_join(world)
    desk = StuckSagas(world.buy_ins, world.tables, world.lobby.clock, POLICY)
    with pytest.raises(ResolveRefused, match="a call may still land"):
        await desk.resolve(saga_id)  # attempted a moment ago
    world.lobby.clock.now += POLICY.settle
    with pytest.raises(ResolveRefused, match="did not answer"):
        await desk.resolve(saga_id)  # the table service still down
    with pytest.raises(ResolveRefused, match="no buy-in saga"):
        await desk.resolve("b-none")
    saga = await world.store.get(saga_id)
    assert saga is not None and saga.state is BuyInState.RESERVED and saga.stuck_at
    await world.check()


async def test_resolve_refunds_once_and_a_saga_not_stuck_is_left_to_the_pass(
    world: World,
) -> None:
    saga_id = await stuck_join(world)
    desk = StuckSagas(world.buy_ins, world.tables, world.lobby.clock, POLICY)
    world.lobby.clock.now += POLICY.settle
    requeued = await desk.requeue(saga_id)
    assert (requeued.attempts, requeued.stuck_at) == (0, None)
    with pytest.raises(ResolveRefused, match="not stuck"):
        await desk.resolve(saga_id)
    await world.app.recover()  # the table still down: stuck again after its one attempt
    assert [s.saga_id for s in await world.store.stuck(10)] == [saga_id]
    world.tables.unavailable = False  # it answers GetTable now: the player is not seated
    world.lobby.clock.now += POLICY.settle
    first = await desk.resolve(saga_id)
    assert (first.outcome, first.buy_in.state) == ("refunded", BuyInState.COMPENSATED)
    again = await desk.resolve(saga_id)
    assert again.outcome == "finished" and again.buy_in == first.buy_in
    with pytest.raises(ResolveRefused, match="nothing to retry"):
        await desk.requeue(saga_id)
    player = first.buy_in.player_id
    account = world.ledger._accounts[player]
    assert account.balance == GRANT
    await world.check(settled=True)
