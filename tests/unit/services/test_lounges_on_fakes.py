"""Lounges' use cases on the in-memory ports (``LoungeApp`` on ``MemoryLounges`` and
``MemoryTables``): validation as the table service's, AI seats, privacy, pages, and a
creation that survives the table service failing between its steps."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from google.protobuf.duration_pb2 import Duration

from poker.events.v1 import events_pb2 as epb
from services.lobby.application import LobbySettings
from services.lobby.auth import ANONYMOUS, Caller
from services.lobby.lounges import AiSeat, LoungeApp
from services.lobby.memory import MemoryLounges, MemoryTables
from services.lobby.ports import LoungeFilter, LoungeState, TablesUnavailable
from services.lobby.refusals import Code

from .test_lobby_app_on_fakes import Lobby, guest_id, refused, req


def nlhe(seats: int = 6, sb: int = 5, bb: int = 10, **more: Any) -> epb.TableConfig:
    return epb.TableConfig(
        variant=epb.VARIANT_NLHE, seat_count=seats, small_blind=sb, big_blind=bb, **more
    )


def draw(seats: int = 5, ante: int = 2, small_bet: int = 10) -> epb.TableConfig:
    return epb.TableConfig(
        variant=epb.VARIANT_DRAW5, seat_count=seats, ante=ante, small_bet=small_bet
    )


class World:
    def __init__(self, settings: LobbySettings | None = None) -> None:
        self.lobby = Lobby(settings=settings)
        self.lounges = MemoryLounges()
        self.tables = MemoryTables()
        self.app = LoungeApp(self.lobby.app, self.lounges, self.tables)

    async def player(self, n: int) -> Caller:
        signed = await self.lobby.app.create_guest(f"Player {n}", req(guest_id(n)))
        return self.lobby.caller(signed.credentials)


@pytest.fixture
def world() -> World:
    return World()


async def test_create_seats_its_ai_players_at_its_table(world: World) -> None:
    alice = await world.player(1)
    ai = [AiSeat(3, epb.AI_LEVEL_HARD), AiSeat(None, epb.AI_LEVEL_EASY)]
    lounge = await world.app.create(alice, req("r1"), "High noon", nlhe(), 0, 0, ai, False)
    assert lounge.state is LoungeState.OPEN and not lounge.private
    assert (lounge.stake, lounge.min_buy_in, lounge.max_buy_in) == (10, 200, 1000)
    assert [(s.seat, s.ai_level, s.stack) for s in lounge.seats] == [
        (0, epb.AI_LEVEL_EASY, 1000),
        (3, epb.AI_LEVEL_HARD, 1000),
    ]
    table = world.tables.tables[lounge.lounge_id]
    assert epb.TableConfig.FromString(table.config) == nlhe()
    assert sorted(table.seats) == [0, 3] and table.seats[3].ai_level == epb.AI_LEVEL_HARD
    again = await world.app.create(alice, req("r1"), "High noon", nlhe(), 0, 0, ai, False)
    assert again == lounge and len(world.tables.tables) == 1
    reused = await refused(
        world.app.create(alice, req("r1", content="x"), "High noon", nlhe(), 0, 0, [], False)
    )
    assert reused.reason == "REQUEST_ID_REUSED" and len(world.tables.tables) == 1


async def test_a_player_may_have_only_so_many_lounges(world: World) -> None:
    """A free guest cannot start tables (each with AI seats playing on) without end."""
    most = world.lobby.app.settings.max_lounges_per_owner
    alice, bob = await world.player(1), await world.player(2)
    ai = [AiSeat(None, epb.AI_LEVEL_EASY)] * 5
    first = [
        await world.app.create(alice, req(f"a{i}"), f"A{i}", nlhe(), 0, 0, ai, False)
        for i in range(most)
    ]
    over = await refused(world.app.create(alice, req("a-more"), "More", nlhe(), 0, 0, ai, False))
    assert (over.code, over.reason) == (Code.RESOURCE_EXHAUSTED, "TOO_MANY_LOUNGES")
    assert len(world.tables.tables) == most and await world.lounges.creating(10) == []
    # a retry of one of them is still answered; another player has room of its own
    assert await world.app.create(alice, req("a0"), "A0", nlhe(), 0, 0, ai, False) == first[0]
    await world.app.create(bob, req("b0"), "B0", nlhe(), 0, 0, ai, False)


async def test_validated_as_the_table_service_does(world: World) -> None:
    alice = await world.player(1)

    async def reason(config: epb.TableConfig, low: int = 0, high: int = 0, ai: int = 0) -> str:
        seats = [AiSeat(None, epb.AI_LEVEL_NORMAL)] * ai
        answer = await refused(
            world.app.create(alice, req("bad"), "T", config, low, high, seats, False)
        )
        assert answer.code is Code.INVALID_ARGUMENT
        return answer.reason

    assert await reason(nlhe(seats=10)) == "BAD_CONFIG"  # the rules core: 2-9 seats
    assert await reason(draw(seats=7)) == "BAD_CONFIG"  # Draw: 2-6
    assert await reason(nlhe(sb=20, bb=10)) == "BAD_CONFIG"
    assert await reason(draw(ante=0)) == "BAD_CONFIG"  # Draw's ante is required
    assert await reason(epb.TableConfig(seat_count=6, small_blind=5, big_blind=10)) == "BAD_CONFIG"
    assert await reason(nlhe(action_clock=Duration(nanos=1_000_000))) == "BAD_CONFIG"
    both = nlhe(max_hands=10)
    both.close_time.FromDatetime(world.lobby.clock() + timedelta(hours=1))
    assert await reason(both) == "BAD_CONFIG"
    assert await reason(nlhe(), 5, 100) == "BAD_BUY_IN"  # under one big blind
    assert await reason(nlhe(), 500, 400) == "BAD_BUY_IN"
    assert await reason(nlhe(), 0, 10**13) == "BAD_AMOUNT"
    assert await reason(nlhe(seats=3), ai=3) == "BAD_AI_SEATS"  # none left for a player
    bad_level = await refused(
        world.app.create(alice, req("b2"), "T", nlhe(), 0, 0, [AiSeat(None, 7)], False)
    )
    assert bad_level.reason == "BAD_AI_SEATS"
    same_seat = [AiSeat(1, epb.AI_LEVEL_EASY), AiSeat(1, epb.AI_LEVEL_EASY)]
    dup = await refused(world.app.create(alice, req("b3"), "T", nlhe(), 0, 0, same_seat, False))
    assert dup.reason == "BAD_AI_SEATS"
    assert (await refused(world.app.create(alice, req("b4"), " ", nlhe(), 0, 0, [], False))).reason
    assert world.tables.tables == {} and await world.lounges.creating(10) == []
    anon = await refused(world.app.create(ANONYMOUS, req("b5"), "T", nlhe(), 0, 0, [], False))
    assert anon.code is Code.UNAUTHENTICATED


async def test_limits_by_hands_or_by_time(world: World) -> None:
    alice = await world.player(1)
    by_hands = await world.app.create(alice, req("h"), "H", nlhe(max_hands=50), 0, 0, [], False)
    assert epb.TableConfig.FromString(by_hands.config).max_hands == 50
    timed = draw()
    timed.close_time.FromDatetime(world.lobby.clock() + timedelta(hours=2))
    by_time = await world.app.create(alice, req("t"), "T", timed, 40, 400, [], False)
    assert epb.TableConfig.FromString(by_time.config).HasField("close_time")
    assert (by_time.stake, by_time.min_buy_in, by_time.max_buy_in) == (10, 40, 400)


async def test_private_lounges_need_their_invite_code(world: World) -> None:
    alice, bob = await world.player(1), await world.player(2)
    lounge = await world.app.create(alice, req("p"), "Friends", nlhe(), 0, 0, [], True)
    assert lounge.invite_code and len(lounge.invite_code) >= 12
    assert (await world.app.get(alice, lounge.lounge_id, "")).invite_code == lounge.invite_code
    assert (await refused(world.app.get(bob, lounge.lounge_id, ""))).code is Code.NOT_FOUND
    assert (await refused(world.app.get(bob, lounge.lounge_id, "wrong"))).reason == "NO_LOUNGE"
    assert (await world.app.get(bob, lounge.lounge_id, lounge.invite_code)) == lounge
    page = await world.app.listing(bob, LoungeFilter(), 0, "")
    assert page.lounges == []  # never listed
    assert (await refused(world.app.get(bob, "Not An Id", ""))).reason == "BAD_TABLE_ID"


async def test_a_private_lounges_table_knows_it_and_grants_watches_to_whom_the_lobby_lets(
    world: World,
) -> None:
    alice, bob, carol = await world.player(1), await world.player(2), await world.player(3)
    spoofed = nlhe(private=True)  # the request's own flag is not what decides
    public = await world.app.create(alice, req("pub"), "Open", spoofed, 0, 0, [], False)
    assert not epb.TableConfig.FromString(world.tables.tables[public.lounge_id].config).private
    lounge = await world.app.create(alice, req("p"), "Friends", nlhe(), 0, 0, [], True)
    assert epb.TableConfig.FromString(world.tables.tables[lounge.lounge_id].config).private
    lid, code = lounge.lounge_id, lounge.invite_code
    assert code is not None
    assert (await world.app.watch(alice, lid, "")).token  # its owner
    assert (await world.app.watch(bob, lid, code)).token  # an invitee
    assert (await world.app.watch(carol, public.lounge_id, "")).token  # anyone, when public
    for who, shown in ((bob, ""), (bob, "wrong"), (carol, "")):
        assert (await refused(world.app.watch(who, lid, shown))).reason == "NO_LOUNGE"
    assert (await refused(world.app.watch(bob, lid, "x" * 65))).reason == "BAD_INVITE_CODE"
    assert (await refused(world.app.watch(ANONYMOUS, lid, code))).code is Code.UNAUTHENTICATED
    world.tables.unavailable = True
    unreachable = await refused(world.app.watch(alice, lid, ""))
    assert (unreachable.code, unreachable.reason) == (Code.UNAVAILABLE, "TABLES_UNAVAILABLE")


async def test_listing_pages_and_filters() -> None:
    world = World(LobbySettings(max_lounges_per_owner=100))
    alice = await world.player(1)
    made = []
    for i in range(7):
        config = nlhe(bb=10 * (i + 1), sb=5) if i % 2 == 0 else draw(small_bet=10 * (i + 1))
        made.append(await world.app.create(alice, req(f"l{i}"), f"L{i}", config, 0, 0, [], False))
    seen, token = [], ""
    while True:
        page = await world.app.listing(alice, LoungeFilter(), 3, token)
        seen += [x.lounge_id for x in page.lounges]
        token = page.next_page_token
        if not token:
            break
    assert seen == [x.lounge_id for x in reversed(made)]
    draws = await world.app.listing(alice, LoungeFilter(variant=epb.VARIANT_DRAW5), 0, "")
    assert [x.lounge_id for x in draws.lounges] == [
        made[5].lounge_id,
        made[3].lounge_id,
        made[1].lounge_id,
    ]
    mid = await world.app.listing(alice, LoungeFilter(min_stake=30, max_stake=50), 0, "")
    assert [x.stake for x in mid.lounges] == [50, 40, 30]
    for where, token, why in (
        (LoungeFilter(variant=9), "", "BAD_FILTER"),
        (LoungeFilter(min_stake=9, max_stake=3), "", "BAD_FILTER"),
        (LoungeFilter(min_free_seats=10), "", "BAD_FILTER"),
        (LoungeFilter(min_stake=-1), "", "BAD_AMOUNT"),
        (LoungeFilter(), "bm9wZQ", "BAD_PAGE_TOKEN"),
    ):
        assert (await refused(world.app.listing(alice, where, 0, token))).reason == why


async def test_creation_survives_the_table_service_failing_between_steps(world: World) -> None:
    alice = await world.player(1)
    ai = [AiSeat(None, epb.AI_LEVEL_NORMAL)] * 2
    world.tables.unavailable = True
    world.tables.lost_answers = True  # the table is created, its answer lost
    answer = await refused(world.app.create(alice, req("c"), "C", nlhe(), 0, 0, ai, False))
    assert (answer.code, answer.reason) == (Code.UNAVAILABLE, "TABLES_UNAVAILABLE")
    (lounge,) = await world.lounges.creating(10)
    assert lounge.lounge_id in world.tables.tables  # created, not yet known to be
    assert (await world.app.listing(alice, LoungeFilter(), 0, "")).lounges == []
    assert await world.app.recover() == 0  # still down: stays CREATING
    world.tables.unavailable = False
    assert await world.app.recover() == 0  # it waits its backoff
    world.lobby.clock.now += timedelta(seconds=3)
    assert await world.app.recover() == 1
    opened = await world.lounges.get(lounge.lounge_id)
    assert opened is not None and opened.state is LoungeState.OPEN
    assert sorted(world.tables.tables[lounge.lounge_id].seats) == [0, 1]
    again = await world.app.create(alice, req("c"), "C", nlhe(), 0, 0, ai, False)
    assert again == opened and len(world.tables.tables) == 1


class DoomedTables(MemoryTables):
    """``CreateTable`` for the tables in ``doomed`` never succeeds; calls counted per table."""

    def __init__(self) -> None:
        super().__init__()
        self.doomed: set[str] = set()
        self.creates: dict[str, int] = {}

    async def create(self, table_id: str, name: str, config: bytes, request_id: str) -> None:
        self.creates[table_id] = self.creates.get(table_id, 0) + 1
        if table_id in self.doomed:
            raise TablesUnavailable("DEADLINE_EXCEEDED")
        await super().create(table_id, name, config, request_id)


async def test_lounges_that_never_open_do_not_keep_another_creating(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """More CREATING lounges that cannot open than a recovery page: a later one whose table
    is back opens within one walk of the pages, and the doomed ones are tried less and
    less often (their waits grow)."""
    monkeypatch.setattr("services.lobby.lounges.RECOVER_BATCH", 2)
    world = World(LobbySettings(max_lounges_per_owner=10))
    tables = DoomedTables()
    world.tables = tables
    world.app = LoungeApp(world.lobby.app, world.lounges, tables)
    alice = await world.player(1)
    tables.unavailable = True
    for n in range(5):
        await refused(world.app.create(alice, req(f"d{n}"), f"D{n}", nlhe(), 0, 0, [], False))
    tables.doomed = {x.lounge_id for x in await world.lounges.creating(10)}
    world.lobby.clock.now += timedelta(seconds=1)
    await refused(world.app.create(alice, req("v"), "Victim", nlhe(), 0, 0, [], False))
    tables.unavailable = False
    passes = 0
    while len(await world.lounges.creating(10)) > len(tables.doomed):  # the victim's there
        passes += 1
        assert passes <= 3, "the victim waited behind the doomed lounges"
        world.lobby.clock.now += timedelta(seconds=2)
        await world.app.recover()
    assert {x.lounge_id for x in await world.lounges.creating(10)} == tables.doomed
    tables.creates.clear()
    for _ in range(60):  # two minutes more, a pass every 2 s
        world.lobby.clock.now += timedelta(seconds=2)
        await world.app.recover()
    assert all(0 < n < 10 for n in tables.creates.values()), tables.creates
