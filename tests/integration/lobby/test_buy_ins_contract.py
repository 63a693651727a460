"""Contract of the ``BuyIns`` port (PostgreSQL and the fake): each transition of the buy-in
saga is atomic with its chips and happens once; and, through ``SeatingApp`` on these
stores, 50 concurrent buy-ins from one balance never spend the same chips."""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from argon2 import PasswordHasher

from felt.storage.idempotency import ClientRequest, RequestKey, RequestReused
from poker.events.v1 import events_pb2 as epb
from services.lobby.application import LobbyApp, LobbySecrets, LobbySettings
from services.lobby.auth import Authenticator, Caller
from services.lobby.lounges import LoungeApp
from services.lobby.memory import MemoryTables
from services.lobby.ports import (
    BuyInState,
    InsufficientChips,
    Kind,
    NewBuyIn,
    NewLounge,
    NewPlayer,
    NoAccount,
    NotSeated,
    SeatGrant,
    TopUpRefused,
)
from services.lobby.refusals import Refused
from services.lobby.seating import SeatingApp
from services.lobby.tokens import Passwords

from .conftest import Stores

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def key(name: str, content: str = "") -> RequestKey:
    return RequestKey(f"c/{name}", hashlib.sha256(content.encode()).digest()[:16])


async def setup(stores: Stores, grant: int = 1_000) -> None:
    await stores.players.create(NewPlayer("p1", "Ann", "ann", None, key("p1"), T0))
    await stores.ledger.open("p1", grant, key("grant"), T0)
    for n in range(2):
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
            )
        )
        await stores.lounges.mark_open(f"l-{n}")


def buy_in(n: int, amount: int = 300, lounge: str = "l-0", content: str = "") -> NewBuyIn:
    return NewBuyIn(
        f"b-{n}",
        "p1",
        lounge,
        None,
        amount,
        key(f"join/{n}", content),
        T0 + timedelta(seconds=n),
    )


async def conserved(stores: Stores) -> int:
    totals = await stores.ledger.totals()
    assert totals.balances + totals.on_tables == totals.created
    assert totals.ledger_sum == totals.balances
    return totals.on_tables


async def test_reserve_takes_the_chips_with_the_saga_once(stores: Stores) -> None:
    await setup(stores)
    reservation = await stores.buy_ins.reserve(buy_in(1))
    saga = reservation.buy_in
    assert (saga.state, saga.amount, saga.seat_token) == (BuyInState.RESERVED, 300, None)
    assert (saga.display_name, reservation.balance) == ("Ann", 700)  # the player's own name
    assert await stores.buy_ins.reserve(buy_in(1)) == reservation  # a retry
    assert (await stores.ledger.account("p1")).balance == 700  # type: ignore[union-attr]
    with pytest.raises(RequestReused):
        await stores.buy_ins.reserve(buy_in(1, content="other"))
    with pytest.raises(InsufficientChips):
        await stores.buy_ins.reserve(buy_in(2, amount=701))
    assert await stores.buy_ins.get("b-2") is None  # nothing written
    assert await stores.buy_ins.get("b-1") == saga
    assert [s.saga_id for s in await stores.buy_ins.unfinished(10)] == ["b-1"]
    assert await conserved(stores) == 300


async def test_reserve_without_an_account_writes_nothing(stores: Stores) -> None:
    await setup(stores)
    await stores.players.create(NewPlayer("p2", "Bob", "bob", None, key("p2"), T0))
    with pytest.raises(NoAccount):
        await stores.buy_ins.reserve(replace(buy_in(1), player_id="p2"))
    assert await stores.buy_ins.get("b-1") is None
    await stores.ledger.open("p2", 500, key("grant/p2"), T0)
    reservation = await stores.buy_ins.reserve(replace(buy_in(1), player_id="p2"))
    assert (reservation.buy_in.display_name, reservation.balance) == ("Bob", 200)


