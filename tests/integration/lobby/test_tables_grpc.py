"""The ``Tables`` port over gRPC against a real table service on loopback (and Redis): a
lounge's table created and its AI players seated with the admin credential, retries
answered as the first call, refusals told apart from an unreachable service."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import grpc
import pytest

from felt.storage.archive import Cursor, MemoryHandArchive, TableWrite
from felt.storage.archive.projection import TableProjection
from felt.storage.eventstore import RedisEventStore
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb_table
from poker.v1 import table_service_pb2 as tpb
from services.lobby.closing import ClosingApp
from services.lobby.lounges import AiSeat, LoungeApp
from services.lobby.memory import MemoryCloses, MemoryLounges, MemoryTables
from services.lobby.ports import Kind, LoungeState, TableRefused, TablesUnavailable
from services.lobby.seating import SeatingApp
from services.lobby.tables import GrpcTables
from services.table.auth import Secrets
from services.table.server import RunningTableServer, TableServerConfig, start_table_server
from tests.unit.services.test_buy_ins_on_fakes import GRANT
from tests.unit.services.test_buy_ins_on_fakes import World as BuyInWorld
from tests.unit.services.test_lobby_app_on_fakes import req
from tests.unit.services.test_lounges_on_fakes import World, nlhe

ADMIN = "lobby-tests-table-admin-credential-0123456789"


@pytest.fixture
async def table_server(redis: Any, redis_url: str) -> AsyncIterator[RunningTableServer]:
    server = await start_table_server(
        TableServerConfig(
            redis_url=redis_url,
            address="127.0.0.1:0",
            secrets=Secrets(
                b"lobby-tests-table-secret-0123456789",
                ADMIN,
                "lobby-tests-ai-credential-0123456789",
            ),
            ai_stream=f"lobby-tests-ai-{hashlib.sha256(redis_url.encode()).hexdigest()[:6]}",
        )
    )
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
async def channel(table_server: RunningTableServer) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{table_server.port}") as ch:
        yield ch


async def test_a_lounge_creates_its_table_and_seats_its_ai(channel: grpc.aio.Channel) -> None:
    world = World()
    tables = GrpcTables(channel, ADMIN)
    app = LoungeApp(world.lobby.app, MemoryLounges(), tables)
    alice = await world.player(1)
    ai = [AiSeat(2, epb.AI_LEVEL_HARD), AiSeat(None, epb.AI_LEVEL_EASY)]
    lounge = await app.create(alice, req("g1"), "Over the wire", nlhe(), 0, 0, ai, False)
    got = await tables.stub.GetTable(tpb.GetTableRequest(table_id=lounge.lounge_id))
    seated = {s.seat: (s.player_id, s.ai_level, s.stack) for s in got.table.seats if s.player_id}
    assert seated == {
        0: (f"ai-{lounge.lounge_id}-0", epb.AI_LEVEL_EASY, 1000),
        2: (f"ai-{lounge.lounge_id}-2", epb.AI_LEVEL_HARD, 1000),
    }
    assert got.table.config.seat_count == 6 and got.table.config.big_blind == 10
    # retries (same request ids) are answered as the first calls
    await tables.create(
        lounge.lounge_id, lounge.name, lounge.config, f"lounge/{lounge.lounge_id}/create"
    )
    grant = await tables.seat(
        lounge.lounge_id,
        2,
        f"ai-{lounge.lounge_id}-2",
        "Bot 3 (hard)",
        1000,
        epb.AI_LEVEL_HARD,
        f"lounge/{lounge.lounge_id}/ai/2",
    )
    assert grant.seat == 2 and grant.seat_token
    human = await tables.seat(lounge.lounge_id, None, "p-1", "Alice", 500, 0, "saga-1")
    assert human.seat == 1 and human.expires_at is not None
    with pytest.raises(TableRefused) as taken:
        await tables.seat(lounge.lounge_id, 1, "p-2", "Bob", 500, 0, "saga-2")
    assert taken.value.reason
    with pytest.raises(TableRefused) as missing:
        await tables.seat("no-such-table", None, "p-2", "Bob", 500, 0, "saga-3")
    assert missing.value.reason
    with pytest.raises(TableRefused) as denied:
        await GrpcTables(channel, "not-the-admin").seat(
            lounge.lounge_id, None, "p-2", "Bob", 500, 0, "saga-4"
        )
    assert denied.value.reason


async def test_an_unreachable_table_service_is_not_a_refusal() -> None:
    async with grpc.aio.insecure_channel("127.0.0.1:1") as ch:
        with pytest.raises(TablesUnavailable):
            await GrpcTables(ch, ADMIN).create("t-1", "T", b"\x08\x01\x10\x02", "r-1")


async def test_a_seat_left_and_its_stack_read_from_the_tables_events(
    channel: grpc.aio.Channel,
) -> None:
    tables = GrpcTables(channel, ADMIN)
    await tables.create("t-leave", "Leaving", nlhe().SerializeToString(), "create-t-leave")
    alice = await tables.seat("t-leave", 3, "p-1", "Alice", 500, 0, "saga-a")
    assert await tables.vacated("t-leave", 3, "p-1", 0) is None  # still there
    with pytest.raises(TableRefused):  # only with the seat's own token
        await tables.leave("t-leave", 3, "not-the-token", "leave-x")
    departure = await tables.leave("t-leave", 3, alice.seat_token, "leave-a")
    assert departure.stack == 500  # no hand (one player): gone at once
    again = await tables.leave("t-leave", 3, alice.seat_token, "leave-a")
    assert again == departure  # a retry: the first answer
    assert await tables.vacated("t-leave", 3, "p-1", departure.sequence - 1) == 500
    # the seat taken again by another player: the first one's PlayerLeft is still found
    await tables.seat("t-leave", 3, "p-2", "Bob", 700, 0, "saga-b")
    assert await tables.vacated("t-leave", 3, "p-1", departure.sequence - 1) == 500
    assert await tables.vacated("t-leave", 3, "p-2", departure.sequence) is None
    with pytest.raises(TableRefused):
        await tables.vacated("no-such-table", 3, "p-1", 0)


async def test_a_seat_dealt_in_is_vacated_when_its_hand_ends(channel: grpc.aio.Channel) -> None:
    tables = GrpcTables(channel, ADMIN)
    await tables.create("t-hand", "In play", nlhe(2).SerializeToString(), "create-t-hand")
    grants = [
        await tables.seat("t-hand", n, f"p-{n}", name, 500, 0, f"saga-{n}")
        for n, name in enumerate(("Alice", "Bob"))
    ]
    admin = tables.metadata
    watch = tables.stub.WatchTable(tpb.WatchTableRequest(table_id="t-hand"), metadata=admin)
    async for item in watch:  # the first hand is dealt by itself (two players)
        if item.HasField("event") and item.event.WhichOneof("event") == "hole_cards_dealt":
            break
    watch.cancel()
    view = (
        await tables.stub.GetTableView(tpb.GetTableViewRequest(table_id="t-hand"), metadata=admin)
    ).view
    actor = view.hand.to_act
    leaver = 1 - actor
    departure = await tables.leave("t-hand", leaver, grants[leaver].seat_token, f"leave-{leaver}")
    # dealt in: still there, its chips behind it, until the hand ends
    assert await tables.vacated("t-hand", leaver, f"p-{leaver}", departure.sequence - 1) is None
    fold = tpb.SubmitActionRequest(
        table_id="t-hand",
        seat=actor,
        request_id="fold",
        action=tpb_table.Action(fold=tpb_table.Action.Fold()),
    )
    await tables.stub.SubmitAction(
        fold, metadata=(("authorization", f"Bearer {grants[actor].seat_token}"),)
    )
    stack = await tables.vacated("t-hand", leaver, f"p-{leaver}", departure.sequence - 1)
    got = (await tables.stub.GetTable(tpb.GetTableRequest(table_id="t-hand"))).table
    left_behind = sum(s.stack for s in got.seats if s.player_id)
    assert stack is not None and stack > 500  # it won the blind the other folded
    assert stack + left_behind == 1_000  # every chip accounted for


async def test_a_table_closed_with_its_seats_sent_home(channel: grpc.aio.Channel) -> None:
    """``Tables.close`` and ``occupants`` on a real table service, and a lounge's close through
    them: a hand in play first (the seats asked to leave, the one to act folded for), then
    every seat's stack home as "table closed", every chip accounted for."""
    world = BuyInWorld()
    tables = GrpcTables(channel, ADMIN)
    lounges = LoungeApp(world.lobby.app, world.lounges, tables)
    seating = SeatingApp(lounges, world.store, tables)
    closing = ClosingApp(seating, MemoryCloses(world.store))
    alice, bob = await world.player(1), await world.player(2)
    lounge = await lounges.create(alice, req("lc"), "Closing", nlhe(2), 0, 0, [], False)
    lid = lounge.lounge_id
    await seating.join(alice, req("ja"), lid, 0, 500, "")
    await seating.join(bob, req("jb"), lid, 1, 700, "")
    watch = tables.stub.WatchTable(tpb.WatchTableRequest(table_id=lid), metadata=tables.metadata)
    async for item in watch:  # the first hand is dealt by itself (two players)
        if item.HasField("event") and item.event.WhichOneof("event") == "hole_cards_dealt":
            break
    watch.cancel()
    assert await tables.close(lid, "close-early") is False  # HAND_RUNNING: between hands only
    seen = await tables.occupants(lid)
    sagas = sorted(world.store.sagas.values(), key=lambda s: s.seat or 0)
    assert (seen.closed, [p for _, p in seen.seats]) == (False, [s.player_id for s in sagas])
    closing_now = await closing.close(alice, req("c"), lid)
    for _ in range(50):  # the hand ends (the seat to act folded for), then the table closes
        if closing_now.state is LoungeState.CLOSED:
            break
        await asyncio.sleep(0.05)
        closing_now = await closing.drive(closing_now)
    assert closing_now.state is LoungeState.CLOSED
    table = (await tables.stub.GetTable(tpb.GetTableRequest(table_id=lid))).table
    assert table.state == tpb_table.TABLE_STATE_CLOSED and not any(s.player_id for s in table.seats)
    assert await tables.close(lid, "close-again") is True  # closed already
    with pytest.raises(TableRefused) as refused:
        await tables.seat(lid, 0, "p-late", "Late", 500, 0, "late")
    assert refused.value.reason == "TABLE_CLOSED"
    home = {
        p: (await world.lobby.app.balance(c)).balance for p, c in (("alice", alice), ("bob", bob))
    }
    assert sum(home.values()) == 2 * GRANT and home != {"alice": GRANT, "bob": GRANT}
    totals = await world.ledger.totals()
    assert totals.on_tables == 0 and totals.balances == totals.created
    closed = [m for m in world.ledger._rows if m.kind is Kind.TABLE_CLOSED]
    assert sorted(m.amount for m in closed) != [] and sum(m.amount for m in closed) == 1_200


