"""The lobby's per-address limits behind a proxy, over gRPC on loopback against PostgreSQL.

A trusted proxy (the gateway, here this test on 127.0.0.1) names each client in
``x-forwarded-for``: sign-ups and sign-ins are counted per forwarded client, so
one web client's limit is not everyone's. From a peer that is not trusted the
header is ignored: a direct client cannot get a fresh count by writing one. The last
test goes the whole way, through the HTTP gateway.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import grpc
import httpx
import pytest
from argon2 import PasswordHasher
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]

from felt.wire.clients import TrustedProxies
from poker.v1 import lobby_service_pb2 as pb
from poker.v1 import lobby_service_pb2_grpc as rpc
from services.gateway.config import GatewayConfig
from services.gateway.server import start_gateway
from services.lobby.application import LobbySecrets, LobbySettings
from services.lobby.server import LobbyServerConfig, start_lobby_server
from services.lobby.tokens import Passwords

from .conftest import empty_pool

SECRETS = LobbySecrets(
    b"lobby-tests-access-secret-0123456789", b"lobby-tests-refresh-secret-012345678"
)
PASSWORD = "correct horse battery"
SETTINGS = LobbySettings(sign_up_max_per_client=2, sign_in_max_failures=2)
Stub = Any  # rpc.LobbyServiceAsyncStub
LIMITED = "TOO_MANY_SIGN_UPS"


def rid() -> str:
    return str(uuid.uuid4())


def forwarded(address: str) -> tuple[tuple[str, str], ...]:
    """What the gateway sends: the client's address in ``x-forwarded-for``."""
    return (("x-forwarded-for", address),)


async def reason(call: Any) -> str:
    """The ``ErrorInfo`` reason a call is refused with ("" if it succeeds)."""
    try:
        await call
    except grpc.aio.AioRpcError as error:
        for key, value in error.trailing_metadata() or ():
            if key == "grpc-status-details-bin":
                for detail in status_pb2.Status.FromString(value).details:
                    info = error_details_pb2.ErrorInfo()
                    detail.Unpack(info)
                    return str(info.reason)
        return str(error.code())
    return ""


@asynccontextmanager
async def lobby_trusting(dsn: str, proxies: str) -> AsyncIterator[tuple[Stub, asyncpg.Pool, int]]:
    pool = await empty_pool(dsn)
    config = LobbyServerConfig(
        database_url=dsn,
        address="127.0.0.1:0",
        secrets=SECRETS,
        settings=SETTINGS,
        passwords=Passwords(PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)),
        grace_s=0.5,
        # no table service is called here
        table_admin_token="lobby-tests-service-credential-0123456789",
        proxies=TrustedProxies.parse(proxies),
    )
    running = await start_lobby_server(config)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{running.port}")
    try:
        yield rpc.LobbyServiceStub(channel), pool, running.port
    finally:
        await channel.close()
        await running.stop()
        await pool.close()


async def sign_ups(stub: Stub, metadata: Callable[[int], tuple[tuple[str, str], ...]]) -> list[str]:
    """Four sign-ups (guests and registrations alternately), each with ``metadata(n)``:
    the reason each was refused with, "" for one that was made."""
    reasons = []
    for n in range(4):
        name = f"P{uuid.uuid4().hex[:8]}"
        call = (
            stub.CreateGuest(
                pb.CreateGuestRequest(display_name=name, request_id=rid()), metadata=metadata(n)
            )
            if n % 2 == 0
            else stub.Register(
                pb.RegisterRequest(display_name=name, password=PASSWORD, request_id=rid()),
                metadata=metadata(n),
            )
        )
        reasons.append(await reason(call))
    return reasons


async def test_sign_ups_are_counted_per_forwarded_client(lobby_dsn: str) -> None:
    async with lobby_trusting(lobby_dsn, "127.0.0.1") as (stub, pool, _):
        alice = forwarded("203.0.113.7")
        assert await sign_ups(stub, lambda n: alice) == ["", "", LIMITED, LIMITED]
        # Another client behind the same proxy has its own count, an IPv6 one by its /48
        # (its /64s together), a port or the mapped form changing nothing.
        site = await sign_ups(stub, lambda n: forwarded(f"[2001:db8:5:{n:x}::1]:443"))
        assert site == ["", "", LIMITED, LIMITED]
        assert (
            await reason(
                stub.CreateGuest(
                    pb.CreateGuestRequest(display_name="Mapped", request_id=rid()),
                    metadata=forwarded("::ffff:203.0.113.7"),
                )
            )
            == "TOO_MANY_SIGN_UPS"
        )
        # The right-most entry not a trusted proxy is the client: what the client wrote at
        # the left is not read, and a trusted hop at the right is skipped.
        assert (
            await reason(
                stub.CreateGuest(
                    pb.CreateGuestRequest(display_name="Chained", request_id=rid()),
                    metadata=forwarded("198.51.100.99, 203.0.113.7, 127.0.0.1"),
                )
            )
            == "TOO_MANY_SIGN_UPS"
        )
        # Without a header, the proxy's own calls count as its own (127.0.0.1's).
        assert (
            await reason(
                stub.CreateGuest(pb.CreateGuestRequest(display_name="Own", request_id=rid()))
            )
            == ""
        )
        scopes = {
            row["scope"]: row["failures"]
            for row in await pool.fetch("SELECT scope, failures FROM sign_in_failures")
        }
        assert scopes == {
            "sign-up:203.0.113.7": 2,
            "sign-up:2001:db8:5::/48": 2,
            "sign-up:127.0.0.1": 1,
        }