async def test_seated_commits_the_seat_once(stores: Stores) -> None:
    await setup(stores)
    await stores.buy_ins.reserve(buy_in(1))
    grant = SeatGrant(4, "secret", None)
    saga = await stores.buy_ins.seated("b-1", grant)
    assert (saga.state, saga.seat, saga.seat_token) == (BuyInState.SEATED, 4, "secret")
    assert await stores.buy_ins.seated("b-1", SeatGrant(5, "other", None)) == saga
    assert await stores.buy_ins.compensate("b-1", "SEAT_TAKEN", T0) == saga  # too late
    lounge = await stores.lounges.get("l-0")
    assert lounge is not None and lounge.free_seats == 5
    assert [(s.seat, s.player_id, s.display_name, s.stack) for s in lounge.seats] == [
        (4, "p1", "Ann", 300)
    ]
    assert await stores.buy_ins.unfinished(10) == []
    assert await conserved(stores) == 300


async def test_a_reissued_token_replaces_the_stored_one_of_the_seat_only(stores: Stores) -> None:
    await setup(stores)
    await stores.buy_ins.reserve(buy_in(1))
    assert await stores.buy_ins.seated_saga("p1", "l-0") is None  # reserved, not seated yet
    await stores.buy_ins.seated("b-1", SeatGrant(4, "secret", None))
    found = await stores.buy_ins.seated_saga("p1", "l-0")
    assert found is not None and found.saga_id == "b-1"
    assert await stores.buy_ins.seated_saga("p1", "l-1") is None
    later = T0 + timedelta(days=2)
    saga = await stores.buy_ins.token_reissued("b-1", SeatGrant(4, "fresh", later))
    assert (saga.seat_token, saga.seat_token_expires_at) == ("fresh", later)
    assert await stores.buy_ins.get("b-1") == saga
    await stores.buy_ins.reserve(buy_in(2))  # another saga, still reserved: nothing to replace
    unseated = await stores.buy_ins.token_reissued("b-2", SeatGrant(1, "nope", None))
    assert (unseated.state, unseated.seat_token) == (BuyInState.RESERVED, None)
    assert await conserved(stores) == 600


async def test_compensation_returns_the_chips_exactly_once(stores: Stores) -> None:
    await setup(stores)
    await stores.buy_ins.reserve(buy_in(1))
    first, second = await asyncio.gather(
        stores.buy_ins.compensate("b-1", "SEAT_TAKEN", T0),
        stores.buy_ins.compensate("b-1", "SEAT_TAKEN", T0),
    )
    assert first == second and first.state is BuyInState.COMPENSATED
    assert first.refusal == "SEAT_TAKEN"
    assert await stores.buy_ins.seated("b-1", SeatGrant(1, "t", None)) == first
    assert (await stores.ledger.account("p1")).balance == 1_000  # type: ignore[union-attr]
    kinds = [(m.kind, m.amount) for m in await stores.ledger.entries("p1", None, 10)]
    assert kinds == [(Kind.CASH_OUT, 300), (Kind.BUY_IN, -300), (Kind.GRANT, 1_000)]
    assert await conserved(stores) == 0


async def test_unfinished_sagas_oldest_first(stores: Stores) -> None:
    await setup(stores, grant=5_000)
    for n in (3, 1, 2, 4):
        await stores.buy_ins.reserve(buy_in(n, lounge=f"l-{n % 2}"))
    await stores.buy_ins.seated("b-2", SeatGrant(0, "t", None))
    await stores.buy_ins.compensate("b-4", "X", T0)
    assert [s.saga_id for s in await stores.buy_ins.unfinished(10)] == ["b-1", "b-3"]
    assert [s.saga_id for s in await stores.buy_ins.unfinished(1)] == ["b-1"]


class Clock:
    def __call__(self) -> datetime:
        return T0


async def seating_on(
    stores: Stores,
) -> tuple[LobbyApp, MemoryTables, LoungeApp, SeatingApp, Caller]:
    """The lobby's use cases on these stores, a fake table service, and a guest signed in."""
    secrets = LobbySecrets(b"a" * 32, b"r" * 32)
    lobby = LobbyApp(
        stores.players,
        stores.sessions,
        stores.throttle,
        stores.ledger,
        Passwords(PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)),
        secrets,
        LobbySettings(max_lounges_per_owner=1_000),
        Clock(),
    )
    tables = MemoryTables()
    lounges = LoungeApp(lobby, stores.lounges, tables)
    seating = SeatingApp(lounges, stores.buy_ins, tables)
    signed = await lobby.create_guest("Ann", ClientRequest("guest-request-0001", "g", b""))
    ann = Authenticator(secrets.access, Clock()).authenticate(signed.credentials.access_token)
    return lobby, tables, lounges, seating, ann


