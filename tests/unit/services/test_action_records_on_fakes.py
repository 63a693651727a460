"""An action's idempotency record keeps its sequence and deadline, and a retry still gets the
very answer the action got: the seat's view made again from the stream (``restore_action``).

On the in-memory ports, as ``test_table_app_on_fakes``: hands of a heads-up table with an
action clock are played with one request id per action, then every action is retried, from
the cache, from the stream across the hands' snapshots, and from a runtime loaded afresh;
after a trim that stopped mid-hand (at the archived position) and a reload, a retry is
answered from the last kept snapshot before it, or refused ``REQUEST_TOO_OLD`` when none
is kept; an old record with the whole view is its own answer. On the same played table: a
watch feed that lost its state (a failed fold) takes the runtime's again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from felt.core.rules.commands import Act, ActionKind
from felt.service.refusals import Code, Refused
from felt.storage.decisions import MemoryDecisionQueue
from felt.storage.eventstore import MemoryEventStore
from felt.storage.idempotency import ClientRequest
from felt.storage.registry import MemoryTableRegistry
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_service_pb2 as pb
from poker.v1.reason_pb2 import Reason
from services.table import runtime as runtime_module
from services.table.admin import TableAdmin
from services.table.application import TableApp, restore_action
from services.table.auth import Authenticator, Caller, Secrets
from services.table.manager import TableManager
from services.table.ratelimit import RateLimiter, RateLimits
from services.table.runtime import RequestTooOld, TableRuntime, Timing
from services.table.watch import Item, WatchHub

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


async def next_action(app: TableApp) -> Act:
    """The check or call of the seat to act, once the next hand is dealt."""
    runtime = app.manager.runtimes[TABLE]
    async with asyncio.timeout(5):
        while (hand := runtime.state.hand if runtime.state else None) is None or hand.ended:
            await asyncio.sleep(0.001)
    seat = hand.actor_seat
    assert seat is not None
    mine = hand.seat_state(seat)
    assert mine is not None
    return Act(seat, ActionKind.CHECK if mine.bet == hand.current_bet else ActionKind.CALL)


async def act(app: TableApp, callers: list[Caller], request_id: str) -> pb.SubmitActionResponse:
    """The seat to act checks or calls, once the next hand is dealt."""
    action = await next_action(app)
    return await app.submit_action(callers[action.seat], request(request_id), TABLE, action, None)


async def retry(
    app: TableApp, callers: list[Caller], request_id: str, answer: pb.SubmitActionResponse
) -> pb.SubmitActionResponse:
    """``request_id`` sent again by the seat that sent it (refused on today's table, or a
    duplicate of the append: either way its first answer)."""
    seat = answer.view.viewer_seat
    return await app.submit_action(
        callers[seat], request(request_id), TABLE, Act(seat, ActionKind.CHECK), None
    )


def same(one: pb.SubmitActionResponse, other: pb.SubmitActionResponse) -> bool:
    return one.SerializeToString(deterministic=True) == other.SerializeToString(deterministic=True)


async def play(
    app: TableApp, callers: list[Caller], count: int
) -> dict[str, pb.SubmitActionResponse]:
    """``count`` actions (several hands: a snapshot at each deal), each retried at once while
    the cache is still at its sequence (answered from the cache); at least one is."""
    runtime = app.manager.runtimes[TABLE]
    answers: dict[str, pb.SubmitActionResponse] = {}
    from_cache = 0
    for number in range(count):
        request_id = f"a{number}"
        answers[request_id] = answer = await act(app, callers, request_id)
        assert answer.view.table.sequence == answer.sequence
        if runtime.version == answer.sequence:  # not if the hand ended and the next was dealt
            assert same(await retry(app, callers, request_id, answer), answer)
            from_cache += 1
    assert from_cache
    return answers


async def test_retries_get_the_first_answer_from_a_record_without_the_view(
    played: tuple[MemoryEventStore, TableApp, list[Caller]],
) -> None:
    store, app, callers = played
    runtime = app.manager.runtimes[TABLE]
    answers = await play(app, callers, 40)
    assert len(runtime.snapshots_at) >= 3
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


@pytest.mark.parametrize("reload", [False, True])
async def test_retries_after_a_trim_mid_hand_and_a_reload(
    played: tuple[MemoryEventStore, TableApp, list[Caller]], reload: bool
) -> None:
    """The stream's first kept event is no snapshot (the trim stopped at the archived
    position, mid-hand); the runtime knows the trimmed snapshots, or, reloaded, only its
    latest."""
    store, app, callers = played
    runtime = app.manager.runtimes[TABLE]
    answers = await play(app, callers, 60)
    snapshots = list(runtime.snapshots_at)
    assert len(snapshots) >= 4
    archived = snapshots[1] + 3  # inside the hand dealt at snapshots[1]
    assert archived < snapshots[2] - 1
    await store.record_archived(TABLE, archived)
    assert await store.trim_archived(TABLE, snapshots[-1]) == archived
    if reload:
        await runtime.load()
        assert runtime.snapshots_at == [snapshots[-1]]
    answered = refused = 0
    for request_id, answer in answers.items():
        if answer.sequence <= archived:
            continue  # trimmed with its record: the id is forgotten
        if answer.sequence < snapshots[2]:
            # No snapshot kept at or before it: a definite refusal, nothing changed.
            version = runtime.version
            with pytest.raises(Refused) as caught:
                await retry(app, callers, request_id, answer)
            assert caught.value.code is Code.FAILED_PRECONDITION
            assert caught.value.reason == Reason.Name(Reason.REQUEST_TOO_OLD)
            assert runtime.version == version
            refused += 1
        else:
            assert same(await retry(app, callers, request_id, answer), answer), request_id
            answered += 1
    assert refused and answered


async def test_a_rebuild_is_bounded_and_kept(
    played: tuple[MemoryEventStore, TableApp, list[Caller]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A runtime that knows no snapshot reads at most ``REBUILD_LIMIT`` events back: farther
    from the last snapshot, the answer is refused; one made is kept for the next retry."""
    store, app, callers = played
    runtime = app.manager.runtimes[TABLE]
    answers = await play(app, callers, 30)
    first_hand, second_hand = runtime.snapshots_at[:2]
    sequence = max(a.sequence for a in answers.values() if a.sequence < second_hand)
    assert sequence - first_hand >= 3
    fresh = TableRuntime(TABLE, store)  # loaded nothing: knows no snapshot
    made = await fresh.state_at(sequence)
    assert await fresh.state_at(sequence) is made  # kept, not folded again
    # The events read (at most REBUILD_LIMIT) must reach back to the snapshot itself.
    monkeypatch.setattr(runtime_module, "REBUILD_LIMIT", sequence - first_hand + 1)
    assert await TableRuntime(TABLE, store).state_at(sequence) == made  # the snapshot in reach
    monkeypatch.setattr(runtime_module, "REBUILD_LIMIT", sequence - first_hand)
    with pytest.raises(RequestTooOld):
        await TableRuntime(TABLE, store).state_at(sequence)


