"""Busted seats (``services.lobby.busted``) on the in-memory ports.

An AI seat is refilled from the house (``services.lobby.refills``): once per bust, with the
house paying and the audit holding at every step; a table that does not answer, or answers
and loses the answer, refills the seat once; a refill the table refuses for now waits for the
seat's next bust, one refused for good goes back to the house; a closing lounge is CLOSED only
once no refill of its is on its way. A person's busted seat is never refilled (it adds chips,
or is freed after the lounge's grace: ``test_busted_grace_on_fakes.py``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from poker.events.v1 import events_pb2 as epb
from services.lobby.busted import BustedSeats
from services.lobby.closing import ClosingApp
from services.lobby.lounges import AiSeat
from services.lobby.ports import (
    AiRefill,
    ChipsAdded,
    Lounge,
    LoungeState,
    RefillState,
    TablesUnavailable,
)
from services.lobby.refills import RefillApp

from .test_buy_ins_on_fakes import World
from .test_lobby_app_on_fakes import req
from .test_lounges_on_fakes import nlhe

STACK = 1_000  # the lounges' AI stack: 100 big blinds at 5/10


async def ai_lounge(world: World, n: int = 1) -> Lounge:
    """An OPEN lounge with AI seats 0 and 1 (easy), each funded with STACK by the house."""
    owner = await world.player(n)
    ai = [AiSeat(0, epb.AI_LEVEL_EASY), AiSeat(1, epb.AI_LEVEL_EASY)]
    lounge = await world.lounge_app.create(owner, req(f"ai-{n}"), "Bots", nlhe(), 0, 0, ai, False)
    assert lounge.state is LoungeState.OPEN
    return lounge


def bust(world: World, lounge: Lounge, loser: int, winner: int) -> None:
    """The hand's result at the fake table: ``loser``'s whole stack went to ``winner``."""
    seats = world.tables.tables[lounge.lounge_id].seats
    lost = seats[loser].stack
    seats[winner] = replace(seats[winner], stack=seats[winner].stack + lost)
    seats[loser] = replace(seats[loser], stack=0)
    world.tables.tables[lounge.lounge_id].sequence += 1


async def fund(world: World, lounge_id: str, seat: int) -> AiRefill | None:
    """``Ledger.fund_ai_refill`` of ``seat``'s STACK now (as another lobby's pass would)."""
    now = world.lobby.clock()
    return await world.ledger.fund_ai_refill(lounge_id, seat, STACK, now, now, 10)


def passes(world: World) -> tuple[RefillApp, BustedSeats]:
    """The refill saga and the busted seats' pass that reads the tables and drives it."""
    refills = RefillApp(world.lobby.app, world.tables)
    return refills, BustedSeats(world.lounges, refills, world.buy_ins)


async def added(keeper: BustedSeats) -> int:
    """One pass of ``keeper``: how many refills it added."""
    return await keeper.recover()


async def unanswered(*_: object) -> ChipsAdded:
    raise TablesUnavailable("the table service is unreachable")


def stacks(world: World, lounge: Lounge) -> dict[int, int]:
    return {n: s.stack for n, s in world.tables.tables[lounge.lounge_id].seats.items()}


async def audited(world: World) -> None:
    """The chips audit with the house: created == balances + at tables + house, and the
    chips at the tables are exactly the AI seats' stacks (no person sits here)."""
    audit = await world.ledger.audit()
    assert audit.holds, audit
    on_tables = sum(sum(stacks(world, x).values()) for x in world.lounges._lounges.values())
    assert audit.on_tables == on_tables, (audit, on_tables)