async def test_fifty_concurrent_buy_ins_from_one_balance(stores: Stores) -> None:
    """Through the whole saga (the lobby's use case on these stores, a fake table service)."""
    lobby, tables, lounges, seating, ann = await seating_on(stores)
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=2, small_blind=5, big_blind=10)
    ids = [
        (
            await lounges.create(
                ann, ClientRequest(f"l{n}", "c", b""), f"L{n}", config, 0, 0, [], False
            )
        ).lounge_id
        for n in range(50)
    ]
    results = await asyncio.gather(
        *(
            seating.join(ann, ClientRequest(f"j{n}", "j", b""), lid, None, 1_000, "")
            for n, lid in enumerate(ids)
        ),
        return_exceptions=True,
    )
    won = [r for r in results if not isinstance(r, BaseException)]
    refused = [r for r in results if isinstance(r, Refused)]
    assert len(won) == LobbySettings().starting_grant // 1_000 and len(refused) == 50 - len(won)
    assert {r.reason for r in refused} == {"INSUFFICIENT_CHIPS"}
    assert (await lobby.balance(ann)).balance == 0
    at_tables = sum(s.stack for t in tables.tables.values() for s in t.seats.values())
    assert await conserved(stores) == at_tables == LobbySettings().starting_grant


async def test_the_wait_for_the_big_blind_is_kept_with_the_saga(stores: Stores) -> None:
    """What the recovery pass and a retry read back is what the join asked (default: no)."""
    await setup(stores)
    waiting = replace(buy_in(1), wait_for_big_blind=True)
    reservation = await stores.buy_ins.reserve(waiting)
    assert reservation.buy_in.wait_for_big_blind
    assert await stores.buy_ins.reserve(waiting) == reservation  # a retry
    assert not (await stores.buy_ins.reserve(buy_in(2))).buy_in.wait_for_big_blind
    assert [(s.saga_id, s.wait_for_big_blind) for s in await stores.buy_ins.unfinished(10)] == [
        ("b-1", True),
        ("b-2", False),
    ]
    assert [s.wait_for_big_blind for s in await stores.buy_ins.due(T0 + timedelta(1), 10)] == [
        True,
        False,
    ]
    saga = await stores.buy_ins.seated("b-1", SeatGrant(4, "secret", None))
    assert saga.wait_for_big_blind and await stores.buy_ins.get("b-1") == saga
    await conserved(stores)


async def test_recovery_seats_a_waiting_newcomer_as_asked(stores: Stores) -> None:
    """A join whose table did not answer is seated by the recovery pass waiting for the big
    blind, as the join asked; a Draw lounge refuses the option before any chip moves."""
    lobby, tables, lounges, seating, ann = await seating_on(stores)
    holdem = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=2, small_blind=5, big_blind=10)
    draw = epb.TableConfig(variant=epb.VARIANT_DRAW5, seat_count=2, ante=1, small_bet=4)
    nlhe, draw5 = [
        (
            await lounges.create(
                ann, ClientRequest(f"l{n}", "c", b""), f"L{n}", config, 0, 0, [], False
            )
        ).lounge_id
        for n, config in enumerate((holdem, draw))
    ]
    balance = (await lobby.balance(ann)).balance
    with pytest.raises(Refused) as refused:
        await seating.join(ann, ClientRequest("j-draw", "j", b""), draw5, None, 100, "", True)
    assert (refused.value.code.name, refused.value.reason) == (
        "FAILED_PRECONDITION",
        "NO_BIG_BLIND",
    )
    assert (await lobby.balance(ann)).balance == balance  # no chip moved
    tables.unavailable = True
    with pytest.raises(Refused) as lost:
        await seating.join(ann, ClientRequest("j-wait", "j", b""), nlhe, None, 500, "", True)
    assert lost.value.reason == "TABLES_UNAVAILABLE"
    tables.unavailable = False
    assert await seating.recover() == (1, 0)
    (seat,) = tables.tables[nlhe].seats
    assert tables.tables[nlhe].waiting == {seat}
    assert await conserved(stores) == 500


