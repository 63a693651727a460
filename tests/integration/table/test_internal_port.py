"""An internal port for the internal calls (``FELT_TABLE_INTERNAL_ADDR``; issue #24, item 6).

With it, the public port (where the gateway calls) refuses every internal RPC
(``felt.wire.access.SERVICE_ONLY``) even with the service credential, and changes
nothing; the internal port (the lobby's and the AI workers', behind a
NetworkPolicy) serves them, and both serve the public calls and the health
service the cluster's gRPC probes ask.
"""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc  # type: ignore[import-untyped]

from felt.wire.access import SERVICE_ONLY, TABLE_SERVICE
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from services.table.public_port import INTERNAL_ONLY
from services.table.server import TableServerConfig
from tests.integration.table.harness import TableEnv, error_reason


async def test_the_public_port_refuses_internal_calls_the_internal_port_serves_them(
    table_env: TableEnv,
) -> None:
    server = await table_env.start_server(internal_address="127.0.0.1:0")
    assert server.internal_port and server.internal_port != server.port
    public = table_env.stub(server)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{server.internal_port}")
    table_env.channels.append(channel)
    internal: rpc.TableServiceAsyncStub = rpc.TableServiceStub(channel)

    config = table_env.nlhe(2)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await table_env.create_table(public, config, table_id="t-public")
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert refused.value.details() == INTERNAL_ONLY
    assert error_reason(refused.value) == "SERVICE_ONLY"  # declared, so a client says why
    assert not await table_env.xlen("t-public"), "a refusal changes nothing"

    table_id = await table_env.create_table(internal, config)
    # Every internal RPC is refused on the public port, with the service credential too.
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as raw:
        for method in sorted(SERVICE_ONLY[TABLE_SERVICE]):
            call: Any = raw.unary_unary(f"/{TABLE_SERVICE}/{method}")
            with pytest.raises(grpc.aio.AioRpcError) as each:
                await call(b"", metadata=table_env.admin)
            assert each.value.code() == grpc.StatusCode.PERMISSION_DENIED, method
    seat = await table_env.seat(internal, table_id, 0)
    assert seat.token
    # The public calls answer on both ports.
    for stub in (public, internal):
        got = await stub.GetTable(pb.GetTableRequest(table_id=table_id))
        assert got.table.table_id == table_id
    for port in (server.port, server.internal_port):
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as health_channel:
            health = health_pb2_grpc.HealthStub(health_channel)
            for service in ("", TABLE_SERVICE):
                answer = await health.Check(health_pb2.HealthCheckRequest(service=service))
                assert answer.status == health_pb2.HealthCheckResponse.SERVING


def test_the_setting_and_its_default_of_one_port() -> None:
    assert TableServerConfig.from_env({}).internal_address == ""
    env = {"FELT_TABLE_INTERNAL_ADDR": " 0.0.0.0:50053 "}
    assert TableServerConfig.from_env(env).internal_address == "0.0.0.0:50053"
