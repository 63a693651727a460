"""AddSeatChips over gRPC on loopback against PostgreSQL (the table service a fake): chips
from the balance to the caller's seat between hands, once under retries; refusals before
any chip moves; a table's refusal compensated at once; an unknown outcome finished by the
recovery pass; and the chips added come home with the seat's cash-out."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import grpc

from poker.events.v1 import events_pb2 as epb
from poker.v1 import lobby_pb2 as lpb
from poker.v1 import lobby_service_pb2 as pb
from poker.v1 import lobby_service_pb2_grpc as rpc
from services.lobby.ports import TablesUnavailable
from services.lobby.postgres import PgLedger

from . import test_join_lounge_grpc as joining
from .test_join_lounge_grpc import Lobby, balance, guest
from .test_lobby_grpc import auth, refused, rid

lobby = joining.lobby  # the fixture: a lobby server on PostgreSQL with a fake table service


async def _lounge(stub: rpc.LobbyServiceAsyncStub, owner: lpb.Credentials) -> str:
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=4, small_blind=5, big_blind=10)
    create = pb.CreateLoungeRequest(
        name="Hold'em", config=config, min_buy_in=200, max_buy_in=1_000, request_id=rid()
    )
    return (await stub.CreateLounge(create, metadata=auth(owner))).lounge.lounge_id


async def _join(
    stub: rpc.LobbyServiceAsyncStub, who: lpb.Credentials, lid: str, seat: int, chips: int
) -> None:
    join = pb.JoinLoungeRequest(lounge_id=lid, seat=seat, buy_in=chips, request_id=rid())
    await stub.JoinLounge(join, metadata=auth(who))


async def _conserved(lobby: Lobby) -> int:
    """Balances + chips at tables == chips created; what is at tables."""
    assert lobby.running is not None
    totals = await PgLedger(lobby.running.pool).totals()
    assert totals.balances + totals.on_tables == totals.created
    assert totals.ledger_sum == totals.balances
    return totals.on_tables


async def test_a_seated_player_adds_chips_between_hands(lobby: Lobby) -> None:
    stub = await lobby.start()
    alice, bob = await guest(stub, "Alice"), await guest(stub, "Bob")
    lid = await _lounge(stub, alice)
    await _join(stub, alice, lid, 0, 300)
    await _join(stub, bob, lid, 1, 500)
    assert await _conserved(lobby) == 800

    add = pb.AddSeatChipsRequest(lounge_id=lid, amount=200, request_id=rid())
    added = await stub.AddSeatChips(add, metadata=auth(alice))
    assert (added.lounge_id, added.seat, added.amount, added.stack, added.balance) == (
        lid,
        0,
        200,
        500,
        9_500,
    )
    assert added.state == pb.CHIP_ADD_STATE_ADDED
    assert lobby.tables.tables[lid].seats[0].stack == 500
    # A retry answers the same and moves nothing (the table is asked the same request).
    assert await stub.AddSeatChips(add, metadata=auth(alice)) == added
    assert lobby.tables.tables[lid].seats[0].stack == 500
    assert await balance(stub, alice) == 9_500
    entries = await stub.ListLedgerEntries(pb.ListLedgerEntriesRequest(), metadata=auth(alice))
    assert [(e.kind, e.amount, e.table_id) for e in entries.entries[:2]] == [
        (lpb.LEDGER_ENTRY_KIND_BUY_IN, -200, lid),
        (lpb.LEDGER_ENTRY_KIND_BUY_IN, -300, lid),
    ]
    # The same request id with other content.
    reused = pb.AddSeatChipsRequest(lounge_id=lid, amount=100, request_id=add.request_id)
    assert await refused(stub.AddSeatChips(reused, metadata=auth(alice))) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "REQUEST_ID_REUSED",
    )
    # 0: up to the lounge's maximum.
    top = pb.AddSeatChipsRequest(lounge_id=lid, amount=0, request_id=rid())
    topped = await stub.AddSeatChips(top, metadata=auth(alice))
    assert (topped.amount, topped.stack, topped.balance) == (500, 1_000, 9_000)
    assert await _conserved(lobby) == 1_500

    # The chips added come home with the seat's cash-out.
    leave = pb.LeaveLoungeRequest(lounge_id=lid, request_id=rid())
    left = await stub.LeaveLounge(leave, metadata=auth(alice))
    assert (left.state, left.stack, left.balance) == (pb.LEAVE_STATE_LEFT, 1_000, 10_000)
    assert await _conserved(lobby) == 500


async def test_refusals_move_no_chips(lobby: Lobby) -> None:
    stub = await lobby.start()
    alice, bob, carol = [await guest(stub, n) for n in ("Alice", "Bob", "Carol")]
    lid = await _lounge(stub, alice)
    other = await _lounge(stub, carol)
    await _join(stub, alice, lid, 0, 900)
    await _join(stub, bob, lid, 1, 500)
    await _join(stub, carol, other, 0, 500)
    before = [await balance(stub, who) for who in (alice, bob, carol)]

    def add(lounge: str, amount: int) -> pb.AddSeatChipsRequest:
        return pb.AddSeatChipsRequest(lounge_id=lounge, amount=amount, request_id=rid())

    # Over the maximum (900 + 101 > 1,000), and a full seat topped up.
    assert await refused(stub.AddSeatChips(add(lid, 101), metadata=auth(alice))) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "ABOVE_MAX_BUY_IN",
    )
    await stub.AddSeatChips(add(lid, 100), metadata=auth(alice))
    assert (await refused(stub.AddSeatChips(add(lid, 0), metadata=auth(alice))))[1] == (
        "ABOVE_MAX_BUY_IN"
    )
    # Another player's lounge (Alice sits at none there), no seat, a bad amount.
    for lounge, amount, who, reason in (
        (other, 100, alice, "NOT_SEATED"),
        ("l-nowhere", 100, bob, "NOT_SEATED"),
        (lid, -1, bob, "BAD_AMOUNT"),
        (lid, 10**16, bob, "BAD_AMOUNT"),
    ):
        assert (await refused(stub.AddSeatChips(add(lounge, amount), metadata=auth(who))))[
            1
        ] == reason
    # Dealt in: refused before reserving; the message does not repeat the amount.
    lobby.tables.deal(lid)
    code, reason = await refused(stub.AddSeatChips(add(lid, 123), metadata=auth(bob)))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "HAND_RUNNING")
    lobby.tables.end_hand(lid)
    assert (await refused(stub.AddSeatChips(add(lid, 100))))[0] == (grpc.StatusCode.UNAUTHENTICATED)
    assert [await balance(stub, who) for who in (alice, bob, carol)] == [
        before[0] - 100,
        before[1],
        before[2],
    ]
    assert await _conserved(lobby) == 2_000


async def test_a_table_refusal_is_compensated_at_once(lobby: Lobby) -> None:
    stub = await lobby.start()
    alice, bob = await guest(stub, "Alice"), await guest(stub, "Bob")
    lid = await _lounge(stub, alice)
    await _join(stub, alice, lid, 0, 300)
    await _join(stub, bob, lid, 1, 300)
    # The lobby's look shows no hand in play (a view just before the deal); the table,
    # deciding on its own state, refuses: the chips come back in the same call.
    real = lobby.tables.seat_now

    async def before_the_deal(table_id: str, seat: int):  # type: ignore[no-untyped-def]
        found = await real(table_id, seat)
        lobby.tables.deal(table_id)
        return found

    lobby.tables.seat_now = before_the_deal  # type: ignore[method-assign]
    add = pb.AddSeatChipsRequest(lounge_id=lid, amount=200, request_id=rid())
    assert await refused(stub.AddSeatChips(add, metadata=auth(alice))) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "HAND_RUNNING",
    )
    lobby.tables.seat_now = real  # type: ignore[method-assign]
    assert await balance(stub, alice) == 9_700
    entries = await stub.ListLedgerEntries(pb.ListLedgerEntriesRequest(), metadata=auth(alice))
    assert [(e.kind, e.amount) for e in entries.entries[:2]] == [
        (lpb.LEDGER_ENTRY_KIND_CASH_OUT, 200),
        (lpb.LEDGER_ENTRY_KIND_BUY_IN, -200),
    ]
    # A retry of the refused request answers the same and refunds nothing twice.
    assert (await refused(stub.AddSeatChips(add, metadata=auth(alice))))[1] == "HAND_RUNNING"
    assert await balance(stub, alice) == 9_700
    assert lobby.tables.tables[lid].seats[0].stack == 300
    assert await _conserved(lobby) == 600


async def test_an_unknown_outcome_is_finished_by_a_retry_or_the_recovery_pass(
    lobby: Lobby,
) -> None:
    stub = await lobby.start()
    alice, bob = await guest(stub, "Alice"), await guest(stub, "Bob")
    lid = await _lounge(stub, alice)
    await _join(stub, alice, lid, 0, 300)
    await _join(stub, bob, lid, 1, 300)
    # The table adds the chips but its answer is lost.
    real = lobby.tables.add_chips

    async def lost(*args, **kwargs):  # type: ignore[no-untyped-def]
        done = await real(*args, **kwargs)
        raise TablesUnavailable("the answer was lost")
        return done  # pragma: no cover

    lobby.tables.add_chips = lost  # type: ignore[method-assign]
    first = pb.AddSeatChipsRequest(lounge_id=lid, amount=200, request_id=rid())
    assert await refused(stub.AddSeatChips(first, metadata=auth(alice))) == (
        grpc.StatusCode.UNAVAILABLE,
        "TABLES_UNAVAILABLE",
    )
    second = pb.AddSeatChipsRequest(lounge_id=lid, amount=100, request_id=rid())
    assert (await refused(stub.AddSeatChips(second, metadata=auth(bob))))[1] == (
        "TABLES_UNAVAILABLE"
    )
    # Held: off the balance, counted as at the table.
    assert await balance(stub, alice) == 9_500
    assert await _conserved(lobby) == 900
    lobby.tables.add_chips = real  # type: ignore[method-assign]
    # The client's retry gets the table's first answer; the recovery pass finishes Bob's.
    added = await stub.AddSeatChips(first, metadata=auth(alice))
    assert (added.stack, added.balance) == (500, 9_500)
    assert lobby.running is not None and lobby.running.chips is not None
    # A pass right away leaves Bob's alone (its own call may still be driving it) ...
    assert await lobby.running.chips.recover() == (0, 0)
    app = lobby.running.chips.lobby
    now = app.clock
    app.clock = lambda: now() + timedelta(minutes=1)
    # ... and one past two call timeouts finishes it.
    assert await lobby.running.chips.recover() == (1, 0)
    assert [lobby.tables.tables[lid].seats[s].stack for s in (0, 1)] == [500, 400]
    done = await stub.AddSeatChips(second, metadata=auth(bob))
    assert (done.stack, done.balance) == (400, 9_600)
    assert await _conserved(lobby) == 900


async def test_concurrent_adds_never_pass_the_maximum(lobby: Lobby) -> None:
    stub = await lobby.start()
    alice, bob = await guest(stub, "Alice"), await guest(stub, "Bob")
    lid = await _lounge(stub, alice)
    await _join(stub, alice, lid, 0, 300)
    await _join(stub, bob, lid, 1, 300)
    # Each fits alone (300 + 600 <= 1,000); both would not. Whichever way the two calls
    # interleave, one is added and the other refused (by the lobby's look at the stack, or by
    # the table's own check on the stack it adds to, then compensated at once).
    adds = [pb.AddSeatChipsRequest(lounge_id=lid, amount=600, request_id=rid()) for _ in range(2)]
    outcomes = await asyncio.gather(
        *(stub.AddSeatChips(a, metadata=auth(alice)) for a in adds), return_exceptions=True
    )
    added = [o for o in outcomes if isinstance(o, pb.AddSeatChipsResponse)]
    failed = [o for o in outcomes if isinstance(o, grpc.aio.AioRpcError)]
    assert len(added) == 1 and len(failed) == 1, outcomes
    assert failed[0].code() == grpc.StatusCode.FAILED_PRECONDITION
    assert added[0].stack == 900
    assert lobby.tables.tables[lid].seats[0].stack == 900
    assert await balance(stub, alice) == 10_000 - 300 - 600
    assert await _conserved(lobby) == 1_200


async def test_a_lounge_closes_only_once_its_chip_adds_under_way_are_settled(
    lobby: Lobby,
) -> None:
    """A close while two adds are RESERVED (issue #20): one the table added (its answer
    lost), one it never got. The close drives both by the table's answer before it settles
    the seats: the first's chips come home with its seat, the second's are refunded (or
    added and come home): no chip is stranded, and the lounge is CLOSED only then."""
    stub = await lobby.start()
    alice, bob = await guest(stub, "Alice"), await guest(stub, "Bob")
    lid = await _lounge(stub, alice)
    await _join(stub, alice, lid, 0, 300)
    await _join(stub, bob, lid, 1, 300)
    real = lobby.tables.add_chips
    calls = 0

    async def lost_then_dropped(*args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        if calls == 1:
            await real(*args, **kwargs)  # added; the answer lost
        raise TablesUnavailable("the answer was lost")

    lobby.tables.add_chips = lost_then_dropped  # type: ignore[method-assign]
    for who in (alice, bob):
        add = pb.AddSeatChipsRequest(lounge_id=lid, amount=200, request_id=rid())
        assert (await refused(stub.AddSeatChips(add, metadata=auth(who))))[1] == (
            "TABLES_UNAVAILABLE"
        )
    lobby.tables.add_chips = real  # type: ignore[method-assign]
    assert [await balance(stub, who) for who in (alice, bob)] == [9_500, 9_500]
    close = pb.CloseLoungeRequest(lounge_id=lid, request_id=rid())
    closed = await stub.CloseLounge(close, metadata=auth(alice))
    assert closed.lounge.state == lpb.LOUNGE_STATE_CLOSED
    assert lobby.running is not None
    assert await lobby.running.chips.chip_adds.unfinished(10) == []  # type: ignore[union-attr]
    assert [await balance(stub, who) for who in (alice, bob)] == [10_000, 10_000]
    assert await _conserved(lobby) == 0
    assert (await PgLedger(lobby.running.pool).audit()).holds
