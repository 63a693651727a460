"""``Tables.seat_now`` and ``Tables.add_chips`` over gRPC against a real table service on
loopback (and Redis): the seat's stack and hand as the lobby sees them, chips added as the
seat, a retry answered as the first call even after the seat's token was replaced (a lost
answer, then a refresh), the lounge's maximum and the seat's occupant checked by the table."""

from __future__ import annotations

import asyncio
import uuid

import grpc
import pytest

from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_service_pb2 as tpb
from services.lobby.ports import TableRefused
from services.lobby.tables import GrpcTables
from services.table.server import RunningTableServer

from . import test_tables_grpc as tables_grpc
from .test_tables_grpc import ADMIN

table_server = tables_grpc.table_server  # the fixtures: a real table service on Redis
channel = tables_grpc.channel


def _config() -> bytes:
    return epb.TableConfig(
        variant=epb.VARIANT_NLHE, seat_count=3, small_blind=5, big_blind=10
    ).SerializeToString()


async def test_add_chips_as_the_seat(
    table_server: RunningTableServer, channel: grpc.aio.Channel
) -> None:
    tables = GrpcTables(channel, ADMIN)
    table_id = f"chips-{uuid.uuid4().hex[:8]}"
    await tables.create(table_id, "Chips", _config(), f"{table_id}/create")
    assert await tables.seat_now(table_id, 0) is None
    grant = await tables.seat(table_id, 0, "p-ann", "Ann", 300, 0, f"{table_id}/seat")
    now = await tables.seat_now(table_id, 0)
    assert now is not None and (now.player_id, now.stack, now.in_hand) == ("p-ann", 300, False)

    first = f"add-chips/{uuid.uuid4().hex}"
    added = await tables.add_chips(table_id, 0, grant.seat_token, 200, 1_000, first)
    assert added.stack == 500
    # Over the maximum: refused on the table's own state, nothing added.
    with pytest.raises(TableRefused) as refused:
        await tables.add_chips(table_id, 0, grant.seat_token, 501, 1_000, f"x/{uuid.uuid4()}")
    assert refused.value.reason == "ABOVE_MAX_STACK"
    # The token replaced (a refresh) after the first add's answer was lost: the retry, with
    # the token the saga recorded, gets the first answer and adds nothing.
    fresh = await tables.reissue(table_id, 0, "p-ann", f"{table_id}/reissue")
    assert await tables.add_chips(table_id, 0, grant.seat_token, 200, 1_000, first) == added
    # A new add with the replaced token is refused (the seat is not that token's any more).
    with pytest.raises(TableRefused):
        await tables.add_chips(table_id, 0, grant.seat_token, 1, 1_000, f"x/{uuid.uuid4()}")
    again = await tables.add_chips(table_id, 0, fresh.seat_token, 500, 1_000, f"y/{uuid.uuid4()}")
    assert again.stack == 1_000
    got = await tables.stub.GetTable(tpb.GetTableRequest(table_id=table_id))
    assert [s.stack for s in got.table.seats if s.player_id] == [1_000]

    # Dealt in: the lobby's look sees it, and the table refuses.
    await tables.seat(table_id, 1, "p-bob", "Bob", 300, 0, f"{table_id}/seat-bob")
    for _ in range(100):
        now = await tables.seat_now(table_id, 0)
        assert now is not None
        if now.in_hand:
            break
        await asyncio.sleep(0.05)
    assert now.in_hand
    with pytest.raises(TableRefused) as refused:
        await tables.add_chips(table_id, 0, fresh.seat_token, 1, 0, f"z/{uuid.uuid4()}")
    assert refused.value.reason == "HAND_RUNNING"
