"""A gateway over real HTTP on loopback, in front of real table-service instances.

``stack`` starts table-service instances (``start_table_server``, port 0) on
the test Redis DB and a gateway (``start_gateway``, port 0) whose default
target is the first instance and which routes by the leases in that Redis.
Tests call it over HTTP (httpx: Connect JSON and binary, CORS) or with the
generated Connect client (``poker.v1.table_service_connect``: streams, gRPC-Web).
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import httpx
import pytest

from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from services.gateway.config import GatewayConfig, WatchCaps
from services.gateway.server import RunningGateway, start_gateway
from services.table.auth import Secrets
from services.table.server import RunningTableServer, TableServerConfig, start_table_server

ADMIN = "gateway-tests-admin-credential-0123456789"
SECRET = b"gateway-tests-secret-0123456789abcdef"
AI_TOKEN = "gateway-tests-ai-credential-0123456789"
ORIGIN = "https://play.example"


@dataclass
class Stack:
    redis_url: str
    tables: list[RunningTableServer] = field(default_factory=list)
    channels: list[grpc.aio.Channel] = field(default_factory=list)
    gateway: RunningGateway | None = None
    http: httpx.AsyncClient | None = None

    async def add_table_service(self, name: str, **changes: Any) -> RunningTableServer:
        ai_stream = f"gw-tests-ai-{hashlib.sha256(self.redis_url.encode()).hexdigest()[:6]}"
        server = await start_table_server(
            TableServerConfig(
                redis_url=self.redis_url,
                address="127.0.0.1:0",
                secrets=Secrets(SECRET, ADMIN, AI_TOKEN),
                ai_stream=ai_stream,
                instance_id=f"gw-test-{name}",
                between_hands_ms=50,
                grace_s=0.2,
                **changes,
            )
        )
        self.tables.append(server)
        return server

    def stub(self, server: RunningTableServer) -> rpc.TableServiceAsyncStub:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{server.port}")
        self.channels.append(channel)
        stub: rpc.TableServiceAsyncStub = rpc.TableServiceStub(channel)
        return stub

    async def start_gateway(self, **changes: Any) -> RunningGateway:
        settings: dict[str, Any] = {
            "address": "127.0.0.1:0",
            "table_target": f"127.0.0.1:{self.tables[0].port}" if self.tables else "127.0.0.1:1",
            "lobby_target": "127.0.0.1:1",  # no lobby in these tests
            "redis_url": self.redis_url,
            "origins": (ORIGIN,),
            "watch": WatchCaps(per_token=2, per_address=1000, total=1000),
        }
        settings.update(changes)
        self.gateway = await start_gateway(GatewayConfig(**settings))
        self.http = httpx.AsyncClient(base_url=self.gateway.url, timeout=20.0)
        return self.gateway

    @property
    def url(self) -> str:
        assert self.gateway is not None
        return self.gateway.url

    async def post_json(
        self, method: str, body: dict[str, Any], token: str = "", service: str = "TableService"
    ) -> httpx.Response:
        assert self.http is not None
        headers = {"content-type": "application/json"}
        if token:
            headers["authorization"] = f"Bearer {token}"
        return await self.http.post(f"/poker.v1.{service}/{method}", json=body, headers=headers)

    async def close(self) -> None:
        if self.http is not None:
            await self.http.aclose()
        if self.gateway is not None:
            await self.gateway.stop()
        for channel in self.channels:
            await channel.close()
        for server in self.tables:
            await server.stop()


@pytest.fixture
async def stack(redis: Any, redis_url: str) -> AsyncIterator[Stack]:
    built = Stack(redis_url)
    try:
        yield built
    finally:
        await built.close()


def admin() -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {ADMIN}"),)


def holdem(seats: int = 2) -> epb.TableConfig:
    return epb.TableConfig(
        variant=epb.VARIANT_NLHE, seat_count=seats, small_blind=50, big_blind=100
    )


async def create_table(
    stub: rpc.TableServiceAsyncStub, table_id: str, seats: int = 2
) -> pb.CreateTableResponse:
    response: pb.CreateTableResponse = await stub.CreateTable(
        pb.CreateTableRequest(table_id=table_id, config=holdem(seats), request_id=f"c-{table_id}"),
        metadata=admin(),
    )
    return response


async def seat(stub: rpc.TableServiceAsyncStub, table_id: str, seat: int) -> str:
    """Seat a human at ``seat``; its seat token."""
    response: pb.SeatPlayerResponse = await stub.SeatPlayer(
        pb.SeatPlayerRequest(
            table_id=table_id,
            seat=seat,
            player_id=f"p{seat}",
            stack=10_000,
            request_id=f"s-{table_id}-{seat}",
        ),
        metadata=admin(),
    )
    return response.seat_token
