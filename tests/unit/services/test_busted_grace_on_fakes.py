"""A person's busted seat freed after the lounge's grace (``services.lobby.busted``), on the fakes.

RULES.md: a player left with no chips after a hand sits out until chips are added; after the
lounge's grace (default 5 minutes) the seat is freed and the player leaves the table. The
grace counts from the first pass that saw the seat busted since the table's ``busted_hand``;
the table frees the seat only by a conditional leave naming that buy-in's token and that hand,
so a rebuy that lands first, a later bust, or a new seating is never freed by a stale
decision; a lost answer is finished on a later pass with the same request, once.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from felt.service.refusals import Code, Refused
from felt.wire import limits
from services.lobby.auth import Caller
from services.lobby.busted import BustedSeats, busted_leave_request_id
from services.lobby.chips import ChipsApp
from services.lobby.closing import ClosingApp
from services.lobby.memory import MemoryChipAdds
from services.lobby.ports import (
    DEFAULT_BUSTED_GRACE_S,
    BuyIn,
    BuyInState,
    Departure,
    Lounge,
    LoungeState,
    TablesUnavailable,
)
from services.lobby.refills import RefillApp

from .test_buy_ins_on_fakes import Crash, World
from .test_lobby_app_on_fakes import req
from .test_lounges_on_fakes import nlhe

BUY_IN = 500
GRACE = timedelta(seconds=DEFAULT_BUSTED_GRACE_S)


async def table_of_two(
    world: World, grace: int | None = None
) -> tuple[Lounge, BuyIn, BuyIn, Caller]:
    """An OPEN lounge (no AI) where players 1 (seat 0) and 2 (seat 1, whose caller is
    returned) bought in BUY_IN each."""
    owner = await world.player(1)
    lounge = await world.lounge_app.create(
        owner, req("lounge"), "Grace", nlhe(), 0, 0, [], False, busted_grace_s=grace
    )
    first = await world.app.join(owner, req("j1"), lounge.lounge_id, 0, BUY_IN, "")
    other = await world.player(2)
    second = await world.app.join(other, req("j2"), lounge.lounge_id, 1, BUY_IN, "")
    return lounge, first.buy_in, second.buy_in, other


def hand_busts(world: World, lounge: Lounge, loser: int, winner: int) -> None:
    """A hand is dealt and ``loser``'s whole stack goes to ``winner``: busted at its end."""
    lid = lounge.lounge_id
    world.tables.deal(lid)
    seats = world.tables.tables[lid].seats
    lost = seats[loser].stack
    seats[winner] = replace(seats[winner], stack=seats[winner].stack + lost)
    seats[loser] = replace(seats[loser], stack=0)
    world.tables.end_hand(lid)


def keeper_of(world: World) -> BustedSeats:
    return BustedSeats(world.lounges, RefillApp(world.lobby.app, world.tables), world.buy_ins)


def chips_of(world: World) -> ChipsApp:
    """The players' AddSeatChips (a rebuy) on the world's fakes."""
    return ChipsApp(
        world.lounge_app, world.buy_ins, MemoryChipAdds(world.ledger, world.store), world.tables
    )


async def conserved(world: World) -> None:
    """Every chip a ledger entry, chip adds included: balances + at tables == created, and
    the chips at the tables are exactly the seats' stacks (a freed seat had none)."""
    totals = await world.ledger.totals()
    assert totals.balances + totals.on_tables == totals.created
    assert totals.ledger_sum == totals.balances
    stacks = sum(s.stack for t in world.tables.tables.values() for s in t.seats.values())
    assert totals.on_tables == stacks, (totals, stacks)
    assert (await world.ledger.audit()).holds


def later(world: World, by: timedelta) -> None:
    world.lobby.clock.now += by


async def saga(world: World, saga_id: str) -> BuyIn:
    found = await world.store.get(saga_id)
    assert found is not None
    return found


