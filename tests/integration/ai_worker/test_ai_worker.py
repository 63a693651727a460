"""AI workers against a real Redis and a real table service: play, redaction, crashes, poison.

Fixtures (``ai_env``) are in this directory's conftest: a table service on
loopback publishing to a per-test AI stream, and helpers that create AI-only
tables, start workers and follow a table until it closes.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from felt.storage.decisions import shard_dead_stream
from poker.events.v1 import events_pb2 as epb
from poker.v1 import ai_pb2
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb
from services.ai_worker.decide import Decider
from tests.integration.ai_worker.harness import AiEnv, stream_id

REPO = Path(__file__).resolve().parents[3]

# ``ai_env`` is typed loosely here: its class lives in conftest, which importlib-mode tests
# cannot import by name.


async def _pending(env: AiEnv) -> int:
    return int((await env.group_info()).get("pending", -1))


async def _nothing_pending(env: AiEnv) -> bool:
    return await _pending(env) == 0


async def test_ai_tables_play_to_the_end_through_a_worker(ai_env: AiEnv) -> None:
    worker = await ai_env.start_worker()
    nlhe = await ai_env.create_ai_table(variant=epb.VARIANT_NLHE, max_hands=6)
    draw = await ai_env.create_ai_table(variant=epb.VARIANT_DRAW5, max_hands=6)

    runs = await asyncio.gather(ai_env.watch_until_done(nlhe), ai_env.watch_until_done(draw))

    for run in runs:
        assert run.closed or run.hands > 0

        async def over(table_id: str = run.table_id) -> bool:
            # Stacks count the chips behind, not a running hand's pot: read them once the
            # table deals no more (closed after max_hands, or waiting for two with chips).
            table = (await ai_env.stub.GetTable(pb.GetTableRequest(table_id=table_id))).table
            return bool(table.state != tpb.TABLE_STATE_PLAYING)

        await ai_env.eventually(over, f"{run.table_id} stops dealing")
        stacks = await ai_env.stacks(run.table_id)
        assert sum(stacks.values()) == 3 * 1000, f"chips not conserved at {run.table_id}: {stacks}"
    assert worker.outcomes["accepted"] >= 12
    assert worker.outcomes["dead"] == 0
    await ai_env.eventually(lambda: _nothing_pending(ai_env), "every request acknowledged")


def _is_hidden(cards: Any) -> bool:
    return all(c.WhichOneof("kind") == "hidden" for c in cards)


def _is_known(cards: Any) -> bool:
    return all(c.WhichOneof("kind") == "code" for c in cards)


def _check_redacted(request: ai_pb2.DecisionRequest) -> int:
    """Assert the request shows its seat nothing secret; returns how many others' deals it hid."""
    me = request.seat
    where = f"request {request.request_id} (seat {me})"
    assert request.view.viewer_seat == me, where
    assert request.view.hand.to_act == me, where
    assert request.legal_actions, where
    shown: dict[int, list[int]] = {}
    hidden_deals = 0
    for stored in request.history:
        kind = stored.WhichOneof("event")
        if kind == "hand_started":
            assert not stored.hand_started.setup.deck, f"{where}: the deck is in HandStarted"
        elif kind == "deck_committed":
            assert not stored.deck_committed.seed, f"{where}: the deck seed is in DeckCommitted"
        elif kind == "player_seated":
            assert not stored.player_seated.token_hash, f"{where}: a token hash is in the history"
        elif kind == "hole_cards_dealt":
            dealt = stored.hole_cards_dealt
            if dealt.seat == me:
                assert _is_known(dealt.cards), f"{where}: its own cards are hidden"
            else:
                assert _is_hidden(dealt.cards), f"{where}: seat {dealt.seat}'s cards are visible"
                hidden_deals += 1
        elif kind == "cards_drawn" and stored.cards_drawn.seat != me:
            drawn = stored.cards_drawn
            assert _is_hidden(drawn.drawn), f"{where}: seat {drawn.seat}'s draw is visible"
            assert _is_hidden(drawn.discarded), f"{where}: seat {drawn.seat}'s discards are visible"
        elif kind == "cards_shown":
            shown[stored.cards_shown.seat] = [c.code for c in stored.cards_shown.cards]
    for seat in request.view.hand.seats:
        if seat.seat == me:
            assert seat.cards and _is_known(seat.cards), f"{where}: its own view has no cards"
        elif seat.seat in shown:
            assert [c.code for c in seat.cards] == shown[seat.seat], where
        else:
            assert _is_hidden(seat.cards), f"{where}: seat {seat.seat}'s cards are in the view"
    return hidden_deals


