"""AddChips' ``max_stack`` over gRPC (the lobby's bound on a seat's stack, a lounge's
max_buy_in): checked on the stack the chips are added to, refused FAILED_PRECONDITION
ABOVE_MAX_STACK with nothing appended, and a retry of an accepted add gets its first answer
even once the stack is at the bound."""

from __future__ import annotations

import uuid
from typing import Any

import grpc
import pytest

from poker.v1 import table_service_pb2 as pb
from tests.integration.table.harness import TableEnv


async def test_max_stack_bounds_the_stack_after(table_env: TableEnv) -> None:
    srv = await table_env.start_server()
    stub = table_env.stub(srv)
    table_id = await table_env.create_table(stub, table_env.nlhe(3))
    alone = await table_env.seat(stub, table_id, 0, stack=300)  # alone: no hand is dealt

    def add(amount: int, max_stack: int, request_id: str = "") -> Any:
        return stub.AddChips(
            pb.AddChipsRequest(
                table_id=table_id,
                seat=0,
                amount=amount,
                max_stack=max_stack,
                request_id=request_id or uuid.uuid4().hex,
            ),
            metadata=alone.service_md,
        )

    length = await table_env.xlen(table_id)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await add(701, 1_000)
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "at most 700 more" in (info.value.details() or "")
    assert "701" not in (info.value.details() or "")
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await add(1, -1)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert await table_env.xlen(table_id) == length  # nothing appended
    first = uuid.uuid4().hex
    assert (await add(700, 1_000, first)).stack == 1_000  # exactly up to it
    assert (await add(700, 1_000, first)).stack == 1_000  # a retry: its first answer
    assert await table_env.xlen(table_id) == length + 1
    assert (await add(5, 0)).stack == 1_005  # 0: no bound but the table's
