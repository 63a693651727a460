"""Leaving a lounge (``SeatingApp.leave``, the buy-in saga's second half) on the in-memory
ports: the stack back at once or when the hand ends, exactly once under retries and
concurrent leaves, with the table service unreachable, and a crash at each step followed by
the recovery pass; the chips conserved throughout (``World.check``). The random test with
leaves among joins is in ``test_buy_ins_on_fakes``."""

from __future__ import annotations

import asyncio

import pytest

from services.lobby.ports import BuyInState
from services.lobby.recovery import RecoveryPolicy
from services.lobby.refusals import Code
from services.lobby.seating import SeatingApp

from .test_buy_ins_on_fakes import GRANT, LEAVE_CRASHES, Crash, World, balance, bob_id
from .test_buy_ins_on_fakes import world as world  # the fixture
from .test_lobby_app_on_fakes import refused, req


async def test_leave_when_not_dealt_in_cashes_the_stack_out_at_once(world: World) -> None:
    alice, bob = await world.player(1), await world.player(2)
    lounge = await world.lounge(alice, 1)
    lid = lounge.lounge_id
    await world.app.join(alice, req("j"), lid, 2, 500, "")
    await world.app.join(bob, req("jb"), lid, 3, 500, "")
    world.tables.deal(lid)
    world.tables.move_chips(lid, 3, 2, 120)  # alice won a hand
    world.tables.end_hand(lid)
    await world.check(settled=True)
    left = await world.app.leave(alice, req("l"), lid)
    assert (left.buy_in.state, left.buy_in.left_stack, left.balance) == (
        BuyInState.LEFT,
        620,
        GRANT + 120,
    )
    assert 2 not in world.tables.tables[lid].seats
    assert await world.app.leave(alice, req("l"), lid) == left  # a retry: the same answer
    again = await refused(world.app.leave(alice, req("l2"), lid))
    assert (again.code, again.reason) == (Code.FAILED_PRECONDITION, "NOT_SEATED")
    seen = await world.lounge_app.get(alice, lid, "")
    assert [s.seat for s in seen.seats] == [3]
    assert await balance(world, alice) == GRANT + 120
    await world.check(settled=True)
    rejoined = await world.app.join(alice, req("j2"), lid, 2, 300, "")  # the seat again
    assert rejoined.buy_in.seat == 2 and rejoined.balance == GRANT - 180
    await world.check(settled=True)


async def test_leave_when_dealt_in_cashes_out_when_the_hand_ends(world: World) -> None:
    alice, bob = await world.player(1), await world.player(2)
    lid = (await world.lounge(alice, 1)).lounge_id
    await world.app.join(alice, req("j"), lid, 0, 500, "")
    await world.app.join(bob, req("jb"), lid, 1, 500, "")
    world.tables.deal(lid)
    first, second = await asyncio.gather(
        world.app.leave(alice, req("l1"), lid), world.app.leave(alice, req("l2"), lid)
    )
    assert first.buy_in.state is second.buy_in.state is BuyInState.LEAVING
    assert first.balance == second.balance == GRANT - 500
    assert await world.app.recover_leaves() == 0  # the hand is still in play
    world.tables.move_chips(lid, 0, 1, 200)  # its chips in the pot are lost
    await world.check()
    world.tables.end_hand(lid)
    await world.check()  # the stack is in flight to the balance
    assert await world.app.recover() == (0, 0)
    done = await world.app.leave(alice, req("l1"), lid)
    assert (done.buy_in.state, done.buy_in.left_stack, done.balance) == (
        BuyInState.LEFT,
        300,
        GRANT - 200,
    )
    assert await world.app.leave(alice, req("l2"), lid) == done
    cash_outs = [m for m in await world.ledger.entries(bob_id(world, alice), None, 10)]
    assert [m.amount for m in cash_outs] == [300, -500, GRANT]  # one cash-out
    await world.check(settled=True)


