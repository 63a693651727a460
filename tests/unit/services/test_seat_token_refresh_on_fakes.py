"""RefreshSeatToken on the fakes: the player's own seat only, the stored token replaced so a
leave names the seat by it, and a crash before storing healed by the retry (the table answers
a retried request id with the same token)."""

from __future__ import annotations

import pytest

from services.lobby.ports import BuyInState

from .test_buy_ins_on_fakes import Crash, World
from .test_buy_ins_on_fakes import world as world  # the fixture
from .test_lobby_app_on_fakes import refused, req


async def test_a_refresh_replaces_the_stored_token_and_a_crash_is_healed_by_a_retry(
    world: World,
) -> None:
    alice, bob = await world.player(1), await world.player(2)
    lid = (await world.lounge(alice, 1)).lounge_id
    joined = await world.app.join(alice, req("j"), lid, 2, 500, "")
    world.buy_ins.crash = "before_token_reissued"
    with pytest.raises(Crash):
        await world.app.refresh_token(alice, req("r"), lid)
    fresh = await world.app.refresh_token(alice, req("r"), lid)  # the retry
    assert fresh.seat == 2 and fresh.seat_token != joined.buy_in.seat_token
    saga = await world.store.get(joined.buy_in.saga_id)
    assert saga is not None and saga.seat_token == fresh.seat_token
    assert (await world.app.refresh_token(alice, req("r"), lid)) == fresh
    assert (await refused(world.app.refresh_token(bob, req("rb"), lid))).reason == "NOT_SEATED"
    left = await world.app.leave(alice, req("l"), lid)
    assert left.buy_in.state is BuyInState.LEFT  # the leave named the seat by the new token
    assert (await refused(world.app.refresh_token(alice, req("r2"), lid))).reason == "NOT_SEATED"
    await world.check(settled=True)


async def test_a_replayed_earlier_refresh_does_not_store_a_voided_token(world: World) -> None:
    """A refresh retried (or replayed) after a later one is answered by the table with the
    token it first gave, which the later refresh voided: stored in the saga, the player's
    leave would name the seat by a dead token and its chips would stay on the table."""
    alice = await world.player(1)
    lid = (await world.lounge(alice, 1)).lounge_id
    joined = await world.app.join(alice, req("j"), lid, 2, 500, "")
    first = await world.app.refresh_token(alice, req("r1"), lid)
    second = await world.app.refresh_token(alice, req("r2"), lid)
    assert second.seat_token != first.seat_token
    replayed = await refused(world.app.refresh_token(alice, req("r1"), lid))
    assert replayed.reason == "SEAT_TOKEN_SUPERSEDED"
    saga = await world.store.get(joined.buy_in.saga_id)
    assert saga is not None and saga.seat_token == second.seat_token  # still the live one
    left = await world.app.leave(alice, req("l"), lid)
    assert left.buy_in.state is BuyInState.LEFT
    await world.check(settled=True)
