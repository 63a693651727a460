"""Contract of the ``Ledger`` port (PostgreSQL and the fake): movements, idempotency, no
negative balance, no double spend, and the conservation of chips."""

from __future__ import annotations

import asyncio
import hashlib
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from felt.storage.idempotency import RequestKey, RequestReused
from services.lobby.ports import InsufficientChips, Kind, NewPlayer, NoAccount, TopUpRefused

T0 = datetime(2026, 1, 1, tzinfo=UTC)
DAY = timedelta(days=1)
HOUR = timedelta(hours=1)


def key(name: str, content: str = "") -> RequestKey:
    return RequestKey(f"c/{name}", hashlib.sha256(content.encode()).digest()[:16])


async def player(stores: Any, pid: str, grant: int = 1000) -> None:
    new = NewPlayer(pid, pid, pid.casefold(), None, key(f"new/{pid}"), T0)
    await stores.players.create(new)
    await stores.ledger.open(pid, grant, key(f"grant/{pid}"), T0)


async def assert_conserved(stores: Any) -> None:
    t = await stores.ledger.totals()
    assert t.balances + t.on_tables == t.created
    assert t.ledger_sum == t.balances


async def test_open_move_and_retry(stores: Any) -> None:
    await player(stores, "p1")
    again = await stores.ledger.open("p1", 1000, key("grant/p1"), T0)  # the retry
    assert (again.kind, again.amount, again.balance_after) == (Kind.GRANT, 1000, 1000)
    account = await stores.ledger.account("p1")
    assert account is not None and account.balance == 1000
    buy = await stores.ledger.move("p1", Kind.BUY_IN, 300, key("b1"), T0, "t1")
    assert (buy.kind, buy.amount, buy.balance_after, buy.table_id) == (Kind.BUY_IN, -300, 700, "t1")
    assert await stores.ledger.move("p1", Kind.BUY_IN, 300, key("b1"), T0, "t1") == buy
    with pytest.raises(RequestReused):
        await stores.ledger.move("p1", Kind.BUY_IN, 300, key("b1", "other"), T0, "t1")
    back = await stores.ledger.move("p1", Kind.CASH_OUT, 450, key("c1"), T0, "t1")
    assert (back.amount, back.balance_after) == (450, 1150)
    closed = await stores.ledger.move("p1", Kind.TABLE_CLOSED, 5, key("x1"), T0, "t1")
    assert closed.balance_after == 1155
    t = await stores.ledger.totals()
    assert (t.created, t.balances, t.on_tables) == (1000, 1155, -155)
    await assert_conserved(stores)


async def test_never_below_zero(stores: Any) -> None:
    await player(stores, "p1", grant=100)
    with pytest.raises(InsufficientChips) as refused:
        await stores.ledger.move("p1", Kind.BUY_IN, 101, key("b1"), T0, "t1")
    assert (refused.value.balance, refused.value.wanted) == (100, 101)
    assert (await stores.ledger.move("p1", Kind.BUY_IN, 100, key("b2"), T0)).balance_after == 0
    with pytest.raises(NoAccount):
        await stores.ledger.move("nobody", Kind.BUY_IN, 1, key("b3"), T0)
    with pytest.raises(ValueError):
        await stores.ledger.move("p1", Kind.CASH_OUT, 0, key("b4"), T0)
    await assert_conserved(stores)


async def test_fifty_concurrent_buy_ins_never_double_spend(stores: Any) -> None:
    await player(stores, "p1", grant=1000)
    results = await asyncio.gather(
        *(stores.ledger.move("p1", Kind.BUY_IN, 30, key(f"b{i}"), T0, f"t{i}") for i in range(50)),
        return_exceptions=True,
    )
    done = [r for r in results if not isinstance(r, BaseException)]
    refused = [r for r in results if isinstance(r, BaseException)]
    assert len(done) == 33 and all(isinstance(r, InsufficientChips) for r in refused)
    account = await stores.ledger.account("p1")
    assert account is not None and account.balance == 10
    assert sorted(m.balance_after for m in done) == list(range(10, 1000, 30))
    await assert_conserved(stores)


async def test_concurrent_retries_of_one_movement_move_once(stores: Any) -> None:
    await player(stores, "p1", grant=1000)
    results = await asyncio.gather(
        *(stores.ledger.move("p1", Kind.BUY_IN, 100, key("same"), T0, "t1") for _ in range(10))
    )
    assert len({r.entry_id for r in results}) == 1
    account = await stores.ledger.account("p1")
    assert account is not None and account.balance == 900


