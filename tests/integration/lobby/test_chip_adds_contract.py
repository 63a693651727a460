"""Contract of the ``ChipAdds`` port (PostgreSQL and the fake): each transition of the
add-chips saga is atomic with its chips and happens once, a retry finds its first saga, and
balances + chips at tables == chips created throughout."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta

import pytest

from felt.storage.idempotency import RequestReused
from services.lobby.memory import MemoryBuyIns, MemoryChipAdds, MemoryLedger
from services.lobby.ports import (
    ChipAdds,
    ChipAddState,
    InsufficientChips,
    NewChipAdd,
    NoAccount,
    SeatGrant,
    TopUpRefused,
)
from services.lobby.postgres import PgBuyIns, PgChipAdds

from .conftest import Stores
from .test_buy_ins_contract import T0, buy_in, conserved, key, setup


def chip_adds_of(stores: Stores) -> ChipAdds:
    if isinstance(stores.buy_ins, PgBuyIns):
        return PgChipAdds(stores.buy_ins.pool)
    assert isinstance(stores.ledger, MemoryLedger) and isinstance(stores.buy_ins, MemoryBuyIns)
    return MemoryChipAdds(stores.ledger, stores.buy_ins)


async def seated(stores: Stores) -> None:
    """p1 (1,000 chips) seated at l-0 with 300 of them: 700 left."""
    await setup(stores)
    await stores.buy_ins.reserve(buy_in(1))
    await stores.buy_ins.seated("b-1", SeatGrant(2, "secret", None))


def add(n: int, amount: int = 200, content: str = "") -> NewChipAdd:
    return NewChipAdd(
        f"c-{n}",
        "p1",
        "l-0",
        "b-1",
        2,
        "secret",
        amount,
        1_000,
        key(f"add-chips/{n}", content),
        T0 + timedelta(seconds=10 + n),
    )


async def test_reserve_takes_the_chips_with_the_saga_once(stores: Stores) -> None:
    await seated(stores)
    chip_adds = chip_adds_of(stores)
    reservation = await chip_adds.reserve(add(1))
    saga = reservation.chip_add
    assert (saga.state, saga.amount, saga.seat, saga.seat_token) == (
        ChipAddState.RESERVED,
        200,
        2,
        "secret",
    )
    assert (saga.buy_in_id, saga.max_stack, saga.stack_after, saga.refusal) == (
        "b-1",
        1_000,
        None,
        None,
    )
    assert reservation.balance == 500
    assert await chip_adds.reserve(add(1)) == reservation  # a retry: nothing moves
    assert await chip_adds.first(add(1).request) == saga
    with pytest.raises(RequestReused):
        await chip_adds.reserve(add(1, content="other"))
    with pytest.raises(RequestReused):
        await chip_adds.first(add(1, content="other").request)
    with pytest.raises(InsufficientChips):
        await chip_adds.reserve(add(2, amount=501))
    assert await chip_adds.get("c-2") is None  # nothing written
    assert await chip_adds.first(add(2).request) is None
    with pytest.raises(NoAccount):
        await chip_adds.reserve(replace(add(3), player_id="p-none"))
    assert (await stores.ledger.account("p1")).balance == 500  # type: ignore[union-attr]
    assert await chip_adds.held("p1") == 200
    assert [s.saga_id for s in await chip_adds.unfinished(10)] == ["c-1"]
    assert await conserved(stores) == 500  # the buy-in's 300 and the add's 200
    entries = await stores.ledger.entries("p1", None, 1)
    assert [(e.kind.value, e.amount, e.table_id) for e in entries] == [("buy_in", -200, "l-0")]


async def test_added_commits_once_and_a_late_refusal_changes_nothing(stores: Stores) -> None:
    await seated(stores)
    chip_adds = chip_adds_of(stores)
    await chip_adds.reserve(add(1))
    saga = await chip_adds.added("c-1", 500)
    assert (saga.state, saga.stack_after) == (ChipAddState.ADDED, 500)
    assert await chip_adds.added("c-1", 999) == saga
    assert await chip_adds.compensate("c-1", "HAND_RUNNING", T0) == saga  # too late
    assert await chip_adds.unfinished(10) == []
    assert await chip_adds.held("p1") == 0
    assert (await stores.ledger.account("p1")).balance == 500  # type: ignore[union-attr]
    assert await conserved(stores) == 500


async def test_compensate_refunds_once(stores: Stores) -> None:
    await seated(stores)
    chip_adds = chip_adds_of(stores)
    await chip_adds.reserve(add(1))
    # Two drivers at once (a client's retry and the recovery pass): one refund.
    done = await asyncio.gather(
        chip_adds.compensate("c-1", "HAND_RUNNING", T0),
        chip_adds.compensate("c-1", "HAND_RUNNING", T0),
    )
    assert {(d.state, d.refusal) for d in done} == {(ChipAddState.COMPENSATED, "HAND_RUNNING")}
    assert await chip_adds.added("c-1", 500) == done[0]  # too late
    assert (await stores.ledger.account("p1")).balance == 700  # type: ignore[union-attr]
    entries = await stores.ledger.entries("p1", None, 2)
    assert [(e.kind.value, e.amount) for e in entries] == [("cash_out", 200), ("buy_in", -200)]
    assert await chip_adds.held("p1") == 0
    assert await conserved(stores) == 300


async def test_concurrent_adds_never_spend_the_same_chips(stores: Stores) -> None:
    await seated(stores)
    chip_adds = chip_adds_of(stores)
    outcomes = await asyncio.gather(
        *(chip_adds.reserve(add(n, amount=100)) for n in range(1, 21)), return_exceptions=True
    )
    made = [o for o in outcomes if not isinstance(o, BaseException)]
    assert len(made) == 7  # 700 chips, 100 each
    assert all(isinstance(o, InsufficientChips) for o in outcomes if o not in made)
    assert (await stores.ledger.account("p1")).balance == 0  # type: ignore[union-attr]
    assert await chip_adds.held("p1") == 700
    assert await conserved(stores) == 1_000


async def test_chips_added_to_a_seat_count_against_a_top_up(stores: Stores) -> None:
    """Chips added at a seat are the player's, as its buy-in is: a top-up counts them (parking
    chips at a table does not qualify), until the seat's chips come home."""
    await seated(stores)  # 700 left, 300 at the table
    await chip_adds_of(stores).reserve(add(1))  # 500 left, 500 at the table
    with pytest.raises(TopUpRefused):  # 1,000 in all: not under 1,000
        await stores.ledger.top_up("p1", 100, 1_000, timedelta(0), key("top-up/1"), T0)
    moved = await stores.ledger.top_up("p1", 100, 1_001, timedelta(0), key("top-up/2"), T0)
    assert moved.balance_after == 600