async def test_a_seat_token_reissued_for_its_occupant(channel: grpc.aio.Channel) -> None:
    tables = GrpcTables(channel, ADMIN)
    await tables.create("t-token", "Tokens", nlhe().SerializeToString(), "create-t-token")
    alice = await tables.seat("t-token", 1, "p-1", "Alice", 500, 0, "saga-t")
    with pytest.raises(TableRefused) as other:
        await tables.reissue("t-token", 1, "p-2", "reissue-x")
    assert other.value.reason == "NOT_OCCUPANT"
    fresh = await tables.reissue("t-token", 1, "p-1", "reissue-1")
    assert fresh.seat == 1 and fresh.seat_token != alice.seat_token
    assert fresh.expires_at is not None
    assert await tables.reissue("t-token", 1, "p-1", "reissue-1") == fresh  # a retry

    def sit_out(token: str, request_id: str) -> Any:
        return tables.stub.SitOut(
            tpb.SitOutRequest(table_id="t-token", seat=1, request_id=request_id),
            metadata=(("authorization", f"Bearer {token}"),),
        )

    with pytest.raises(grpc.aio.AioRpcError) as old:
        await sit_out(alice.seat_token, "out-old")
    assert old.value.code() == grpc.StatusCode.PERMISSION_DENIED
    await sit_out(fresh.seat_token, "out-new")
    with pytest.raises(TableRefused):  # the old token no longer names the seat
        await tables.leave("t-token", 1, alice.seat_token, "leave-old")
    assert (await tables.leave("t-token", 1, fresh.seat_token, "leave-new")).stack == 500


