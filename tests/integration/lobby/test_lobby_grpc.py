"""The lobby over gRPC on loopback against PostgreSQL: what a client sees.

Status codes and ``ErrorInfo`` reasons, retries with a request_id, the token
lifecycle (expiry, refresh, reuse, sign-out), throttled sign-ins, chips.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import grpc
import pytest
from argon2 import PasswordHasher
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]

from felt.wire.tokens import DEV_SERVICE_TOKEN
from poker.v1 import lobby_pb2 as lpb
from poker.v1 import lobby_service_pb2 as pb
from poker.v1 import lobby_service_pb2_grpc as rpc
from services.lobby.application import LobbySecrets, LobbySettings
from services.lobby.server import ConfigError, LobbyServerConfig, start_lobby_server
from services.lobby.tokens import Passwords

from .conftest import empty_pool

SECRETS = LobbySecrets(
    b"lobby-tests-access-secret-0123456789", b"lobby-tests-refresh-secret-012345678"
)
PASSWORD = "correct horse battery"


class Clock:
    def __init__(self) -> None:
        self.offset = timedelta()

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset


@dataclass
class Lobby:
    stub: rpc.LobbyServiceAsyncStub
    clock: Clock
    pool: asyncpg.Pool


@pytest.fixture
async def lobby(lobby_dsn: str) -> AsyncIterator[Lobby]:
    pool = await empty_pool(lobby_dsn)
    clock = Clock()
    config = LobbyServerConfig(
        database_url=lobby_dsn,
        address="127.0.0.1:0",
        secrets=SECRETS,
        passwords=Passwords(PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)),
        clock=clock,
        grace_s=0.5,
        # no table service is called here
        table_admin_token="lobby-tests-service-credential-0123456789",
    )
    running = await start_lobby_server(config)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{running.port}")
    try:
        stub: rpc.LobbyServiceAsyncStub = rpc.LobbyServiceStub(channel)
        yield Lobby(stub, clock, pool)
    finally:
        await channel.close()
        await running.stop()
        await pool.close()


def rid() -> str:
    return str(uuid.uuid4())


def auth(credentials: lpb.Credentials) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {credentials.access_token}"),)


async def refused(call: Any) -> tuple[grpc.StatusCode, str]:
    """The status code and ``ErrorInfo`` reason a call ends with."""
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call
    error = info.value
    reason = ""
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                details = error_details_pb2.ErrorInfo()
                detail.Unpack(details)
                reason = details.reason
    return error.code(), reason


async def test_a_guest_signs_up_and_sees_its_chips(lobby: Lobby) -> None:
    request = pb.CreateGuestRequest(display_name="Alice", request_id=rid())
    guest = await lobby.stub.CreateGuest(request)
    assert guest.player.display_name == "Alice" and not guest.player.registered
    assert await lobby.stub.CreateGuest(request) == guest  # the retry: the same answer
    balance = await lobby.stub.GetBalance(pb.GetBalanceRequest(), metadata=auth(guest.credentials))
    assert balance.balance == LobbySettings().starting_grant
    me = await lobby.stub.GetPlayer(pb.GetPlayerRequest(), metadata=auth(guest.credentials))
    assert me.player == guest.player
    page = await lobby.stub.ListLedgerEntries(
        pb.ListLedgerEntriesRequest(), metadata=auth(guest.credentials)
    )
    assert [e.kind for e in page.entries] == [lpb.LEDGER_ENTRY_KIND_GRANT]
    assert page.next_page_token == ""
    assert await refused(
        lobby.stub.CreateGuest(pb.CreateGuestRequest(display_name="ALICE", request_id=rid()))
    ) == (grpc.StatusCode.ALREADY_EXISTS, "NAME_TAKEN")
    assert await refused(
        lobby.stub.CreateGuest(pb.CreateGuestRequest(display_name="a\x07b", request_id=rid()))
    ) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_NAME")
    assert await refused(
        lobby.stub.CreateGuest(
            pb.CreateGuestRequest(display_name="Bob", request_id=request.request_id)
        )
    ) == (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED")
    assert await refused(lobby.stub.GetBalance(pb.GetBalanceRequest())) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "TOKEN_MISSING",
    )


async def test_one_name_raced_by_many_sign_ups_goes_to_one(lobby: Lobby) -> None:
    calls = [
        lobby.stub.CreateGuest(pb.CreateGuestRequest(display_name=f"{n}ed", request_id=rid()))
        for n in ["T", "t"] * 8
    ]
    results = await asyncio.gather(*calls, return_exceptions=True)
    winners = [r for r in results if isinstance(r, pb.CreateGuestResponse)]
    assert len(winners) == 1
    assert all(
        isinstance(r, grpc.aio.AioRpcError) and r.code() == grpc.StatusCode.ALREADY_EXISTS
        for r in results
        if r not in winners
    )


async def test_register_sign_in_upgrade_and_throttling(lobby: Lobby) -> None:
    bob = await lobby.stub.Register(
        pb.RegisterRequest(display_name="Bob", password=PASSWORD, request_id=rid())
    )
    assert bob.player.registered
    stored = await lobby.pool.fetchrow("SELECT password_hash, fingerprint FROM players")
    assert stored is not None and stored["password_hash"].startswith("$argon2id$")
    signed = await lobby.stub.SignIn(
        pb.SignInRequest(display_name="bob", password=PASSWORD, request_id=rid())
    )
    assert signed.player.player_id == bob.player.player_id
    guest = await lobby.stub.CreateGuest(pb.CreateGuestRequest(display_name="Cy", request_id=rid()))
    upgraded = await lobby.stub.UpgradeGuest(
        pb.UpgradeGuestRequest(password=PASSWORD, request_id=rid()),
        metadata=auth(guest.credentials),
    )
    assert upgraded.player.registered and upgraded.player.player_id == guest.player.player_id
    for _ in range(LobbySettings().sign_in_max_failures):
        assert await refused(
            lobby.stub.SignIn(
                pb.SignInRequest(display_name="Bob", password="x" * 9, request_id=rid())
            )
        ) == (grpc.StatusCode.UNAUTHENTICATED, "BAD_CREDENTIALS")
    assert await refused(
        lobby.stub.SignIn(pb.SignInRequest(display_name="Bob", password=PASSWORD, request_id=rid()))
    ) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "TOO_MANY_SIGN_INS")
    lobby.clock.offset = LobbySettings().sign_in_window + timedelta(seconds=1)
    await lobby.stub.SignIn(
        pb.SignInRequest(display_name="Bob", password=PASSWORD, request_id=rid())
    )


async def test_token_lifecycle(lobby: Lobby) -> None:
    guest = await lobby.stub.CreateGuest(pb.CreateGuestRequest(display_name="Di", request_id=rid()))
    first = guest.credentials
    lobby.clock.offset = LobbySettings().access_ttl + timedelta(seconds=1)
    assert await refused(lobby.stub.GetBalance(pb.GetBalanceRequest(), metadata=auth(first))) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "TOKEN_EXPIRED",
    )
    refresh = pb.RefreshSessionRequest(refresh_token=first.refresh_token, request_id=rid())
    second = (await lobby.stub.RefreshSession(refresh)).credentials
    assert (await lobby.stub.RefreshSession(refresh)).credentials == second  # the retry
    await lobby.stub.GetBalance(pb.GetBalanceRequest(), metadata=auth(second))
    stored = await lobby.pool.fetch("SELECT token_hash FROM refresh_tokens")
    assert all(first.refresh_token.encode() not in bytes(r["token_hash"]) for r in stored)
    # the spent refresh token again: the session is revoked, its live access token with it
    assert await refused(
        lobby.stub.RefreshSession(
            pb.RefreshSessionRequest(refresh_token=first.refresh_token, request_id=rid())
        )
    ) == (grpc.StatusCode.UNAUTHENTICATED, "REFRESH_TOKEN_REUSED")
    assert await refused(lobby.stub.GetBalance(pb.GetBalanceRequest(), metadata=auth(second))) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "SESSION_REVOKED",
    )
    # sign-out
    bob = await lobby.stub.Register(
        pb.RegisterRequest(display_name="Eve", password=PASSWORD, request_id=rid())
    )
    await lobby.stub.SignOut(pb.SignOutRequest(request_id=rid()), metadata=auth(bob.credentials))
    assert await refused(
        lobby.stub.GetBalance(pb.GetBalanceRequest(), metadata=auth(bob.credentials))
    ) == (grpc.StatusCode.UNAUTHENTICATED, "SESSION_REVOKED")
    assert await refused(
        lobby.stub.RefreshSession(
            pb.RefreshSessionRequest(refresh_token=bob.credentials.refresh_token, request_id=rid())
        )
    ) == (grpc.StatusCode.UNAUTHENTICATED, "SESSION_REVOKED")
    forged = lpb.Credentials(access_token=bob.credentials.access_token[:-2] + "AA")
    assert await refused(lobby.stub.GetBalance(pb.GetBalanceRequest(), metadata=auth(forged))) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "TOKEN_INVALID",
    )


async def test_top_up_and_ledger_pages(lobby: Lobby) -> None:
    guest = await lobby.stub.CreateGuest(
        pb.CreateGuestRequest(display_name="Fay", request_id=rid())
    )
    meta = auth(guest.credentials)
    assert await refused(lobby.stub.TopUp(pb.TopUpRequest(request_id=rid()), metadata=meta)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_LOW",
    )
    await lobby.pool.execute(  # as if the chips went to tables: the ledger moves them
        "WITH a AS (UPDATE accounts SET balance = 1 RETURNING player_id) "
        "INSERT INTO ledger (player_id, kind, amount, balance_after, table_id, movement_key, "
        "fingerprint, created_at) SELECT player_id, 'buy_in', -9999, 1, 't1', 'k', '\\x00', now() "
        "FROM a"
    )
    top_up = await lobby.stub.TopUp(pb.TopUpRequest(request_id=rid()), metadata=meta)
    assert top_up.balance == 1 + LobbySettings().top_up_amount
    assert top_up.entry.kind == lpb.LEDGER_ENTRY_KIND_TOP_UP
    balance = await lobby.stub.GetBalance(pb.GetBalanceRequest(), metadata=meta)
    assert balance.HasField("next_top_up_time")
    first = await lobby.stub.ListLedgerEntries(
        pb.ListLedgerEntriesRequest(page_size=2), metadata=meta
    )
    assert [e.kind for e in first.entries] == [
        lpb.LEDGER_ENTRY_KIND_TOP_UP,
        lpb.LEDGER_ENTRY_KIND_BUY_IN,
    ]
    rest = await lobby.stub.ListLedgerEntries(
        pb.ListLedgerEntriesRequest(page_size=2, page_token=first.next_page_token), metadata=meta
    )
    assert [e.kind for e in rest.entries] == [lpb.LEDGER_ENTRY_KIND_GRANT]
    assert rest.next_page_token == ""
    assert await refused(
        lobby.stub.ListLedgerEntries(pb.ListLedgerEntriesRequest(page_token="zz!"), metadata=meta)
    ) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_PAGE_TOKEN")


def test_production_mode_refuses_unsafe_secrets() -> None:
    env = {"DATABASE_URL": "postgresql://x/y"}
    with pytest.raises(ConfigError, match="ACCESS_SECRET"):
        LobbyServerConfig.from_env(env).check()
    same = {**env, "FELT_LOBBY_ACCESS_SECRET": "s" * 40, "FELT_LOBBY_REFRESH_SECRET": "s" * 40}
    with pytest.raises(ConfigError, match="differ"):
        LobbyServerConfig.from_env(same).check()
    good = {**env, "FELT_LOBBY_ACCESS_SECRET": "a" * 40, "FELT_LOBBY_REFRESH_SECRET": "r" * 40}
    with pytest.raises(ConfigError, match="FELT_ADMIN_TOKEN"):  # the table service's credential
        LobbyServerConfig.from_env(good).check()
    with pytest.raises(ConfigError, match="public development service credential"):
        LobbyServerConfig.from_env({**good, "FELT_ADMIN_TOKEN": DEV_SERVICE_TOKEN}).check()
    # issue #20: the service credential (also the operator's) must not be guessable
    with pytest.raises(ConfigError, match=r"FELT_ADMIN_TOKEN must be at least 32 bytes \(it has 1"):
        LobbyServerConfig.from_env({**good, "FELT_ADMIN_TOKEN": "x"}).check()
    shaped = "a1." + "p" * 40 + "." + "s" * 43  # an access token's shape: the gateway forwards it
    with pytest.raises(ConfigError, match="shape of a player's token"):
        LobbyServerConfig.from_env({**good, "FELT_ADMIN_TOKEN": shaped}).check()
    good["FELT_ADMIN_TOKEN"] = "a-service-credential-of-32-bytes-or-more"
    LobbyServerConfig.from_env(good).check()
    dev = LobbyServerConfig.from_env(env, dev=True)
    dev.check()
    assert dev.table_admin_token == DEV_SERVICE_TOKEN
    with pytest.raises(ConfigError, match="FELT_LOBBY_ACCESS_TTL_S"):
        LobbyServerConfig.from_env({**good, "FELT_LOBBY_ACCESS_TTL_S": "1"})


async def test_production_mode_refuses_a_schema_not_migrated(fresh_database: str) -> None:
    env = {
        "DATABASE_URL": fresh_database,
        "FELT_LOBBY_ACCESS_SECRET": "a" * 40,
        "FELT_LOBBY_REFRESH_SECRET": "r" * 40,
        "FELT_ADMIN_TOKEN": "a-service-credential-of-32-bytes-or-more",
        "FELT_LOBBY_ADDR": "127.0.0.1:0",
    }
    with pytest.raises(ConfigError, match="felt db migrate"):
        await start_lobby_server(LobbyServerConfig.from_env(env))


async def test_sign_ups_from_one_address_are_limited(lobby_dsn: str) -> None:
    """FELT_LOBBY_MAX_SIGN_UPS from the environment, then over gRPC from 127.0.0.1: past it
    RESOURCE_EXHAUSTED TOO_MANY_SIGN_UPS, nothing made; a retry of an answered one is
    answered (not counted); the server's periodic pass forgets the window once it is over."""
    pool = await empty_pool(lobby_dsn)
    env = {"DATABASE_URL": lobby_dsn, "FELT_LOBBY_MAX_SIGN_UPS": "2"}
    settings = LobbyServerConfig.from_env(env, dev=True).settings
    assert settings.sign_up_max_per_client == 2
    clock = Clock()
    config = LobbyServerConfig(
        database_url=lobby_dsn,
        address="127.0.0.1:0",
        secrets=SECRETS,
        settings=settings,
        passwords=Passwords(PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)),
        clock=clock,
        grace_s=0.5,
        recover_every_s=0.05,
        # no table service is called here
        table_admin_token="lobby-tests-service-credential-0123456789",
    )
    running = await start_lobby_server(config)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{running.port}")
    try:
        stub: rpc.LobbyServiceAsyncStub = rpc.LobbyServiceStub(channel)
        first = pb.CreateGuestRequest(display_name="Ann", request_id=rid())
        await stub.CreateGuest(first)
        await stub.Register(
            pb.RegisterRequest(display_name="Bo", password=PASSWORD, request_id=rid())
        )
        assert await refused(
            stub.CreateGuest(pb.CreateGuestRequest(display_name="Cy", request_id=rid()))
        ) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "TOO_MANY_SIGN_UPS")
        assert await refused(
            stub.Register(
                pb.RegisterRequest(display_name="Di", password=PASSWORD, request_id=rid())
            )
        ) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "TOO_MANY_SIGN_UPS")
        assert (await stub.CreateGuest(first)).player.display_name == "Ann"  # a retry
        assert await pool.fetchval("SELECT count(*) FROM players") == 2
        assert (
            await pool.fetchval(
                "SELECT failures FROM sign_in_failures WHERE scope = 'sign-up:127.0.0.1'"
            )
            == 2
        )
        clock.offset = settings.sign_up_window
        for _ in range(100):  # the periodic pass forgets the window that has passed
            if not await pool.fetchval("SELECT count(*) FROM sign_in_failures"):
                break
            await asyncio.sleep(0.05)
        assert not await pool.fetchval("SELECT count(*) FROM sign_in_failures")
        await stub.CreateGuest(pb.CreateGuestRequest(display_name="Cy", request_id=rid()))
    finally:
        await channel.close()
        await running.stop()
        await pool.close()
