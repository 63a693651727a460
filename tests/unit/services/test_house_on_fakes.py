"""The house account through ``LoungeApp`` on the in-memory ports: AI seats sit down with
the lounge's rule (not the creator's numbers), funded from the house before the table seats
them; a lounge the table service refuses for good ends FAILED with the house's chips back
and its owner's slot free, also when the lobby crashes half-way through failing it."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from poker.events.v1 import events_pb2 as epb
from services.lobby.house import day_start
from services.lobby.lounges import AI_STACK_STAKES, AiSeat, ai_stack
from services.lobby.memory import MemoryLedger, MemoryTables
from services.lobby.ports import Lounge, LoungeState, SeatGrant, TableRefused
from services.lobby.refusals import Code

from .test_buy_ins_on_fakes import Crash
from .test_buy_ins_on_fakes import World as BuyInWorld
from .test_lobby_app_on_fakes import refused, req
from .test_lounges_on_fakes import World, nlhe


class RefusingTables(MemoryTables):
    """A table service that refuses an AI seat (a rule of its own the lobby does not know)."""

    def __init__(self, refuse_seat: int) -> None:
        super().__init__()
        self.refuse_seat = refuse_seat

    async def seat(
        self,
        table_id: str,
        seat: int | None,
        player_id: str,
        display_name: str,
        stack: int,
        ai_level: int,
        request_id: str,
        *,
        wait_for_big_blind: bool = False,
    ) -> SeatGrant:
        if seat == self.refuse_seat:
            raise TableRefused("BAD_SEAT", "the table service refuses this seat")
        return await super().seat(
            table_id,
            seat,
            player_id,
            display_name,
            stack,
            ai_level,
            request_id,
            wait_for_big_blind=wait_for_big_blind,
        )


def house_world(tables: MemoryTables | None = None) -> World:
    world = World()
    if tables is not None:
        world.tables = tables
        world.app.tables = tables
    ledger = world.lobby.ledger
    assert isinstance(ledger, MemoryLedger)
    ledger.lounges = world.lounges  # the audit reads the lounges' states
    return world


def ledger_of(world: World) -> MemoryLedger:
    assert isinstance(world.lobby.ledger, MemoryLedger)
    return world.lobby.ledger


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (0, 0, 1_000),  # the default range, 20 to 100 stakes: 100 stakes
        (200, 500, 500),  # the range's top is below 100 stakes
        (2_000, 5_000, 2_000),  # its bottom is above
        (10, 10**12, 1_000),  # a creator's huge max_buy_in does not raise it
    ],
)
async def test_the_ai_stack_is_the_lounges_rule(low: int, high: int, expected: int) -> None:
    world = house_world()
    alice = await world.player(1)
    ai = [AiSeat(None, epb.AI_LEVEL_EASY), AiSeat(None, epb.AI_LEVEL_HARD)]
    lounge = await world.app.create(alice, req("h1"), "H", nlhe(), low, high, ai, False)
    assert [s.stack for s in lounge.seats] == [expected, expected]
    assert ai_stack(10, lounge.min_buy_in, lounge.max_buy_in) == expected
    assert [s.stack for s in world.tables.tables[lounge.lounge_id].seats.values()] == [
        expected,
        expected,
    ]
    assert await ledger_of(world).house() == -2 * expected
    audit = await ledger_of(world).audit()
    assert audit.holds and audit.on_tables == 2 * expected


def test_the_ai_stack_never_passes_the_chip_cap() -> None:
    from felt.wire.limits import CHIP_CAP

    assert ai_stack(CHIP_CAP, CHIP_CAP, CHIP_CAP) == CHIP_CAP
    assert ai_stack(CHIP_CAP // 10, CHIP_CAP // 10, CHIP_CAP) == CHIP_CAP
    assert ai_stack(10, 10, CHIP_CAP) == AI_STACK_STAKES * 10


async def test_a_refused_lounge_fails_cleanly_and_frees_its_slot() -> None:
    world = house_world(RefusingTables(refuse_seat=4))
    alice = await world.player(1)
    ai = [AiSeat(1, epb.AI_LEVEL_EASY), AiSeat(4, epb.AI_LEVEL_HARD)]
    answer = await refused(world.app.create(alice, req("f1"), "F", nlhe(), 0, 0, ai, False))
    assert (answer.code, answer.reason) == (Code.FAILED_PRECONDITION, "TABLE_REFUSED")
    assert "failed" in answer.message
    (failed,) = [x for x in world.lounges._lounges.values()]
    assert failed.state is LoungeState.FAILED and failed.seats == ()
    assert failed.failure is not None and failed.failure.startswith("BAD_SEAT")
    assert await world.lounges.creating(10) == []
    made = world.tables.tables[failed.lounge_id]
    assert made.closed and made.seats == {}  # seat 1 sat: its table closed, the AI gone
    assert await ledger_of(world).house() == 0  # seat 1's funding came back
    audit = await ledger_of(world).audit()
    assert audit.holds and (audit.on_tables, audit.stranded) == (0, 0)
    again = await world.app.create(alice, req("f1"), "F", nlhe(), 0, 0, ai, False)
    assert again.state is LoungeState.FAILED  # the retry sees it, moves nothing
    assert await ledger_of(world).house() == 0
    bob = await world.player(2)
    assert (await refused(world.app.get(bob, failed.lounge_id, ""))).reason == "NO_LOUNGE"
    for n in range(world.lobby.app.settings.max_lounges_per_owner):  # the slot is free
        lounge = await world.app.create(alice, req(f"ok{n}"), "Ok", nlhe(), 0, 0, [], False)
        assert lounge.state is LoungeState.OPEN


async def test_a_crash_while_failing_is_finished_by_the_recovery_pass() -> None:
    world = house_world(RefusingTables(refuse_seat=4))
    alice = await world.player(1)
    ai = [AiSeat(1, epb.AI_LEVEL_EASY), AiSeat(4, epb.AI_LEVEL_HARD)]
    real = world.lounges.mark_failed

    async def crash(lounge_id: str, failure: str) -> Lounge:
        raise RuntimeError("the lobby died here")

    world.lounges.mark_failed = crash  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        await world.app.create(alice, req("f2"), "F", nlhe(), 0, 0, ai, False)
    (lounge,) = await world.lounges.creating(10)  # refunded, still CREATING
    assert await ledger_of(world).house() == 0
    world.lounges.mark_failed = real  # type: ignore[method-assign]
    assert await world.app.recover() == 0
    done = await world.lounges.get(lounge.lounge_id)
    assert done is not None and done.state is LoungeState.FAILED
    assert await ledger_of(world).house() == 0  # nothing refunded twice
    assert (await ledger_of(world).audit()).holds


async def test_an_account_wins_so_much_a_day_from_the_house() -> None:
    """Alice wins 600 from an AI seat; with a daily limit of 600 she may join no lounge with
    AI seats until the next UTC day (her chips are hers), while a lounge of people is open."""
    world = BuyInWorld()
    world.lobby.app.settings = replace(world.lobby.app.settings, house_daily_win_limit=600)
    alice, bob = await world.player(1), await world.player(2)
    ai = [AiSeat(1, epb.AI_LEVEL_EASY)]
    lounges = [
        await world.lounge_app.create(bob, req(f"ai-{n}"), "AI", nlhe(), 0, 0, ai, False)
        for n in range(2)
    ]
    people = await world.lounge(bob, 9)
    lid = lounges[0].lounge_id
    await world.app.join(alice, req("j1"), lid, 0, 1_000, "")
    world.tables.deal(lid)
    world.tables.move_chips(lid, 1, 0, 600)  # the AI loses 600 to Alice
    world.tables.end_hand(lid)
    left = await world.app.leave(alice, req("l1"), lid)
    assert left.buy_in.left_stack == 1_600
    today = day_start(world.lobby.clock())
    assert await world.ledger.house_won(left.buy_in.player_id, today) == 600
    over = await refused(world.app.join(alice, req("j2"), lounges[1].lounge_id, 0, 1_000, ""))
    assert (over.code, over.reason) == (Code.RESOURCE_EXHAUSTED, "HOUSE_LIMIT_REACHED")
    tomorrow = day_start(world.lobby.clock()) + timedelta(days=1)
    assert "600" in over.message and tomorrow.isoformat() in over.message
    assert (await world.lobby.app.balance(alice)).balance == 10_600  # nothing moved, none taken
    await world.app.join(alice, req("j3"), people.lounge_id, 0, 1_000, "")  # people only: fine
    await world.app.join(bob, req("j4"), lounges[1].lounge_id, 0, 1_000, "")  # others: fine
    world.lobby.clock.now += timedelta(days=1)  # a new UTC day
    await world.app.leave(alice, req("l3"), people.lounge_id)
    joined = await world.app.join(alice, req("j5"), lounges[1].lounge_id, 2, 1_000, "")
    assert joined.buy_in.seat == 2
    audit = await world.ledger.audit()
    assert audit.holds and audit.house == -2_000  # two AI seats of 1,000 each funded


@pytest.mark.parametrize("point", ["before_settle_ai", "after_settle_ai"])
async def test_a_close_that_dies_settling_an_ai_seat_settles_it_once(point: str) -> None:
    """The lobby dies right before or after an AI seat's chips go back to the house: the
    next process's recovery pass finishes the close, and the house is credited once."""
    world = BuyInWorld()
    alice = await world.player(1)
    ai = [AiSeat(1, epb.AI_LEVEL_EASY)]
    lounge = await world.lounge_app.create(alice, req("c1"), "AI", nlhe(), 0, 0, ai, False)
    lid = lounge.lounge_id
    await world.app.join(alice, req("j1"), lid, 0, 1_000, "")
    world.tables.deal(lid)
    world.tables.move_chips(lid, 0, 1, 400)  # the AI wins 400 from Alice
    world.tables.end_hand(lid)
    world.crash_at(point)
    with pytest.raises(Crash):
        await world.closing.close(alice, req("close"), lid)
    world.restart()
    assert await world.closing.recover() == (1, 0)
    closed = await world.lounges.get(lid)
    assert closed is not None and closed.state is LoungeState.CLOSED
    assert await world.ledger.house() == 400  # the AI's 1,400 back once: +400 to the house
    assert (await world.lobby.app.balance(alice)).balance == 9_600
    audit = await world.ledger.audit()
    assert audit.holds and (audit.on_tables, audit.stranded) == (0, 0)
