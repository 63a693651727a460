"""The history service over gRPC, in the lobby's process, on real PostgreSQL and Redis.

A recorded golden table of each variant is stored in Redis as the table
service stores it, and its first hands are archived in PostgreSQL through
the projector's fold and the archive's PostgreSQL adapter; the rest are only
in the stream. Two guests of the lobby sit in two of its seats. Then, as a
client: archived and live hands for each reader, status codes and
``ErrorInfo`` reasons, a player's pages, and the ``felt replay`` and
``felt verify-hand`` commands against the running service.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import grpc
import pokerkit
import pytest

from felt.core.cards import card_str
from felt.core.rules.events import HandEnded
from felt.core.table.events import AnyEvent, is_hand_event
from felt.storage.archive import Cursor, TableWrite
from felt.storage.archive.postgres import PostgresHandArchive
from felt.storage.archive.projection import TableProjection
from felt.storage.eventstore import RedisEventStore
from felt.storage.migrations import migrate
from felt.tools.client.replay import events_of, render
from felt.tools.client.verify_hand import check_history
from poker.v1 import history_service_pb2 as hpb
from poker.v1 import history_service_pb2_grpc as hrpc
from poker.v1 import lobby_service_pb2 as pb
from poker.v1 import lobby_service_pb2_grpc as rpc
from services.lobby.db_cli import MIGRATIONS
from services.lobby.server import LobbyServerConfig, start_lobby_server
from tests.felt_command import run_felt
from tests.golden.stored import golden_events, hand_events, public_ids, stored_records
from tests.unit.rules.test_properties import _cards_in
from tests.unit.test_history import CARD, _secret_cards

from .test_lobby_grpc import SECRETS, refused

OPERATOR_TOKEN = "operator-token-for-the-history-tests-0123456789"
ARCHIVED = 15


@dataclass
class World:
    port: int
    stub: hrpc.HistoryServiceAsyncStub
    alice: tuple[tuple[str, str], ...]
    alice_id: str
    alice_token: str
    operator: tuple[tuple[str, str], ...]
    tables: dict[str, str]  # variant name -> table id
    hands: dict[str, list[str]]  # variant name -> public ids in order
    events: dict[str, list[AnyEvent]]  # variant name -> the table's events, unredacted


@pytest.fixture
async def world(fresh_database: str, redis_url: str, redis: object) -> AsyncIterator[World]:
    await migrate(fresh_database, MIGRATIONS)
    config = LobbyServerConfig(
        database_url=fresh_database,
        address="127.0.0.1:0",
        secrets=SECRETS,
        grace_s=0.5,
        table_admin_token=OPERATOR_TOKEN,
        redis_url=redis_url,
    )
    running = await start_lobby_server(config)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{running.port}")
    pool = await asyncpg.create_pool(fresh_database, min_size=1, max_size=4)
    streams = RedisEventStore.from_url(redis_url)
    try:
        lobby: rpc.LobbyServiceAsyncStub = rpc.LobbyServiceStub(channel)
        alice = await lobby.CreateGuest(
            pb.CreateGuestRequest(display_name="Alice", request_id=str(uuid.uuid4()))
        )
        bob = await lobby.CreateGuest(
            pb.CreateGuestRequest(display_name="Bob", request_id=str(uuid.uuid4()))
        )
        # Recorded players who sit both in archived hands and in later ones.
        a, b = alice.player.player_id, bob.player.player_id
        players = {"holdem": {"p3": a, "p5": b}, "draw": {"p10": a, "p6": b}}
        archive = PostgresHandArchive(pool)
        tables, hands, recorded = {}, {}, {}
        for name in ("holdem", "draw"):
            table = tables[name] = f"hist-{name}-{uuid.uuid4().hex[:8]}"
            events = recorded[name] = golden_events(name, players[name])
            hands[name] = public_ids(events)
            records = stored_records(table, events)
            await streams.append(table, [r.payload for r in records], 0)
            ends = [i for i, e in enumerate(events) if isinstance(e, HandEnded)]
            projection = TableProjection(table, Cursor())
            for record in records[: ends[ARCHIVED - 1] + 1]:
                projection.feed(record)
            batch = projection.take()
            await archive.write([TableWrite(table, 0, batch.cursor, batch.hands, batch.late)])
        token = alice.credentials.access_token
        yield World(
            running.port,
            hrpc.HistoryServiceStub(channel),
            (("authorization", f"Bearer {token}"),),
            alice.player.player_id,
            token,
            (("authorization", f"Bearer {OPERATOR_TOKEN}"),),
            tables,
            hands,
            recorded,
        )
    finally:
        await streams.aclose()
        await pool.close()
        await channel.close()
        await running.stop()


def _get(hand_id: str, table_id: str = "", **kw: object) -> hpb.HistoryServiceGetHandHistoryRequest:
    return hpb.HistoryServiceGetHandHistoryRequest(hand_id=hand_id, table_id=table_id, **kw)  # type: ignore[arg-type]


def _alice_seat(response: hpb.HistoryServiceGetHandHistoryResponse, alice_id: str) -> int | None:
    return next((s.seat for s in response.seats if s.player_id == alice_id), None)


async def _alices_hand(
    world: World, name: str, live: bool
) -> hpb.HistoryServiceGetHandHistoryResponse:
    ids = world.hands[name][ARCHIVED:] if live else world.hands[name][:ARCHIVED]
    for hand in ids:
        got = await world.stub.GetHandHistory(_get(hand, world.tables[name]), metadata=world.alice)
        if _alice_seat(got, world.alice_id) is not None:
            return got
    raise AssertionError("alice played none of those hands")


async def test_archived_and_live_hands_as_their_player_verify_and_render(world: World) -> None:
    for name in ("holdem", "draw"):
        for live in (False, True):
            got = await _alices_hand(world, name, live)
            assert got.archived is not live
            seat = _alice_seat(got, world.alice_id)
            assert got.reader == hpb.HAND_READER_SEAT and got.seat == seat
            assert all(s.player_id for s in got.seats)
            check = check_history(got)
            assert check.ok and check.verified > 0 and check.root
            text = render(got, "text")
            assert f"(seat {seat}) saw it" in text
            assert "*** SUMMARY ***" in text
            doc = json.loads(render(got, "json"))
            mine = next(s for s in doc["seats"] if s["seat"] == seat)
            assert None not in mine["dealt"]
            assert doc["hand_id"] == got.hand_id and doc["table_id"] == world.tables[name]
            if name == "holdem":
                assert pokerkit.HandHistory.loads(render(got, "phh")).starting_stacks


async def test_spectators_and_the_operator(world: World) -> None:
    hand = world.hands["holdem"][0]
    spectator = await world.stub.GetHandHistory(_get(hand))
    assert spectator.reader == hpb.HAND_READER_SPECTATOR and not spectator.HasField("seat")
    doc = json.loads(render(spectator, "json"))
    shown = {s["seat"] for s in doc["showdown"] if not s["mucked"]} | {
        s["seat"] for s in doc["shown_after"]
    }
    for seat in doc["seats"]:
        assert seat["dealt"] == [None] * len(seat["dealt"])
        if seat["seat"] not in shown:
            assert None in seat["cards"]
    full = await world.stub.GetHandHistory(_get(hand), metadata=world.operator)
    assert full.reader == hpb.HAND_READER_OPERATOR
    assert all(None not in s["dealt"] for s in json.loads(render(full, "json"))["seats"])
    # The operator asking for the spectator's view gets exactly that.
    plain = await world.stub.GetHandHistory(
        _get(hand, reader=hpb.HAND_READER_SPECTATOR), metadata=world.operator
    )
    assert plain == spectator


async def test_no_reader_holds_another_seats_unshown_cards_archived_or_live(world: World) -> None:
    """Over the wire, for every hand of both tables: the oracle from the recorded events."""
    for name in ("holdem", "draw"):
        for n, hand in enumerate(world.hands[name]):
            raw = hand_events(world.events[name], hand)
            for metadata in (world.alice, ()) if n % 3 == 0 else (world.alice,):
                got = await world.stub.GetHandHistory(
                    _get(hand, world.tables[name]), metadata=metadata
                )
                viewer = got.seat if got.HasField("seat") else None
                secret = {card_str(c) for c in _secret_cards(raw, viewer)}
                sent = set(CARD.findall(render(got, "json"))) | {
                    card_str(p.card) for item in got.events for p in item.card_proofs
                }
                sent |= {
                    card_str(c)
                    for e in events_of(got)
                    if is_hand_event(e)
                    for c in _cards_in(e)
                    if c is not None
                }
                assert not sent & secret, f"{viewer} was sent {sent & secret} of {hand}"


async def test_status_codes_and_reasons(world: World) -> None:
    hand = world.hands["holdem"][0]
    live = world.hands["draw"][-1]
    not_found = (grpc.StatusCode.NOT_FOUND, "HAND_NOT_FOUND")
    assert await refused(world.stub.GetHandHistory(_get("0" * 32))) == not_found
    assert await refused(world.stub.GetHandHistory(_get(live))) == not_found  # no table named
    assert await refused(world.stub.GetHandHistory(_get(live, world.tables["holdem"]))) == not_found
    assert (
        await refused(
            world.stub.GetHandHistory(
                _get(hand, reader=hpb.HAND_READER_OPERATOR), metadata=world.alice
            )
        )
        == not_found
    )
    assert await refused(world.stub.GetHandHistory(_get("XYZ"))) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_HAND_ID",
    )
    assert await refused(world.stub.GetHandHistory(_get(hand, "Bad Table"))) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_TABLE_ID",
    )
    assert await refused(
        world.stub.GetHandHistory(_get(hand, reader=hpb.HAND_READER_SEAT, seat=40))
    ) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_SEAT")
    assert await refused(
        world.stub.GetHandHistory(_get(hand, reader=hpb.HAND_READER_SEAT, seat=1))
    ) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_MISSING")
    bad = (("authorization", "Bearer not-a-token"),)
    code, _ = await refused(world.stub.GetHandHistory(_get(hand), metadata=bad))
    assert code == grpc.StatusCode.UNAUTHENTICATED


async def test_a_players_hands_in_pages(world: World) -> None:
    seen: list[str] = []
    token = ""
    while True:
        page = await world.stub.ListPlayerHands(
            hpb.ListPlayerHandsRequest(page_size=4, page_token=token), metadata=world.alice
        )
        seen += [h.hand_id for h in page.hands]
        token = page.next_page_token
        if not token:
            break
    archived = set(world.hands["holdem"][:ARCHIVED]) | set(world.hands["draw"][:ARCHIVED])
    assert seen and set(seen) <= archived and len(set(seen)) == len(seen)
    assert page.stats.hands_played == len(seen)
    assert page.stats.went_to_showdown >= page.stats.won_at_showdown
    by_operator = await world.stub.ListPlayerHands(
        hpb.ListPlayerHandsRequest(player_id=world.alice_id), metadata=world.operator
    )
    assert by_operator.stats == page.stats
    assert await refused(world.stub.ListPlayerHands(hpb.ListPlayerHandsRequest())) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "TOKEN_MISSING",
    )
    assert await refused(
        world.stub.ListPlayerHands(hpb.ListPlayerHandsRequest(page_size=101), metadata=world.alice)
    ) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_PAGE_SIZE")
    assert await refused(
        world.stub.ListPlayerHands(
            hpb.ListPlayerHandsRequest(page_token="zz"), metadata=world.alice
        )
    ) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_PAGE_TOKEN")
    assert await refused(
        world.stub.ListPlayerHands(
            hpb.ListPlayerHandsRequest(player_id="someone-else"), metadata=world.alice
        )
    ) == (grpc.StatusCode.NOT_FOUND, "PLAYER_NOT_FOUND")


async def _felt(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``felt ARGS`` run in this process (in a thread: the service runs on this event loop).

    The command's own code path from its parser on; ``test_felt_replay_as_a_process`` runs
    the installed command once as its own process too.
    """
    return await asyncio.to_thread(run_felt, *args, **(env or {}))


