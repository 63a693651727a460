"""Hostile values over gRPC: every string, count, amount and duration has a bound.

Each refusal is INVALID_ARGUMENT (RESOURCE_EXHAUSTED for a request over the
message limit) with a readable message that does not repeat the value, and
changes nothing: no stream, no event, no table left behind.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]

from felt.storage.decisions import shard_stream
from felt.storage.decisions.sharded import shards_key
from felt.storage.eventstore import events_key
from felt.storage.instances import (
    INSTANCE_KEY_PREFIX,
    INTERNAL_INSTANCE_KEY_PREFIX,
    RedisTableInstances,
)
from felt.wire import limits
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from services.table.ratelimit import RateLimits
from tests.integration.table.harness import TableEnv

FOLD = tpb.Action(fold=tpb.Action.Fold())


def _reason(err: grpc.aio.AioRpcError) -> str:
    for key, value in err.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            for detail in status_pb2.Status.FromString(value).details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return str(info.reason)
    return ""


async def _refused(call: Any, code: grpc.StatusCode, reason: str = "") -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call
    err = info.value
    assert err.code() == code, f"{err.code()} {err.details()}"
    if reason:
        assert _reason(err) == reason, f"{_reason(err)}: {err.details()}"
    assert len(err.details() or "") < 400  # never the hostile value itself
    return err


def _create(table_id: str, config: epb.TableConfig, name: str = "test") -> pb.CreateTableRequest:
    return pb.CreateTableRequest(
        table_id=table_id, name=name, config=config, request_id=uuid.uuid4().hex
    )


async def _nothing_created(env: TableEnv, stub: Any, table_id: str) -> None:
    assert not await env.redis.exists(events_key(table_id))
    await _refused(stub.GetTable(pb.GetTableRequest(table_id=table_id)), grpc.StatusCode.NOT_FOUND)


async def test_table_ids_are_strict(table_env: TableEnv) -> None:
    stub = table_env.stub(await table_env.start_server())
    for bad in ("abc\n", "ABC", "-abc", "a" * 64, "a b"):
        await _refused(
            stub.CreateTable(_create(bad, table_env.nlhe(2)), metadata=table_env.admin),
            grpc.StatusCode.INVALID_ARGUMENT,
            "BAD_TABLE_ID",
        )
        await _refused(
            stub.GetTable(pb.GetTableRequest(table_id=bad)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "BAD_TABLE_ID",
        )
    # Not a key written: only the instance's own addresses (public and internal) and the
    # directories' lists of ids, announced when it started; and the decision shard count and
    # the shard's stream (its group is made at start).
    written: list[bytes] = await table_env.redis.keys("*")  # type: ignore[assignment]
    keys = {k.decode() for k in written}
    announced = {
        f"{prefix}{server.manager.owner}"
        for server in table_env.servers
        for prefix in (INSTANCE_KEY_PREFIX, INTERNAL_INSTANCE_KEY_PREFIX)
    }
    lists = {
        RedisTableInstances(table_env.redis, p).index
        for p in (INSTANCE_KEY_PREFIX, INTERNAL_INSTANCE_KEY_PREFIX)
    }
    decisions = {shards_key(table_env.ai_stream), shard_stream(table_env.ai_stream, 0)}
    assert keys <= announced | lists | decisions


async def test_a_config_out_of_bounds_creates_nothing(table_env: TableEnv) -> None:
    stub = table_env.stub(await table_env.start_server())
    ten_thousand_years = table_env.nlhe(2)
    ten_thousand_years.action_clock.FromSeconds(10_000 * 366 * 86_400)
    negative_hands = table_env.nlhe(2)
    negative_hands.max_hands = -1
    draw_without_ante = table_env.draw(3)
    draw_without_ante.ante = 0
    huge_blind = table_env.nlhe(2)
    huge_blind.big_blind = 2**62
    far_close = table_env.nlhe(2)
    far_close.close_time.seconds = 2**40
    epoch_close = table_env.nlhe(2)
    epoch_close.close_time.seconds = 1
    past_close = table_env.nlhe(2)
    past_close.close_time.FromSeconds(int(time.time()) - 60)
    microsecond_clock = table_env.nlhe(2)
    microsecond_clock.action_clock.nanos = 1_000
    draw_big_below_small = table_env.draw(3)
    draw_big_below_small.big_bet = draw_big_below_small.small_bet - 1
    for n, (config, words) in enumerate(
        [
            (ten_thousand_years, "action_clock"),
            (negative_hands, "max_hands"),
            (draw_without_ante, "ante"),
            (huge_blind, "big_blind"),
            (far_close, "close_time"),
            (epoch_close, "close_time must be in the future"),
            (past_close, "close_time must be in the future"),
            (microsecond_clock, "action_clock must be 100 ms"),
            (draw_big_below_small, "big_bet must be at least its small_bet"),
        ]
    ):
        table_id = f"bad-config-{n}"
        err = await _refused(
            stub.CreateTable(_create(table_id, config), metadata=table_env.admin),
            grpc.StatusCode.INVALID_ARGUMENT,
        )
        assert words in (err.details() or ""), err.details()
        assert _reason(err) in ("BAD_CONFIG", "BAD_AMOUNT"), _reason(err)
        assert str(2**62) not in (err.details() or "") and "1099511627776" not in (
            err.details() or ""
        )
        await _nothing_created(table_env, stub, table_id)


async def test_a_draw_table_without_big_bet_gets_twice_the_small_bet(table_env: TableEnv) -> None:
    stub = table_env.stub(await table_env.start_server())
    config = table_env.draw(3)
    config.ClearField("big_bet")
    response = await stub.CreateTable(_create("draw-default", config), metadata=table_env.admin)
    assert response.table.config.big_bet == 2 * config.small_bet
    stored = await table_env.stored("draw-default")
    assert stored[0].table_created.config.big_bet == 2 * config.small_bet


async def test_names_and_player_ids_are_bounded(table_env: TableEnv) -> None:
    srv = await table_env.start_server()
    stub = table_env.stub(srv)
    table_id = await table_env.create_table(stub, table_env.nlhe(3))
    length = await table_env.xlen(table_id)

    def seat(**fields: Any) -> Any:
        request = pb.SeatPlayerRequest(
            table_id=table_id, player_id="p", stack=100, request_id=uuid.uuid4().hex
        )
        for name, value in fields.items():
            setattr(request, name, value)
        return stub.SeatPlayer(request, metadata=table_env.admin)

    invalid = grpc.StatusCode.INVALID_ARGUMENT
    await _refused(seat(display_name="n" * 33), invalid, "BAD_NAME")
    await _refused(seat(display_name="evil\u202eman"), invalid, "BAD_NAME")
    await _refused(seat(display_name="two\nlines"), invalid, "BAD_NAME")
    await _refused(seat(player_id="p" * 65), invalid, "BAD_PLAYER_ID")
    await _refused(seat(player_id="p\n"), invalid, "BAD_PLAYER_ID")
    await _refused(seat(player_id=""), invalid, "BAD_PLAYER_ID")
    await _refused(seat(stack=0), invalid, "BAD_AMOUNT")
    # Megabytes do not even reach the service: over the request limit.
    exhausted = grpc.StatusCode.RESOURCE_EXHAUSTED
    await _refused(seat(display_name="n" * 1_500_000), exhausted)
    await _refused(seat(player_id="p" * 1_000_000), exhausted)
    assert await table_env.xlen(table_id) == length

    # Names are stored NFC-normalised and trimmed; tokens stay small.
    longest = "\u00e9" * limits.DISPLAY_NAME_MAX
    ok = await seat(display_name=" Zoe\u0301 ", player_id="P" * 64)
    await seat(display_name=longest, player_id="q" * 64, seat=1)
    await seat(display_name="e\u0301" * limits.DISPLAY_NAME_MAX, player_id="r" * 64, seat=2)
    assert len(ok.seat_token) < 512
    view = await table_env.view(stub, table_id)
    assert [s.display_name for s in view.table.seats] == ["Zo\u00e9", longest, longest]
    assert view.ByteSize() < 4096  # three longest names: a few hundred bytes, not 4.5 MB


async def test_an_unknown_hand_id_is_not_echoed(table_env: TableEnv) -> None:
    srv = await table_env.start_server()
    stub = table_env.stub(srv)
    table_id = await table_env.create_table(stub, table_env.nlhe(2))
    keys = await table_env.seat_all(stub, table_id, 2)
    await table_env.watch(stub, table_id, from_sequence=1).wait_event("hole_cards_dealt", seat=1)
    huge = "h" * 60_000  # under the message limit, far over the bound
    err = await _refused(
        stub.GetHandHistory(pb.GetHandHistoryRequest(table_id=table_id, hand_id=huge)),
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_HAND_ID",
    )
    assert "hhhh" not in (err.details() or "")
    await _refused(
        stub.GetHandHistory(pb.GetHandHistoryRequest(table_id=table_id, hand_id=f"{table_id}:99")),
        grpc.StatusCode.NOT_FOUND,
    )
    length = await table_env.xlen(table_id)
    await _refused(
        stub.ShowCards(
            pb.ShowCardsRequest(
                table_id=table_id, seat=0, hand_id=huge, request_id=uuid.uuid4().hex
            ),
            metadata=keys[0].md,
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_HAND_ID",
    )
    assert await table_env.xlen(table_id) == length


async def test_a_request_over_the_message_limit_is_refused(table_env: TableEnv) -> None:
    stub = table_env.stub(await table_env.start_server())
    await _refused(
        stub.GetTable(pb.GetTableRequest(table_id="t" * (limits.MAX_REQUEST_BYTES + 1))),
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    )
    # A request just under it is read, and refused for what it says.
    await _refused(
        stub.GetTable(pb.GetTableRequest(table_id="t" * (limits.MAX_REQUEST_BYTES - 100))),
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_TABLE_ID",
    )


async def test_chips_at_a_table_are_capped(table_env: TableEnv) -> None:
    cap = limits.CHIP_CAP
    srv = await table_env.start_server()
    stub = table_env.stub(srv)
    table_id = await table_env.create_table(stub, table_env.nlhe(3))
    alone = await table_env.seat(stub, table_id, 0, stack=cap - 1000)  # alone: no hand is dealt
    length = await table_env.xlen(table_id)

    def add(amount: int) -> Any:
        return stub.AddChips(
            pb.AddChipsRequest(
                table_id=table_id, seat=0, amount=amount, request_id=uuid.uuid4().hex
            ),
            metadata=alone.service_md,
        )

    def seat(stack: int) -> Any:
        return stub.SeatPlayer(
            pb.SeatPlayerRequest(
                table_id=table_id, player_id="late", stack=stack, request_id=uuid.uuid4().hex
            ),
            metadata=table_env.admin,
        )

    invalid = grpc.StatusCode.INVALID_ARGUMENT
    await _refused(add(2**63 - 1), invalid, "BAD_AMOUNT")  # was INTERNAL (int64 overflow)
    await _refused(add(cap + 1), invalid, "BAD_AMOUNT")
    err = await _refused(add(1001), invalid, "CHIP_CAP")
    assert "at most 1,000 more" in (err.details() or "")
    await _refused(seat(1001), invalid, "CHIP_CAP")
    await _refused(seat(2**63 - 1), invalid, "BAD_AMOUNT")
    assert await table_env.xlen(table_id) == length
    assert (await add(1000)).stack == cap  # exactly up to the cap
    await _refused(seat(1), invalid, "CHIP_CAP")
    await _refused(add(1), invalid, "CHIP_CAP")
    assert await table_env.xlen(table_id) == length + 1


def _shove(view: tpb.TableView, rng: Any) -> tpb.Action:
    """All in whenever allowed, else call or check: the big stack wins or loses big pots."""
    legal = {a.type for a in view.hand.legal_actions}
    if tpb.ACTION_TYPE_ALL_IN in legal:
        return tpb.Action(all_in=tpb.Action.AllIn())
    if tpb.ACTION_TYPE_CALL in legal:
        return tpb.Action(call=tpb.Action.Call())
    return tpb.Action(check=tpb.Action.Check())


async def test_a_stack_at_the_cap_plays_without_overflow(table_env: TableEnv) -> None:
    """A 2**63-1 AddChips once made the opponent's fold INTERNAL and stuck the table."""
    cap = limits.CHIP_CAP
    srv = await table_env.start_server()
    stub = table_env.stub(srv)
    table_id = await table_env.create_table(stub, table_env.nlhe(3))
    keys = {0: await table_env.seat(stub, table_id, 0, stack=cap - 2000)}
    keys[1] = await table_env.seat(stub, table_id, 1, stack=1000)
    keys[2] = await table_env.seat(stub, table_id, 2, stack=1000)
    await table_env.play(stub, table_id, keys, _shove, hands=4)
    # Every chip is behind or in the pot of the next hand, which may be dealt already.
    assert await table_env.chips(stub, table_id) == cap
    table = (await stub.GetTable(pb.GetTableRequest(table_id=table_id))).table
    assert table.hands_played >= 1