async def test_decision_requests_carry_no_hidden_card_of_another_seat(ai_env: AiEnv) -> None:
    await ai_env.start_worker()
    await ai_env.start_worker()
    tables = [
        await ai_env.create_ai_table(variant=epb.VARIANT_NLHE, seats=3, max_hands=8),
        await ai_env.create_ai_table(variant=epb.VARIANT_NLHE, seats=2, max_hands=8, stack=200),
        await ai_env.create_ai_table(variant=epb.VARIANT_DRAW5, seats=3, max_hands=8),
        await ai_env.create_ai_table(variant=epb.VARIANT_DRAW5, seats=4, max_hands=8),
    ]
    await asyncio.gather(*(ai_env.watch_until_done(t) for t in tables))

    requests = await ai_env.requests()
    assert len(requests) >= 100, f"only {len(requests)} requests: not a long enough run"
    variants = {r.view.hand.variant for _, r in requests}
    assert variants == {epb.VARIANT_NLHE, epb.VARIANT_DRAW5}
    hidden = sum(_check_redacted(r) for _, r in requests)
    assert hidden >= len(requests), "other seats' deals should appear (hidden) in the histories"
    draws = [r for _, r in requests if r.legal_actions[0].type == tpb.ACTION_TYPE_DISCARD]
    assert draws, "no draw decision was requested"
    # Seeded from the request id: any worker, any time, answers a request the same way.
    for _, request in requests[:: max(1, len(requests) // 40)]:
        assert Decider().decide(request).action == Decider().decide(request).action


async def test_two_workers_split_the_load(ai_env: AiEnv) -> None:
    first = await ai_env.start_worker(concurrency=2)
    second = await ai_env.start_worker(concurrency=2)
    tables = [await ai_env.create_ai_table(max_hands=5) for _ in range(4)]

    runs = await asyncio.gather(*(ai_env.watch_until_done(t) for t in tables))

    for run in runs:
        assert sum((await ai_env.stacks(run.table_id)).values()) == 3000
    assert first.outcomes["accepted"] > 0, dict(first.outcomes)
    assert second.outcomes["accepted"] > 0, dict(second.outcomes)
    assert first.consumer != second.consumer


async def test_a_request_held_by_a_killed_worker_is_claimed_by_another(ai_env: AiEnv) -> None:
    doomed_decider = ai_env.gated_decider()
    doomed = await ai_env.start_worker(decider=doomed_decider, concurrency=1)
    table = await ai_env.create_ai_table(max_hands=3)
    await doomed_decider.wait_entered()  # mid-decision, nothing answered or acknowledged
    [held] = [stream_id(e) for e in doomed.held_entries]
    pending: list[dict[str, bytes]] = await ai_env.redis.xpending_range(  # type: ignore[assignment]
        ai_env.stream, ai_env.group, held, held, 1
    )
    assert pending[0]["consumer"].decode() == doomed.consumer

    await doomed.abort()  # dies: the entry stays in its pending list

    rescuer = await ai_env.start_worker(claim_idle_ms=300)
    run = await ai_env.watch_until_done(table)

    assert run.closed
    assert (rescuer.metrics.registry.get_sample_value("felt_ai_claimed_total") or 0) >= 1
    assert rescuer.outcomes["accepted"] > 0
    assert not await ai_env.redis.xpending_range(ai_env.stream, ai_env.group, held, held, 1)
    assert sum((await ai_env.stacks(table)).values()) == 3000


def _poison_candidate(request_id: str, level: int) -> bytes:
    """A well-formed request (a seat that may fold) for a table that does not exist."""
    request = ai_pb2.DecisionRequest(
        request_id=request_id,
        table_id="no-such-table",
        seat=0,
        expected_sequence=7,
        ai_level=level,  # type: ignore[arg-type]
        view=tpb.TableView(viewer_seat=0, hand=tpb.HandView(hand_id="no-such-table:1", to_act=0)),
        legal_actions=[tpb.LegalAction(type=tpb.ACTION_TYPE_FOLD)],
    )
    return request.SerializeToString()


async def test_poison_requests_go_to_the_dead_letter_stream(ai_env: AiEnv) -> None:
    redis, stream, group = ai_env.redis, ai_env.stream, ai_env.group
    await redis.xgroup_create(stream, group, id="$", mkstream=True)
    # A request that keeps killing its workers: read, then claimed by three more, never acked.
    retried = await redis.xadd(
        stream, {"payload": _poison_candidate("ai:x:1", epb.AI_LEVEL_EASY), "request_id": "ai:x:1"}
    )
    await redis.xreadgroup(group, "crashed-0", {stream: ">"}, count=1)
    for n in range(1, 4):
        await redis.xclaim(stream, group, f"crashed-{n}", 0, [retried])

    worker = await ai_env.start_worker(max_deliveries=3, claim_idle_ms=200)
    garbage = await redis.xadd(stream, {"payload": b"\xff\x00not a proto", "request_id": "g"})
    empty = await redis.xadd(stream, {"request_id": "no-payload"})
    levelless = await redis.xadd(
        stream, {"payload": _poison_candidate("ai:x:2", epb.AI_LEVEL_UNSPECIFIED)}
    )

    dead = shard_dead_stream(ai_env.base_stream, 0)
    await ai_env.eventually(lambda: _xlen(redis, dead, 4), "four dead letters")
    letters: list[tuple[bytes, dict[bytes, bytes]]] = await redis.xrange(dead)  # type: ignore[assignment]
    reasons: dict[bytes | str, str] = {
        fields[b"entry_id"]: fields[b"reason"].decode() for _, fields in letters
    }
    assert reasons[retried].startswith("delivered 5 times"), reasons
    assert reasons[garbage].startswith("undecodable"), reasons
    assert reasons[empty].startswith("undecodable"), reasons
    assert reasons[levelless].startswith("unknown ai_level"), reasons
    dead_payloads = [f.get(b"payload") for _, f in letters]
    assert b"\xff\x00not a proto" in dead_payloads  # kept for inspection
    assert await _pending(ai_env) == 0
    assert worker.outcomes["dead"] == 4
    samples = worker.metrics.registry.get_sample_value
    assert samples("felt_ai_dead_letters_total", {"reason": "undecodable"}) == 2


async def _xlen(redis: Any, key: str, at_least: int) -> bool:
    return int(await redis.xlen(key)) >= at_least


async def test_graceful_shutdown_finishes_the_decision_in_flight(ai_env: AiEnv) -> None:
    decider = ai_env.gated_decider()
    worker = await ai_env.start_worker(decider=decider, concurrency=1)
    table = await ai_env.create_ai_table(max_hands=50)
    await decider.wait_entered()
    [held] = [stream_id(e) for e in worker.held_entries]
    sequence_before = (
        await ai_env.stub.GetTable(pb.GetTableRequest(table_id=table))
    ).table.sequence

    stopping = asyncio.create_task(worker.stop())
    await ai_env.eventually(lambda: worker.stopping, "the worker to stop reading")
    assert not stopping.done()  # still holding its decision
    decider.gate.set()
    await asyncio.wait_for(stopping, 30)

    assert decider.held == 1  # took nothing new after the stop
    assert worker.outcomes["accepted"] == 1
    assert not await ai_env.redis.xpending_range(ai_env.stream, ai_env.group, held, held, 1)
    table_now = (await ai_env.stub.GetTable(pb.GetTableRequest(table_id=table))).table
    assert table_now.sequence > sequence_before  # the answer moved the table on
    consumers = await ai_env.redis.xinfo_consumers(ai_env.stream, ai_env.group)
    assert worker.consumer.encode() not in {c["name"] for c in consumers}  # left the group


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return int(response.status), bytes(response.read())
    except urllib.error.HTTPError as err:
        return int(err.code), bytes(err.read())


async def test_worker_process_serves_health_and_metrics_and_exits_0_on_sigterm(
    ai_env: AiEnv, tmp_path: Path
) -> None:
    env = {
        **os.environ,
        "REDIS_URL": ai_env.redis_url,
        "FELT_TABLE_TARGET": ai_env.target,
        "FELT_AI_TOKEN": "test-ai-token-credential-0123456789",  # conftest AI_TOKEN
        "FELT_AI_STREAM": ai_env.base_stream,
        "FELT_DECISION_SHARDS": "1",
        "FELT_AI_GROUP": ai_env.group,
        "FELT_AI_METRICS_PORT": "0",
        "FELT_AI_METRICS_HOST": "127.0.0.1",
        "FELT_AI_CONCURRENCY": "2",
        "FELT_LOG_LEVEL": "DEBUG",
    }
    log_path = tmp_path / "worker.log"
    with log_path.open("wb") as log:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "services.ai_worker",
            env=env,
            cwd=REPO,
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
        )
        try:
            assert process.stdout is not None
            banner = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
            assert "metrics port" in banner, banner
            port = int(banner.rsplit("metrics port", 1)[1].strip(" )\n"))

            table = await ai_env.create_ai_table(max_hands=3)
            run = await ai_env.watch_until_done(table)
            assert run.closed

            status, body = await asyncio.to_thread(_get, f"http://127.0.0.1:{port}/healthz")
            assert status == 200, body
            status, body = await asyncio.to_thread(_get, f"http://127.0.0.1:{port}/metrics")
            assert status == 200
            assert b'felt_ai_decisions_total{outcome="accepted"}' in body
            assert b"felt_ai_decision_seconds_bucket" in body

            process.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(process.wait(), 30) == 0
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    logs = log_path.read_text()
    assert '"event": "ai_worker_stopped"' in logs, logs[-2000:]
    assert '"table_id": "' + table + '"' in logs  # decisions are logged with the table bound