async def test_leave_with_the_table_service_unreachable(world: World) -> None:
    alice = await world.player(1)
    lid = (await world.lounge(alice, 1)).lounge_id
    await world.app.join(alice, req("j"), lid, 0, 500, "")
    for lost in (False, True):
        world.tables.unavailable, world.tables.lost_answers = True, lost
        answer = await refused(world.app.leave(alice, req("l"), lid))
        assert (answer.code, answer.reason) == (Code.UNAVAILABLE, "TABLES_UNAVAILABLE")
        await world.check()
    world.tables.unavailable = False
    assert await world.app.recover_leaves() == 1
    assert await balance(world, alice) == GRANT
    done = await world.app.leave(alice, req("l"), lid)
    assert done.buy_in.state is BuyInState.LEFT and done.balance == GRANT
    await world.check(settled=True)


async def test_leave_of_another_players_seat_is_not_possible(world: World) -> None:
    alice, bob = await world.player(1), await world.player(2)
    lid = (await world.lounge(alice, 1)).lounge_id
    await world.app.join(alice, req("j"), lid, 0, 500, "")
    answer = await refused(world.app.leave(bob, req("l"), lid))
    assert answer.reason == "NOT_SEATED"
    bad = await refused(world.app.leave(bob, req("l"), "x" * 500))
    assert bad.code is Code.INVALID_ARGUMENT
    assert 0 in world.tables.tables[lid].seats
    await world.check(settled=True)


@pytest.mark.parametrize("point", [p for p in LEAVE_CRASHES if p])
@pytest.mark.parametrize("dealt_in", [False, True])
async def test_a_crash_at_each_step_of_a_leave_then_recovery(
    world: World, point: str, dealt_in: bool
) -> None:
    alice = await world.player(1)
    lid = (await world.lounge(alice, 1)).lounge_id
    await world.app.join(alice, req("j"), lid, 0, 500, "")
    if dealt_in:
        world.tables.deal(lid)
    world.buy_ins.crash = world.tables.crash = point
    if dealt_in and point in ("before_left", "after_left"):
        await world.app.leave(alice, req("l"), lid)  # LEAVING: nothing to credit yet
        world.tables.end_hand(lid)
        with pytest.raises(Crash):
            await world.app.recover()
    else:
        with pytest.raises(Crash):
            await world.app.leave(alice, req("l"), lid)
    await world.check()
    app = world.restart()
    world.tables.end_hand(lid)
    await app.recover()
    await world.check(settled=True)
    done = await app.leave(alice, req("l"), lid)
    assert (done.buy_in.state, done.balance) == (BuyInState.LEFT, GRANT)
    assert len(await world.ledger.entries(bob_id(world, alice), None, 10)) == 3
    await world.check(settled=True)


async def test_leaves_that_wait_long_do_not_keep_a_later_leave_out(world: World) -> None:
    """The recovery pass walks LEAVING sagas a page at a time: with more waiting leaves
    (dealt in, their hand still in play) than a page, a later leave whose seat is free
    is still cashed out within the passes one walk takes."""
    world.app = SeatingApp(world.lounge_app, world.buy_ins, world.tables, RecoveryPolicy(batch=2))
    owner = await world.player(0)
    players = [await world.player(n) for n in range(1, 6)]
    busy = (await world.lounge(owner, 1)).lounge_id
    quiet = (await world.lounge(owner, 2)).lounge_id
    for n, who in enumerate(players[:4]):
        await world.app.join(who, req(f"j{n}"), busy, n, 500, "")
    world.tables.deal(busy)  # a hand in play: their leaves wait for its end
    for n, who in enumerate(players[:4]):
        answer = await world.app.leave(who, req(f"l{n}"), busy)
        assert answer.buy_in.state is BuyInState.LEAVING
    late = players[4]
    await world.app.join(late, req("j-late"), quiet, 0, 500, "")
    world.tables.deal(quiet)
    assert (await world.app.leave(late, req("l-late"), quiet)).buy_in.state is BuyInState.LEAVING
    world.tables.end_hand(quiet)  # its seat is free now; the busy table's hand goes on
    passes = 0
    while await balance(world, late) != GRANT:
        passes += 1
        assert passes <= 3, "the later leave waited behind the others"
        await world.app.recover_leaves()
    await world.check()