async def test_expected_sequence_zero_is_refused_and_unset_is_no_check(table_env: TableEnv) -> None:
    srv = await table_env.start_server()
    stub = table_env.stub(srv)
    table_id = await table_env.create_table(stub, table_env.nlhe(2))
    keys = await table_env.seat_all(stub, table_id, 2)
    watcher = table_env.watch(stub, table_id, from_sequence=1)
    await watcher.wait_event("hole_cards_dealt", seat=1)
    length = await table_env.xlen(table_id)
    request = pb.SubmitActionRequest(
        table_id=table_id, seat=0, request_id=uuid.uuid4().hex, expected_sequence=0, action=FOLD
    )
    assert request.HasField("expected_sequence")
    err = await _refused(
        stub.SubmitAction(request, metadata=keys[0].md),
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_SEQUENCE",
    )
    assert "unset" in (err.details() or "")
    assert await table_env.xlen(table_id) == length
    request.ClearField("expected_sequence")
    done = await stub.SubmitAction(request, metadata=keys[0].md)
    assert done.sequence > length


async def test_a_discard_naming_too_many_cards_is_refused(table_env: TableEnv) -> None:
    srv = await table_env.start_server()
    stub = table_env.stub(srv)
    table_id = await table_env.create_table(stub, table_env.draw(2))
    keys = await table_env.seat_all(stub, table_id, 2)
    watcher = table_env.watch(stub, table_id, from_sequence=1)
    await watcher.wait_event("hole_cards_dealt", seat=1)
    length = await table_env.xlen(table_id)
    for cards in (list(range(6)), [3, 3], [c % 52 for c in range(10_000)]):
        action = tpb.Action(discard=tpb.Action.Discard(cards=cards))
        request = pb.SubmitActionRequest(
            table_id=table_id, seat=0, request_id=uuid.uuid4().hex, action=action
        )
        await _refused(
            stub.SubmitAction(request, metadata=keys[0].md),
            grpc.StatusCode.INVALID_ARGUMENT,
            "BAD_ACTION",
        )
    assert await table_env.xlen(table_id) == length


