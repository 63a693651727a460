"""The services under the lobby fuzzer, started in-process on one asyncio loop.

Each example (call sequence) gets a fresh stack: an empty lobby database (every
table truncated), an empty Redis DB, then the table service, the lobby (with its
history service and its saga recovery pass), an AI worker and a projector (which
archives ended hands, so that players' hand lists have something in them), all
on loopback, as tests/integration and tests/e2e start them. Hypothesis runs the
machine in another thread and hands each step's coroutines to this loop
(``Harness.run``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import uuid
from collections.abc import Coroutine
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, TypeVar

import asyncpg
import grpc
import redis.asyncio as redis_async_lib
from argon2 import PasswordHasher

from felt.storage.archive.feed import RedisProjectorFeed
from felt.storage.archive.postgres import PostgresHandArchive
from felt.storage.migrations import migrate
from felt.storage.registry import RedisTableRegistry
from poker.v1 import history_service_pb2_grpc as hrpc
from poker.v1 import lobby_service_pb2_grpc as lrpc
from poker.v1 import table_service_pb2_grpc as trpc
from services.ai_worker.decide import Decider
from services.ai_worker.worker import AiWorker, WorkerConfig
from services.lobby.application import LobbySecrets, LobbySettings
from services.lobby.db_cli import MIGRATIONS
from services.lobby.server import (
    LobbyServerConfig,
    RunningLobbyServer,
    start_lobby_server,
)
from services.lobby.tokens import Passwords
from services.projector.metrics import ProjectorMetrics
from services.projector.projector import Projector
from services.table.auth import Secrets
from services.table.ratelimit import RateLimits
from services.table.server import RunningTableServer, TableServerConfig, start_table_server
from tests.fuzz.oracle import Violation

T = TypeVar("T")
ADMIN_TOKEN = "lobby-fuzz-admin-token-0123456789abcdef"  # the lobby's service credential too
AI_TOKEN = "lobby-fuzz-ai-token-0123456789abcdef"
TABLE_SECRET = b"lobby-fuzz-table-secret-0123456789abcdef"
SECRETS = LobbySecrets(
    b"lobby-fuzz-access-secret-0123456789", b"lobby-fuzz-refresh-secret-012345678"
)
STEP_TIMEOUT = 120.0  # a whole step (several bounded calls and waits)


class StepHung(Exception):
    """A step (a few calls, each with its own deadline) did not finish: something is stuck."""


@dataclass
class Harness:
    """The lobby, table service and AI worker under test, and the run's counters."""

    database_url: str  # a migrated database of the fuzzer's own (every example empties it)
    redis_url: str  # with a DB index of the fuzzer's own (every example flushes it)
    loop: asyncio.AbstractEventLoop
    known: set[str] = field(default_factory=set)  # violation kinds that do not fail a step
    calls: int = 0
    sequences: int = 0
    hands: int = 0
    refusals: int = 0
    found: dict[str, list[str]] = field(default_factory=dict)  # kind -> details (first few)
    # RPC -> outcome ("OK" or the refusal's code and reason) -> count: what the run covered.
    outcomes: dict[str, dict[str, int]] = field(default_factory=dict)
    table: RunningTableServer | None = None
    lobby_server: RunningLobbyServer | None = None
    worker: AiWorker | None = None
    projector: Projector | None = None
    projecting: asyncio.Task[None] | None = None
    channels: list[grpc.aio.Channel] = field(default_factory=list)
    pool: asyncpg.Pool | None = None
    redis: redis_async_lib.Redis | None = None
    lobby: Any = None
    history: Any = None
    tables: Any = None

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = STEP_TIMEOUT) -> T:
        """Run ``coro`` on the services' loop and wait for it (from the machine's thread)."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise StepHung(f"a step did not finish in {timeout} s") from None

    def count(self, method: str, outcome: str) -> None:
        by_outcome = self.outcomes.setdefault(method, {})
        by_outcome[outcome] = by_outcome.get(outcome, 0) + 1

    def coverage(self) -> str:
        """One line per RPC: how often it was answered OK, and each refusal's reason."""
        lines = []
        for method, by_outcome in sorted(self.outcomes.items()):
            parts = sorted(by_outcome.items(), key=lambda item: -item[1])
            lines.append(f"  {method}: " + ", ".join(f"{o} {n}" for o, n in parts))
        return "\n".join(lines)

    def record(self, violation: Violation) -> None:
        details = self.found.setdefault(violation.kind, [])
        if len(details) < 3:
            details.append(violation.detail)

    async def prepare(self) -> None:
        """Migrate the fuzzer's database (once per run)."""
        await migrate(self.database_url, MIGRATIONS)

    async def reset(self) -> None:
        """A fresh stack on empty stores, for one example."""
        await self.stop()
        if self.pool is None:
            self.pool = await asyncpg.create_pool(self.database_url, min_size=1, max_size=6)
        tables = await self.pool.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
            "AND tablename <> 'schema_migrations'"
        )
        names = ", ".join(f'"{r["tablename"]}"' for r in tables)
        await self.pool.execute(f"TRUNCATE {names} RESTART IDENTITY CASCADE")
        if self.redis is None:
            self.redis = redis_async_lib.Redis.from_url(self.redis_url)
        await self.redis.flushdb()
        await self.start()

    async def start(self) -> None:
        ai_stream = f"lobbyfuzz:{uuid.uuid4().hex[:8]}:ai"
        self.table = await start_table_server(
            TableServerConfig(
                redis_url=self.redis_url,
                address="127.0.0.1:0",
                secrets=Secrets(TABLE_SECRET, ADMIN_TOKEN, AI_TOKEN),
                between_hands_ms=10,
                lease_ttl_ms=3000,
                grace_s=0.2,
                ai_stream=ai_stream,
                rate=RateLimits(per_second=10_000, burst=10_000),
            )
        )
        target = f"127.0.0.1:{self.table.port}"
        settings = LobbySettings(
            # Many sign-ups from one address (loopback) are the point here, and quick
            # top-ups: their cool-down is a product rule checked by the lobby's own tests.
            sign_up_max_per_client=100_000,
            sign_in_max_per_client=100_000,
            top_up_cooldown=timedelta(seconds=0),
            # Small balances, so that buy-ins run them low: top-ups and INSUFFICIENT_CHIPS.
            starting_grant=1_500,
            top_up_amount=1_000,
            top_up_below=1_000,
        )
        self.lobby_server = await start_lobby_server(
            LobbyServerConfig(
                database_url=self.database_url,
                address="127.0.0.1:0",
                secrets=SECRETS,
                settings=settings,
                pool_size=8,
                passwords=Passwords(PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)),
                grace_s=0.2,
                table_address=target,
                table_admin_token=ADMIN_TOKEN,
                recover_every_s=0.5,
                redis_url=self.redis_url,
            )
        )
        self.worker = AiWorker(
            WorkerConfig(
                redis_url=self.redis_url,
                table_target=target,
                ai_token=AI_TOKEN,
                concurrency=2,
                claim_idle_ms=500,
                metrics_port=None,
                stream=ai_stream,
                group=f"{ai_stream}:workers",
                stats_interval_s=5.0,
                summary_interval_s=60.0,
                drain_timeout_s=2.0,
            ),
            decider=Decider(),
        )
        await self.worker.start()
        assert self.redis is not None and self.pool is not None
        member = f"lobbyfuzz-{uuid.uuid4().hex[:6]}"
        self.projector = Projector(
            member,
            RedisProjectorFeed(self.redis),
            RedisTableRegistry(self.redis),
            PostgresHandArchive(self.pool),
            ProjectorMetrics(member),
            lease_ms=2_000,
            scan_ms=200,
            block_ms=100,
            writers=1,
        )
        self.projecting = asyncio.create_task(self.projector.run())
        lobby_channel = grpc.aio.insecure_channel(f"127.0.0.1:{self.lobby_server.port}")
        table_channel = grpc.aio.insecure_channel(target)
        self.channels = [lobby_channel, table_channel]
        self.lobby = lrpc.LobbyServiceStub(lobby_channel)
        self.history = hrpc.HistoryServiceStub(lobby_channel)
        self.tables = trpc.TableServiceStub(table_channel)

    async def stop(self) -> None:
        for channel in self.channels:
            await channel.close()
        self.channels = []
        if self.projector is not None and self.projecting is not None:
            self.projector.request_stop()
            await self.projecting
            self.projector = self.projecting = None
        if self.worker is not None:
            await self.worker.stop()
            self.worker = None
        if self.lobby_server is not None:
            await self.lobby_server.stop()
            self.lobby_server = None
        if self.table is not None:
            await self.table.stop()
            self.table = None

    async def close(self) -> None:
        """Stop everything and release the stores (end of the run)."""
        await self.stop()
        if self.redis is not None:
            await self.redis.flushdb()
            await self.redis.aclose()
            self.redis = None
        if self.pool is not None:
            await self.pool.close()
            self.pool = None
