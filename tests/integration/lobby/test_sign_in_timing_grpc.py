"""SignIn over gRPC on loopback against PostgreSQL (issue #20): as slow for a name nobody has,
or a guest's, as for a registered name with a wrong password, so its time tells no one which
names exist. Compared as medians in one test, never against a fixed duration."""

from __future__ import annotations

import statistics
import time
from collections.abc import AsyncIterator

import grpc
import pytest
from argon2 import PasswordHasher

from poker.v1 import lobby_service_pb2 as pb
from poker.v1 import lobby_service_pb2_grpc as rpc
from services.lobby.server import LobbyServerConfig, start_lobby_server
from services.lobby.tokens import Passwords

from .conftest import empty_pool
from .test_lobby_grpc import PASSWORD, SECRETS, refused, rid

# Argon2id heavy enough (about 20-40 ms here) that a skipped verification would show above
# the noise of a call on a shared machine; cheaper than the library's defaults.
TIMED = PasswordHasher(time_cost=2, memory_cost=16 * 1024, parallelism=1)


@pytest.fixture
async def timed_lobby(lobby_dsn: str) -> AsyncIterator[rpc.LobbyServiceAsyncStub]:
    await (await empty_pool(lobby_dsn)).close()
    config = LobbyServerConfig(
        database_url=lobby_dsn,
        address="127.0.0.1:0",
        secrets=SECRETS,
        passwords=Passwords(TIMED),
        grace_s=0.5,
        table_admin_token="lobby-tests-service-credential-0123456789",
    )
    running = await start_lobby_server(config)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{running.port}")
    try:
        yield rpc.LobbyServiceStub(channel)
    finally:
        await channel.close()
        await running.stop()


async def test_sign_in_takes_as_long_for_an_unknown_name(
    timed_lobby: rpc.LobbyServiceAsyncStub,
) -> None:
    """The medians of wrong sign-ins for registered names, unknown names and guests (no
    password) are within a factor of two of each other: each is one Argon2 verification.
    (Skipping it for unknown names made them about ten times faster.)"""
    stub = timed_lobby
    registered = [f"Known {i}" for i in range(4)]
    guests = [f"Guest {i}" for i in range(4)]
    for name in registered:
        await stub.Register(
            pb.RegisterRequest(display_name=name, password=PASSWORD, request_id=rid())
        )
    for name in guests:
        await stub.CreateGuest(pb.CreateGuestRequest(display_name=name, request_id=rid()))

    async def timed(name: str) -> float:
        request = pb.SignInRequest(display_name=name, password="wrong password", request_id=rid())
        start = time.perf_counter()
        assert await refused(stub.SignIn(request)) == (
            grpc.StatusCode.UNAUTHENTICATED,
            "BAD_CREDENTIALS",
        )
        return time.perf_counter() - start

    known: list[float] = []
    unknown: list[float] = []
    guest_times: list[float] = []
    for round_ in range(3):  # interleaved, so that the machine's load falls on all alike
        for i in range(4):  # at most 3 failures per name: under the per-name limit
            known.append(await timed(registered[i]))
            unknown.append(await timed(f"Nobody {round_} {i}"))
            guest_times.append(await timed(guests[i]))
    base = statistics.median(known)
    assert 0.5 <= statistics.median(unknown) / base <= 2.0, (known, unknown)
    assert 0.5 <= statistics.median(guest_times) / base <= 2.0, (known, guest_times)