async def test_a_seat_spamming_changes_is_rate_limited_and_the_refusals_write_nothing(
    table_env: TableEnv,
) -> None:
    """Found by review: SitOut/SitIn alternated 800 times a second, each an event kept."""
    server = await table_env.start_server(rate=RateLimits(per_second=0.5, burst=4))
    stub = table_env.stub(server)
    table_id = await table_env.create_table(stub, table_env.nlhe(3))
    key = await table_env.seat(stub, table_id, 0)  # alone: no hand is dealt
    codes = []
    for n in range(10):
        length = await table_env.xlen(table_id)
        try:
            if n % 2 == 0:
                await stub.SitOut(
                    pb.SitOutRequest(table_id=table_id, seat=0, request_id=f"r{n}"), metadata=key.md
                )
            else:
                await stub.SitIn(
                    pb.SitInRequest(table_id=table_id, seat=0, request_id=f"r{n}"), metadata=key.md
                )
            codes.append("OK")
        except grpc.aio.AioRpcError as err:
            assert await table_env.xlen(table_id) == length  # refused: nothing written
            codes.append(f"{err.code().name}/{table_env.error_reason(err)}")
    assert codes[:4] == ["OK"] * 4
    assert set(codes[4:]) == {"RESOURCE_EXHAUSTED/RATE_LIMITED"}


