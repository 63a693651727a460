"""The lobby's ``/metrics`` (``FELT_LOBBY_METRICS_PORT``): the RPC metrics the shared
interceptor records for both of its services, and sign-ups by kind."""

from __future__ import annotations

import grpc
from argon2 import PasswordHasher

from poker.v1 import lobby_service_pb2 as pb
from poker.v1 import lobby_service_pb2_grpc as rpc
from services.lobby.memory import MemoryTables
from services.lobby.server import LobbyServerConfig, start_lobby_server
from services.lobby.tokens import Passwords
from tests.integration.scrape import scrape, value

from .conftest import empty_pool
from .test_join_lounge_grpc import guest
from .test_lobby_grpc import SECRETS, Clock, auth, refused

LOBBY = "poker.v1.LobbyService"


async def test_the_lobby_counts_its_calls_and_sign_ups(lobby_dsn: str) -> None:
    pool = await empty_pool(lobby_dsn)
    await pool.close()
    config = LobbyServerConfig.from_env(
        {"DATABASE_URL": lobby_dsn, "FELT_DEV_MODE": "1", "FELT_LOBBY_METRICS_PORT": "0"}
    )
    config.tables, config.clock, config.secrets = MemoryTables(), Clock(), SECRETS
    config.passwords = Passwords(PasswordHasher(time_cost=1, memory_cost=64, parallelism=1))
    config.address = "127.0.0.1:0"
    running = await start_lobby_server(config)
    try:
        assert running.metrics is not None
        async with grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            stub: rpc.LobbyServiceAsyncStub = rpc.LobbyServiceStub(channel)
            alice = await guest(stub, "Alice")
            await guest(stub, "Bob")
            await stub.GetBalance(pb.GetBalanceRequest(), metadata=auth(alice))
            unknown = pb.GetLoungeRequest(lounge_id="no-such-lounge")
            await refused(stub.GetLounge(unknown, metadata=auth(alice)))
        samples = await scrape(running.metrics.port)
    finally:
        await running.stop()

    def calls(method: str, code: str) -> float:
        return value(samples, "felt_rpc_requests_total", service=LOBBY, method=method, code=code)

    assert calls("CreateGuest", "OK") == 2
    assert calls("GetBalance", "OK") == 1
    assert calls("GetLounge", "NOT_FOUND") == 1
    assert value(samples, "felt_rpc_duration_seconds_count", method="CreateGuest") == 2
    assert value(samples, "felt_lobby_sign_ups_total", kind="guest") == 2
    assert value(samples, "felt_lobby_sagas_stuck") == 0
