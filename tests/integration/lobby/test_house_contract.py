"""Contract of the house account (the ``Ledger``'s house methods, ``Closes.settle_ai`` and
``Lounges.mark_failed``; PostgreSQL and the fake): an AI seat is funded once, settled back
once, refunded whole when its lounge fails, and the audit (created == balances + at tables
+ house) holds at every step, with the AI's result in the house's."""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import asyncpg
import pytest

from felt.storage.idempotency import RequestReused
from felt.storage.migrations import migrate
from services.lobby.db_cli import MIGRATIONS
from services.lobby.ports import LoungeSeat, LoungeState, NewLounge, NewPlayer, SeatGrant
from services.lobby.ports.ledger import (
    Audit,
    HouseKind,
    RefillState,
    Winner,
    house_return_key,
    house_seat_key,
)
from services.lobby.postgres import PgCloses, PgLedger

from .conftest import Stores, pg_stores
from .test_buy_ins_contract import T0, buy_in, key


async def setup(stores: Stores, *, ai: int = 1, stack: int = 1_000) -> None:
    """Ann with 1,000 chips, and lounge l-0 (CREATING) with ``ai`` AI seats of ``stack``."""
    await stores.players.create(NewPlayer("p1", "Ann", "ann", None, key("p1"), T0))
    await stores.ledger.open("p1", 1_000, key("grant"), T0)
    await stores.lounges.create(
        NewLounge(
            "l-0",
            "p1",
            "L0",
            1,
            b"\x08\x01",
            10,
            6,
            200,
            1000,
            None,
            tuple(
                LoungeSeat(5 - s, f"ai-l-0-{5 - s}", f"Bot {6 - s}", 1, stack) for s in range(ai)
            ),
            key("lounge/0"),
            T0,
        ),
        2,
    )


async def audited(stores: Stores) -> Audit:
    audit = await stores.ledger.audit()
    assert audit.created == audit.balances + audit.on_tables + audit.house, audit
    assert audit.holds, audit
    return audit


async def test_an_ai_seat_is_funded_once_and_the_audit_holds(stores: Stores) -> None:
    await setup(stores)
    assert (await audited(stores)).house == 0
    first = await stores.ledger.fund_ai_seat("l-0", 5, 1_000, T0)
    assert (first.kind, first.amount, first.balance_after) == (HouseKind.HOUSE_SEAT, -1_000, -1_000)
    assert (first.lounge_id, first.seat) == ("l-0", 5)
    assert await stores.ledger.fund_ai_seat("l-0", 5, 1_000, T0) == first  # a retry
    with pytest.raises(RequestReused):
        await stores.ledger.fund_ai_seat("l-0", 5, 999, T0)  # another amount, same seat
    with pytest.raises(ValueError):
        await stores.ledger.fund_ai_seat("l-0", 4, 0, T0)
    assert await stores.ledger.house() == -1_000  # the house may go below zero
    audit = await audited(stores)
    assert (audit.created, audit.balances, audit.on_tables, audit.house) == (
        1_000,
        1_000,
        1_000,
        -1_000,
    )
    assert house_seat_key("l-0", 5, 1).key != house_return_key("l-0", 5, 1).key


async def test_concurrent_fundings_of_one_seat_move_the_chips_once(stores: Stores) -> None:
    await setup(stores)
    moved = await asyncio.gather(
        *(stores.ledger.fund_ai_seat("l-0", 5, 1_000, T0) for _ in range(8))
    )
    assert len({m.entry_id for m in moved}) == 1
    assert await stores.ledger.house() == -1_000


async def test_a_failed_lounge_gives_the_house_its_chips_back_and_frees_the_slot(
    stores: Stores,
) -> None:
    await setup(stores, ai=2)
    await stores.ledger.fund_ai_seat("l-0", 5, 1_000, T0)  # seat 4 was never funded
    assert await stores.ledger.refund_ai_seats("l-0", T0) == 1_000
    assert await stores.ledger.refund_ai_seats("l-0", T0) == 0  # once
    assert await stores.ledger.house() == 0
    failed = await stores.lounges.mark_failed("l-0", "BAD_CONFIG: no")
    assert (failed.state, failed.seats, failed.failure) == (
        LoungeState.FAILED,
        (),
        "BAD_CONFIG: no",
    )
    assert (await stores.lounges.get("l-0")) == failed
    assert await stores.lounges.creating(10) == []
    assert (await stores.lounges.mark_failed("l-0", "again")).failure == "BAD_CONFIG: no"
    with pytest.raises(KeyError):
        await stores.lounges.mark_failed("l-9", "none")
    audit = await audited(stores)
    assert (audit.on_tables, audit.house, audit.stranded) == (0, 0, 0)
    for n in (1, 2):  # a failed lounge does not count against the owner's 2
        await stores.lounges.create(
            NewLounge(
                f"l-{n}",
                "p1",
                f"L{n}",
                1,
                b"\x08\x01",
                10,
                6,
                200,
                1000,
                None,
                (),
                key(f"lounge/{n}"),
                T0,
            ),
            2,
        )