async def test_ai_seats_of_different_tables_are_limited_apart_and_one_seat_still_is(
    table_env: TableEnv,
) -> None:
    """Issue #20: the AI workers' bucket was keyed by the seat alone, so seat 1 of every table
    an instance ran shared one bucket (2,128 AI actions refused in one run). Each table's
    seat 1 here uses its whole burst at once, all of them together: none is refused; one of
    them going on past its burst still is, and writes nothing."""
    burst = 4
    server = await table_env.start_server(rate=RateLimits(per_second=0.5, burst=burst))
    stub = table_env.stub(server)
    tables = []
    for _ in range(8):
        table_id = await table_env.create_table(stub, table_env.nlhe(3))
        await table_env.seat(stub, table_id, 1, ai_level=epb.AI_LEVEL_NORMAL)  # alone: no hand
        tables.append(table_id)

    async def presence(table_id: str, n: int) -> str:
        try:
            if n % 2 == 0:
                await stub.SitOut(
                    pb.SitOutRequest(table_id=table_id, seat=1, request_id=f"ai-{n}"),
                    metadata=table_env.ai_md,
                )
            else:
                await stub.SitIn(
                    pb.SitInRequest(table_id=table_id, seat=1, request_id=f"ai-{n}"),
                    metadata=table_env.ai_md,
                )
        except grpc.aio.AioRpcError as err:
            return f"{err.code().name}/{table_env.error_reason(err)}"
        return "OK"

    for n in range(burst):  # every table's seat 1 at once, its whole burst
        codes = await asyncio.gather(*(presence(t, n) for t in tables))
        assert codes == ["OK"] * len(tables), (n, codes)
    spammed = tables[0]
    length = await table_env.xlen(spammed)
    assert [await presence(spammed, n) for n in range(burst, burst + 4)] == [
        "RESOURCE_EXHAUSTED/RATE_LIMITED"
    ] * 4
    assert await table_env.xlen(spammed) == length  # refused: nothing written
    # A seat token's bucket is its own too: a human at another table is not held back.
    human_table = await table_env.create_table(stub, table_env.nlhe(3))
    key = await table_env.seat(stub, human_table, 1)
    sit_out = pb.SitOutRequest(table_id=human_table, seat=1, request_id="h-0")
    await stub.SitOut(sit_out, metadata=key.md)
