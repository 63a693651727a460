"""Many watched tables do not starve the table service's own Redis calls.

Each watched table's live feed holds a Redis connection in a blocking ``XREAD``. They
once shared the service's one client, whose pool redis-py caps at 100 connections: past
100 watched tables, lease renewals and appends failed with "Too many connections", and the
instance handed its tables over and refused every action (found by ``bench/people_load.py``).
The feeds now have a client of their own, sized to the watch caps
(``services.table.server.feed_connections``).
"""

from __future__ import annotations

import asyncio

from poker.v1 import table_pb2 as tpb
from services.table.watch import WatchLimits
from tests.integration.table.harness import TableEnv

WATCHED = 120  # more than redis-py's default pool of 100 connections
CALL = tpb.Action(call=tpb.Action.Call())


async def test_more_watched_tables_than_a_default_pool_keep_leases_and_actions(
    table_env: TableEnv,
) -> None:
    server = await table_env.start_server(
        watch=WatchLimits(max_streams=400, max_per_peer=400, seat_reserve=10)
    )
    stub = table_env.stub(server)
    hub = table_env.hub(server)
    quiet = [await table_env.create_table(stub, table_env.nlhe(2)) for _ in range(WATCHED)]
    for table_id in quiet:
        table_env.watch(stub, table_id)
    async with asyncio.timeout(60):
        while len(hub.feeds) < WATCHED:  # every feed blocked in its read
            await asyncio.sleep(0.05)

    # Several lease rounds (every lease_ttl / 3 = 1 s) pass with every feed blocked ...
    await asyncio.sleep(3.5)
    assert set(quiet) <= set(server.manager.runtimes), "the instance let its tables go"

    # ... and a table still deals and takes an action.
    table_id = await table_env.create_table(stub, table_env.nlhe(2))
    keys = await table_env.seat_all(stub, table_id, 2)
    await table_env.watch(stub, table_id, from_sequence=1).wait_event("hole_cards_dealt", seat=1)
    view = await table_env.view(stub, table_id, keys[0])
    actor = keys[view.hand.to_act]
    answer = await table_env.submit(stub, table_id, actor, CALL, view.table.sequence, "call-1")
    assert answer.sequence > view.table.sequence