async def seated(stores: Stores, n: int = 1, seat: int = 4, amount: int = 300) -> None:
    await stores.buy_ins.reserve(buy_in(n, amount))
    await stores.buy_ins.seated(f"b-{n}", SeatGrant(seat, f"secret-{n}", None))


async def test_leaving_then_left_cashes_the_stack_out_once_and_frees_the_seat(
    stores: Stores,
) -> None:
    await setup(stores)
    await seated(stores)
    saga = await stores.buy_ins.leaving("p1", "l-0", key("leave/1"), T0)
    assert (saga.saga_id, saga.state, saga.leave_sequence) == ("b-1", BuyInState.LEAVING, None)
    assert await stores.buy_ins.leaving("p1", "l-0", key("leave/1"), T0) == saga  # a retry
    assert await stores.buy_ins.leaving("p1", "l-0", key("leave/2"), T0) == saga  # another
    with pytest.raises(RequestReused):
        await stores.buy_ins.leaving("p1", "l-0", key("leave/1", "other"), T0)
    with pytest.raises(NotSeated):
        await stores.buy_ins.leaving("p1", "l-1", key("leave/3"), T0)
    assert [s.saga_id for s in await stores.buy_ins.leaving_sagas(10)] == ["b-1"]
    assert await conserved(stores) == 300  # the seat still holds its chips
    called = await stores.buy_ins.leave_called("b-1", 17)
    assert called.leave_sequence == 17
    assert await stores.buy_ins.leave_called("b-1", 99) == called  # the first one kept
    left = await stores.buy_ins.left("b-1", 450, T0)  # won 150 at the table
    assert (left.state, left.left_stack, left.seat_token) == (BuyInState.LEFT, 450, "secret-1")
    assert await stores.buy_ins.left("b-1", 450, T0) == left
    assert await stores.buy_ins.leaving("p1", "l-0", key("leave/1"), T0) == left  # its retry
    assert await stores.buy_ins.leaving("p1", "l-0", key("leave/2"), T0) == left  # the other's
    with pytest.raises(NotSeated):
        await stores.buy_ins.leaving("p1", "l-0", key("leave/4"), T0)
    assert (await stores.ledger.account("p1")).balance == 1_150  # type: ignore[union-attr]
    kinds = [(m.kind, m.amount) for m in await stores.ledger.entries("p1", None, 10)]
    assert kinds == [(Kind.CASH_OUT, 450), (Kind.BUY_IN, -300), (Kind.GRANT, 1_000)]
    lounge = await stores.lounges.get("l-0")
    assert lounge is not None and lounge.seats == () and lounge.free_seats == 6
    assert await stores.buy_ins.leaving_sagas(10) == []
    assert await conserved(stores) == -150  # 150 more came off the table than went on


async def test_two_concurrent_leaves_of_one_seat_credit_once(stores: Stores) -> None:
    await setup(stores)
    await seated(stores)
    first, second = await asyncio.gather(
        stores.buy_ins.leaving("p1", "l-0", key("leave/a"), T0),
        stores.buy_ins.leaving("p1", "l-0", key("leave/b"), T0),
    )
    assert first.saga_id == second.saga_id == "b-1"
    assert first.state is second.state is BuyInState.LEAVING
    done = await asyncio.gather(*(stores.buy_ins.left("b-1", 300, T0) for _ in range(2)))
    assert done[0] == done[1] and done[0].state is BuyInState.LEFT
    assert (await stores.ledger.account("p1")).balance == 1_000  # type: ignore[union-attr]
    assert len(await stores.ledger.entries("p1", None, 10)) == 3
    assert await conserved(stores) == 0


