"""The AI workers' fixture: ``ai_env``, a table service on a private AI stream (:class:`AiEnv`).

The environment's classes are in ``tests.integration.ai_worker.harness``,
importable, so that test modules type the fixture and mypy checks its calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest
import redis.asyncio as redis_async_lib

from felt.storage.decisions import shard_stream
from poker.v1 import table_service_pb2_grpc as rpc
from services.table.auth import Secrets
from services.table.server import TableServerConfig, start_table_server
from tests.integration.ai_worker.harness import ADMIN_TOKEN, AI_TOKEN, SECRET, AiEnv


@pytest.fixture
async def ai_env(
    redis_url: str, redis: redis_async_lib.Redis, redis_prefix: str
) -> AsyncIterator[AiEnv]:
    stream = f"{redis_prefix}ai:decisions"
    group = f"{redis_prefix}ai-workers"
    server = await start_table_server(
        TableServerConfig(
            redis_url=redis_url,
            address="127.0.0.1:0",
            secrets=Secrets(SECRET, ADMIN_TOKEN, AI_TOKEN),
            between_hands_ms=0,
            ai_stream=stream,
            decision_shards=1,  # one stream, shard_stream(stream, 0), which tests read
            grace_s=1.0,
        )
    )
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{server.port}")
    env = AiEnv(
        redis_url, redis, server, rpc.TableServiceStub(channel), shard_stream(stream, 0), group
    )
    env.base_stream = stream
    try:
        yield env
    finally:
        for decider in env.gates:
            decider.gate.set()
        for worker in env.workers:
            await asyncio.wait_for(worker.abort(), 30)
        await channel.close()
        await asyncio.wait_for(server.stop(), 30)