async def test_top_up_when_low_with_a_cool_down(stores: Any) -> None:
    await player(stores, "p1", grant=1000)
    with pytest.raises(TopUpRefused) as refused:
        await stores.ledger.top_up("p1", 500, 100, DAY, key("u1"), T0)
    assert refused.value.reason == "NOT_LOW"
    await stores.ledger.move("p1", Kind.BUY_IN, 950, key("b1"), T0, "t1")
    up = await stores.ledger.top_up("p1", 500, 100, DAY, key("u2"), T0)
    assert (up.kind, up.amount, up.balance_after) == (Kind.TOP_UP, 500, 550)
    assert await stores.ledger.top_up("p1", 500, 100, DAY, key("u2"), T0) == up  # the retry
    await stores.ledger.move("p1", Kind.BUY_IN, 550, key("b2"), T0, "t1")
    with pytest.raises(TopUpRefused) as refused:
        await stores.ledger.top_up("p1", 500, 100, DAY, key("u3"), T0 + DAY / 2)
    assert refused.value.reason == "COOLING_DOWN" and refused.value.next_at == T0 + DAY
    later = await stores.ledger.top_up("p1", 500, 100, DAY, key("u4"), T0 + DAY)
    assert later.balance_after == 500
    account = await stores.ledger.account("p1")
    assert account is not None and account.last_top_up_at == T0 + DAY
    t = await stores.ledger.totals()
    assert (t.created, t.on_tables) == (2000, 1500)
    await assert_conserved(stores)


async def test_entries_newest_first_in_pages(stores: Any) -> None:
    await player(stores, "p1", grant=1000)
    await player(stores, "p2", grant=1000)
    for i in range(5):
        await stores.ledger.move("p1", Kind.BUY_IN, 10 + i, key(f"b{i}"), T0, "t1")
    first = await stores.ledger.entries("p1", None, 4)
    assert [m.amount for m in first] == [-14, -13, -12, -11]
    rest = await stores.ledger.entries("p1", first[-1].entry_id, 4)
    assert [m.amount for m in rest] == [-10, 1000]
    assert all(m.player_id == "p1" for m in first + rest)
    assert await stores.ledger.entries("p1", rest[-1].entry_id, 4) == []


async def test_conservation_after_every_operation_of_a_random_sequence(stores: Any) -> None:
    """Sign-ups, buy-ins, cash-outs, closed tables, top-ups, retries and refusals in a random
    order (fixed seed): after each, balances + chips on tables == chips created, and every
    balance is what a model of the same sequence says."""
    rng = random.Random(20260301)
    balances: dict[str, int] = {}
    seated: dict[tuple[str, str], int] = {}  # (player, table) -> chips there
    done: list[tuple[str, Kind, int, RequestKey, str | None]] = []
    at = T0
    for step in range(150):
        at += timedelta(minutes=rng.randint(0, 40))
        choice = rng.random()
        if choice < 0.15 or not balances:
            pid = f"p{len(balances)}"
            await player(stores, pid, grant=rng.randint(100, 2000))
            balances[pid] = (await stores.ledger.account(pid)).balance
        elif choice < 0.45:
            pid, table = rng.choice(sorted(balances)), f"t{rng.randint(1, 3)}"
            amount = rng.randint(1, 800)
            request = key(f"s{step}", f"buy/{amount}")
            if amount > balances[pid]:
                with pytest.raises(InsufficientChips):
                    await stores.ledger.move(pid, Kind.BUY_IN, amount, request, at, table)
            else:
                await stores.ledger.move(pid, Kind.BUY_IN, amount, request, at, table)
                balances[pid] -= amount
                seated[pid, table] = seated.get((pid, table), 0) + amount
                done.append((pid, Kind.BUY_IN, amount, request, table))
        elif choice < 0.7 and seated:
            (pid, table), chips = rng.choice(sorted(seated.items()))
            kind = rng.choice([Kind.CASH_OUT, Kind.TABLE_CLOSED])
            request = key(f"s{step}", f"out/{chips}")
            await stores.ledger.move(pid, kind, chips, request, at, table)
            balances[pid] += chips
            del seated[pid, table]
            done.append((pid, kind, chips, request, table))
        elif choice < 0.85:
            pid = rng.choice(sorted(balances))
            try:
                up = await stores.ledger.top_up(pid, 500, 200, HOUR, key(f"s{step}"), at)
                balances[pid] += up.amount
            except TopUpRefused as refused:
                assert refused.reason in ("NOT_LOW", "COOLING_DOWN")
        elif done:  # a retry of an earlier movement: it moves nothing
            pid, kind, amount, request, where = rng.choice(done)
            await stores.ledger.move(pid, kind, amount, request, at, where)
        t = await stores.ledger.totals()
        assert t.balances + t.on_tables == t.created
        assert t.ledger_sum == t.balances
        assert t.on_tables == sum(seated.values())
        for pid, balance in balances.items():
            account = await stores.ledger.account(pid)
            assert account is not None and account.balance == balance