async def test_a_departure_trimmed_from_the_stream_still_gives_its_stack(
    channel: grpc.aio.Channel, redis: Any
) -> None:
    """The leave saga reads the seat's ``PlayerLeft`` after its ``LeaveSeat``; a lobby that was
    down longer than the table's retention finds it trimmed (once archived). Its chips must
    still come back: the event is in the archive (``archived_table_events``)."""
    archive = MemoryHandArchive()
    tables = GrpcTables(channel, ADMIN, archive)
    await tables.create("t-gone", "Gone", nlhe().SerializeToString(), "create-t-gone")
    alice = await tables.seat("t-gone", 3, "p-1", "Alice", 500, 0, "saga-a")
    departure = await tables.leave("t-gone", 3, alice.seat_token, "leave-a")
    await tables.seat("t-gone", 3, "p-2", "Bob", 700, 0, "saga-b")
    store = RedisEventStore(redis)
    # The projector's part: the stream so far archived (its real projection), the mark raised.
    projection = TableProjection("t-gone", Cursor())
    for record in await store.read("t-gone"):
        projection.feed(record)
    batch = projection.take()
    await archive.write([TableWrite("t-gone", 0, batch.cursor, table_events=batch.table_events)])
    await store.record_archived("t-gone", batch.cursor.position)
    await store.trim("t-gone", departure.sequence)  # as trim_archived may, once archived
    assert await tables.vacated("t-gone", 3, "p-1", departure.sequence - 1) == 500
    without = GrpcTables(channel, ADMIN)  # no archive: nothing guessed
    with pytest.raises(TablesUnavailable):
        await without.vacated("t-gone", 3, "p-1", departure.sequence - 1)


