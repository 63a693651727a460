"""Closing a lounge (``ClosingApp``) on the in-memory ports: owner only; every seat's chips
home exactly once as "table closed" (when the hand in play ends, if one runs), including a
seat whose leave the table refused and a leave racing the close; buy-ins under way sent
home or compensated; a table that ends by itself at its hand limit settled by the recovery
pass; a crash at each step followed by a fresh process's recovery. The chips are conserved
throughout (``World.check``); the random sequence with closes is in
``test_buy_ins_on_fakes``."""

from __future__ import annotations

import asyncio

import pytest

from services.lobby.ports import BuyInState, Kind, LoungeState
from services.lobby.refusals import Code

from .test_buy_ins_on_fakes import GRANT, Crash, World, balance, bob_id
from .test_buy_ins_on_fakes import world as world  # the fixture
from .test_lobby_app_on_fakes import refused, req


async def kinds(world: World, caller: object) -> list[tuple[Kind, int]]:
    entries = await world.ledger.entries(bob_id(world, caller), None, 20)  # type: ignore[arg-type]
    return [(m.kind, m.amount) for m in entries]


async def test_only_the_owner_closes_and_seats_not_dealt_in_go_home_at_once(
    world: World,
) -> None:
    alice, bob = await world.player(1), await world.player(2)
    lid = (await world.lounge(alice, 1)).lounge_id
    await world.app.join(bob, req("jb"), lid, 1, 500, "")
    no = await refused(world.closing.close(bob, req("c"), lid))
    assert (no.code, no.reason) == (Code.PERMISSION_DENIED, "NOT_OWNER")
    hidden = await refused(world.closing.close(alice, req("c"), "l-nope"))
    assert (hidden.code, hidden.reason) == (Code.NOT_FOUND, "NO_LOUNGE")
    assert (await world.lounges.get(lid)).state is LoungeState.OPEN  # type: ignore[union-attr]
    closed = await world.closing.close(alice, req("c"), lid)
    assert closed.state is LoungeState.CLOSED and not closed.seats
    assert world.tables.tables[lid].closed and not world.tables.tables[lid].seats
    assert await balance(world, bob) == GRANT
    assert (await kinds(world, bob))[0] == (Kind.TABLE_CLOSED, 500)
    # A retry, or another close, moves nothing; the closed lounge takes no one.
    assert await world.closing.close(alice, req("c"), lid) == closed
    assert await world.closing.close(alice, req("c2"), lid) == closed
    late = await refused(world.app.join(bob, req("jb2"), lid, 1, 500, ""))
    assert (late.code, late.reason) == (Code.FAILED_PRECONDITION, "LOUNGE_NOT_OPEN")
    assert await balance(world, bob) == GRANT
    await world.check(settled=True)


async def test_a_hand_in_play_ends_first_and_a_leave_racing_the_close_credits_once(
    world: World,
) -> None:
    alice, bob, carol = await world.player(1), await world.player(2), await world.player(3)
    lid = (await world.lounge(alice, 1)).lounge_id
    await world.app.join(bob, req("jb"), lid, 0, 500, "")
    await world.app.join(carol, req("jc"), lid, 1, 700, "")
    world.tables.deal(lid)
    world.tables.move_chips(lid, 0, 1, 200)
    leaving = await world.app.leave(carol, req("lc"), lid)  # carol asked first: LEAVING
    assert leaving.buy_in.state is BuyInState.LEAVING
    closing = await world.closing.close(alice, req("c"), lid)
    assert closing.state is LoungeState.CLOSING  # the hand is in play: nobody home yet
    await world.check()
    world.tables.end_hand(lid)
    # The close's pass and carol's leave's pass at once: one of them credits each seat.
    await asyncio.gather(world.closing.recover(), world.app.recover(), world.closing.recover())
    await world.closing.recover()
    done = await world.lounges.get(lid)
    assert done is not None and done.state is LoungeState.CLOSED
    assert await balance(world, bob) == GRANT - 200
    assert await balance(world, carol) == GRANT + 200
    bob_home = [k for k in await kinds(world, bob) if k[0] is not Kind.GRANT]
    assert bob_home == [(Kind.TABLE_CLOSED, 300), (Kind.BUY_IN, -500)]
    carol_home = [
        k for k in await kinds(world, carol) if k[0] in (Kind.CASH_OUT, Kind.TABLE_CLOSED)
    ]
    assert [amount for _, amount in carol_home] == [900]  # once, by whichever got there first
    await world.check(settled=True)


