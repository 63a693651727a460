"""A table whose stream Redis lost answers NOT_FOUND, never INTERNAL.

Redis restarted without persistence, or flushed by hand, forgets a table's stream (and its
lease, and the registry) while the instance that runs it still holds it in memory. The next
write finds the stream behind the cache and rereads it: nothing. Until the next lease round
hands the table over, its views and watches failed with INTERNAL (an assertion on the
missing state); they now say the table is gone, as they do after that round.
"""

from __future__ import annotations

import grpc
import pytest

from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from tests.integration.table.harness import TableEnv


async def test_a_lost_stream_is_a_table_not_found(table_env: TableEnv) -> None:
    server = await table_env.start_server()
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.nlhe(2))
    keys = await table_env.seat_all(stub, table_id, 2)

    async def dealt() -> tpb.TableView | None:
        view = await table_env.view(stub, table_id, keys[0])
        return view if view.hand.HasField("to_act") else None

    view = await table_env.eventually(dealt, "a hand dealt")
    await table_env.redis.flushdb()  # Redis restarted without persistence: all is gone
    with pytest.raises(grpc.aio.AioRpcError) as acted:
        await table_env.submit(
            stub,
            table_id,
            keys[view.hand.to_act],
            tpb.Action(call=tpb.Action.Call()),
            view.table.sequence,
        )
    assert acted.value.code() != grpc.StatusCode.INTERNAL
    with pytest.raises(grpc.aio.AioRpcError) as viewed:
        await stub.GetTableView(pb.GetTableViewRequest(table_id=table_id))  # a spectator
    assert viewed.value.code() == grpc.StatusCode.NOT_FOUND, viewed.value.details()
    with pytest.raises(grpc.aio.AioRpcError) as viewed:
        await table_env.view(stub, table_id, keys[0])  # a seat
    assert viewed.value.code() == grpc.StatusCode.NOT_FOUND, viewed.value.details()
    watch = stub.WatchTable(pb.WatchTableRequest(table_id=table_id))
    with pytest.raises(grpc.aio.AioRpcError) as watched:
        await watch.read()
    assert watched.value.code() == grpc.StatusCode.NOT_FOUND, watched.value.details()
