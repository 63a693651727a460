"""Tables with nobody to play for rest (issue #24, item 5; ``services.table.rest``).

The table service over gRPC on the real Redis, with a real AI worker answering its AI
seats: an all-AI table deals for the grace, then stops (no ``HandStarted`` over a window
well past it); a spectator's watch stream or a person sitting down wakes it; a lounge a
person left goes quiet; a table with a person seated never rests; and resting wrote
nothing to the stream, so a rebuild folds the same state. The hands are counted from
the stream in Redis, never through a watch stream (which would wake the table).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_service_pb2 as pb
from services.ai_worker.worker import AiWorker, WorkerConfig
from tests.integration.table.harness import TableEnv

AI = "table-tests-ai-credential-0123456789"  # conftest's AI_TOKEN
GRACE_S = 1
WINDOW_S = 3.0  # a window three graces long, in which a table that did not rest deals dozens


@pytest.fixture
async def resting_server(table_env: TableEnv) -> AsyncIterator[tuple[Any, Any]]:
    """A table service whose idle tables rest after GRACE_S, and an AI worker for its seats."""
    # A pause between hands long enough that the bots play tens of hands, not hundreds, in a
    # test.
    server = await table_env.start_server(idle_grace_s=GRACE_S, between_hands_ms=100)
    worker = AiWorker(
        WorkerConfig(
            redis_url=table_env.redis_url,
            table_target=f"127.0.0.1:{server.port}",
            ai_token=AI,
            metrics_port=None,
            stream=table_env.ai_stream,
            shards=1,  # as the harness's table service
            block_ms=100,
        )
    )
    await worker.start()
    try:
        yield server, table_env.stub(server)
    finally:
        worker.request_stop()
        await worker.stop()


async def hands_started(env: TableEnv, table_id: str) -> int:
    return sum(e.WhichOneof("event") == "hand_started" for e in await env.stored(table_id))


async def bot_table(env: TableEnv, stub: Any, bots: int = 3) -> str:
    """A table of easy bots that never stops dealing for want of chips: fixed-limit Draw
    without all-in, so a hand moves at most a few hundred chips of the bots' billion."""
    config = env.draw(bots + 1)
    config.allow_all_in = False
    table_id: str = await env.create_table(stub, config)
    for seat in range(bots):
        await env.seat(stub, table_id, seat, stack=10**9, ai_level=epb.AI_LEVEL_EASY)
    return table_id


async def rested(env: TableEnv, server: Any, table_id: str) -> int:
    """Wait until the table rests; then the hands it dealt, which a window must not change."""
    runtime = server.manager.runtimes[table_id]

    async def resting() -> bool | None:
        return True if runtime.resting else None

    await env.eventually(resting, f"{table_id} to rest")
    hands = await hands_started(env, table_id)
    await asyncio.sleep(WINDOW_S)  # a window with nothing expected in it: no deal
    assert await hands_started(env, table_id) == hands, "a resting table dealt a hand"
    assert runtime.resting
    return hands


async def deals_again(env: TableEnv, table_id: str, after: int) -> None:
    async def more() -> int | None:
        hands = await hands_started(env, table_id)
        return hands if hands > after else None

    await env.eventually(more, f"{table_id} to deal a hand after its {after}")


async def test_an_all_ai_table_rests_and_a_spectator_or_a_person_wakes_it(
    table_env: TableEnv, resting_server: tuple[Any, Any]
) -> None:
    server, stub = resting_server
    table_id = await bot_table(table_env, stub)
    hands = await rested(table_env, server, table_id)
    assert hands >= 1, "the bots play during the grace"

    # A spectator opens a watch stream: the table deals on while it watches ...
    watcher = table_env.watch(stub, table_id)
    await deals_again(table_env, table_id, hands)
    seen = await hands_started(table_env, table_id)
    await deals_again(table_env, table_id, seen)  # not one hand: it plays on
    await watcher.close()
    table_env.watchers.remove(watcher)
    # ... and rests again a grace after the stream closed.
    hands = await rested(table_env, server, table_id)

    # A person sits down: the table deals at once, and never rests while they sit.
    person = await table_env.seat(stub, table_id, 3)
    await stub.SitOut(  # away: the table plays their seat passively, the bots play on
        pb.SitOutRequest(table_id=table_id, seat=3, request_id="away"), metadata=person.md
    )
    await deals_again(table_env, table_id, hands)
    runtime = server.manager.runtimes[table_id]
    before = await hands_started(table_env, table_id)
    await asyncio.sleep(WINDOW_S)
    assert not runtime.resting
    assert await hands_started(table_env, table_id) > before, "a person is seated: it deals"

    # The person leaves (the lobby's LeaveSeat, as when a lounge is left): it goes quiet.
    await stub.LeaveSeat(
        pb.LeaveSeatRequest(table_id=table_id, seat=3, request_id="gone"),
        metadata=person.service_md,
    )
    await rested(table_env, server, table_id)

    # Resting recorded nothing: the cache is the fold of the stream, and so is a rebuild.
    await table_env.check_rebuild(server, table_id)


async def test_the_services_own_watch_streams_do_not_wake_a_table(
    table_env: TableEnv, resting_server: tuple[Any, Any]
) -> None:
    """The lobby reads departures through WatchTable with the service credential: that is no
    audience, so the table rests on (and the AI token's reads alike)."""
    server, stub = resting_server
    table_id = await bot_table(table_env, stub, bots=2)
    hands = await rested(table_env, server, table_id)
    lobby = stub.WatchTable(pb.WatchTableRequest(table_id=table_id), metadata=table_env.admin)
    ai = stub.WatchTable(pb.WatchTableRequest(table_id=table_id), metadata=table_env.ai_md)
    try:
        assert (await lobby.read()).HasField("snapshot")
        assert (await ai.read()).HasField("snapshot")
        assert await rested(table_env, server, table_id) == hands
    finally:
        lobby.cancel()
        ai.cancel()
