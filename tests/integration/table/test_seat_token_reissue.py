"""ReissueSeatToken over gRPC: the new token acts, the old one is refused at once, only the
service credential may ask, and only for the seat's current occupant."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import grpc
import pytest

from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from tests.integration.table.harness import TableEnv

CALL = tpb.Action(call=tpb.Action.Call())


async def test_a_reissued_token_acts_and_the_old_one_is_refused(table_env: TableEnv) -> None:
    srv = await table_env.start_server()
    stub = table_env.stub(srv)
    table_id = await table_env.create_table(stub, table_env.nlhe(2))
    keys = await table_env.seat_all(stub, table_id, 2)
    watcher = table_env.watch(stub, table_id, from_sequence=1)
    await watcher.wait_event("hole_cards_dealt", seat=0)
    old = keys[0]
    request = pb.ReissueSeatTokenRequest(
        table_id=table_id, seat=0, player_id=old.player_id, request_id="r-1"
    )
    issued = await stub.ReissueSeatToken(request, metadata=old.service_md)
    assert issued.seat_token and issued.seat_token != old.token
    assert issued.HasField("seat_token_expire_time")
    # A retry (the lobby still holding the old token) gets the same token back.
    again = await stub.ReissueSeatToken(request, metadata=old.service_md)
    assert again.seat_token == issued.seat_token

    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await stub.SubmitAction(
            pb.SubmitActionRequest(table_id=table_id, seat=0, action=CALL, request_id="a-old"),
            metadata=old.md,
        )
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
    new_md = (("authorization", f"Bearer {issued.seat_token}"),)
    acted = await stub.SubmitAction(
        pb.SubmitActionRequest(table_id=table_id, seat=0, action=CALL, request_id="a-new"),
        metadata=new_md,
    )
    assert acted.sequence > issued.sequence
    # The hash never reaches a watcher.
    reissued = await watcher.wait_event("seat_token_reissued", seat=0)
    assert reissued.seat_token_reissued.token_hash == ""
    await watcher.close()


async def test_only_the_service_may_reissue_and_only_for_the_occupant(table_env: TableEnv) -> None:
    srv = await table_env.start_server()
    stub = table_env.stub(srv)
    table_id = await table_env.create_table(stub, table_env.nlhe(2))
    keys = await table_env.seat_all(stub, table_id, 2)

    def reissue(player_id: str, metadata: Any, request_id: str) -> Any:
        return stub.ReissueSeatToken(
            pb.ReissueSeatTokenRequest(
                table_id=table_id, seat=0, player_id=player_id, request_id=request_id
            ),
            metadata=metadata,
        )

    cases = [
        ("the seat's own token", reissue(keys[0].player_id, keys[0].md, "x1"),
         grpc.StatusCode.PERMISSION_DENIED, "SERVICE_ONLY"),
        ("no token", reissue(keys[0].player_id, (), "x2"),
         grpc.StatusCode.UNAUTHENTICATED, "SERVICE_CREDENTIAL_REQUIRED"),
        ("another player at the seat", reissue(keys[1].player_id, table_env.admin, "x3"),
         grpc.StatusCode.FAILED_PRECONDITION, "NOT_OCCUPANT"),
        ("the service as another seat", reissue(keys[0].player_id, keys[1].service_md, "x4"),
         grpc.StatusCode.PERMISSION_DENIED, "WRONG_SEAT"),
    ]  # fmt: skip
    for name, call, expected_code, reason in cases:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await call
        err = refused.value
        assert err.code() == expected_code, f"{name}: {err.code()} {err.details()}"
        assert table_env.error_reason(err) == reason, f"{name}: {table_env.error_reason(err)}"
    # Nothing changed: the seat's token still acts as the seat.
    view = await table_env.view(stub, table_id, keys[0])
    assert view.viewer_seat == 0


async def test_a_reissue_ends_the_streams_the_old_token_opened(table_env: TableEnv) -> None:
    """A stream opened with the old token stops at the reissue: nothing after it (the next
    hole cards above all) reaches whoever holds that token. One the new token opens, even
    resuming from before the reissue, goes on through it."""
    srv = await table_env.start_server()
    stub = table_env.stub(srv)
    table_id = await table_env.create_table(stub, table_env.nlhe(2))
    keys = await table_env.seat_all(stub, table_id, 2)
    old = keys[0]
    stolen = table_env.watch(stub, table_id, seat=old)  # e.g. a leaked token's holder
    await stolen.wait_event("hole_cards_dealt", seat=0)
    issued = await stub.ReissueSeatToken(
        pb.ReissueSeatTokenRequest(
            table_id=table_id, seat=0, player_id=old.player_id, request_id="r-stream"
        ),
        metadata=old.service_md,
    )
    await stolen.wait(lambda: stolen.done, "the old token's stream to end")
    error = stolen.error
    assert isinstance(error, grpc.aio.AioRpcError), repr(error)
    assert error.code() == grpc.StatusCode.PERMISSION_DENIED, error.details()
    assert table_env.error_reason(error) == "SEAT_TOKEN_REISSUED"
    assert stolen.last_sequence < issued.sequence  # not even the reissue itself

    new = replace(old, token=issued.seat_token)
    resumed = table_env.watch(stub, table_id, seat=new, from_sequence=1)
    await resumed.wait_event("seat_token_reissued", seat=0)
    acted = await stub.SubmitAction(
        pb.SubmitActionRequest(table_id=table_id, seat=0, action=CALL, request_id="a-after"),
        metadata=new.md,
    )
    await resumed.wait_sequence(acted.sequence)
    assert not resumed.done
    # The spectators' streams are not the seat's: they go on.
    spectator = table_env.watch(stub, table_id, from_sequence=1)
    await spectator.wait_sequence(acted.sequence)
    assert not spectator.done
    await resumed.close()
    await spectator.close()


async def test_a_retry_overtaken_by_a_later_reissue_gets_no_dead_token(table_env: TableEnv) -> None:
    """A reissue retried after a later one would be answered with the token the later one
    voided (its answer is kept for retries): refused instead, so the lobby never stores a
    dead token to name the seat by when it leaves."""
    srv = await table_env.start_server()
    stub = table_env.stub(srv)
    table_id = await table_env.create_table(stub, table_env.nlhe(2))
    keys = await table_env.seat_all(stub, table_id, 2)

    def reissue(request_id: str) -> Any:
        return stub.ReissueSeatToken(
            pb.ReissueSeatTokenRequest(
                table_id=table_id, seat=0, player_id=keys[0].player_id, request_id=request_id
            ),
            metadata=table_env.admin,
        )

    first = await reissue("r-a")
    assert (await reissue("r-a")).seat_token == first.seat_token  # a plain retry
    second = await reissue("r-b")
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await reissue("r-a")
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert table_env.error_reason(refused.value) == "SEAT_TOKEN_SUPERSEDED"
    view = await table_env.view(stub, table_id, replace(keys[0], token=second.seat_token))
    assert view.viewer_seat == 0  # the later token still acts
