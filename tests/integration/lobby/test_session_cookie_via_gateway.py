"""A browser's refresh token in an HttpOnly cookie, through the gateway to the lobby on
PostgreSQL (``services.gateway.session_cookie``; docs/gateway.md, "Sessions in a browser").

The web client's calls are same-origin (``Sec-Fetch-Site: same-origin``, or an
``Origin`` naming the gateway's own host): signing in sets the cookie and leaves the
token out of the body; a refresh with the cookie alone works and rotates it; signing
out clears it. API clients (no such headers) and pages of other origins keep the token
in the body, and their refreshes never use the cookie.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from argon2 import PasswordHasher

from poker.v1 import lobby_service_pb2 as pb
from services.gateway.config import GatewayConfig
from services.gateway.server import start_gateway
from services.lobby.server import LobbyServerConfig, start_lobby_server
from services.lobby.tokens import REFRESH, Passwords

from .conftest import empty_pool
from .test_lobby_via_gateway import SECRETS

PATH = "/poker.v1.LobbyService/"
THIRTY_DAYS = 30 * 24 * 3600


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


def browser(http: httpx.AsyncClient, cookie: str = "") -> dict[str, str]:
    """The headers a browser sends with the web client's call (same-origin)."""
    headers = {"origin": str(http.base_url).rstrip("/"), "sec-fetch-site": "same-origin"}
    if cookie:
        headers["cookie"] = f"other=1; felt_refresh={cookie}"
    return headers


async def call(
    http: httpx.AsyncClient, method: str, body: dict[str, Any], headers: dict[str, str]
) -> httpx.Response:
    answer = await http.post(PATH + method, json=body, headers=headers)
    http.cookies.clear()  # each test call says which cookie it sends
    return answer


def cookie_of(answer: httpx.Response) -> dict[str, str]:
    """The ``felt_refresh`` Set-Cookie's value and attributes (names lower-cased)."""
    (header,) = [h for h in answer.headers.get_list("set-cookie") if h.startswith("felt_refresh=")]
    first, *attributes = [part.strip() for part in header.split(";")]
    parsed = {"value": first.partition("=")[2]}
    for attribute in attributes:
        name, _, value = attribute.partition("=")
        parsed[name.lower()] = value
    return parsed


def rid() -> str:
    return str(uuid.uuid4())


async def test_a_browsers_refresh_token_lives_in_an_httponly_cookie(
    http: httpx.AsyncClient,
) -> None:
    made = await call(
        http, "CreateGuest", {"displayName": "Ona", "requestId": rid()}, browser(http)
    )
    assert made.status_code == 200, made.text
    credentials = made.json()["credentials"]
    assert "refreshToken" not in credentials  # not in the body: no script can read it
    assert credentials["accessToken"] and credentials["refreshTokenExpireTime"]
    cookie = cookie_of(made)
    assert cookie["value"].startswith(f"{REFRESH}.")  # the lobby's refresh token
    assert "httponly" in cookie and cookie["samesite"] == "Strict"
    assert cookie["path"] == "/poker.v1.LobbyService/RefreshSession"
    assert THIRTY_DAYS - 120 <= int(cookie["max-age"]) <= THIRTY_DAYS
    assert "secure" not in cookie  # this page is served over plain HTTP

    # A refresh with the cookie alone works, and rotates it.
    refreshed = await call(
        http, "RefreshSession", {"requestId": rid()}, browser(http, cookie["value"])
    )
    assert refreshed.status_code == 200, refreshed.text
    assert "refreshToken" not in refreshed.json()["credentials"]
    rotated = cookie_of(refreshed)
    assert rotated["value"] != cookie["value"] and "httponly" in rotated
    access = refreshed.json()["credentials"]["accessToken"]
    balance = await call(
        http, "GetBalance", {}, {**browser(http), "authorization": f"Bearer {access}"}
    )
    assert balance.status_code == 200, balance.text

    # A page of another origin (CORS, or a same-site sibling) is never answered from the
    # cookie, even were the browser to send it: refused, nothing rotated.
    for site in ("same-site", "cross-site"):
        foreign = {**browser(http, rotated["value"]), "sec-fetch-site": site}
        refused = await call(http, "RefreshSession", {"requestId": rid()}, foreign)
        assert refused.status_code == 401, refused.text
        assert "set-cookie" not in refused.headers

    # Signing out clears the cookie; the token it held works no more (and a refresh with it
    # clears the cookie again).
    out = await call(
        http,
        "SignOut",
        {"requestId": rid()},
        {**browser(http, rotated["value"]), "authorization": f"Bearer {access}"},
    )
    assert out.status_code == 200, out.text
    cleared = cookie_of(out)
    assert cleared["value"] == "" and cleared["max-age"] == "0"
    assert cleared["path"] == "/poker.v1.LobbyService/RefreshSession"
    again = await call(
        http, "RefreshSession", {"requestId": rid()}, browser(http, rotated["value"])
    )
    assert again.status_code == 401
    assert cookie_of(again)["max-age"] == "0"