async def test_an_open_lounge_is_never_failed(stores: Stores) -> None:
    await setup(stores)
    await stores.lounges.mark_open("l-0")
    assert (await stores.lounges.mark_failed("l-0", "late")).state is LoungeState.OPEN


async def test_a_played_lounge_settles_the_ai_to_the_house(stores: Stores) -> None:
    """Ann buys in 300 against an AI of 1,000 and wins 250 from it: the house is -250."""
    await setup(stores)
    await stores.ledger.fund_ai_seat("l-0", 5, 1_000, T0)
    await stores.lounges.mark_open("l-0")
    saga = (await stores.buy_ins.reserve(buy_in(1))).buy_in
    await stores.buy_ins.seated(saga.saga_id, SeatGrant(0, "token-1", None, 7))
    assert (await audited(stores)).on_tables == 1_300
    # a seat still holding its chips is no result yet (parked chips would hide a win)
    assert await stores.ledger.house_won("p1", T0) == 0
    await stores.closes.mark_closing("l-0")
    await stores.closes.ai_seen_seated("l-0", 5, 40)
    await stores.closes.ai_seen_seated("l-0", 5, 50)  # the first is kept
    await stores.closes.ai_seen_seated("l-0", 0, 40)  # not an AI seat: nothing
    seats = {s.seat: s for s in (await stores.lounges.get("l-0")).seats}  # type: ignore[union-attr]
    assert (seats[5].leave_sequence, seats[0].leave_sequence) == (40, None)
    await stores.closes.seen_seated(saga.saga_id, 40)
    await stores.closes.settle(saga.saga_id, 550, T0 + timedelta(minutes=5))
    assert (await audited(stores)).on_tables == 750
    assert await stores.closes.settle_ai("l-0", 5, 750, T0 + timedelta(minutes=5))
    assert not await stores.closes.settle_ai("l-0", 5, 999, T0)  # once
    lounge = await stores.lounges.get("l-0")
    assert lounge is not None and lounge.seats == ()
    closed = await stores.closes.mark_closed("l-0")
    assert closed.state is LoungeState.CLOSED
    audit = await audited(stores)
    assert (audit.balances, audit.on_tables, audit.house) == (1_250, 0, -250)
    assert await stores.ledger.house_winners(None, 10) == [Winner("p1", 250)]
    assert await stores.ledger.house_winners(T0 + timedelta(minutes=1), 10) == [
        Winner("p1", 550)
    ]  # the buy-in was before: only the chips brought home count in that window
    assert await stores.ledger.house_winners(T0 + timedelta(hours=1), 10) == []
    assert await stores.ledger.house_won("p1", T0) == 250
    assert await stores.ledger.house_won("p1", T0 + timedelta(minutes=1)) == 550
    assert await stores.ledger.house_won("p1", T0 + timedelta(hours=1)) == 0
    assert await stores.ledger.house_won("nobody", T0) == 0


async def test_an_ai_that_went_broke_settles_with_nothing(stores: Stores) -> None:
    await setup(stores)
    await stores.ledger.fund_ai_seat("l-0", 5, 1_000, T0)
    await stores.lounges.mark_open("l-0")
    await stores.closes.mark_closing("l-0")
    assert await stores.closes.settle_ai("l-0", 5, 0, T0)
    assert await stores.ledger.house() == -1_000
    audit = await stores.ledger.audit()
    # Settled with nothing: the house's 1,000 stay counted at the lounge's table until a
    # player's seat there brings them home (here none did: the audit shows them at tables).
    assert audit.created == audit.balances + audit.on_tables + audit.house
    assert audit.on_tables == 1_000 and audit.overpaid == 0