async def test_a_busted_ai_seat_gets_its_stack_from_the_house_once_per_bust() -> None:
    world = World()
    lounge = await ai_lounge(world)
    _, keeper = passes(world)
    assert await added(keeper) == 0  # nobody busted: nothing moves
    assert await world.ledger.house() == -2 * STACK
    bust(world, lounge, loser=0, winner=1)
    await audited(world)
    assert await added(keeper) == 1
    assert stacks(world, lounge) == {0: STACK, 1: 2 * STACK}
    assert await world.ledger.house() == -3 * STACK  # the house paid for the refill
    await audited(world)
    assert await added(keeper) == 0  # the seat holds chips again: no second refill
    assert await world.ledger.funded_ai_refills(lounge.lounge_id, 10) == []
    bust(world, lounge, loser=1, winner=0)  # the other seat, then the first again
    assert await added(keeper) == 1
    bust(world, lounge, loser=0, winner=1)
    assert await added(keeper) == 1
    assert await world.ledger.house() == -5 * STACK
    await audited(world)
    refilled = sorted((r.seat, r.n, r.state) for r in world.ledger._refills.values() if r.lounge_id)
    assert refilled == [(0, 1, RefillState.ADDED), (0, 2, RefillState.ADDED),
                        (1, 1, RefillState.ADDED)]  # fmt: skip


async def test_a_seat_all_in_in_the_hand_in_play_is_not_busted() -> None:
    """All in, a seat shows 0 chips behind until the hand ends: no refill for it then."""
    world = World()
    lounge = await ai_lounge(world)
    _, keeper = passes(world)
    world.tables.deal(lounge.lounge_id)
    bust(world, lounge, loser=0, winner=1)  # (its chips in the pot, as far as a view shows)
    assert await added(keeper) == 0
    assert await world.ledger.funded_ai_refills(lounge.lounge_id, 10) == []
    assert await world.ledger.house() == -2 * STACK
    world.tables.end_hand(lounge.lounge_id)  # it lost: busted now
    assert await added(keeper) == 1
    assert stacks(world, lounge)[0] == STACK


async def test_a_persons_seat_and_a_lounge_not_open_are_never_refilled() -> None:
    world = World()
    lounge = await ai_lounge(world)
    person = await world.player(2)
    joined = await world.app.join(person, req("j"), lounge.lounge_id, 3, 500, "")
    seats = world.tables.tables[lounge.lounge_id].seats
    seats[3] = replace(seats[3], stack=0)  # the person busted: chips are theirs to add
    seats[0] = replace(seats[0], stack=seats[0].stack + 500)
    _, keeper = passes(world)
    assert await added(keeper) == 0
    assert joined.buy_in.seat == 3 and stacks(world, lounge)[3] == 0
    assert await fund(world, lounge.lounge_id, 3) is None
    await world.closes.mark_closing(lounge.lounge_id)
    bust(world, lounge, loser=1, winner=0)
    assert await added(keeper) == 0  # CLOSING: the close settles what is there
    assert await fund(world, lounge.lounge_id, 1) is None


async def test_an_unanswered_or_lost_answer_refills_the_seat_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world = World()
    lounge = await ai_lounge(world)
    _, keeper = passes(world)
    bust(world, lounge, loser=0, winner=1)
    monkeypatch.setattr(world.tables, "add_chips", unanswered)  # the house pays, then silence
    assert await added(keeper) == 0
    monkeypatch.undo()
    (waiting,) = await world.ledger.funded_ai_refills(lounge.lounge_id, 10)
    assert (waiting.seat, waiting.n, waiting.amount) == (0, 1, STACK)
    await audited_with_funded(world, STACK)
    assert await added(keeper) == 1  # the seat still at 0: the same refill, now answered
    assert stacks(world, lounge) == {0: STACK, 1: 2 * STACK}
    await audited(world)

    bust(world, lounge, loser=0, winner=1)
    add_chips = world.tables.add_chips

    async def lost(*args: Any) -> ChipsAdded:
        await add_chips(*args)
        raise TablesUnavailable("the answer was lost")

    monkeypatch.setattr(world.tables, "add_chips", lost)  # added at the table; answer lost
    assert await added(keeper) == 0
    monkeypatch.undo()
    assert stacks(world, lounge)[0] == STACK  # the chips are on the seat...
    assert [r.n for r in await world.ledger.funded_ai_refills(lounge.lounge_id, 10)] == [
        2
    ]  # ...unheard
    await audited(world)  # the chips the house paid are the chips on the seat
    assert await added(keeper) == 0  # not busted: nothing to do
    bust(world, lounge, loser=0, winner=1)  # busted again: refill 2's retry hears its answer
    assert await added(keeper) == 1
    assert stacks(world, lounge)[0] == 0  # (a first answer adds nothing again)
    assert await added(keeper) == 1  # refill 3
    assert stacks(world, lounge)[0] == STACK
    assert await world.ledger.funded_ai_refills(lounge.lounge_id, 10) == []
    assert await world.ledger.house() == -5 * STACK  # two seats and three refills, once each
    await audited(world)