async def test_an_old_record_with_the_whole_view_is_its_own_answer(
    played: tuple[MemoryEventStore, TableApp, list[Caller]],
) -> None:
    """Records written before they were kept small hold the whole answer."""
    _, app, callers = played
    answer = (await play(app, callers, 3))["a2"]
    runtime = app.manager.runtimes[TABLE]
    old = pb.SubmitActionResponse.FromString(answer.SerializeToString())
    assert await restore_action(runtime, answer.view.viewer_seat, old) is old


async def test_a_feed_that_lost_its_state_takes_the_runtimes_again(
    played: tuple[MemoryEventStore, TableApp, list[Caller]],
) -> None:
    store, app, callers = played
    runtime = app.manager.runtimes[TABLE]
    await play(app, callers, 2)
    hub = WatchHub(store)
    items: list[Item] = []

    async def watch() -> None:
        async for item in hub.events(
            TABLE,
            runtime.version,
            runtime.version,
            origin=lambda: (runtime.version, runtime.state, runtime.turn_started_at),
        ):
            items.append(item)

    task = asyncio.create_task(watch())
    try:
        async with asyncio.timeout(5):
            while TABLE not in hub.feeds:
                await asyncio.sleep(0.001)
        feed = hub.feeds[TABLE]
        assert feed.state is not None  # started where the runtime is
        feed.state = None  # as a failed fold leaves it
        answer = await act(app, callers, "after")
        async with asyncio.timeout(5):
            while not items or items[-1][0] < answer.sequence:
                await asyncio.sleep(0.001)
        folded = [(item[0], item[3]) for item in items if item[3] is not None]
        assert folded, "the feed stayed stateless"
        assert feed.state is not None
        for sequence, after in folded:
            assert after.state == await runtime.state_at(sequence)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await hub.aclose()


async def test_a_sequence_only_action_is_answered_and_retried_without_a_view(
    played: tuple[MemoryEventStore, TableApp, list[Caller]],
) -> None:
    """``SubmitActionRequest.sequence_only`` (the AI workers'): the answer and its retry, from
    the cache or from a runtime loaded afresh, are the sequence alone; the request with the
    flag is another request than the one without it (REQUEST_ID_REUSED)."""
    _, app, callers = played
    runtime = app.manager.runtimes[TABLE]
    action = await next_action(app)
    flagged = pb.SubmitActionRequest(
        table_id=TABLE, seat=action.seat, request_id="q", sequence_only=True
    )
    client_request = ClientRequest.of(flagged)

    async def submit(req: ClientRequest) -> pb.SubmitActionResponse:
        return await app.submit_action(
            callers[action.seat], req, TABLE, action, None, sequence_only=req is client_request
        )

    answer = await submit(client_request)
    assert answer == pb.SubmitActionResponse(sequence=runtime.version)
    assert not answer.HasField("view")
    assert same(await submit(client_request), answer)
    await runtime.stop()
    del app.manager.runtimes[TABLE]
    await app.manager.get(TABLE)  # loaded afresh from the stream
    assert same(await submit(client_request), answer)
    flagged.sequence_only = False  # the same id, other content: not a retry
    with pytest.raises(Refused) as reused:
        await submit(ClientRequest.of(flagged))
    assert reused.value.reason == Reason.Name(Reason.REQUEST_ID_REUSED)