async def test_a_busted_seat_leaves_with_nothing_to_cash_out(stores: Stores) -> None:
    await setup(stores)
    await seated(stores)
    await stores.buy_ins.leaving("p1", "l-0", key("leave/1"), T0)
    left = await stores.buy_ins.left("b-1", 0, T0)
    assert (left.state, left.left_stack) == (BuyInState.LEFT, 0)
    assert (await stores.ledger.account("p1")).balance == 700  # type: ignore[union-attr]
    assert await conserved(stores) == 300  # its chips are other seats' now


async def test_a_busted_seats_sighting_is_kept_until_another_bust(stores: Stores) -> None:
    """``busted_seen``: the first sighting of a bust is kept (its grace counts from there);
    a bust since another hand (chips added and lost again) is a new sighting."""
    await setup(stores)
    await seated(stores)
    assert await stores.buy_ins.busted_noted("b-1") is None
    t1, t2, t3 = (T0 + timedelta(seconds=s) for s in (10, 20, 30))
    assert await stores.buy_ins.busted_seen("b-1", 3, t1) == t1
    assert await stores.buy_ins.busted_seen("b-1", 3, t2) == t1  # the same bust: first kept
    assert await stores.buy_ins.busted_noted("b-1") == (3, t1)
    assert await stores.buy_ins.busted_seen("b-1", 5, t3) == t3  # busted again since hand 5
    assert await stores.buy_ins.busted_seen("b-1", 5, T0 + timedelta(seconds=40)) == t3
    assert await stores.buy_ins.busted_noted("b-1") == (5, t3)
    seen = await asyncio.gather(
        *(stores.buy_ins.busted_seen("b-1", 9, T0 + timedelta(seconds=50 + i)) for i in range(8))
    )
    assert len(set(seen)) == 1  # concurrent passes agree on the first sighting


async def test_a_busted_seat_freed_closes_its_buy_in_with_nothing_once(stores: Stores) -> None:
    """``busted_freed``: SEATED (or LEAVING) to LEFT with 0, the lounge seat freed, no
    cash-out; again, or from another state, nothing changes."""
    await setup(stores)
    await seated(stores)
    freed = await stores.buy_ins.busted_freed("b-1", T0)
    assert (freed.state, freed.left_stack) == (BuyInState.LEFT, 0)
    assert await stores.buy_ins.busted_freed("b-1", T0) == freed
    lounge = await stores.lounges.get("l-0")
    assert lounge is not None and lounge.seats == ()
    assert (await stores.ledger.account("p1")).balance == 700  # type: ignore[union-attr]
    assert len(await stores.ledger.entries("p1", None, 10)) == 2  # the grant, the buy-in
    assert await conserved(stores) == 300  # its chips are other seats' now
    await stores.buy_ins.reserve(buy_in(2))  # RESERVED: not a seat the table could free
    assert (await stores.buy_ins.busted_freed("b-2", T0)).state is BuyInState.RESERVED
    await stores.buy_ins.seated("b-2", SeatGrant(2, "secret-2", None))
    await stores.buy_ins.leaving("p1", "l-0", key("leave/2"), T0)  # the player's own leave
    assert (await stores.buy_ins.busted_freed("b-2", T0)).state is BuyInState.LEFT


async def test_left_from_any_other_state_changes_nothing(stores: Stores) -> None:
    await setup(stores)
    await seated(stores)
    saga = await stores.buy_ins.get("b-1")
    assert await stores.buy_ins.left("b-1", 300, T0) == saga  # SEATED: no leave asked
    assert await stores.buy_ins.leave_called("b-1", 3) == saga
    await stores.buy_ins.reserve(buy_in(2, lounge="l-1"))
    reserved = await stores.buy_ins.get("b-2")
    assert await stores.buy_ins.left("b-2", 300, T0) == reserved
    with pytest.raises(NotSeated):  # a RESERVED saga has no seat to leave yet
        await stores.buy_ins.leaving("p1", "l-1", key("leave/2"), T0)
    assert await conserved(stores) == 600


