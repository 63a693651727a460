"""Contract of the ``Lounges`` port (PostgreSQL and the fake): creation with AI seats, retries,
opening, listing with filters and keyset pages; and the listing index on 10,000 lounges."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from felt.storage.idempotency import RequestKey, RequestReused
from services.lobby.ports import (
    LoungeFilter,
    LoungeSeat,
    LoungeState,
    NewBuyIn,
    NewLounge,
    NewPlayer,
    SeatGrant,
)
from services.lobby.postgres import PgLounges

from .conftest import empty_pool

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def key(name: str, content: str = "") -> RequestKey:
    return RequestKey(f"c/{name}", hashlib.sha256(content.encode()).digest()[:16])


def new_lounge(
    i: int,
    *,
    variant: int = 1,
    stake: int = 10,
    seats: int = 6,
    ai: int = 0,
    invite: str | None = None,
    content: str = "",
) -> NewLounge:
    lid = f"l-{i}"
    return NewLounge(
        lid,
        "owner",
        f"Lounge {i}",
        variant,
        b"\x08\x01",
        stake,
        seats,
        20 * stake,
        100 * stake,
        invite,
        tuple(LoungeSeat(s, f"ai-{lid}-{s}", f"Bot {s + 1}", 2, 100 * stake) for s in range(ai)),
        key(f"lounge/{i}", content),
        T0 + timedelta(seconds=i),
    )


async def owner(stores: Any) -> None:
    await stores.players.create(NewPlayer("owner", "Owner", "owner", None, key("owner"), T0))


async def opened(stores: Any, new: NewLounge) -> None:
    await stores.lounges.create(new)
    await stores.lounges.mark_open(new.lounge_id)


async def test_create_retry_and_open(stores: Any) -> None:
    await owner(stores)
    new = new_lounge(1, ai=2, invite="secret-code")
    lounge = await stores.lounges.create(new)
    assert lounge.state is LoungeState.CREATING and lounge.private
    assert [s.seat for s in lounge.seats] == [0, 1] and lounge.free_seats == 4
    assert lounge.config == b"\x08\x01" and lounge.invite_code == "secret-code"
    assert await stores.lounges.create(new) == lounge  # the retry
    with pytest.raises(RequestReused):
        await stores.lounges.create(new_lounge(1, content="other"))
    assert [x.lounge_id for x in await stores.lounges.creating(10)] == ["l-1"]
    opened_lounge = await stores.lounges.mark_open("l-1")
    assert opened_lounge.state is LoungeState.OPEN
    assert await stores.lounges.get("l-1") == opened_lounge
    assert await stores.lounges.creating(10) == []
    assert await stores.lounges.get("l-2") is None
    with pytest.raises(KeyError):
        await stores.lounges.mark_open("l-2")


async def test_listing_filters_and_pages(stores: Any) -> None:
    await owner(stores)
    await opened(stores, new_lounge(1, variant=1, stake=10, seats=2, ai=1))
    await opened(stores, new_lounge(2, variant=2, stake=20, seats=6))
    await opened(stores, new_lounge(3, variant=1, stake=50, seats=9, ai=3))
    await opened(stores, new_lounge(4, variant=1, stake=10, invite="private-one"))
    await stores.lounges.create(new_lounge(5))  # still creating: never listed

    async def ids(where: LoungeFilter, before: int | None = None, limit: int = 10) -> list[str]:
        return [x.lounge_id for x in await stores.lounges.listing(where, before, limit)]

    assert await ids(LoungeFilter()) == ["l-3", "l-2", "l-1"]
    assert await ids(LoungeFilter(variant=1)) == ["l-3", "l-1"]
    assert await ids(LoungeFilter(variant=2)) == ["l-2"]
    assert await ids(LoungeFilter(min_stake=20)) == ["l-3", "l-2"]
    assert await ids(LoungeFilter(max_stake=20)) == ["l-2", "l-1"]
    assert await ids(LoungeFilter(min_stake=15, max_stake=30)) == ["l-2"]
    assert await ids(LoungeFilter(min_free_seats=2)) == ["l-3", "l-2"]
    assert await ids(LoungeFilter(min_free_seats=7)) == []
    first = await stores.lounges.listing(LoungeFilter(), None, 2)
    assert [x.lounge_id for x in first] == ["l-3", "l-2"]
    assert await ids(LoungeFilter(), first[-1].listing_id, 2) == ["l-1"]
    three = (await stores.lounges.get("l-3")).seats
    assert [(s.seat, s.player_id, s.ai_level) for s in three] == [
        (0, "ai-l-3-0", 2),
        (1, "ai-l-3-1", 2),
        (2, "ai-l-3-2", 2),
    ]


class Explain:
    """A pool whose ``fetch`` keeps the plan of its statement instead of running it."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool, self.plans = pool, list[str]()

    async def fetch(self, sql: str, *args: Any) -> list[Any]:
        rows = await self.pool.fetch(f"EXPLAIN (FORMAT JSON) {sql}", *args)
        self.plans.append(rows[0][0])
        return []


