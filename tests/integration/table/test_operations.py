"""Operating the table service safely: exclusive ports, production mode, token lifetime, demo clock.

Regression tests for issue 9 (items 6, 8, 13, 14), against real servers on loopback
and the test Redis; issue #20: weak service credentials refused at start-up (the
process exits with status 2 and says why), gRPC reflection off in production.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
import types
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_reflection.v1alpha import (  # type: ignore[import-untyped]
    reflection_pb2,
    reflection_pb2_grpc,
)

import services.table.auth as auth_module
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from services.grpc_server import PortInUse, aio_server, bind
from services.serve import (
    DEMO_BOTS,
    DEMO_STACK,
    DEMO_TABLES,
    mend_demo_tables,
    open_demo_tables,
)
from services.table.auth import DEFAULT_TOKEN_TTL_S, DEV_SERVICE_TOKEN, Secrets
from services.table.server import (
    DEV_SECRET,
    ConfigError,
    TableServerConfig,
    start_table_server,
)
from tests.integration.table.harness import ADMIN_TOKEN, AI_TOKEN, SeatKey, TableEnv

SECRET = b"operations-tests-secret-0123456789abcdef"
ADMIN = "operations-admin-credential-0123456789"
AI = "operations-ai-credential-0123456789abc"


# ---------------------------------------------------------------- item 6: exclusive ports


async def test_a_second_server_on_a_taken_port_refuses_to_start(table_env: TableEnv) -> None:
    first = await table_env.start_server()
    stub = table_env.stub(first)
    table_id = await table_env.create_table(stub, table_env.nlhe(2))
    keys_before = set(await table_env.redis.keys("*"))

    with pytest.raises(PortInUse, match=f"cannot listen on 127.0.0.1:{first.port}"):
        await table_env.start_server(address=f"127.0.0.1:{first.port}")
    # Refused before touching Redis: no lease, no table, no key written.
    assert set(await table_env.redis.keys("*")) == keys_before
    # Nor can a server with gRPC's default options (SO_REUSEPORT on) share the port.
    other = grpc.aio.server()
    with pytest.raises(RuntimeError):
        other.add_insecure_port(f"127.0.0.1:{first.port}")
    # Every call still reaches the one server that owns the table.
    for _ in range(20):
        table = (await stub.GetTable(pb.GetTableRequest(table_id=table_id))).table
        assert table.table_id == table_id


async def test_felt_servers_bind_exclusively() -> None:
    first = aio_server()
    port = bind(first, "127.0.0.1:0")
    await first.start()
    try:
        with pytest.raises(PortInUse, match="FELT_TABLE_ADDR"):
            bind(aio_server(), f"127.0.0.1:{port}")
    finally:
        await first.stop(0)


# ---------------------------------------------------------------- item 13: production mode


@pytest.mark.parametrize(
    ("secrets", "problem"),
    [
        (Secrets(DEV_SECRET, ADMIN, AI), "public development secret"),
        (Secrets(b"short-secret", ADMIN, AI), "at least 32 bytes"),
        (Secrets(SECRET, "", AI), "FELT_ADMIN_TOKEN is unset"),
        (Secrets(SECRET, DEV_SERVICE_TOKEN, AI), "public development service credential"),
        (Secrets(SECRET, ADMIN, AI, token_ttl_s=0), "seat token lifetime"),
        # issue #20: weak service credentials
        (Secrets(SECRET, "x", AI), r"FELT_ADMIN_TOKEN must be at least 32 bytes \(it has 1\)"),
        (Secrets(SECRET, ADMIN, ""), "FELT_AI_TOKEN is unset"),
        (Secrets(SECRET, ADMIN, "a"), r"FELT_AI_TOKEN must be at least 32 bytes \(it has 1\)"),
        (Secrets(SECRET, ADMIN, ADMIN), "FELT_ADMIN_TOKEN and FELT_AI_TOKEN must differ"),
        (Secrets(SECRET, "v1." + "p" * 40 + "." + "s" * 43, AI), "shape of a player's token"),
    ],
)
async def test_production_mode_refuses_an_unsafe_configuration(
    table_env: TableEnv, secrets: Secrets, problem: str
) -> None:
    with pytest.raises(ConfigError, match=problem) as refused:
        await table_env.start_server(secrets=secrets)
    assert "FELT_DEV_MODE=1" in str(refused.value)
    assert await table_env.redis.keys("*") == []  # nothing served, nothing written


async def test_the_default_configuration_starts_only_in_development_mode(
    table_env: TableEnv,
) -> None:
    with pytest.raises(ConfigError, match="development secret"):
        await start_table_server(TableServerConfig(table_env.redis_url, address="127.0.0.1:0"))
    config = TableServerConfig.from_env({"REDIS_URL": table_env.redis_url}, dev=True)
    assert config.dev_mode and config.secrets.token_secret == DEV_SECRET
    assert config.secrets.admin_token == DEV_SERVICE_TOKEN
    server = await table_env.start_server(secrets=config.secrets, dev_mode=True)
    stub = table_env.stub(server)
    # Development mode: internal calls take the public development service credential, and
    # are no more open without it than in production.
    create = pb.CreateTableRequest(table_id="dev", config=table_env.nlhe(2), request_id="c")
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await stub.CreateTable(create)
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert table_env.error_reason(refused.value) == "SERVICE_CREDENTIAL_REQUIRED"
    service = (("authorization", f"Bearer {DEV_SERVICE_TOKEN}"),)
    response = await stub.CreateTable(create, metadata=service)
    assert response.table.table_id == "dev"


def test_configuration_from_the_environment() -> None:
    env = {"FELT_TOKEN_SECRET": SECRET.decode(), "FELT_ADMIN_TOKEN": ADMIN, "FELT_AI_TOKEN": AI}
    config = TableServerConfig.from_env(env)
    assert not config.dev_mode
    assert config.secrets.token_ttl_s == DEFAULT_TOKEN_TTL_S == 86_400
    config.check()  # a production configuration
    assert TableServerConfig.from_env({**env, "FELT_SEAT_TOKEN_TTL_S": "3600"}).secrets.token_ttl_s
    assert TableServerConfig.from_env({"FELT_DEV_MODE": "1"}).dev_mode
    assert TableServerConfig.from_env({"FELT_DEV_MODE": "true"}).secrets.token_secret == DEV_SECRET
    # Without development mode no secret is filled in: the start is refused.
    with pytest.raises(ConfigError, match="at least 32 bytes"):
        TableServerConfig.from_env({"FELT_ADMIN_TOKEN": ADMIN}).check()
    for bad in ("0", "-5", "soon", str(10**9)):
        with pytest.raises(ConfigError, match="FELT_SEAT_TOKEN_TTL_S"):
            TableServerConfig.from_env({**env, "FELT_SEAT_TOKEN_TTL_S": bad})
    with pytest.raises(ConfigError, match="FELT_LEASE_TTL_MS"):
        TableServerConfig.from_env({**env, "FELT_LEASE_TTL_MS": "5s"})


# ------------------------------------------------ issue #20: credentials, reflection

REPO = Path(__file__).resolve().parents[3]


async def exit_of(module: str, env: dict[str, str]) -> tuple[int, str]:
    """``python -m module`` run with ``env`` (and nothing of this process's Felt settings):
    its exit status and what it wrote to stderr."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("FELT_")}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        module,
        cwd=REPO,
        env={**clean, **env},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, err.decode()


@pytest.mark.parametrize(
    ("admin", "ai", "problem"),
    [
        ("x", AI, "FELT_ADMIN_TOKEN must be at least 32 bytes (it has 1)"),
        (ADMIN, "", "FELT_AI_TOKEN is unset"),
        (ADMIN, "a", "FELT_AI_TOKEN must be at least 32 bytes (it has 1)"),
        (ADMIN, ADMIN, "FELT_ADMIN_TOKEN and FELT_AI_TOKEN must differ"),
    ],
)
async def test_a_weak_credential_stops_the_process(
    table_env: TableEnv, admin: str, ai: str, problem: str
) -> None:
    env = {
        "REDIS_URL": table_env.redis_url,
        "FELT_TABLE_ADDR": "127.0.0.1:0",
        "FELT_TOKEN_SECRET": SECRET.decode(),
        "FELT_ADMIN_TOKEN": admin,
        "FELT_AI_TOKEN": ai,
    }
    status, err = await exit_of("services.table.server", env)
    assert status == 2
    assert problem in err and "refusing to start in production mode" in err
    assert ADMIN not in err and AI not in err  # the credentials themselves are never printed
    assert await table_env.redis.keys("*") == []  # refused before touching anything


async def reflected_services(port: int) -> tuple[grpc.StatusCode, list[str]]:
    """The services the server at ``port`` lists by gRPC reflection (OK), or the status it
    refused the call with (and none)."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        try:
            async for answer in stub.ServerReflectionInfo(iter([request])):
                names = [s.name for s in answer.list_services_response.service]
                return grpc.StatusCode.OK, sorted(names)
        except grpc.aio.AioRpcError as error:
            return error.code(), []
    return grpc.StatusCode.OK, []


async def test_reflection_is_off_in_production_unless_asked_for(table_env: TableEnv) -> None:
    production = await table_env.start_server()
    assert await reflected_services(production.port) == (grpc.StatusCode.UNIMPLEMENTED, [])
    asked = await table_env.start_server(reflection=True)
    assert "poker.v1.TableService" in (await reflected_services(asked.port))[1]
    dev = await table_env.start_server(dev_mode=True)
    assert "poker.v1.TableService" in (await reflected_services(dev.port))[1]
    env = {"FELT_TOKEN_SECRET": SECRET.decode(), "FELT_ADMIN_TOKEN": ADMIN, "FELT_AI_TOKEN": AI}
    assert not TableServerConfig.from_env(env).reflects
    assert TableServerConfig.from_env({**env, "FELT_GRPC_REFLECTION": "1"}).reflects
    assert TableServerConfig.from_env(env, dev=True).reflects
    assert not TableServerConfig.from_env({**env, "FELT_GRPC_REFLECTION": "0"}, dev=True).reflects
    with pytest.raises(ConfigError, match="FELT_GRPC_REFLECTION"):
        TableServerConfig.from_env({**env, "FELT_GRPC_REFLECTION": "maybe"})


# ---------------------------------------------------------------- item 14: token lifetime


async def _table_with_token_ttl(
    table_env: TableEnv, ttl: int, table_id: str, seats: int
) -> tuple[Any, tuple[tuple[str, str], ...]]:
    """A server whose seat tokens live ``ttl`` seconds, with an empty table: its stub and the
    service credential's metadata."""
    server = await table_env.start_server(secrets=Secrets(SECRET, ADMIN, AI, token_ttl_s=ttl))
    stub = table_env.stub(server)
    md = (("authorization", f"Bearer {ADMIN}"),)
    await stub.CreateTable(
        pb.CreateTableRequest(table_id=table_id, config=table_env.nlhe(seats), request_id="c"),
        metadata=md,
    )
    return stub, md


async def test_seat_tokens_expire_after_their_configured_lifetime(
    table_env: TableEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    ttl = 3600
    stub, md = await _table_with_token_ttl(table_env, ttl, "ttl", 2)
    seat_request = pb.SeatPlayerRequest(
        table_id="ttl", seat=0, player_id="p0", stack=100, request_id="s0"
    )
    before = int(time.time())
    seated = await stub.SeatPlayer(seat_request, metadata=md)
    after = int(time.time())
    expires = seated.seat_token_expire_time.seconds
    assert before + ttl <= expires <= after + ttl
    # A retry gets the same token (and expiry) back, not a fresh lifetime.
    assert (await stub.SeatPlayer(seat_request, metadata=md)) == seated
    seat = SeatKey(0, "p0", seated.seat_token)
    table_id = "ttl"
    request = pb.GetTableViewRequest(table_id=table_id, seat=0)
    # The token works until then (also once it is cached as verified).
    assert (await stub.GetTableView(request, metadata=seat.md)).view.viewer_seat == 0

    # The lifetime passes (the service's clock moves on; nothing else does).
    later = types.SimpleNamespace(time=lambda: time.time() + ttl + 2)
    monkeypatch.setattr(auth_module, "time", later)
    calls: list[Callable[[], Awaitable[object]]] = [
        lambda: stub.GetTableView(request, metadata=seat.md),
        lambda: table_env.submit(stub, table_id, seat, _fold()),
        lambda: stub.SitOut(
            pb.SitOutRequest(table_id=table_id, seat=0, request_id="late"), metadata=seat.md
        ),
    ]
    for call in calls:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await call()
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert "expired" in (refused.value.details() or "")
        assert table_env.error_reason(refused.value) == "SEAT_TOKEN_EXPIRED"  # renew it
    assert not await table_env.recorded(table_id, "late")  # the refusal changed nothing


async def test_a_seat_stream_ends_at_the_first_event_after_its_token_expired(
    table_env: TableEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    ttl = 3600
    stub, md = await _table_with_token_ttl(table_env, ttl, "lapse", 3)

    async def seat(n: int) -> SeatKey:
        seated = await stub.SeatPlayer(
            pb.SeatPlayerRequest(
                table_id="lapse", seat=n, player_id=f"p{n}", stack=100, request_id=f"s{n}"
            ),
            metadata=md,
        )
        return SeatKey(n, f"p{n}", seated.seat_token)

    first = await seat(0)
    stream = stub.WatchTable(
        pb.WatchTableRequest(table_id="lapse", seat=0, from_sequence=0), metadata=first.md
    )
    items = aiter(stream)
    assert (await anext(items)).WhichOneof("item") == "snapshot"
    spectator = stub.WatchTable(pb.WatchTableRequest(table_id="lapse", from_sequence=0))
    public = aiter(spectator)
    await anext(public)

    # The token's lifetime passes while the stream is open: the next event (a second player
    # sits down) ends the seat's stream instead of reaching it; a spectator's goes on.
    later = types.SimpleNamespace(time=lambda: time.time() + ttl + 2)
    monkeypatch.setattr(auth_module, "time", later)
    await seat(1)
    with pytest.raises(grpc.aio.AioRpcError) as ended:
        await anext(items)  # the very next item: not the seating, nor the hand it starts
    assert ended.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert table_env.error_reason(ended.value) == "SEAT_TOKEN_EXPIRED"
    assert (await anext(public)).event.WhichOneof("event") == "player_seated"
    spectator.cancel()


def _fold() -> tpb.Action:
    return tpb.Action(fold=tpb.Action.Fold())


# ---------------------------------------------------------------- item 8: demo tables


async def test_demo_tables_have_an_action_clock_and_open_idempotently(table_env: TableEnv) -> None:
    server = await table_env.start_server()
    stub = table_env.stub(server)
    admin = table_env.admin[0][1].split()[1]
    await open_demo_tables(f"127.0.0.1:{server.port}", admin)
    await open_demo_tables(f"127.0.0.1:{server.port}", admin)  # again, as after a restart
    for table_id, wanted in DEMO_TABLES.items():
        table = (await stub.GetTable(pb.GetTableRequest(table_id=table_id))).table
        config = table.config
        assert config.action_clock.ToMilliseconds() > 0, table_id
        assert config.action_clock == wanted.action_clock
        assert config.max_consecutive_timeouts > 0
        taken = [s for s in table.seats if s.status != tpb.SEAT_STATUS_EMPTY]
        assert all(s.ai_level != epb.AI_LEVEL_UNSPECIFIED for s in taken)
        assert len(taken) == len(DEMO_BOTS)  # seated once, not twice
        assert len(taken) < config.seat_count  # a free seat to join


async def test_the_demo_keeper_refills_a_busted_bot_and_sits_in_a_sat_out_one(
    table_env: TableEnv,
) -> None:
    """A demo table whose bots' own play leaves one bot with every chip deals again: the
    keeper gives the busted bot the demo stack (and sits in a bot the clock sat out), once
    per state, never touching a person's seat."""
    server = await table_env.start_server()
    stub = table_env.stub(server)
    table_id = "demo-holdem"
    await table_env.create_table(stub, DEMO_TABLES[table_id], table_id)
    # The person first, sat out before any bot sits down: with the bots seated the table deals
    # at once, and on a loaded machine a hand dealt in between would deal the person in too.
    person = await table_env.seat(stub, table_id, 2, stack=10)
    leave = pb.SitOutRequest(table_id=table_id, seat=2, request_id="person-sits-out")
    await stub.SitOut(leave, metadata=person.md)
    # Two bots with one big blind each: every hand is all-in at once, and one of them busts.
    for seat, name in ((0, "hard"), (1, "easy")):
        await table_env.seat(
            stub,
            table_id,
            seat,
            stack=10,
            ai_level=epb.AI_LEVEL_EASY,
            player_id=f"bot-{name}-{table_id}",
        )

    async def table() -> tpb.Table:
        return (await stub.GetTable(pb.GetTableRequest(table_id=table_id))).table

    async def busted() -> bool | None:
        view = await table_env.view(stub, table_id)
        if view.hand.HasField("to_act") and view.hand.street != epb.STREET_COMPLETE:
            asked = pb.GetTableViewRequest(table_id=table_id, seat=view.hand.to_act)
            mine = (await stub.GetTableView(asked, metadata=table_env.ai_md)).view
            legal = {a.type for a in mine.hand.legal_actions}
            act = (
                tpb.Action(call=tpb.Action.Call())
                if tpb.ACTION_TYPE_CALL in legal
                else tpb.Action(check=tpb.Action.Check())
            )
            request = pb.SubmitActionRequest(
                table_id=table_id,
                seat=view.hand.to_act,
                request_id=f"r{view.table.sequence}",
                expected_sequence=view.table.sequence,
                action=act,
            )
            with contextlib.suppress(grpc.aio.AioRpcError):  # the table moved on meanwhile
                await stub.SubmitAction(request, metadata=table_env.ai_md)
            return None
        t = await table()
        if t.sequence != view.table.sequence:  # a hand was dealt in between: look again
            return None
        return True if any(s.stack == 0 for s in t.seats[:2]) else None

    await table_env.eventually(busted, "a bot to bust", timeout=30)
    before = await table()
    (broke,) = [seat.seat for seat in before.seats[:2] if seat.stack == 0]
    assert await mend_demo_tables(stub, ADMIN_TOKEN, AI_TOKEN) == 1
    added = [
        (e.sequence, e.chips_added.seat, e.chips_added.amount)
        for e in await table_env.stored(table_id)
        if e.HasField("chips_added") and e.sequence > before.sequence
    ]
    assert added == [(before.sequence + 1, broke, DEMO_STACK)]  # once, to the busted bot only
    after = await table()
    assert after.seats[2].stack == 10 and after.seats[2].status == tpb.SEAT_STATUS_SITTING_OUT
    # The bots deal on.
    await table_env.eventually(lambda: _dealing(table_env, stub, table_id), "the next hand")

    # A bot the action clock sat out is sat in again; a second round finds nothing to mend.
    sit_out = pb.SitOutRequest(table_id=table_id, seat=0, request_id="bot-sits-out")
    await stub.SitOut(sit_out, metadata=table_env.ai_md)
    assert (await table()).seats[0].status == tpb.SEAT_STATUS_SITTING_OUT
    assert await mend_demo_tables(stub, ADMIN_TOKEN, AI_TOKEN) >= 1
    assert (await table()).seats[0].status == tpb.SEAT_STATUS_SITTING_IN


async def _dealing(table_env: TableEnv, stub: Any, table_id: str) -> bool | None:
    view = await table_env.view(stub, table_id)
    return True if view.hand.HasField("to_act") else None