async def test_due_sagas_longest_due_first_and_a_claim_moves_one_back(stores: Stores) -> None:
    """The recovery pass's queue: RESERVED and not stuck, by when each became due (its
    reservation, or its next attempt); a claim is once per due time, so a second pass (or
    process) at the same moment gets None, and the claimed saga waits behind the others."""
    await setup(stores, grant=10_000)
    for n in (1, 2, 3):
        await stores.buy_ins.reserve(buy_in(n))
    await stores.buy_ins.seated("b-2", SeatGrant(4, "secret", None))  # finished: not due
    now = T0 + timedelta(seconds=10)
    assert [s.saga_id for s in await stores.buy_ins.due(now, 10)] == ["b-1", "b-3"]
    assert [s.saga_id for s in await stores.buy_ins.due(T0 + timedelta(seconds=1), 10)] == ["b-1"]
    claimed = await stores.buy_ins.attempting("b-1", now, now + timedelta(seconds=2))
    assert claimed is not None and claimed.attempts == 1
    assert (claimed.last_attempt_at, claimed.next_attempt_at) == (now, now + timedelta(seconds=2))
    assert await stores.buy_ins.attempting("b-1", now, now + timedelta(seconds=2)) is None
    assert await stores.buy_ins.attempting("b-2", now, now) is None  # SEATED
    assert [s.saga_id for s in await stores.buy_ins.due(now, 10)] == ["b-3"]
    later = now + timedelta(seconds=5)
    assert [s.saga_id for s in await stores.buy_ins.due(later, 10)] == ["b-3", "b-1"]
    again = await stores.buy_ins.attempting("b-1", later, later + timedelta(seconds=4))
    assert again is not None and again.attempts == 2
    await conserved(stores)


async def test_a_stuck_saga_leaves_the_queue_until_requeued(stores: Stores) -> None:
    await setup(stores, grant=10_000)
    for n in (1, 2):
        await stores.buy_ins.reserve(buy_in(n))
    now = T0 + timedelta(seconds=10)
    await stores.buy_ins.attempting("b-1", now, now)
    failed = await stores.buy_ins.attempt_failed("b-1", "UNAVAILABLE: " + "x" * 900, None)
    assert failed.stuck_at is None and failed.last_error is not None
    assert len(failed.last_error) == 500
    stuck = await stores.buy_ins.attempt_failed("b-1", "DEADLINE_EXCEEDED", now)
    assert (stuck.stuck_at, stuck.last_error, stuck.attempts) == (now, "DEADLINE_EXCEEDED", 1)
    assert stuck.state is BuyInState.RESERVED  # its chips still held
    assert [s.saga_id for s in await stores.buy_ins.due(now, 10)] == ["b-2"]
    assert await stores.buy_ins.attempting("b-1", now, now) is None
    assert [s.saga_id for s in await stores.buy_ins.stuck(10)] == ["b-1"]
    assert await stores.buy_ins.count_stuck() == 1
    assert await stores.buy_ins.count_by_state() == {"reserved": 2}  # stuck is still reserved
    assert {s.saga_id for s in await stores.buy_ins.unfinished(10)} == {"b-1", "b-2"}
    back = await stores.buy_ins.requeue("b-1")
    assert (back.attempts, back.stuck_at, back.last_error) == (0, None, None)
    assert await stores.buy_ins.count_stuck() == 0
    # In its first place again: due since it was reserved, before b-2.
    assert [s.saga_id for s in await stores.buy_ins.due(T0 + timedelta(seconds=1), 10)] == ["b-1"]
    assert [s.saga_id for s in await stores.buy_ins.due(now, 10)] == ["b-1", "b-2"]
    # Finished sagas are not touched by any of it.
    await stores.buy_ins.compensate("b-2", "TABLE_FULL", now)
    for done in (
        await stores.buy_ins.attempt_failed("b-2", "late", now),
        await stores.buy_ins.requeue("b-2"),
    ):
        assert (done.state, done.stuck_at, done.last_error) == (
            BuyInState.COMPENSATED,
            None,
            None,
        )
    assert await conserved(stores) == 300  # b-1's, held while it is RESERVED


