"""The table service's use cases on the in-memory ports: no Redis, no gRPC, no network.

``TableApp`` and ``TableQueries`` run on ``MemoryEventStore``,
``MemoryTableRegistry`` and ``MemoryDecisionQueue`` with callers made by a
real ``Authenticator`` from plain tokens, as the interceptor makes them. What
is asserted is what a client sees: results, refusal codes and reasons, and
that a refused or retried request changes nothing.
"""

from __future__ import annotations

import asyncio
import time
import types
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import timedelta

import pytest

import services.table.auth as auth_module
from felt.core.rules.commands import Act, ActionKind
from felt.core.rules.config import public_hand_id
from felt.core.rules.events import HandStarted
from felt.core.table.events import PlayerSeated
from felt.storage.decisions import MemoryDecisionQueue
from felt.storage.eventstore import MemoryEventStore
from felt.storage.idempotency import ClientRequest
from felt.storage.registry import MemoryTableRegistry
from felt.wire import limits
from poker.events.v1 import events_pb2 as epb
from services.table.admin import Seated, TableAdmin
from services.table.application import TableApp
from services.table.auth import ANONYMOUS, Authenticator, Caller, Secrets
from services.table.manager import TableManager
from services.table.queries import Seen, TableQueries, View
from services.table.refusals import Code, Refused
from services.table.runtime import Timing
from services.table.watch import WatchHub, WatchLimits

SECRET = b"s" * 32
ADMIN_TOKEN = "admin-token"
AI_TOKEN = "ai-token"
TABLE = "fake-table"


@dataclass
class Service:
    manager: TableManager
    store: MemoryEventStore
    registry: MemoryTableRegistry
    app: TableApp
    admins: TableAdmin
    queries: TableQueries
    auth: Authenticator

    @property
    def admin(self) -> Caller:
        return self.auth.authenticate(ADMIN_TOKEN)

    async def seat(self, seat: int, player: str, stack: int = 1000) -> Seated:
        return await self.admins.seat_player(
            self.admin, request(f"seat-{player}"), TABLE, seat, player, "", stack, 0
        )

    async def hand_running(self) -> None:
        """Wait for the first hand (the deal timer fires at once: no pause between hands)."""
        async with asyncio.timeout(5):
            while True:
                state = self.manager.runtimes[TABLE].state
                if state is not None and state.hand is not None and not state.hand.ended:
                    return
                await asyncio.sleep(0.001)


def request(request_id: str, content: bytes = b"") -> ClientRequest:
    """A request as the handler describes it (its content: what the fingerprint covers)."""
    return ClientRequest(request_id, "test.Call", content or request_id.encode())


def config(seats: int = 2) -> epb.TableConfig:
    return epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=seats, small_blind=5, big_blind=10)


@pytest.fixture
async def service() -> AsyncIterator[Service]:
    store, registry = MemoryEventStore(), MemoryTableRegistry()
    manager = TableManager(
        store,
        registry,
        MemoryDecisionQueue(),
        adopt=False,
        timing=Timing(between_hands=timedelta(0)),
    )
    secrets = Secrets(SECRET, ADMIN_TOKEN, AI_TOKEN)
    app = TableApp(manager)
    hub = WatchHub(store)
    queries = TableQueries(app, hub)
    try:
        yield Service(
            manager,
            store,
            registry,
            app,
            TableAdmin(app, secrets),
            queries,
            Authenticator(secrets),
        )
    finally:
        await hub.aclose()
        await manager.stop()


async def refused(call: object) -> Refused:
    with pytest.raises(Refused) as caught:
        await call  # type: ignore[misc]
    return caught.value