async def test_a_seat_whose_leave_the_table_refused_is_sent_home_too(world: World) -> None:
    alice, bob = await world.player(1), await world.player(2)
    lid = (await world.lounge(alice, 1)).lounge_id
    joined = await world.app.join(bob, req("jb"), lid, 2, 500, "")
    # The table voids bob's token (as an expired one would be): his leave is refused there.
    table = world.tables.tables[lid]
    del world.tables._answers[f"token/{joined.buy_in.seat_token}"]
    left = await world.app.leave(bob, req("lb"), lid)
    assert left.buy_in.state is BuyInState.LEAVING and left.buy_in.leave_sequence is None
    assert 2 in table.seats  # still there, with his chips
    await world.check()
    closed = await world.closing.close(alice, req("c"), lid)
    assert closed.state is LoungeState.CLOSED
    assert await balance(world, bob) == GRANT
    assert (await kinds(world, bob))[0] == (Kind.TABLE_CLOSED, 500)
    await world.check(settled=True)


async def test_a_buy_in_under_way_is_seated_then_sent_home_or_refused(world: World) -> None:
    alice, bob, carol = await world.player(1), await world.player(2), await world.player(3)
    lid = (await world.lounge(alice, 1)).lounge_id
    world.tables.unavailable = True
    for who, rid in ((bob, "jb"), (carol, "jc")):
        held = await refused(world.app.join(who, req(rid), lid, None, 500, ""))
        assert held.reason == "TABLES_UNAVAILABLE"
    world.tables.unavailable = False
    world.tables.lost_answers = False
    closing = await world.closing.close(alice, req("c"), lid)
    assert closing.state is LoungeState.CLOSED
    assert await balance(world, bob) == await balance(world, carol) == GRANT
    await world.check(settled=True)


async def test_a_table_at_its_hand_limit_is_settled_by_the_recovery_pass(world: World) -> None:
    alice, bob = await world.player(1), await world.player(2)
    lid = (await world.lounge(alice, 1, hands=3)).lounge_id
    other = (await world.lounge(alice, 2)).lounge_id  # no limit: never looked at
    await world.app.join(bob, req("jb"), lid, 0, 500, "")
    await world.app.join(bob, req("jb2"), other, 0, 500, "")
    await world.app.join(alice, req("ja"), lid, 1, 500, "")
    world.tables.deal(lid)
    world.tables.move_chips(lid, 1, 0, 50)
    assert await world.closing.recover() == (0, 0)  # still playing
    world.tables.end_by_itself(lid)
    calls = world.tables.calls
    assert await world.closing.recover() == (1, 1)
    assert world.tables.calls - calls < 20  # the open, unlimited lounge was not asked about
    assert (await world.lounges.get(lid)).state is LoungeState.CLOSED  # type: ignore[union-attr]
    assert (await world.lounges.get(other)).state is LoungeState.OPEN  # type: ignore[union-attr]
    assert await balance(world, bob) == GRANT - 500 + 50
    assert await balance(world, alice) == GRANT - 50
    await world.check(settled=True)


@pytest.mark.parametrize(
    "point", ["after_closing", "before_seen", "after_leave", "before_settle", "after_settle"]
)
async def test_a_crash_at_each_step_of_a_close_then_recovery(world: World, point: str) -> None:
    alice, bob, carol = await world.player(1), await world.player(2), await world.player(3)
    lid = (await world.lounge(alice, 1)).lounge_id
    await world.app.join(bob, req("jb"), lid, 0, 500, "")
    await world.app.join(carol, req("jc"), lid, 1, 800, "")
    world.tables.deal(lid)
    world.tables.move_chips(lid, 1, 0, 100)
    await world.app.leave(carol, req("lc"), lid)
    world.tables.end_hand(lid)
    world.crash_at(point)
    try:
        await world.closing.close(alice, req("c"), lid)
    except Crash:
        world.restart()
    world.crash_at("")
    await world.check()
    for _ in range(2):
        await world.closing.recover()
        await world.app.recover()
    assert (await world.lounges.get(lid)).state is LoungeState.CLOSED  # type: ignore[union-attr]
    assert await balance(world, bob) == GRANT + 100
    assert await balance(world, carol) == GRANT - 100
    await world.check(settled=True)