async def test_a_busted_ai_seat_is_refilled_one_refill_at_a_time(stores: Stores) -> None:
    """``fund_ai_refill``: the house pays a refill with its saga FUNDED; asked again while it
    is FUNDED, the same refill; once ADDED or RETURNED, the next one (n + 1). The audit
    counts a FUNDED refill's chips at the lounge (on their way to its seat)."""
    await setup(stores, ai=2)
    await stores.ledger.fund_ai_seat("l-0", 5, 1_000, T0)
    await stores.ledger.fund_ai_seat("l-0", 4, 1_000, T0)
    assert await stores.ledger.fund_ai_refill("l-0", 5, 1_000, T0, T0, 10) is None  # CREATING
    await stores.lounges.mark_open("l-0")
    assert await stores.ledger.fund_ai_refill("l-0", 0, 1_000, T0, T0, 10) is None  # no AI seat
    assert await stores.ledger.fund_ai_refill("l-9", 5, 1_000, T0, T0, 10) is None  # no lounge
    first = await stores.ledger.fund_ai_refill("l-0", 5, 1_000, T0, T0, 10)
    assert first is not None
    assert (first.lounge_id, first.seat, first.n, first.amount, first.state) == (
        "l-0",
        5,
        1,
        1_000,
        RefillState.FUNDED,
    )
    assert (
        await stores.ledger.fund_ai_refill("l-0", 5, 1_000, T0 + timedelta(seconds=1), T0, 10)
        == first
    )
    other = await stores.ledger.fund_ai_refill("l-0", 4, 1_000, T0 + timedelta(seconds=2), T0, 10)
    assert other is not None and (other.seat, other.n) == (4, 1)
    assert await stores.ledger.house() == -4_000
    assert (await audited(stores)).on_tables == 4_000
    assert await stores.ledger.funded_ai_refills("l-0", 10) == [first, other]
    assert await stores.ledger.funded_ai_refills("l-0", 1) == [first]
    assert await stores.ledger.funded_ai_refills("l-9", 10) == []
    added = await stores.ledger.ai_refill_added("l-0", 5, 1)
    assert added == replace(first, state=RefillState.ADDED)
    assert await stores.ledger.ai_refill_added("l-0", 5, 1) == added  # a second lobby's
    with pytest.raises(ValueError):
        await stores.ledger.return_ai_refill("l-0", 5, 1, T0)  # on the seat: never back
    returned = await stores.ledger.return_ai_refill("l-0", 4, 1, T0)
    assert returned.state is RefillState.RETURNED
    assert await stores.ledger.return_ai_refill("l-0", 4, 1, T0) == returned  # once
    with pytest.raises(ValueError):
        await stores.ledger.ai_refill_added("l-0", 4, 1)
    with pytest.raises(KeyError):
        await stores.ledger.ai_refill_added("l-0", 4, 2)
    assert await stores.ledger.house() == -3_000  # seat 4's refill came back
    assert await stores.ledger.funded_ai_refills("l-0", 10) == []
    second = await stores.ledger.fund_ai_refill("l-0", 5, 1_000, T0 + timedelta(seconds=3), T0, 10)
    assert second is not None and (second.n, second.state) == (2, RefillState.FUNDED)
    assert (await audited(stores)).on_tables == 4_000
    await stores.closes.mark_closing("l-0")
    assert await stores.ledger.fund_ai_refill("l-0", 4, 1_000, T0, T0, 10) is None  # past OPEN


async def test_refills_of_a_seat_are_bounded_per_day(stores: Stores) -> None:
    """At most ``most`` refills of a seat ADDED since ``since``: the house's bound (a RETURNED
    one does not count; a new day, ``since`` later, allows more)."""
    await setup(stores)
    await stores.ledger.fund_ai_seat("l-0", 5, 1_000, T0)
    await stores.lounges.mark_open("l-0")
    day = T0 + timedelta(hours=1)
    first = await stores.ledger.fund_ai_refill("l-0", 5, 1_000, day, day, 2)
    assert first is not None
    await stores.ledger.return_ai_refill("l-0", 5, first.n, day)
    for n in (2, 3):
        refill = await stores.ledger.fund_ai_refill("l-0", 5, 1_000, day, day, 2)
        assert refill is not None and refill.n == n
        await stores.ledger.ai_refill_added("l-0", 5, n)
    assert await stores.ledger.fund_ai_refill("l-0", 5, 1_000, day, day, 2) is None
    assert await stores.ledger.fund_ai_refill("l-0", 5, 1_000, day, day, 0) is None
    tomorrow = day + timedelta(days=1)
    later = await stores.ledger.fund_ai_refill("l-0", 5, 1_000, tomorrow, tomorrow, 2)
    assert later is not None and later.n == 4
    assert await stores.ledger.house() == -4_000  # the seat, two refills on it, one waiting
    await audited(stores)


async def test_concurrent_refills_of_one_seat_move_the_chips_once(stores: Stores) -> None:
    await setup(stores)
    await stores.ledger.fund_ai_seat("l-0", 5, 1_000, T0)
    await stores.lounges.mark_open("l-0")
    refills = await asyncio.gather(
        *(stores.ledger.fund_ai_refill("l-0", 5, 1_000, T0, T0, 10) for _ in range(8))
    )
    assert {r.n if r else None for r in refills} == {1}
    assert await stores.ledger.house() == -2_000
    await audited(stores)


