"""Failed credential attempts at the lobby, throttled per client address (issue #20).

Over gRPC on loopback against PostgreSQL, with this test as the trusted proxy
(the gateway) naming each client in ``x-forwarded-for``: past the allowance a
client's calls with a token that is not a genuine access token are
RESOURCE_EXHAUSTED ``AUTH_THROTTLED``, the operator's token included (a guess
is not confirmed), one count for the lobby and its history service; another
client is unaffected, and a genuine access token still works from the throttled
address. And the lobby's start-up refuses a weak service credential; its gRPC
reflection is off in production.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from argon2 import PasswordHasher
from grpc_reflection.v1alpha import (  # type: ignore[import-untyped]
    reflection_pb2,
    reflection_pb2_grpc,
)

from felt.wire.attempts import AttemptLimits
from felt.wire.clients import TrustedProxies
from poker.v1 import history_service_pb2 as hpb
from poker.v1 import history_service_pb2_grpc as hrpc
from poker.v1 import lobby_service_pb2 as pb
from poker.v1 import lobby_service_pb2_grpc as rpc
from services.lobby.application import LobbySecrets
from services.lobby.server import LobbyServerConfig, start_lobby_server
from services.lobby.tokens import Passwords

from .conftest import empty_pool
from .test_forwarded_clients import reason

SECRETS = LobbySecrets(
    b"lobby-tests-access-secret-0123456789", b"lobby-tests-refresh-secret-012345678"
)
OPERATOR = "lobby-tests-operator-credential-0123456789"
FORGED = "a1.eyJwIjoieCJ9." + "A" * 43  # an access token's shape, signed by nobody


def as_client(address: str, token: str) -> tuple[tuple[str, str], ...]:
    return (("x-forwarded-for", address), ("authorization", f"Bearer {token}"))


REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
async def stubs(lobby_dsn: str) -> AsyncIterator[tuple[Any, Any]]:
    pool = await empty_pool(lobby_dsn)
    await pool.close()
    running = await start_lobby_server(
        LobbyServerConfig(
            database_url=lobby_dsn,
            address="127.0.0.1:0",
            secrets=SECRETS,
            passwords=Passwords(PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)),
            grace_s=0.5,
            table_admin_token=OPERATOR,  # no table service is called here
            proxies=TrustedProxies.parse("127.0.0.1"),
            attempts=AttemptLimits(burst=3, per_minute=1),
        )
    )
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{running.port}")
    try:
        # Production (no FELT_DEV_MODE): no reflection, the schema is nobody's to browse.
        reflect = reflection_pb2_grpc.ServerReflectionStub(channel)
        listing = reflection_pb2.ServerReflectionRequest(list_services="")
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            async for _ in reflect.ServerReflectionInfo(iter([listing])):
                pass
        assert refused.value.code() is grpc.StatusCode.UNIMPLEMENTED
        yield rpc.LobbyServiceStub(channel), hrpc.HistoryServiceStub(channel)
    finally:
        await channel.close()
        await running.stop()


async def test_wrong_tokens_from_one_address_are_throttled(stubs: tuple[Any, Any]) -> None:
    lobby, history = stubs
    guest = await lobby.CreateGuest(
        pb.CreateGuestRequest(display_name="Guessed", request_id=str(uuid.uuid4()))
    )
    genuine = guest.credentials.access_token
    balance = pb.GetBalanceRequest()
    attempts = [
        await reason(lobby.GetBalance(balance, metadata=as_client("203.0.113.5", FORGED)))
        for _ in range(3)
    ]
    assert attempts == ["TOKEN_INVALID"] * 3
    # The allowance spent (the history service counts with the lobby): throttled.
    hand = hpb.HistoryServiceGetHandHistoryRequest(hand_id="0" * 32)
    for call in (
        lobby.GetBalance(balance, metadata=as_client("203.0.113.5", FORGED)),
        history.GetHandHistory(hand, metadata=as_client("203.0.113.5", "operator-guess")),
        # the right operator token is refused like a wrong one: no guess is confirmed
        history.GetHandHistory(hand, metadata=as_client("203.0.113.5", OPERATOR)),
    ):
        assert await reason(call) == "AUTH_THROTTLED"
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await lobby.GetBalance(balance, metadata=as_client("203.0.113.5", FORGED))
    assert caught.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "203.0.113.5" not in (caught.value.details() or "")
    # Another client is unaffected; a genuine token from the throttled address still works.
    assert await reason(lobby.GetBalance(balance, metadata=as_client("203.0.113.6", FORGED))) == (
        "TOKEN_INVALID"
    )
    answer = await lobby.GetBalance(balance, metadata=as_client("203.0.113.5", genuine))
    assert answer.balance > 0
    # The operator from elsewhere is served (its view: NOT_FOUND, no such hand).
    assert await reason(
        history.GetHandHistory(hand, metadata=as_client("203.0.113.7", OPERATOR))
    ) == ("HAND_NOT_FOUND")


async def test_a_weak_service_credential_stops_the_lobby(lobby_dsn: str) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("FELT_")}
    env = {
        **clean,
        "DATABASE_URL": lobby_dsn,
        "FELT_LOBBY_ADDR": "127.0.0.1:0",
        "FELT_LOBBY_ACCESS_SECRET": SECRETS.access.decode(),
        "FELT_LOBBY_REFRESH_SECRET": SECRETS.refresh.decode(),
        "FELT_ADMIN_TOKEN": "x",  # the production credential
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.cli",
        "lobby",
        cwd=REPO,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 2
    assert "FELT_ADMIN_TOKEN must be at least 32 bytes (it has 1)" in err.decode()
