"""An action's idempotency record keeps its sequence and deadline, and a retry still gets the
very answer the action got: the seat's view made again from the stream (``restore_action``).

On the in-memory ports, as ``test_table_app_on_fakes``: hands of a heads-up table with an
action clock are played with one request id per action, then every action is retried, from
the cache, from the stream across the hands' snapshots, and from a runtime loaded afresh.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from felt.core.rules.commands import Act, ActionKind
from felt.storage.decisions import MemoryDecisionQueue
from felt.storage.eventstore import MemoryEventStore
from felt.storage.idempotency import ClientRequest
from felt.storage.registry import MemoryTableRegistry
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_service_pb2 as pb
from services.table.admin import TableAdmin
from services.table.application import TableApp
from services.table.auth import Authenticator, Caller, Secrets
from services.table.manager import TableManager
from services.table.ratelimit import RateLimiter, RateLimits
from services.table.runtime import TableRuntime, Timing

TABLE = "records-table"
SECRETS = Secrets(b"s" * 32, "admin-token", "ai-token")


def request(request_id: str) -> ClientRequest:
    return ClientRequest(request_id, "test.SubmitAction", request_id.encode())


@pytest.fixture
async def played() -> AsyncIterator[tuple[MemoryEventStore, TableApp, list[Caller]]]:
    store = MemoryEventStore()
    manager = TableManager(
        store,
        MemoryTableRegistry(),
        MemoryDecisionQueue(),
        adopt=False,
        timing=Timing(between_hands=timedelta(0)),
    )
    # Retrying 40 actions twice runs past a person's rate limit: lifted here.
    rate = RateLimiter(RateLimits(per_second=10_000, burst=100_000))
    app, auth = TableApp(manager, rate), Authenticator(SECRETS)
    admin = TableAdmin(app, SECRETS)
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=2, small_blind=5, big_blind=10)
    config.action_clock.FromMilliseconds(60_000)  # every view has a deadline to keep
    lobby = auth.authenticate("admin-token")
    await admin.create_table(lobby, request("create"), TABLE, "", config)
    callers = []
    for seat in range(2):
        seated = await admin.seat_player(
            lobby, request(f"seat-{seat}"), TABLE, seat, f"p{seat}", "", 10_000, 0
        )
        callers.append(auth.authenticate(seated.seat_token))
    try:
        yield store, app, callers
    finally:
        await manager.stop()


async def act(app: TableApp, callers: list[Caller], request_id: str) -> pb.SubmitActionResponse:
    """The seat to act checks or calls, once the next hand is dealt."""
    runtime = app.manager.runtimes[TABLE]
    async with asyncio.timeout(5):
        while (hand := runtime.state.hand if runtime.state else None) is None or hand.ended:
            await asyncio.sleep(0.001)
    seat = hand.actor_seat
    assert seat is not None
    mine = hand.seat_state(seat)
    assert mine is not None
    kind = ActionKind.CHECK if mine.bet == hand.current_bet else ActionKind.CALL
    return await app.submit_action(callers[seat], request(request_id), TABLE, Act(seat, kind), None)


async def test_retries_get_the_first_answer_from_a_record_without_the_view(
    played: tuple[MemoryEventStore, TableApp, list[Caller]],
) -> None:
    store, app, callers = played
    runtime = app.manager.runtimes[TABLE]
    answers: dict[str, pb.SubmitActionResponse] = {}
    for number in range(40):  # several hands: a snapshot at each deal
        answers[f"a{number}"] = await act(app, callers, f"a{number}")
    assert len(runtime.snapshots_at) >= 3
    last = answers["a39"]
    assert last.view.table.sequence == last.sequence
    # The cache is at the last answer's sequence: its retry is made from the cache.
    if runtime.version == last.sequence:
        seat = last.view.viewer_seat
        retry = await app.submit_action(
            callers[seat], request("a39"), TABLE, Act(seat, ActionKind.CHECK), None
        )
        assert retry.SerializeToString(deterministic=True) == last.SerializeToString(
            deterministic=True
        )
    # Each record holds the sequence and the deadline, no view.
    for request_id, answer in answers.items():
        seat = answer.view.viewer_seat
        principal = callers[seat].for_seat(TABLE, seat).principal
        key = request(request_id).key(principal)
        stored = await store.request_result(TABLE, key.key)
        assert stored is not None
        recorded = pb.SubmitActionResponse.FromString(key.open(stored.response))
        assert recorded.sequence == answer.sequence
        assert not recorded.view.HasField("table") and not recorded.view.hand.seats
        has_deadline = answer.view.hand.HasField("action_deadline")
        assert recorded.view.hand.HasField("action_deadline") == has_deadline
        assert len(stored.response) < 40 < answer.ByteSize()

    async def retried() -> None:
        for request_id, answer in answers.items():
            seat = answer.view.viewer_seat
            # Refused on today's table (or a duplicate of the append): the first answer.
            again = await app.submit_action(
                callers[seat], request(request_id), TABLE, Act(seat, ActionKind.CHECK), None
            )
            assert again.SerializeToString(deterministic=True) == answer.SerializeToString(
                deterministic=True
            ), request_id

    await retried()
    # A runtime loaded afresh knows only its own snapshot: older retries read from the stream's
    # start (or from the oldest kept snapshot), the rest from the snapshot it knows.
    await runtime.load()
    assert len(runtime.snapshots_at) == 1
    await retried()
    # Any state the stream has is the one the cache had then.
    fresh = TableRuntime(TABLE, store)
    assert await fresh.state_at(runtime.version) == runtime.state