@pytest.mark.parametrize("proxies", ["", "10.0.0.0/8, fd00::/8"])
async def test_a_direct_client_cannot_spoof_its_way_around_the_sign_up_limit(
    lobby_dsn: str, proxies: str
) -> None:
    """127.0.0.1 is not a trusted proxy here (nobody is, or only others): whatever it
    writes in x-forwarded-for, its sign-ups are its own address's."""
    async with lobby_trusting(lobby_dsn, proxies) as (stub, pool, _):
        reasons = await sign_ups(stub, lambda n: forwarded(f"203.0.113.{n + 1}"))
        assert reasons == ["", "", LIMITED, LIMITED]
        assert await pool.fetchval("SELECT count(*) FROM players") == 2
        scopes = [row["scope"] for row in await pool.fetch("SELECT scope FROM sign_in_failures")]
        assert scopes == ["sign-up:127.0.0.1"]


async def test_sign_ins_are_throttled_per_forwarded_client(lobby_dsn: str) -> None:
    """A guesser behind the proxy locks out only itself: the name's owner, another client
    of the same proxy, still signs in. Spoofed headers from an untrusted peer change
    nothing (the next test)."""
    async with lobby_trusting(lobby_dsn, "127.0.0.1") as (stub, _, _):
        await stub.Register(
            pb.RegisterRequest(display_name="Bob", password=PASSWORD, request_id=rid())
        )
        guesser, owner = forwarded("203.0.113.66"), forwarded("2001:db8:9:9::1")
        wrong = pb.SignInRequest(display_name="Bob", password="x" * 9, request_id=rid())
        for _ in range(SETTINGS.sign_in_max_failures):
            assert await reason(stub.SignIn(wrong, metadata=guesser)) == "BAD_CREDENTIALS"
        right = pb.SignInRequest(display_name="Bob", password=PASSWORD, request_id=rid())
        assert await reason(stub.SignIn(right, metadata=guesser)) == "TOO_MANY_SIGN_INS"
        signed = await stub.SignIn(
            pb.SignInRequest(display_name="Bob", password=PASSWORD, request_id=rid()),
            metadata=owner,
        )
        assert signed.player.display_name == "Bob"


async def test_a_direct_client_cannot_spoof_its_way_around_the_sign_in_throttle(
    lobby_dsn: str,
) -> None:
    async with lobby_trusting(lobby_dsn, "10.0.0.0/8") as (stub, _, _):
        await stub.Register(
            pb.RegisterRequest(display_name="Bob", password=PASSWORD, request_id=rid())
        )
        for n in range(SETTINGS.sign_in_max_failures):
            wrong = pb.SignInRequest(display_name="Bob", password="x" * 9, request_id=rid())
            assert (
                await reason(stub.SignIn(wrong, metadata=forwarded(f"198.51.100.{n}")))
                == "BAD_CREDENTIALS"
            )
        right = pb.SignInRequest(display_name="Bob", password=PASSWORD, request_id=rid())
        assert (
            await reason(stub.SignIn(right, metadata=forwarded("198.51.100.200")))
            == "TOO_MANY_SIGN_INS"
        )


async def test_browsers_behind_the_real_gateway_are_counted_apart(lobby_dsn: str) -> None:
    """The whole way: HTTP clients through ``services/gateway`` (uvicorn believes an
    ``X-Forwarded-For`` from loopback, as from an ingress), which names each one to the
    lobby in gRPC ``x-forwarded-for``; the lobby trusts loopback."""
    async with lobby_trusting(lobby_dsn, "127.0.0.1, ::1") as (_, pool, port):
        gateway = await start_gateway(
            GatewayConfig(address="127.0.0.1:0", lobby_target=f"127.0.0.1:{port}")
        )
        try:
            async with httpx.AsyncClient(base_url=gateway.url, timeout=20.0) as http:

                async def sign_up(browser: str) -> int:
                    made = await http.post(
                        "/poker.v1.LobbyService/CreateGuest",
                        json={"displayName": f"W{uuid.uuid4().hex[:8]}", "requestId": rid()},
                        headers={"x-forwarded-for": browser},
                    )
                    return made.status_code

                assert [await sign_up("203.0.113.1") for _ in range(3)] == [200, 200, 429]
                assert await sign_up("203.0.113.2") == 200  # another browser: its own count
        finally:
            await gateway.stop()
        rows = await pool.fetch("SELECT scope, failures FROM sign_in_failures ORDER BY scope")
        assert [(r["scope"], r["failures"]) for r in rows] == [
            ("sign-up:203.0.113.1", 2),
            ("sign-up:203.0.113.2", 1),
        ]