async def test_create_table_is_admin_only_and_retry_safe(service: Service) -> None:
    create = request("create-1")
    anonymous = service.auth.authenticate("")
    no = await refused(service.admins.create_table(anonymous, create, TABLE, "t", config()))
    assert (no.code, no.reason) == (Code.UNAUTHENTICATED, "SERVICE_CREDENTIAL_REQUIRED")
    assert not await service.registry.exists(TABLE)

    table = await service.admins.create_table(service.admin, create, TABLE, "Main", config())
    assert (table.table_id, table.name, table.sequence) == (TABLE, "Main", 1)
    # A retry gets the first answer; another request for the same id is refused.
    assert (
        await service.admins.create_table(service.admin, create, TABLE, "Main", config()) == table
    )
    again = service.admins.create_table(service.admin, request("create-2"), TABLE, "x", config())
    assert (await refused(again)).code == Code.ALREADY_EXISTS
    # The same request id with other content is no retry.
    other = ClientRequest("create-1", "test.Call", b"other content")
    reused = await refused(service.admins.create_table(service.admin, other, TABLE, "x", config()))
    assert (reused.code, reused.reason) == (Code.INVALID_ARGUMENT, "REQUEST_ID_REUSED")
    assert (await service.store.version(TABLE)) == 1


async def test_a_retry_is_answered_after_its_close_time_has_passed(service: Service) -> None:
    """close_time must be ahead of the request: a retry of a table created with it gets its
    first answer once that time has passed (the lobby retries answers it lost); a new
    request with it is refused."""
    closing = config()
    closing.close_time.FromMilliseconds(int(time.time() * 1000) + 1_000)
    create = request("create-closing")
    table = await service.admins.create_table(service.admin, create, TABLE, "Main", closing)
    while time.time() * 1000 <= closing.close_time.ToMilliseconds():
        await asyncio.sleep(0.05)
    assert await service.admins.create_table(service.admin, create, TABLE, "Main", closing) == (
        table
    )
    late = service.admins.create_table(service.admin, request("late"), "t-late", "L", closing)
    with pytest.raises(limits.LimitError) as bad:  # INVALID_ARGUMENT, by the interceptor
        await late
    assert bad.value.reason == "BAD_CONFIG" and "close_time" in bad.value.message


async def test_seating_chooses_free_seats_and_a_retry_gets_the_same_token(
    service: Service,
) -> None:
    await service.admins.create_table(service.admin, request("c"), TABLE, "", config(2))
    first = await service.admins.seat_player(
        service.admin, request("s1"), TABLE, None, "alice", "Alice", 500, 0
    )
    assert first.seat == 0 and first.seat_token and first.expires_at > 0
    retry = await service.admins.seat_player(
        service.admin, request("s1"), TABLE, None, "alice", "Alice", 500, 0
    )
    assert retry == first  # same seat, sequence, token and expiry: nothing appended
    second = await service.admins.seat_player(
        service.admin, request("s2"), TABLE, None, "bob", "", 500, 0
    )
    assert second.seat == 1 and second.sequence == first.sequence + 1
    full = await refused(
        service.admins.seat_player(service.admin, request("s3"), TABLE, None, "carol", "", 500, 0)
    )
    assert (full.code, full.reason) == (Code.RESOURCE_EXHAUSTED, "TABLE_FULL")
    # The seat token names its table and seat.
    caller = service.auth.authenticate(first.seat_token)
    assert caller.claim is not None and (caller.claim.table_id, caller.claim.seat) == (TABLE, 0)
    wrong = await refused(service.queries.view(caller, TABLE, 1))
    assert (wrong.code, wrong.message) == (
        Code.PERMISSION_DENIED,
        "this token is for another seat than the seat asked for",
    )