async def test_listing_uses_its_index_on_ten_thousand_lounges(lobby_dsn: str) -> None:
    """10,000 open lounges: every listing (any filter, any page) walks an index in order and
    stops at the page size: no scan of the table, no sort of it."""
    pool = await empty_pool(lobby_dsn)
    try:
        await pool.execute(
            "INSERT INTO players (player_id, display_name, name_key, request_key, fingerprint, "
            "created_at) VALUES ('owner', 'Owner', 'owner', 'k', '\\x00', now())"
        )
        await pool.execute(
            "INSERT INTO lounges (lounge_id, owner_id, name, variant, config, stake, seat_count, "
            "seats_taken, min_buy_in, max_buy_in, private, invite_code, state, request_key, "
            "fingerprint, created_at) "
            "SELECT 'l-' || i, 'owner', 'L' || i, 1 + i % 2, '\\x08', 10 * (1 + i % 7), "
            "2 + i % 8, i % 2, 200, 1000, i % 50 = 0, CASE WHEN i % 50 = 0 THEN 'c' END, "
            "'open', 'r' || i, '\\x00', now() FROM generate_series(1, 10000) AS i"
        )
        await pool.execute("ANALYZE lounges")
        lounges = PgLounges(pool)
        page = await lounges.listing(LoungeFilter(), None, 51)
        assert len(page) == 51 and page[0].listing_id == 10000 - 1  # 10000 is private
        plans = []
        for where, before in (
            (LoungeFilter(), None),
            (LoungeFilter(), 5000),
            (LoungeFilter(variant=2), None),
            (LoungeFilter(variant=1, min_stake=20, max_stake=50, min_free_seats=3), 7000),
        ):
            explained = PgLounges(Explain(pool))  # type: ignore[arg-type]
            await explained.listing(where, before, 51)
            plans.append(explained.pool.plans[0])  # type: ignore[attr-defined]
        for plan in plans:
            assert "lounges_listing" in plan, plan
            assert "Seq Scan" not in plan and '"Sort"' not in plan, plan
    finally:
        await pool.close()


async def test_lounge_needs_its_owner(lobby_pool: asyncpg.Pool) -> None:
    with pytest.raises(asyncpg.ForeignKeyViolationError):
        await PgLounges(lobby_pool).create(new_lounge(1))


async def test_concurrent_creations_never_pass_the_owner_cap(stores: Any) -> None:
    """The cap is counted with the write: 10 creations at once with room for 3 make 3."""
    import asyncio

    from services.lobby.ports import TooManyLounges

    await owner(stores)
    got = await asyncio.gather(
        *(stores.lounges.create(new_lounge(i), 3) for i in range(10)), return_exceptions=True
    )
    made = [g for g in got if not isinstance(g, BaseException)]
    assert len(made) == 3
    assert all(isinstance(g, TooManyLounges) for g in got if isinstance(g, BaseException))
    # a retry of a lounge made is still answered at the cap
    first = next(i for i, g in enumerate(got) if not isinstance(g, BaseException))
    assert await stores.lounges.create(new_lounge(first), 3) == got[first]
    with pytest.raises(TooManyLounges):
        await stores.lounges.create(new_lounge(99), 3)


async def test_creating_lounges_are_walked_page_by_page(stores: Any) -> None:
    await owner(stores)
    for i in range(1, 6):
        await stores.lounges.create(new_lounge(i))
    await stores.lounges.mark_open("l-2")
    first = await stores.lounges.creating(2)
    assert [x.lounge_id for x in first] == ["l-1", "l-3"]
    second = await stores.lounges.creating(2, (first[-1].created_at, first[-1].lounge_id))
    assert [x.lounge_id for x in second] == ["l-4", "l-5"]
    assert await stores.lounges.creating(2, (second[-1].created_at, second[-1].lounge_id)) == []


async def test_open_lounges_with_a_seat_taken_are_walked_page_by_page(stores: Any) -> None:
    """``occupied``: the busted seats' walk, OPEN lounges with a seat taken only (an AI's or
    a person's), private ones too, by ``listing_id``."""
    await owner(stores)
    await opened(stores, new_lounge(1, ai=2))
    await opened(stores, new_lounge(2))  # nobody seated
    await stores.lounges.create(new_lounge(3, ai=1))  # CREATING
    await opened(stores, new_lounge(4, ai=1, invite="code-4"))  # private
    await opened(stores, new_lounge(5, ai=3))
    await opened(stores, new_lounge(6))  # a person sits here
    await stores.ledger.open("owner", 1_000, key("grant"), T0)
    reserved = NewBuyIn("b-6", "owner", "l-6", None, 200, key("join/6"), T0)
    await stores.buy_ins.reserve(reserved)
    await stores.buy_ins.seated("b-6", SeatGrant(3, "secret", None))
    first = await stores.lounges.occupied(0, 2)
    assert [x.lounge_id for x in first] == ["l-1", "l-4"]
    assert [s.seat for s in first[0].seats] == [0, 1]
    rest = await stores.lounges.occupied(first[-1].listing_id, 2)
    assert [x.lounge_id for x in rest] == ["l-5", "l-6"]
    assert [(s.seat, s.player_id, s.ai_level) for s in rest[1].seats] == [(3, "owner", 0)]
    assert await stores.lounges.occupied(rest[-1].listing_id, 2) == []


async def test_a_lounges_grace_for_a_busted_seat_is_stored(stores: Any) -> None:
    await owner(stores)
    assert (await stores.lounges.create(new_lounge(1))).busted_grace_s == 300  # the default
    never = replace(new_lounge(2), busted_grace_s=0)
    assert (await stores.lounges.create(never)).busted_grace_s == 0
    hour = replace(new_lounge(3), busted_grace_s=3_600)
    await stores.lounges.create(hour)
    found = await stores.lounges.get("l-3")
    assert found is not None and found.busted_grace_s == 3_600