async def test_binary_protobuf_calls_and_a_page_over_tls(http: httpx.AsyncClient) -> None:
    """The web client's own encoding (binary protobuf); its page served over TLS (an
    ``https`` origin, a TLS terminator in front) gets a ``Secure`` cookie."""
    host = httpx.URL(str(http.base_url)).netloc.decode()
    headers = {
        "origin": f"https://{host}",
        "content-type": "application/proto",
    }  # no fetch metadata
    request = pb.CreateGuestRequest(display_name="Jonas", request_id=rid())
    made = await http.post(
        PATH + "CreateGuest", content=request.SerializeToString(), headers=headers
    )
    http.cookies.clear()
    assert made.status_code == 200, made.text
    answer = pb.CreateGuestResponse.FromString(made.content)
    assert answer.credentials.access_token and not answer.credentials.refresh_token
    assert answer.credentials.HasField("refresh_token_expire_time")
    cookie = cookie_of(made)
    assert "secure" in cookie and "httponly" in cookie

    refresh = pb.RefreshSessionRequest(request_id=rid())
    refreshed = await http.post(
        PATH + "RefreshSession",
        content=refresh.SerializeToString(),
        headers={**headers, "cookie": f"felt_refresh={cookie['value']}"},
    )
    http.cookies.clear()
    assert refreshed.status_code == 200, refreshed.text
    assert not pb.RefreshSessionResponse.FromString(refreshed.content).credentials.refresh_token
    assert cookie_of(refreshed)["value"] != cookie["value"]


async def test_api_clients_keep_the_token_in_the_body(http: httpx.AsyncClient) -> None:
    """No browser headers (curl, an app), or a page of another origin: the token stays in
    the body, no cookie is set, and a token in the body is used as it is."""
    made = await call(http, "CreateGuest", {"displayName": "Ada", "requestId": rid()}, {})
    assert made.status_code == 200, made.text
    token = made.json()["credentials"]["refreshToken"]
    assert token and "set-cookie" not in made.headers

    foreign = {"origin": "https://elsewhere.example"}
    refreshed = await call(
        http, "RefreshSession", {"refreshToken": token, "requestId": rid()}, foreign
    )
    assert refreshed.status_code == 200, refreshed.text
    token = refreshed.json()["credentials"]["refreshToken"]
    assert token and "set-cookie" not in refreshed.headers

    # A browser page that still holds a token in its storage (from before the cookie) sends
    # it in the body once: it is used, and moved into the cookie.
    moved = await call(
        http, "RefreshSession", {"refreshToken": token, "requestId": rid()}, browser(http)
    )
    assert moved.status_code == 200, moved.text
    assert "refreshToken" not in moved.json()["credentials"]
    assert cookie_of(moved)["value"]