async def test_play_act_retry_and_refusals(service: Service) -> None:
    await service.admins.create_table(service.admin, request("c"), TABLE, "", config(2))
    seats = [await service.seat(0, "alice"), await service.seat(1, "bob")]
    await service.hand_running()
    runtime = service.manager.runtimes[TABLE]
    assert runtime.state is not None and runtime.state.hand is not None
    actor = runtime.state.hand.actor_seat
    assert actor is not None
    other = 1 - actor
    # The hand's public id is 128 random bits the service drew, not derived from the deck.
    setup = runtime.state.hand.setup
    assert len(setup.public_id) == 32 and setup.public_id != public_hand_id(
        replace(setup, public_id="")
    )
    callers = [service.auth.authenticate(s.seat_token) for s in seats]

    # Out of turn: the rules' code, nothing appended.
    version = runtime.version
    out_of_turn = service.app.submit_action(
        callers[other], request("a0"), TABLE, Act(other, ActionKind.CALL), None
    )
    no = await refused(out_of_turn)
    assert no.code == Code.FAILED_PRECONDITION and no.reason
    assert runtime.version == version
    # A stale expected sequence, and the impossible sequence 0.
    stale = service.app.submit_action(
        callers[actor], request("a1"), TABLE, Act(actor, ActionKind.CALL), version - 1
    )
    assert ((s := await refused(stale)).code, s.reason) == (Code.ABORTED, "STALE_SEQUENCE")
    zero = service.app.submit_action(
        callers[actor], request("a1"), TABLE, Act(actor, ActionKind.CALL), 0
    )
    assert (await refused(zero)).reason == "BAD_SEQUENCE"
    # Another seat's token.
    borrowed = service.app.submit_action(
        callers[other], request("a1"), TABLE, Act(actor, ActionKind.CALL), None
    )
    assert (await refused(borrowed)).code == Code.PERMISSION_DENIED

    acted = await service.app.submit_action(
        callers[actor], request("a1"), TABLE, Act(actor, ActionKind.CALL), version
    )
    assert acted.sequence == runtime.version > version
    assert acted.view.viewer_seat == actor and acted.view.table.sequence == acted.sequence
    # A retry after the table moved on gets the first answer (the view as it was then).
    await service.app.submit_action(
        callers[other], request("a2"), TABLE, Act(other, ActionKind.CHECK), None
    )
    retry = await service.app.submit_action(
        callers[actor], request("a1"), TABLE, Act(actor, ActionKind.CALL), version
    )
    assert retry == acted
    # The AI workers' token acts for AI seats only.
    ai = service.auth.authenticate(AI_TOKEN)
    human = await refused(service.queries.view(ai, TABLE, 0))
    assert human.code == Code.PERMISSION_DENIED and "AI seats only" in human.message


async def test_leave_returns_the_stack_and_voids_the_token(service: Service) -> None:
    await service.admins.create_table(service.admin, request("c"), TABLE, "", config(3))
    seated = await service.seat(2, "alice", stack=700)
    alice = service.auth.authenticate(seated.seat_token)
    sat_out = await service.app.sit_out(alice, request("out"), TABLE, 2)
    assert await service.app.sit_in(alice, request("in"), TABLE, 2) == sat_out + 1
    # Chips and leaving are internal: the service (the lobby) acts as alice's seat.
    lobby = service.auth.authenticate(ADMIN_TOKEN, seated.seat_token)
    added = await service.app.add_chips(lobby, request("more"), TABLE, 2, 300)
    assert added.stack == 1000
    left = await service.app.leave_seat(lobby, request("bye"), TABLE, 2)
    assert left.stack == 1000
    assert await service.app.leave_seat(lobby, request("bye"), TABLE, 2) == left  # a retry
    gone = await refused(service.app.sit_out(alice, request("out-2"), TABLE, 2))
    assert (gone.code, gone.message) == (Code.NOT_FOUND, "nobody sits at the seat asked for")
    # Someone new at the seat: the old token belonged to an earlier occupant.
    await service.seat(2, "bob")
    earlier = await refused(service.app.sit_out(alice, request("out-3"), TABLE, 2))
    assert earlier.code == Code.PERMISSION_DENIED
    assert earlier.message == "this token belonged to an earlier occupant of the seat"