async def test_a_busted_seat_is_freed_after_the_grace_and_not_before() -> None:
    world = World()
    lounge, _, loser, _ = await table_of_two(world)
    lid = lounge.lounge_id
    keeper = keeper_of(world)
    hand_busts(world, lounge, loser=1, winner=0)
    assert await keeper.recover() == 0  # seen busted: the grace starts now
    later(world, GRACE - timedelta(seconds=1))
    assert await keeper.recover() == 0  # a second short
    assert 1 in world.tables.tables[lid].seats
    later(world, timedelta(seconds=1))
    assert await keeper.recover() == 1
    table = world.tables.tables[lid]
    assert 1 not in table.seats
    assert table.left[-1][1:4] == (1, loser.player_id, 0)  # PlayerLeft with nothing
    freed = await saga(world, loser.saga_id)
    assert freed.state is BuyInState.LEFT and freed.left_stack == 0
    seats = (await world.lounges.get(lid) or lounge).seats
    assert [s.seat for s in seats] == [0]  # the lounge's seat is free for the next player
    await world.check()  # every chip still a ledger entry: the loser's are the winner's
    await conserved(world)
    calls = world.tables.calls
    assert await keeper.recover() == 0  # done: nothing more to do, nothing refused
    assert world.tables.calls == calls + 1  # only the table's read


async def test_a_seat_with_chips_and_a_seat_in_the_hand_in_play_are_not_busted() -> None:
    world = World()
    lounge, _, _, _ = await table_of_two(world)
    keeper = keeper_of(world)
    later(world, 10 * GRACE)
    assert await keeper.recover() == 0
    world.tables.deal(lounge.lounge_id)
    seats = world.tables.tables[lounge.lounge_id].seats
    seats[1] = replace(seats[1], stack=0)  # all in: 0 behind until the hand ends
    later(world, 10 * GRACE)
    assert await keeper.recover() == 0
    assert set(seats) == {0, 1}


async def test_chips_added_keep_the_seat_and_a_later_bust_starts_the_grace_anew() -> None:
    world = World()
    lounge, _, loser, player = await table_of_two(world)
    lid = lounge.lounge_id
    keeper = keeper_of(world)
    chips = chips_of(world)
    hand_busts(world, lounge, loser=1, winner=0)
    assert await keeper.recover() == 0  # busted since hand 1, seen now
    later(world, GRACE - timedelta(seconds=10))
    await chips.add(player, req("rebuy"), lid, BUY_IN)
    later(world, timedelta(seconds=20))  # past the first bust's grace: it had chips meanwhile
    assert await keeper.recover() == 0
    # It loses them again: busted since hand 2, a new grace from this pass on.
    hand_busts(world, lounge, loser=1, winner=0)
    assert await keeper.recover() == 0
    later(world, GRACE - timedelta(seconds=1))
    assert await keeper.recover() == 0  # the first bust's sighting does not count
    assert 1 in world.tables.tables[lid].seats
    later(world, timedelta(seconds=1))
    assert await keeper.recover() == 1
    assert (await saga(world, loser.saga_id)).state is BuyInState.LEFT
    await conserved(world)


async def test_a_rebuy_that_lands_first_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pass read the seat busted past its grace; the player's AddSeatChips lands before
    the pass's leave: the table refuses the leave, nothing changes, the seat keeps its chips."""
    world = World()
    lounge, _, loser, player = await table_of_two(world)
    lid = lounge.lounge_id
    keeper = keeper_of(world)
    chips = chips_of(world)
    hand_busts(world, lounge, loser=1, winner=0)
    assert await keeper.recover() == 0
    later(world, GRACE)
    leave = world.tables.leave

    async def rebuy_first(*args: Any, **kwargs: Any) -> Departure:
        await chips.add(player, req("rebuy"), lid, BUY_IN)
        return await leave(*args, **kwargs)

    monkeypatch.setattr(world.tables, "leave", rebuy_first)
    assert await keeper.recover() == 0  # NOT_BUSTED: refused, nothing changed
    monkeypatch.undo()
    assert world.tables.tables[lid].seats[1].stack == BUY_IN
    assert (await saga(world, loser.saga_id)).state is BuyInState.SEATED
    later(world, 10 * GRACE)
    assert await keeper.recover() == 0  # it has chips: it stays
    await conserved(world)


