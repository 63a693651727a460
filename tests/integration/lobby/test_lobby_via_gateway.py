"""The lobby through the HTTP gateway (Connect JSON) against PostgreSQL: a browser's first calls.

A guest is made, its access token (the bearer header) reaches the lobby as
gRPC metadata, and the lobby's refusals arrive as Connect errors with their
ErrorInfo reason.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from argon2 import PasswordHasher
from google.rpc import error_details_pb2  # type: ignore[import-untyped]

from services.gateway.config import GatewayConfig
from services.gateway.server import start_gateway
from services.lobby.application import LobbySecrets
from services.lobby.server import LobbyServerConfig, start_lobby_server
from services.lobby.tokens import Passwords

from .conftest import empty_pool

SECRETS = LobbySecrets(
    b"gateway-tests-access-secret-0123456789", b"gateway-tests-refresh-secret-012345678"
)


@pytest.fixture
async def http(lobby_dsn: str) -> AsyncIterator[httpx.AsyncClient]:
    pool = await empty_pool(lobby_dsn)
    await pool.close()
    lobby = await start_lobby_server(
        LobbyServerConfig(
            database_url=lobby_dsn,
            address="127.0.0.1:0",
            secrets=SECRETS,
            passwords=Passwords(PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)),
            grace_s=0.5,
            # no table service is called here
            table_admin_token="gateway-tests-service-credential-0123456789",
        )
    )
    gateway = await start_gateway(
        GatewayConfig(address="127.0.0.1:0", lobby_target=f"127.0.0.1:{lobby.port}")
    )
    try:
        async with httpx.AsyncClient(base_url=gateway.url, timeout=20.0) as client:
            yield client
    finally:
        await gateway.stop()
        await lobby.stop()


async def call(
    http: httpx.AsyncClient, method: str, body: dict[str, Any], token: str = ""
) -> httpx.Response:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    return await http.post(f"/poker.v1.LobbyService/{method}", json=body, headers=headers)


async def test_a_guest_plays_with_its_token(http: httpx.AsyncClient) -> None:
    made = await call(http, "CreateGuest", {"displayName": "Ona", "requestId": str(uuid.uuid4())})
    assert made.status_code == 200, made.text
    guest = made.json()
    assert guest["player"]["displayName"] == "Ona"
    token = guest["credentials"]["accessToken"]
    balance = await call(http, "GetBalance", {}, token)
    assert balance.status_code == 200, balance.text
    assert int(balance.json()["balance"]) == 10_000  # the starting grant

    # The history service, served by the lobby's process, through the same gateway.
    hands = await http.post(
        "/poker.v1.HistoryService/ListPlayerHands",
        json={"pageSize": 10},
        headers={"authorization": f"Bearer {token}"},
    )
    assert hands.status_code == 200, hands.text
    assert hands.json().get("hands", []) == []  # no hand played yet

    anonymous = await call(http, "GetBalance", {})
    assert anonymous.status_code == 401
    assert anonymous.json()["code"] == "unauthenticated"

    taken = await call(http, "CreateGuest", {"displayName": "ONA", "requestId": str(uuid.uuid4())})
    assert taken.status_code == 409
    body = taken.json()
    assert body["code"] == "already_exists"
    info = error_details_pb2.ErrorInfo.FromString(
        base64.b64decode(body["details"][0]["value"] + "==")
    )
    assert info.reason == "NAME_TAKEN"