async def test_seating_chips_and_closing_are_for_the_service_credential_only(
    service: Service,
) -> None:
    """A player's seat token, the AI workers' token or no token cannot seat, leave, add chips
    or close: those move chips the lobby's ledger must see. Nothing changes on a refusal."""
    await service.admins.create_table(service.admin, request("c"), TABLE, "", config(3))
    seated = await service.seat(0, "alice", stack=500)
    alice = service.auth.authenticate(seated.seat_token)
    ai = service.auth.authenticate(AI_TOKEN)
    anonymous = service.auth.authenticate("")
    version = await service.store.version(TABLE)
    for caller, code, reason in (
        (alice, Code.PERMISSION_DENIED, "SERVICE_ONLY"),
        (ai, Code.PERMISSION_DENIED, "SERVICE_ONLY"),
        (anonymous, Code.UNAUTHENTICATED, "SERVICE_CREDENTIAL_REQUIRED"),
    ):
        calls = (
            service.admins.seat_player(caller, request("s2"), TABLE, 1, "mallory", "", 10**6, 0),
            service.app.add_chips(caller, request("more"), TABLE, 0, 10**6),
            service.app.leave_seat(caller, request("bye"), TABLE, 0),
            service.admins.close_table(caller, request("close"), TABLE, ""),
        )
        for call in calls:
            no = await refused(call)
            assert (no.code, no.reason) == (code, reason), no.message
    assert await service.store.version(TABLE) == version
    # The service credential with another seat's token is that seat's, checked as one.
    bob = await service.seat(1, "bob")
    as_bob = service.auth.authenticate(ADMIN_TOKEN, bob.seat_token)
    other = await refused(service.app.leave_seat(as_bob, request("x"), TABLE, 0))
    assert other.code == Code.PERMISSION_DENIED
    # Alone, it acts for whoever sits at the seat (closing a table); then the table closes.
    left = await service.app.leave_seat(service.admin, request("gone"), TABLE, 0)
    assert left.stack == 500
    closed = await service.admins.close_table(service.admin, request("close"), TABLE, "done")
    assert closed == await service.store.version(TABLE)
    again = await refused(service.admins.close_table(service.admin, request("c2"), TABLE, ""))
    assert (again.code, again.reason) == (Code.FAILED_PRECONDITION, "TABLE_CLOSED")
    # A retry of the close gets its first answer; seats still leave a closed table.
    assert await service.admins.close_table(service.admin, request("close"), TABLE, "done") == (
        closed
    )
    assert (await service.app.leave_seat(service.admin, request("b"), TABLE, 1)).stack == 1000