async def test_a_rebuy_that_lands_after_the_leave_gets_its_chips_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The other way round: AddSeatChips passed its checks (the seat busted, the player's) and
    took the chips from the balance; the pass's leave lands before its AddChips. The table
    refuses the add (the seat is gone), the chips come back, and the seat stays freed."""
    world = World()
    lounge, _, loser, player = await table_of_two(world)
    lid = lounge.lounge_id
    keeper = keeper_of(world)
    chips = chips_of(world)
    hand_busts(world, lounge, loser=1, winner=0)
    assert await keeper.recover() == 0
    later(world, GRACE)
    balance = (await world.ledger.account(loser.player_id)).balance  # type: ignore[union-attr]
    add_chips = world.tables.add_chips
    freed: list[int] = []

    async def leave_first(*args: Any) -> Any:
        freed.append(await keeper.recover())
        return await add_chips(*args)

    monkeypatch.setattr(world.tables, "add_chips", leave_first)
    with pytest.raises(Refused) as refused:
        await chips.add(player, req("rebuy"), lid, BUY_IN)
    monkeypatch.undo()
    assert refused.value.code is Code.FAILED_PRECONDITION  # "your chips are back"
    assert freed == [1] and 1 not in world.tables.tables[lid].seats
    assert (await world.ledger.account(loser.player_id)).balance == balance  # type: ignore[union-attr]
    assert (await saga(world, loser.saga_id)).state is BuyInState.LEFT
    await conserved(world)


async def test_a_stale_decision_never_frees_a_new_seating() -> None:
    """The player left and sat down again at the same seat: the old buy-in's conditional leave
    (its token, its bust) is refused; the new seating's own bust has a grace of its own."""
    world = World()
    lounge, _, loser, player = await table_of_two(world)
    lid = lounge.lounge_id
    keeper = keeper_of(world)
    hand_busts(world, lounge, loser=1, winner=0)
    assert await keeper.recover() == 0
    await world.app.leave(player, req("leave"), lid)
    again = await world.app.join(player, req("j3"), lid, 1, BUY_IN, "")
    assert again.buy_in.saga_id != loser.saga_id
    later(world, GRACE)
    old = await saga(world, loser.saga_id)
    # The old decision, sent now (a slow pass of another lobby): refused by the table.
    assert await keeper._free(replace(old, state=BuyInState.SEATED), 1, world.lobby.clock(),
                              world.lobby.clock()) == 0  # fmt: skip
    assert world.tables.tables[lid].seats[1].stack == BUY_IN
    assert (await saga(world, again.buy_in.saga_id)).state is BuyInState.SEATED
    assert await keeper.recover() == 0  # the new seating has chips
    hand_busts(world, lounge, loser=1, winner=0)  # hand 2
    assert await keeper.recover() == 0  # its own grace starts now
    later(world, GRACE)
    assert await keeper.recover() == 1
    assert (await saga(world, again.buy_in.saga_id)).state is BuyInState.LEFT
    await world.check()


async def test_a_lost_answer_is_finished_by_a_later_pass_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world = World()
    lounge, _, loser, _ = await table_of_two(world)
    lid = lounge.lounge_id
    keeper = keeper_of(world)
    hand_busts(world, lounge, loser=1, winner=0)
    assert await keeper.recover() == 0
    later(world, GRACE)
    leave = world.tables.leave
    sent: list[str] = []

    async def lost(*args: Any, **kwargs: Any) -> Departure:
        sent.append(args[3])
        await leave(*args, **kwargs)
        raise TablesUnavailable("the answer was lost")

    monkeypatch.setattr(world.tables, "leave", lost)
    assert await keeper.recover() == 0  # freed at the table; the lobby did not hear it
    monkeypatch.undo()
    assert 1 not in world.tables.tables[lid].seats
    assert (await saga(world, loser.saga_id)).state is BuyInState.SEATED
    later(world, timedelta(hours=1))  # past the lounge's backoff
    assert await keeper.recover() == 1  # the same request again: the table's first answer
    assert sent == [busted_leave_request_id(loser.saga_id, 1)]
    assert (await saga(world, loser.saga_id)).state is BuyInState.LEFT
    assert await keeper.recover() == 0
    await world.check()
    # Two lobbies' passes at once free it once: a second keeper finds nothing to do.
    assert await keeper_of(world).recover() == 0


async def test_a_crash_between_the_tables_leave_and_the_lobbys_commit_is_finished() -> None:
    """The lobby died after the table freed the seat and before it closed the buy-in: the
    next pass (a restarted lobby) sees the seat gone while the buy-in holds it, sends the same
    conditional leave, gets the table's first answer, and closes it with 0 chips, once."""
    world = World()
    lounge, _, loser, _ = await table_of_two(world)
    keeper = keeper_of(world)
    hand_busts(world, lounge, loser=1, winner=0)
    assert await keeper.recover() == 0
    later(world, GRACE)
    world.crash_at("before_busted_freed")
    with pytest.raises(Crash):
        await keeper.recover()
    assert 1 not in world.tables.tables[lounge.lounge_id].seats
    assert (await saga(world, loser.saga_id)).state is BuyInState.SEATED
    restarted = keeper_of(world)
    assert await restarted.recover() == 1
    assert (await saga(world, loser.saga_id)).state is BuyInState.LEFT
    assert await restarted.recover() == 0
    await world.check()


async def test_a_close_finishes_a_busted_seat_a_crash_left_half_done() -> None:
    """The lobby died between the table's leave of a busted seat and its own commit, and the
    owner closed the lounge meanwhile (the busted seats' pass walks OPEN lounges only): the
    close sends that leave again, closes the buy-in with 0, and the lounge is CLOSED."""
    world = World()
    lounge, _, loser, _ = await table_of_two(world)
    lid = lounge.lounge_id
    keeper = keeper_of(world)
    hand_busts(world, lounge, loser=1, winner=0)
    assert await keeper.recover() == 0
    later(world, GRACE)
    world.crash_at("before_busted_freed")
    with pytest.raises(Crash):
        await keeper.recover()
    await world.closes.mark_closing(lid)
    without = ClosingApp(world.app, world.closes)  # a close that knows nothing of busts
    assert (await without.drive(await world.lounges.get(lid) or lounge)).state is (
        LoungeState.CLOSING  # the buy-in SEATED, its seat gone: it waits
    )
    closing = ClosingApp(world.app, world.closes, busted=keeper_of(world))
    closed = await closing.drive(await world.lounges.get(lid) or lounge)
    assert closed.state is LoungeState.CLOSED
    freed = await saga(world, loser.saga_id)
    assert (freed.state, freed.left_stack) == (BuyInState.LEFT, 0)
    await world.check(settled=True)


async def test_a_grace_of_0_never_frees_and_the_setting_is_checked() -> None:
    world = World()
    lounge, _, _, _ = await table_of_two(world, grace=0)
    assert lounge.busted_grace_s == 0
    keeper = keeper_of(world)
    hand_busts(world, lounge, loser=1, winner=0)
    assert await keeper.recover() == 0
    later(world, timedelta(days=30))
    assert await keeper.recover() == 0
    assert 1 in world.tables.tables[lounge.lounge_id].seats
    owner = await world.player(3)
    for bad in (-1, 1, 59, 86_401):
        with pytest.raises(limits.LimitError, match="busted_grace_s"):
            await world.lounge_app.create(
                owner, req(f"bad-{bad}"), "Bad", nlhe(), 0, 0, [], False, busted_grace_s=bad
            )
    made = await world.lounge_app.create(owner, req("default"), "Default", nlhe(), 0, 0, [], False)
    assert made.busted_grace_s == DEFAULT_BUSTED_GRACE_S == 300
    made = await world.lounge_app.create(
        owner, req("an-hour"), "An hour", nlhe(), 0, 0, [], False, busted_grace_s=3_600
    )
    assert made.busted_grace_s == 3_600


async def test_a_leave_asked_after_a_lost_answer_finishes_the_busted_leave(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The table freed the seat, its answer was lost (the lounge backs off), and the player,
    told their seat was freed, asks to leave: the buy-in is LEAVING now, which the busted
    seats' pass does not finish, and the table refuses the player's own leave (the token is
    void). The leave sends the pass's conditional leave again, gets the table's first answer,
    and closes the buy-in with 0: not LEAVING for ever, the lounge seat held, a close
    waiting on it."""
    world = World()
    lounge, _, _, player = await table_of_two(world)
    lid = lounge.lounge_id
    keeper = keeper_of(world)
    hand_busts(world, lounge, loser=1, winner=0)
    assert await keeper.recover() == 0
    later(world, GRACE)
    leave = world.tables.leave

    async def lost(*args: Any, **kwargs: Any) -> Departure:
        await leave(*args, **kwargs)
        raise TablesUnavailable("the answer was lost")

    monkeypatch.setattr(world.tables, "leave", lost)
    assert await keeper.recover() == 0
    monkeypatch.undo()
    assert 1 not in world.tables.tables[lid].seats
    left = await world.app.leave(player, req("leave"), lid)
    assert (left.buy_in.state, left.buy_in.left_stack) == (BuyInState.LEFT, 0)
    assert [s.seat for s in (await world.lounges.get(lid) or lounge).seats] == [0]
    assert await keeper.recover() == 0
    await conserved(world)


async def test_a_close_finishes_a_busted_leave_whose_player_asked_to_leave_meanwhile() -> None:
    world = World()
    lounge, _, loser, _ = await table_of_two(world)
    lid = lounge.lounge_id
    keeper = keeper_of(world)
    hand_busts(world, lounge, loser=1, winner=0)
    assert await keeper.recover() == 0
    later(world, GRACE)
    world.crash_at("before_busted_freed")
    with pytest.raises(Crash):
        await keeper.recover()
    # The player asked to leave meanwhile, and the lobby died before it sent the table
    # anything: LEAVING, no leave sequence, the seat gone at the table.
    key = req("leave").key(f"leave/{loser.player_id}")
    await world.buy_ins.leaving(loser.player_id, lid, key, world.lobby.clock())
    assert (await saga(world, loser.saga_id)).state is BuyInState.LEAVING
    await world.closes.mark_closing(lid)
    closing = ClosingApp(world.app, world.closes, busted=keeper_of(world))
    closed = await closing.drive(await world.lounges.get(lid) or lounge)
    assert closed.state is LoungeState.CLOSED
    freed = await saga(world, loser.saga_id)
    assert (freed.state, freed.left_stack) == (BuyInState.LEFT, 0)
    await world.check(settled=True)


async def test_a_leave_answered_with_chips_is_never_recorded_as_a_busted_seats(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A table service older than ``busted_hand`` (a rolling update) ignores it: the pass's
    leave is a plain one, and after a rebuy that landed first it takes the seat's chips
    with it. The lobby must not close the buy-in with 0 then (the chips would be gone from
    the ledger): it stays SEATED, its chips counted as on the table, for an operator."""
    world = World()
    lounge, _, loser, player = await table_of_two(world)
    lid = lounge.lounge_id
    keeper = keeper_of(world)
    chips = chips_of(world)
    hand_busts(world, lounge, loser=1, winner=0)
    assert await keeper.recover() == 0
    later(world, GRACE)
    leave = world.tables.leave

    async def old_table(*args: Any, **kwargs: Any) -> Departure:
        await chips.add(player, req("rebuy"), lid, BUY_IN)  # the rebuy lands first
        return await leave(*args)  # busted_hand not understood: a plain leave

    monkeypatch.setattr(world.tables, "leave", old_table)
    assert await keeper.recover() == 0
    monkeypatch.undo()
    assert world.tables.tables[lid].left[-1][3] == BUY_IN  # the table let it go with its chips
    kept = await saga(world, loser.saga_id)
    assert kept.state is BuyInState.SEATED and kept.left_stack is None
