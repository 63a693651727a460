"""Contract of the ``Closes`` port (PostgreSQL and the fake): a lounge's close moves it
OPEN -> CLOSING -> CLOSED only; each seat is settled once, atomically with its chips ("table
closed"), and never after its leave's cash-out (nor a cash-out after it), even concurrently;
only lounges whose table ends by itself are listed as ending."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from poker.events.v1 import events_pb2 as epb
from services.lobby.ports import (
    BuyInState,
    Kind,
    LoungeFilter,
    LoungeState,
    NewLounge,
    SeatGrant,
)

from .conftest import Stores
from .test_buy_ins_contract import T0, buy_in, conserved, key, setup


async def seated(stores: Stores, n: int, seat: int, amount: int = 300) -> str:
    saga = (await stores.buy_ins.reserve(buy_in(n, amount))).buy_in
    await stores.buy_ins.seated(saga.saga_id, SeatGrant(seat, f"token-{n}", None, 7))
    return saga.saga_id


async def test_close_states_move_forward_only(stores: Stores) -> None:
    await setup(stores)
    assert (await stores.closes.mark_closed("l-0")).state is LoungeState.OPEN  # not closing
    closing = await stores.closes.mark_closing("l-0")
    assert closing.state is LoungeState.CLOSING
    assert (await stores.closes.mark_closing("l-0")).state is LoungeState.CLOSING
    assert [x.lounge_id for x in await stores.closes.closing(10)] == ["l-0"]
    assert await stores.lounges.listing(LoungeFilter(), None, 10) != []  # l-1 is still listed
    assert "l-0" not in [
        x.lounge_id for x in await stores.lounges.listing(LoungeFilter(), None, 10)
    ]
    closed = await stores.closes.mark_closed("l-0")
    assert closed.state is LoungeState.CLOSED and closed.seats == ()
    assert (await stores.closes.mark_closing("l-0")).state is LoungeState.CLOSED
    assert await stores.closes.closing(10) == []


async def test_a_seat_is_settled_once_with_its_chips(stores: Stores) -> None:
    await setup(stores)
    one = await seated(stores, 1, 2)
    assert await conserved(stores) == 300
    assert [s.saga_id for s in await stores.closes.unsettled("l-0")] == [one]
    seen = await stores.closes.seen_seated(one, 12)
    assert (seen.state, seen.leave_sequence) == (BuyInState.SEATED, 12)
    assert (await stores.closes.seen_seated(one, 20)).leave_sequence == 12  # the first kept
    done = await stores.closes.settle(one, 340, T0)
    assert (done.state, done.left_stack) == (BuyInState.LEFT, 340)
    assert await conserved(stores) == -40  # 40 won from players not in this test
    again = await stores.closes.settle(one, 999, T0)
    assert (again.state, again.left_stack) == (BuyInState.LEFT, 340)
    entries = await stores.ledger.entries("p1", None, 10)
    assert [(m.kind, m.amount) for m in entries[:2]] == [
        (Kind.TABLE_CLOSED, 340),
        (Kind.BUY_IN, -300),
    ]
    assert (await stores.ledger.account("p1")).balance == 1_040  # type: ignore[union-attr]
    assert await stores.closes.unsettled("l-0") == []
    lounge = await stores.lounges.get("l-0")
    assert lounge is not None and lounge.seats == ()


async def test_a_close_and_a_leave_of_one_seat_credit_it_once(stores: Stores) -> None:
    await setup(stores)
    sagas = [await seated(stores, n, n) for n in range(3)]
    for n, saga_id in enumerate(sagas):  # all three asked to leave too
        await stores.buy_ins.leaving("p1", "l-0", key(f"leave/{n}"), T0)
        await stores.buy_ins.leave_called(saga_id, 10 + n)
        await asyncio.gather(
            stores.closes.settle(saga_id, 300, T0),
            stores.buy_ins.left(saga_id, 300, T0),
            stores.closes.settle(saga_id, 300, T0),
        )
    entries = await stores.ledger.entries("p1", None, 20)
    home = [m for m in entries if m.kind in (Kind.CASH_OUT, Kind.TABLE_CLOSED)]
    assert [m.amount for m in home] == [300, 300, 300]  # one credit per seat
    assert await conserved(stores) == 0


async def test_a_reserved_buy_in_is_unsettled_but_cannot_be_settled(stores: Stores) -> None:
    await setup(stores)
    saga = (await stores.buy_ins.reserve(buy_in(1))).buy_in
    assert [s.state for s in await stores.closes.unsettled("l-0")] == [BuyInState.RESERVED]
    assert (await stores.closes.seen_seated(saga.saga_id, 5)).leave_sequence is None
    assert (await stores.closes.settle(saga.saga_id, 300, T0)).state is BuyInState.RESERVED
    assert await conserved(stores) == 300


async def test_only_lounges_that_end_by_themselves_are_ending(stores: Stores) -> None:
    await setup(stores)  # l-0 and l-1: no limit
    limits = {
        "l-hands": epb.TableConfig(variant=epb.VARIANT_NLHE, max_hands=5),
        "l-time": epb.TableConfig(variant=epb.VARIANT_NLHE),
    }
    limits["l-time"].close_time.FromDatetime(T0 + timedelta(hours=1))
    for n, (lid, config) in enumerate(limits.items()):
        await stores.lounges.create(
            NewLounge(
                lid,
                "p1",
                lid,
                1,
                config.SerializeToString(),
                10,
                6,
                200,
                1000,
                None,
                (),
                key(f"lounge/limited/{n}"),
                T0,
            )
        )
    assert await stores.closes.ending(0, 10) == []  # creating ones are not
    for lid in limits:
        await stores.lounges.mark_open(lid)
    found = await stores.closes.ending(0, 10)
    assert [x.lounge_id for x in found] == ["l-hands", "l-time"]
    assert [x.lounge_id for x in await stores.closes.ending(0, 1)] == ["l-hands"]
    after = found[0].listing_id
    assert [x.lounge_id for x in await stores.closes.ending(after, 10)] == ["l-time"]
    await stores.closes.mark_closing("l-hands")
    assert [x.lounge_id for x in await stores.closes.ending(0, 10)] == ["l-time"]