async def test_leaving_sagas_are_walked_page_by_page(stores: Stores) -> None:
    await setup(stores)
    for n in range(1, 6):
        player = f"p{n}"
        if n > 1:
            await stores.players.create(NewPlayer(player, f"P{n}", f"p{n}", None, key(player), T0))
            await stores.ledger.open(player, 1_000, key(f"grant/{n}"), T0)
        new = replace(buy_in(n), player_id=player)
        await stores.buy_ins.reserve(new)
        await stores.buy_ins.seated(f"b-{n}", SeatGrant(n, f"secret-{n}", None))
        await stores.buy_ins.leaving(player, "l-0", key(f"leave/{n}"), T0)
    first = await stores.buy_ins.leaving_sagas(2)
    assert [s.saga_id for s in first] == ["b-1", "b-2"]
    second = await stores.buy_ins.leaving_sagas(2, (first[-1].created_at, first[-1].saga_id))
    assert [s.saga_id for s in second] == ["b-3", "b-4"]
    last = await stores.buy_ins.leaving_sagas(2, (second[-1].created_at, second[-1].saga_id))
    assert [s.saga_id for s in last] == ["b-5"]


async def test_a_players_buy_in_under_way_at_a_lounge(stores: Stores) -> None:
    await setup(stores, grant=10_000)
    assert await stores.buy_ins.reserved_saga("p1", "l-0") is None
    for n in (1, 2):
        await stores.buy_ins.reserve(buy_in(n, content=str(n)))
    await stores.buy_ins.reserve(buy_in(3, lounge="l-1"))
    pending = await stores.buy_ins.reserved_saga("p1", "l-0")
    assert pending is not None and pending.saga_id == "b-1"  # the oldest
    await stores.buy_ins.seated("b-1", SeatGrant(1, "secret-1", None))
    await stores.buy_ins.compensate("b-2", "ALREADY_SEATED", T0)
    assert await stores.buy_ins.reserved_saga("p1", "l-0") is None
    other = await stores.buy_ins.reserved_saga("p1", "l-1")
    assert other is not None and other.saga_id == "b-3"


async def test_a_top_up_counts_the_chips_at_tables(stores: Stores) -> None:
    """Chips parked at a table (reserved, seated or leaving) are the player's: with them the
    player is not low, whatever the balance; once they have come back they count as the
    balance they are (issue #20)."""
    await setup(stores, grant=1_000)
    hour = timedelta(hours=1)

    async def top_up(n: int) -> None:
        await stores.ledger.top_up("p1", 5_000, 500, hour, key(f"top-up/{n}"), T0)

    await stores.buy_ins.reserve(buy_in(1, amount=600))  # balance 400, 600 reserved
    with pytest.raises(TopUpRefused) as refused:
        await top_up(1)
    assert refused.value.reason == "NOT_LOW" and "600 of them at tables" in refused.value.message
    await stores.buy_ins.seated("b-1", SeatGrant(4, "secret", None))
    with pytest.raises(TopUpRefused):
        await top_up(2)
    await stores.buy_ins.leaving("p1", "l-0", key("leave/1"), T0)
    with pytest.raises(TopUpRefused):
        await top_up(3)
    # the seat leaves with 50 chips: 450 in all, under the floor, and a top-up is had
    await stores.buy_ins.left("b-1", 50, T0)
    movement = await stores.ledger.top_up("p1", 5_000, 500, hour, key("top-up/4"), T0)
    assert (movement.kind, movement.balance_after) == (Kind.TOP_UP, 5_450)
    await conserved(stores)


async def test_a_refused_buy_in_s_chips_count_as_the_balance_again(stores: Stores) -> None:
    await setup(stores, grant=1_000)
    await stores.buy_ins.reserve(buy_in(1, amount=700))
    with pytest.raises(TopUpRefused):
        await stores.ledger.top_up("p1", 5_000, 500, timedelta(hours=1), key("t1"), T0)
    await stores.buy_ins.compensate("b-1", "TABLE_FULL", T0)  # the 700 come back
    with pytest.raises(TopUpRefused):
        await stores.ledger.top_up("p1", 5_000, 500, timedelta(hours=1), key("t2"), T0)
    await stores.buy_ins.reserve(buy_in(2, amount=501))  # 499 left, 501 at a table
    with pytest.raises(TopUpRefused):
        await stores.ledger.top_up("p1", 5_000, 500, timedelta(hours=1), key("t3"), T0)
    account = await stores.ledger.account("p1")
    assert account is not None and account.balance == 499 and account.last_top_up_at is None