async def audited_with_funded(world: World, funded: int) -> None:
    """The audit while ``funded`` chips of the house's are on their way to a seat."""
    audit = await world.ledger.audit()
    assert audit.holds, audit
    on_tables = sum(sum(stacks(world, x).values()) for x in world.lounges._lounges.values())
    assert audit.on_tables == on_tables + funded


async def test_a_refill_refused_for_now_waits_for_the_next_bust() -> None:
    world = World()
    lounge = await ai_lounge(world)
    refills, keeper = passes(world)
    bust(world, lounge, loser=0, winner=1)
    # Another lobby's pass funded it, and its AddChips landed; this one's look was older.
    other = await fund(world, lounge.lounge_id, 0)
    assert other is not None
    seats = world.tables.tables[lounge.lounge_id].seats
    seats[0] = replace(seats[0], stack=STACK)  # refilled by a request of its own...
    seats[1] = replace(seats[1], stack=seats[1].stack - STACK)  # (the chips' story aside)
    assert await refills.drive(other) is RefillState.FUNDED  # ABOVE_MAX_STACK: it waits
    assert stacks(world, lounge)[0] == STACK
    bust(world, lounge, loser=0, winner=1)
    assert await added(keeper) == 1  # the next bust takes the waiting refill
    assert [(r.n, r.state) for r in world.ledger._refills.values()] == [(1, RefillState.ADDED)]
    assert stacks(world, lounge)[0] == STACK


async def closing_world() -> tuple[World, Lounge, RefillApp, BustedSeats, ClosingApp]:
    """A lounge whose AI seat 0 just busted, with a refill pass and a close that drives it."""
    world = World()
    lounge = await ai_lounge(world)
    refills, keeper = passes(world)
    bust(world, lounge, loser=0, winner=1)
    return world, lounge, refills, keeper, ClosingApp(world.app, world.closes, refills=refills)


async def test_a_closing_lounge_waits_for_its_refill_and_the_house_gets_it_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world, lounge, _, keeper, closing = await closing_world()
    lid = lounge.lounge_id
    monkeypatch.setattr(world.tables, "add_chips", unanswered)
    await added(keeper)  # FUNDED: the house paid, the table did not answer
    monkeypatch.undo()
    world.tables.tables[lid].dealt_in = {1}  # seat 1 plays a hand (busted seat 0 sits out)
    await world.closes.mark_closing(lid)
    closing_now = await closing.drive(await world.lounges.get(lid) or lounge)
    # The close sent the seats away first: seat 0 (out of the hand) left at once with 0, so
    # its refill came back to the house; seat 1 leaves when its hand ends, and the close waits.
    assert closing_now.state is LoungeState.CLOSING
    assert [r.state for r in world.ledger._refills.values()] == [RefillState.RETURNED]
    world.tables.end_hand(lid)
    closed = await closing.drive(await world.lounges.get(lid) or lounge)
    assert closed.state is LoungeState.CLOSED
    assert await world.ledger.house() == 0  # every chip the house paid came back
    audit = await world.ledger.audit()
    assert audit.holds and audit.on_tables == 0, audit


async def test_a_refill_whose_seat_is_gone_goes_back_to_the_house() -> None:
    world, lounge, refills, _, closing = await closing_world()
    lid = lounge.lounge_id
    funded = await fund(world, lid, 0)
    assert funded is not None  # ...and the lobby stopped before it asked the table
    await world.closes.mark_closing(lid)
    await world.tables.leave(lid, 0, "", f"close/{lid}/0/1")  # the close sent seat 0 away
    assert await refills.drive(funded) is RefillState.RETURNED  # EMPTY_SEAT: for good
    assert await refills.drive(funded) is RefillState.RETURNED  # a second lobby's drive
    closed = await closing.drive(await world.lounges.get(lid) or lounge)
    assert closed.state is LoungeState.CLOSED
    assert await world.ledger.house() == 0
    audit = await world.ledger.audit()
    assert audit.holds and audit.on_tables == 0, audit