async def test_felt_replay_as_a_process(world: World) -> None:
    got = await _alices_hand(world, "holdem", False)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.cli",
        "replay",
        got.hand_id,
        "--target",
        f"127.0.0.1:{world.port}",
        "--seat",
        str(got.seat),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "FELT_ACCESS_TOKEN": world.alice_token},
    )
    out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    assert f"(seat {got.seat}) saw it" in out.decode()


async def test_felt_replay_and_verify_hand_on_archived_and_live_hands(
    world: World, tmp_path: object
) -> None:
    target = f"127.0.0.1:{world.port}"
    mine = {"FELT_ACCESS_TOKEN": world.alice_token}
    for name in ("holdem", "draw"):
        for live in (False, True):
            got = await _alices_hand(world, name, live)
            hand, table, seat = got.hand_id, world.tables[name], str(got.seat)
            status, out, err = await _felt(
                "replay", hand, "--target", target, "--table", table, "--seat", seat, env=mine
            )
            assert status == 0, err
            assert f"Hand {hand}" in out and f"(seat {seat}) saw it" in out
            assert "*** SUMMARY ***" in out
            status, out, _ = await _felt(
                "replay", hand, "--target", target, "--table", table, "--json"
            )
            assert status == 0 and json.loads(out)["viewer"]["role"] == "spectator"
            status, out, err = await _felt(
                "replay", hand, "--target", target, "--table", table, "--phh"
            )
            if name == "holdem":
                assert status == 0 and pokerkit.HandHistory.loads(out)
            else:
                assert status == 2 and "Hold'em" in err
            status, out, err = await _felt(
                "verify-hand",
                "--public-id",
                hand,
                "--history-target",
                target,
                "--table",
                table,
                "--seat",
                seat,
                env=mine,
            )
            assert status == 0, err
            assert "verified" in out and "NOT" not in out
    # A history saved by replay is verified and replayed again without the service.
    saved = Path(str(tmp_path)) / "hand.json"
    status, out, err = await _felt(
        "replay",
        hand,
        "--target",
        target,
        "--table",
        table,
        "--seat",
        seat,
        "--save",
        str(saved),
        env=mine,
    )
    assert status == 0, err
    status, again, _ = await _felt("replay", hand, "--file", str(saved))
    assert status == 0 and again == out
    status, out, err = await _felt("verify-hand", "--file", str(saved))
    assert status == 0 and "verified" in out, err
    # Another player's seat, or a hand that is not there: the service's answer, exit status 2.
    status, _, err = await _felt("replay", "0" * 32, "--target", target)
    assert status == 2 and "NOT_FOUND" in err