async def test_a_watch_grant_for_a_table_and_none_for_no_table(
    channel: grpc.aio.Channel, table_server: RunningTableServer
) -> None:
    """``IssueWatchGrant`` as the lobby calls it, against the fake's answers: a grant for a
    table that exists (signed with the table service's secret), ``TableRefused`` for none,
    and only with the service credential."""
    tables = GrpcTables(channel, ADMIN)
    config = nlhe(2)
    config.private = True
    await tables.create("t-private", "Friends", config.SerializeToString(), "create-t-private")
    grant = await tables.watch_grant("t-private")
    assert grant.expires_at > datetime.now(UTC) + timedelta(minutes=30)
    watched = await tables.stub.GetTableView(
        tpb.GetTableViewRequest(table_id="t-private"),
        metadata=(("authorization", f"Bearer {grant.token}"),),
    )
    assert watched.view.table.table_id == "t-private"
    with pytest.raises(TableRefused):
        await tables.watch_grant("no-such-table")
    with pytest.raises(TableRefused):  # a player's token is not the service credential
        await GrpcTables(channel, grant.token).watch_grant("t-private")
    fake = MemoryTables()
    await fake.create("t-private", "Friends", config.SerializeToString(), "create-t-private")
    assert (await fake.watch_grant("t-private")).expires_at > datetime.now(UTC)
    with pytest.raises(TableRefused):
        await fake.watch_grant("no-such-table")
