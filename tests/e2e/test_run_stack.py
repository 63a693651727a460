"""What `make run` starts, as processes: the Procfile under honcho (scripts/run.sh).

The whole system on real Redis and PostgreSQL: `felt db migrate`, the table
service with its demo tables, the lobby, an AI worker and the gateway. A
browser's first steps go through the gateway over Connect (a guest, a lounge
with an AI opponent, a seat, the table as that seat, a watch stream), and
Ctrl-C (SIGINT to honcho) stops every process cleanly.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
import redis.asyncio as redis_async_lib
from google.protobuf import json_format

from poker.v1 import table_service_connect as connect
from poker.v1 import table_service_pb2 as pb
from tests.e2e.own_redis import stable_port

REPO = Path(__file__).resolve().parents[2]
WAIT = 120.0  # generous: five Python processes starting on a loaded 2-core machine


def _free_port() -> int:
    return stable_port()  # below the ephemeral range (tests/e2e/own_redis.py says why)


@pytest.fixture
async def database(database_url: str) -> AsyncIterator[str]:
    name = f"felt_e2e_{uuid.uuid4().hex[:12]}"
    conn = await asyncpg.connect(database_url)
    await conn.execute(f'CREATE DATABASE "{name}"')
    await conn.close()
    try:
        yield database_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        conn = await asyncpg.connect(database_url)
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await conn.close()


async def _healthy(http: httpx.AsyncClient, process: asyncio.subprocess.Process) -> None:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        assert process.returncode is None, "the stack stopped while starting"
        try:
            if (await http.get("/healthz")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.5)
    raise AssertionError("the gateway did not report both services healthy")


# What each process of the Procfile prints once it is up (after its signal handlers).
UP_LINES = (
    "Felt is running",
    "lobby listening on port",
    "ai worker ",
    "gateway listening on",
    "archiving (metrics port",  # the projector
)


async def _all_up(log: Path, process: asyncio.subprocess.Process) -> None:
    deadline = time.monotonic() + WAIT
    while missing := [line for line in UP_LINES if line not in log.read_text()]:
        assert process.returncode is None, "the stack stopped while starting"
        assert time.monotonic() < deadline, (missing, log.read_text())
        await asyncio.sleep(0.2)


async def _lobby(
    http: httpx.AsyncClient, method: str, body: dict[str, object], token: str = ""
) -> dict[str, Any]:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    response = await http.post(f"/poker.v1.LobbyService/{method}", json=body, headers=headers)
    assert response.status_code == 200, (method, response.text)
    answer: dict[str, Any] = response.json()
    return answer


async def test_the_stack_serves_a_browser_and_stops_on_ctrl_c(
    redis_url: str, redis: redis_async_lib.Redis, database: str, tmp_path: Path
) -> None:
    gateway, table, lobby = _free_port(), _free_port(), _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FELT_")}
    env.update(
        REDIS_URL=redis_url,
        DATABASE_URL=database,
        FELT_GATEWAY_ADDR=f"127.0.0.1:{gateway}",
        FELT_TABLE_ADDR=f"127.0.0.1:{table}",
        FELT_LOBBY_ADDR=f"127.0.0.1:{lobby}",
        FELT_BETWEEN_HANDS_MS="200",
    )
    log = tmp_path / "stack.log"
    with log.open("wb") as out:
        process = await asyncio.create_subprocess_exec(
            "bash", str(REPO / "scripts" / "run.sh"), cwd=REPO, env=env, stdout=out, stderr=out
        )
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{gateway}", timeout=20) as http:
            await _healthy(http, process)
            guest = await _lobby(
                http, "CreateGuest", {"displayName": "Ieva", "requestId": str(uuid.uuid4())}
            )
            access = str(guest["credentials"]["accessToken"])
            lounge = await _lobby(
                http,
                "CreateLounge",
                {
                    "name": "Through the front door",
                    "config": {
                        "variant": "VARIANT_NLHE",
                        "seatCount": 2,
                        "smallBlind": "50",
                        "bigBlind": "100",
                        "actionClock": "30s",
                    },
                    "minBuyIn": "1000",
                    "maxBuyIn": "5000",
                    "aiSeats": [{"seat": 1, "level": "AI_LEVEL_EASY"}],
                    "requestId": str(uuid.uuid4()),
                },
                access,
            )
            lounge_id = str(lounge["lounge"]["loungeId"])
            joined = await _lobby(
                http,
                "JoinLounge",
                {"loungeId": lounge_id, "seat": 0, "buyIn": "2000", "requestId": str(uuid.uuid4())},
                access,
            )
            seat_token = str(joined["seatToken"])
            view = await http.post(
                "/poker.v1.TableService/GetTableView",
                json={"tableId": lounge_id, "seat": 0},
                headers={"authorization": f"Bearer {seat_token}"},
            )
            assert view.status_code == 200, view.text
            seen = json_format.ParseDict(view.json(), pb.GetTableViewResponse()).view
            assert seen.viewer_seat == 0
            assert {s.player_id for s in seen.table.seats if s.player_id} >= {
                str(guest["player"]["playerId"])
            }
        # The demo table, as a spectator, over the Connect protocol in binary.
        async with connect.TableServiceClient(f"http://127.0.0.1:{gateway}") as client:
            got = []
            async with asyncio.timeout(30):
                async for item in client.watch_table(pb.WatchTableRequest(table_id="demo-holdem")):
                    got.append(item)
                    if len(got) == 2:
                        break
        assert got[0].WhichOneof("item") == "snapshot"
        assert got[1].event.sequence == got[0].snapshot.table.sequence + 1  # the bots play
        # Ctrl-C once every process has said it is up: the gateway's health speaks for the
        # table service and the lobby only, and a process still importing when the signal
        # comes has no handler for it yet (it ends without a word, with nothing to stop).
        await _all_up(log, process)
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGINT)  # Ctrl-C: honcho stops every process
            try:
                await asyncio.wait_for(process.wait(), 40)
            except TimeoutError:
                process.kill()
                await process.wait()
                raise AssertionError(
                    f"the stack did not stop on SIGINT:\n{log.read_text()}"
                ) from None
    text = log.read_text()
    for stopped in (
        "table_service_stopped",
        "lobby_stopped",
        "gateway_stopped",
        "ai_worker_stopped",
    ):
        assert stopped in text, text
    assert "Traceback" not in text, text
    for port in (gateway, table, lobby):  # nothing left listening
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", port)) != 0