async def test_the_service_leaves_a_seat_whose_token_has_expired(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A player seated longer than a seat token lives cannot act any more, but the lobby can
    still leave it with that (genuine) token: its chips are never stuck at the table."""
    await service.admins.create_table(service.admin, request("c"), TABLE, "", config(3))
    seated = await service.seat(0, "alice", stack=500)
    later = time.time() + 2 * 86_400  # the service's clock moves on; nothing else does
    monkeypatch.setattr(auth_module, "time", types.SimpleNamespace(time=lambda: later))
    alice = service.auth.authenticate(seated.seat_token)
    expired = await refused(service.app.sit_out(alice, request("out"), TABLE, 0))
    assert (expired.code, expired.reason) == (Code.UNAUTHENTICATED, "SEAT_TOKEN_EXPIRED")
    assert expired.message.startswith("the seat token has expired")
    forged = service.auth.authenticate(ADMIN_TOKEN, seated.seat_token[:-2] + "xx")
    bad = await refused(service.app.leave_seat(forged, request("bye"), TABLE, 0))
    assert bad.code == Code.UNAUTHENTICATED  # genuine, though: the signature is still checked
    lobby = service.auth.authenticate(ADMIN_TOKEN, seated.seat_token)
    assert (await service.app.leave_seat(lobby, request("bye"), TABLE, 0)).stack == 500


async def test_unknown_malformed_and_quarantined_tables(service: Service) -> None:
    missing = await refused(service.queries.table(ANONYMOUS, "nowhere"))
    assert (missing.code, missing.message) == (Code.NOT_FOUND, "no table has this table_id")
    bad_id = await refused(service.queries.table(ANONYMOUS, "no spaces allowed"))
    assert (bad_id.code, bad_id.reason) == (Code.INVALID_ARGUMENT, "BAD_TABLE_ID")
    # A registered table whose stream cannot be folded is quarantined, not retried.
    await service.registry.add("broken")
    await service.store.append("broken", [b"\xffnot an event"], 0)
    for _ in range(2):
        held = await refused(service.queries.table(ANONYMOUS, "broken"))
        assert (held.code, held.reason) == (Code.FAILED_PRECONDITION, "TABLE_QUARANTINED")
    assert "broken" in await service.registry.quarantined_ids()
    # The table is checked before the token: no token and a missing table is NOT_FOUND.
    anonymous = service.auth.authenticate("")
    first = await refused(service.app.sit_out(anonymous, request("x"), "nowhere", 0))
    assert first.code == Code.NOT_FOUND


async def test_watch_and_history_show_a_seat_its_own_cards_only(service: Service) -> None:
    await service.admins.create_table(service.admin, request("c"), TABLE, "", config(2))
    seats = [await service.seat(0, "alice"), await service.seat(1, "bob")]
    await service.hand_running()
    alice = service.auth.authenticate(seats[0].seat_token)
    items = service.queries.watch(alice, "peer", TABLE, 0, 0)
    snapshot = await anext(items)
    assert isinstance(snapshot, View) and snapshot.viewer == 0
    await items.aclose()

    replay = service.queries.watch(alice, "peer", TABLE, 0, 1)
    seen: list[Seen] = []
    async for item in replay:
        assert isinstance(item, Seen)
        seen.append(item)
        if isinstance(item.event, HandStarted):
            break
    await replay.aclose()
    assert [s.sequence for s in seen] == list(range(2, seen[-1].sequence + 1))
    assert isinstance(seen[0].event, PlayerSeated) and seen[0].viewer is None  # before alice
    assert seen[-1].viewer == 0

    history = await service.queries.hand_history(alice, TABLE, 0, "")
    assert history.hand_id and history.events
    assert all(s.viewer == 0 for s in history.events)
    spectator = await service.queries.hand_history(service.auth.authenticate(""), TABLE, None, "")
    assert spectator.hand_id == history.hand_id and all(s.viewer is None for s in spectator.events)


async def test_watch_admission_is_capped_per_client_address(service: Service) -> None:
    await service.admins.create_table(service.admin, request("c"), TABLE, "", config(2))
    hub = WatchHub(service.store, WatchLimits(max_per_peer=1))
    queries = TableQueries(service.app, hub)
    spectator = service.auth.authenticate("")
    first = queries.watch(spectator, "ipv4:10.0.0.1:5000", TABLE, None, 0)
    assert isinstance(await anext(first), View)  # admitted, and holding its place
    second = queries.watch(spectator, "ipv4:10.0.0.1:5001", TABLE, None, 0)  # same client
    no = await refused(anext(second))
    assert no.code == Code.RESOURCE_EXHAUSTED and "per client address" in no.message
    other_peer = queries.watch(spectator, "ipv4:10.0.0.2:5000", TABLE, None, 0)
    assert isinstance(await anext(other_peer), View)
    for stream in (first, other_peer):
        await stream.aclose()
    third = queries.watch(spectator, "peer-a", TABLE, None, 0)  # the place is free again
    assert isinstance(await anext(third), View)
    await third.aclose()
    await hub.aclose()


async def test_a_create_retried_after_its_registration_failed_registers_and_starts_the_table(
    service: Service,
) -> None:
    """Found by review: the first attempt appended the table, then failed to register it (a
    Redis blip); its retry got the first answer and left the table unregistered (no instance
    would ever adopt it again) and its runtime unstarted."""
    add = service.registry.add

    async def failing_add(table_id: str) -> None:
        raise ConnectionError("Redis went away")

    service.registry.add = failing_add  # type: ignore[method-assign]
    create = request("create-blip")
    with pytest.raises(ConnectionError):
        await service.admins.create_table(service.admin, create, TABLE, "Main", config())
    assert not await service.registry.exists(TABLE)
    service.registry.add = add  # type: ignore[method-assign]
    table = await service.admins.create_table(service.admin, create, TABLE, "Main", config())
    assert table.sequence == 1
    assert await service.registry.exists(TABLE)
    assert service.manager.runtimes[TABLE].started