async def test_the_recovery_queue_of_chip_adds_is_the_buy_ins(stores: Stores) -> None:
    """As a buy-in's (``BuyIns.due`` ...): RESERVED and not stuck, longest due first; a claim
    once per due time moves the saga back; a failed attempt records its error, the last one
    marks it stuck (out of the queue, its chips held) until requeued in its first place;
    finished sagas are touched by none of it."""
    await seated(stores)
    chip_adds = chip_adds_of(stores)
    for n in (1, 2, 3):
        await chip_adds.reserve(add(n, 100))
    await chip_adds.added("c-2", 400)  # finished: not due
    now = T0 + timedelta(minutes=1)
    assert [s.saga_id for s in await chip_adds.due(now, 10)] == ["c-1", "c-3"]
    assert [s.saga_id for s in await chip_adds.due(T0 + timedelta(seconds=11), 10)] == ["c-1"]
    claimed = await chip_adds.attempting("c-1", now, now + timedelta(seconds=2))
    assert claimed is not None and claimed.attempts == 1
    assert (claimed.last_attempt_at, claimed.next_attempt_at) == (now, now + timedelta(seconds=2))
    assert await chip_adds.attempting("c-1", now, now + timedelta(seconds=2)) is None
    assert await chip_adds.attempting("c-2", now, now) is None  # ADDED
    later = now + timedelta(seconds=5)
    assert [s.saga_id for s in await chip_adds.due(later, 10)] == ["c-3", "c-1"]
    failed = await chip_adds.attempt_failed("c-1", "UNAVAILABLE: " + "x" * 900, None)
    assert failed.stuck_at is None and len(failed.last_error or "") == 500
    stuck = await chip_adds.attempt_failed("c-1", "DEADLINE_EXCEEDED", later)
    assert (stuck.state, stuck.stuck_at, stuck.attempts) == (ChipAddState.RESERVED, later, 1)
    assert [s.saga_id for s in await chip_adds.due(later, 10)] == ["c-3"]
    assert await chip_adds.attempting("c-1", later, later) is None
    assert [s.saga_id for s in await chip_adds.stuck(10)] == ["c-1"]
    assert await chip_adds.count_stuck() == 1
    assert await chip_adds.count_by_state() == {"reserved": 2}  # the finished: not counted
    assert await chip_adds.held("p1") == 200  # stuck: still held for it
    back = await chip_adds.requeue("c-1")
    assert (back.attempts, back.stuck_at, back.last_error) == (0, None, None)
    assert [s.saga_id for s in await chip_adds.due(later, 10)] == ["c-1", "c-3"]
    for done in (
        await chip_adds.attempt_failed("c-2", "late", later),
        await chip_adds.requeue("c-2"),
    ):
        assert (done.state, done.stuck_at, done.last_error) == (ChipAddState.ADDED, None, None)
    assert [s.saga_id for s in await chip_adds.reserved_at("l-0")] == ["c-1", "c-3"]
    assert await chip_adds.reserved_at("l-1") == []
    assert await conserved(stores) == 600