async def test_an_unfunded_ai_seat_settles_without_crediting_the_house(stores: Stores) -> None:
    """A seat the house never funded (a lounge from before the house) brings nothing back:
    the house never gets chips that did not come from it."""
    await setup(stores)
    await stores.lounges.mark_open("l-0")
    await stores.closes.mark_closing("l-0")
    assert await stores.closes.settle_ai("l-0", 5, 1_000, T0)
    assert await stores.ledger.house() == 0
    await audited(stores)


async def test_the_migration_funds_the_ai_seats_of_lounges_not_closed(
    fresh_database: str, tmp_path: Path
) -> None:
    """0010 on a database with lounges: an open lounge's AI seat is funded from the house with
    the key and fingerprint the lobby itself would write (its funding is found, not repeated,
    and its close credits the house); a lounge closed before is left out of the audit."""
    for m in sorted(MIGRATIONS.glob("*.sql")):
        if m.name < "0010":
            shutil.copy(m, tmp_path / m.name)
    await migrate(fresh_database, tmp_path)
    conn = await asyncpg.connect(fresh_database)
    try:
        await conn.execute(
            "INSERT INTO players (player_id, display_name, name_key, request_key, fingerprint, "
            "created_at) VALUES ('p1', 'Ann', 'ann', 'k-p1', '\\x00', $1)",
            T0,
        )
        for lid, state in (("l-open", "open"), ("l-old", "closed")):
            await conn.execute(
                "INSERT INTO lounges (lounge_id, owner_id, name, variant, config, stake, "
                "seat_count, seats_taken, min_buy_in, max_buy_in, private, state, request_key, "
                "fingerprint, created_at) VALUES ($1, 'p1', 'L', 1, '\\x0801', 10, 6, 1, 200, "
                "1000, false, $2, $3, '\\x00', $4)",
                lid,
                state,
                f"k-{lid}",
                T0,
            )
        await conn.execute(
            "INSERT INTO lounge_seats (lounge_id, seat, player_id, display_name, ai_level, stack)"
            " VALUES ('l-open', 3, 'ai-l-open-3', 'Bot 4', 1, 1000)"
        )
    finally:
        await conn.close()
    shutil.copy(MIGRATIONS / "0010_house.sql", tmp_path / "0010_house.sql")
    assert [m.version for m in await migrate(fresh_database, tmp_path)] == [10]
    for m in sorted(MIGRATIONS.glob("*.sql")):  # the rest: the adapters below are today's
        shutil.copy(m, tmp_path / m.name)
    await migrate(fresh_database, tmp_path)
    pool = await asyncpg.create_pool(fresh_database, min_size=1, max_size=4)
    try:
        ledger, closes = PgLedger(pool), PgCloses(pool)
        assert await ledger.house() == -1_000
        funded = await ledger.fund_ai_seat("l-open", 3, 1_000, T0)  # found, not repeated
        assert (funded.amount, funded.balance_after) == (-1_000, -1_000)
        assert await ledger.house() == -1_000
        assert (await ledger.audit()).holds
        await closes.mark_closing("l-open")
        assert await closes.settle_ai("l-open", 3, 1_200, T0)
        assert await ledger.house() == 200
        audited = await pool.fetch("SELECT lounge_id, audited FROM lounges ORDER BY lounge_id")
        assert [(r["lounge_id"], r["audited"]) for r in audited] == [
            ("l-old", False),
            ("l-open", True),
        ]
    finally:
        await pool.close()


async def test_a_refill_being_funded_holds_off_the_close(lobby_pool: asyncpg.Pool) -> None:
    """PostgreSQL: a funding shares its lounge's row, so the lounge cannot turn CLOSING until
    the refill is committed; the close then sees it FUNDED (and waits for it). Without the
    shared lock, a close that began meanwhile could settle the seat and end CLOSED with the
    refill's chips off every book (found by review, with a delayed funding)."""
    stores = pg_stores(lobby_pool)
    ledger, lounges, closes = stores.ledger, stores.lounges, stores.closes
    await setup(stores)
    await ledger.fund_ai_seat("l-0", 5, 1_000, T0)
    await lounges.mark_open("l-0")
    async with lobby_pool.acquire() as holder, holder.transaction():
        # Another house movement in flight holds the house's row: the funding waits on it
        # while it holds the seat's row and shares the lounge's.
        await holder.execute("SELECT balance FROM house_account FOR UPDATE")
        funding = asyncio.create_task(ledger.fund_ai_refill("l-0", 5, 1_000, T0, T0, 10))
        await asyncio.sleep(0.3)
        closing = asyncio.create_task(closes.mark_closing("l-0"))
        await asyncio.sleep(0.3)
        assert not funding.done() and not closing.done()  # the close waits for the funding
    refill = await funding
    assert refill is not None and refill.state is RefillState.FUNDED
    assert (await closing).state is LoungeState.CLOSING
    assert await ledger.funded_ai_refills("l-0", 10) == [refill]  # the close sees it
    await audited(stores)
