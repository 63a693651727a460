"""The saga transitions' pure rules (``services.lobby.domain.sagas``): what each does from
the state it starts from, and that from any other state it does nothing (None), so each
happens at most once whoever drives it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from felt.storage.idempotency import server_key
from services.lobby.domain.sagas import (
    HELD,
    Credit,
    FreedSeat,
    chips_added,
    chips_reserved,
    compensated,
    leave_called,
    leaving,
    reserved,
    seated,
    seen_seated,
    token_reissued,
    vacated,
)
from services.lobby.ports import (
    BuyIn,
    BuyInState,
    ChipAdd,
    ChipAddState,
    Kind,
    LoungeSeat,
    NewBuyIn,
    NewChipAdd,
    NotSeated,
    SeatGrant,
)

AT = datetime(2026, 1, 1, tzinfo=UTC)
KEY = server_key("test", "s-1", 0)
RESERVED, SEATED = BuyInState.RESERVED, BuyInState.SEATED


def buy_in(state: BuyInState) -> BuyIn:
    return BuyIn("b-1", "p1", "P1", "l-1", 2, 300, state, None, None, None, AT)


def chip_add(state: ChipAddState) -> ChipAdd:
    return ChipAdd("c-1", "p1", "l-1", "b-1", 2, "tok", 200, 1_000, state, None, None, AT)


def test_a_reserved_saga_is_compensated_with_its_refund() -> None:
    seat = compensated(buy_in(BuyInState.RESERVED), "TABLE_FULL", KEY)
    add = compensated(chip_add(ChipAddState.RESERVED), "TABLE_FULL", KEY)
    assert seat is not None and add is not None
    for step, amount in ((seat, 300), (add, 200)):
        assert (step.saga.state.value, step.saga.refusal) == ("compensated", "TABLE_FULL")
        assert step.credits == (Credit("p1", Kind.CASH_OUT, amount, KEY, "l-1"),)
        assert step.freed is None
    for state in (BuyInState.SEATED, BuyInState.COMPENSATED, BuyInState.LEFT):
        assert compensated(buy_in(state), "TABLE_FULL", KEY) is None
    for added_state in (ChipAddState.ADDED, ChipAddState.COMPENSATED):
        assert compensated(chip_add(added_state), "HAND_RUNNING", KEY) is None


def test_chips_added_moves_nothing_and_happens_once() -> None:
    step = chips_added(chip_add(ChipAddState.RESERVED), 500)
    assert step is not None and step.credits == () and step.freed is None
    assert (step.saga.state, step.saga.stack_after) == (ChipAddState.ADDED, 500)
    assert chips_added(step.saga, 900) is None
    assert chips_added(chip_add(ChipAddState.COMPENSATED), 500) is None


def test_a_vacated_seat_credits_its_stack_and_frees_its_seat() -> None:
    leaving = buy_in(BuyInState.LEAVING)
    step = vacated(leaving, (BuyInState.LEAVING,), Kind.CASH_OUT, KEY, 450)
    assert step is not None
    assert (step.saga.state, step.saga.left_stack) == (BuyInState.LEFT, 450)
    assert step.credits == (Credit("p1", Kind.CASH_OUT, 450, KEY, "l-1"),)
    assert step.freed == FreedSeat("l-1", 2, "p1")
    busted = vacated(leaving, (BuyInState.LEAVING,), Kind.CASH_OUT, KEY, 0)
    assert busted is not None and busted.credits == () and busted.freed is not None
    assert vacated(buy_in(BuyInState.SEATED), (BuyInState.LEAVING,), Kind.CASH_OUT, KEY, 1) is None
    assert vacated(step.saga, (BuyInState.LEAVING,), Kind.CASH_OUT, KEY, 450) is None


def test_a_seats_token_and_its_sequences_are_recorded_in_their_states_only() -> None:
    grant = SeatGrant(2, "fresh", AT)
    for state in (BuyInState.SEATED, BuyInState.LEAVING):
        step = token_reissued(buy_in(state), grant)
        assert step is not None and step.credits == () and step.freed is None
        assert (step.saga.seat_token, step.saga.seat_token_expires_at) == ("fresh", AT)
    for state in (BuyInState.RESERVED, BuyInState.LEFT, BuyInState.COMPENSATED):
        assert token_reissued(buy_in(state), grant) is None
    called = leave_called(buy_in(BuyInState.LEAVING), 17)
    assert called is not None and called.saga.leave_sequence == 17
    assert leave_called(called.saga, 18) is None  # the first one kept
    assert leave_called(buy_in(BuyInState.SEATED), 17) is None
    seen = seen_seated(buy_in(BuyInState.SEATED), 0)  # 0 is a sequence like any other
    assert seen is not None and seen.saga.leave_sequence == 0
    assert seen_seated(seen.saga, 5) is None
    assert seen_seated(buy_in(BuyInState.RESERVED), 5) is None


def test_a_reservation_starts_reserved_as_asked() -> None:
    new = NewBuyIn("b-9", "p1", "l-1", None, 400, KEY, AT, wait_for_big_blind=True)
    saga = reserved(new, "P1")
    assert (saga.saga_id, saga.player_id, saga.display_name, saga.lounge_id) == (
        "b-9",
        "p1",
        "P1",
        "l-1",
    )
    assert (saga.seat, saga.amount, saga.state, saga.created_at) == (None, 400, RESERVED, AT)
    assert saga.wait_for_big_blind and saga.seat_token is None and saga.attempts == 0


def test_a_chip_adds_reservation_starts_reserved_as_asked() -> None:
    new = NewChipAdd("c-9", "p1", "l-1", "b-1", 2, "tok", 250, 2_000, KEY, AT)
    saga = chips_reserved(new)
    assert saga == replace(
        chip_add(ChipAddState.RESERVED), saga_id="c-9", amount=250, max_stack=2_000
    )


def test_a_reserved_saga_is_seated_where_the_table_says_once() -> None:
    grant = SeatGrant(5, "tok-5", AT, 7)
    step = seated(buy_in(RESERVED), grant)
    assert step is not None
    assert (step.saga.state, step.saga.seat, step.saga.seat_token) == (SEATED, 5, "tok-5")
    assert step.saga.seat_token_expires_at == AT
    assert (step.lounge_id, step.taken) == ("l-1", LoungeSeat(5, "p1", "P1", 0, 300))
    assert seated(step.saga, grant) is None
    for state in (BuyInState.COMPENSATED, BuyInState.LEAVING, BuyInState.LEFT):
        assert seated(buy_in(state), grant) is None


def test_a_leave_is_of_the_first_held_saga_and_leaves_it_leaving() -> None:
    first = replace(buy_in(SEATED), saga_id="b-1", created_at=AT)
    later = replace(buy_in(SEATED), saga_id="b-2", created_at=AT + timedelta(minutes=1))
    step = leaving([later, first], "l-1")
    assert (step.saga.saga_id, step.saga.state) == ("b-1", BuyInState.LEAVING)
    again = leaving([step.saga, later], "l-1")  # a second leave: the same saga, as it is
    assert again.saga is step.saga
    with pytest.raises(NotSeated):
        leaving([buy_in(RESERVED), buy_in(BuyInState.LEFT), buy_in(BuyInState.COMPENSATED)], "l")


STATES = st.sampled_from(list(BuyInState))


@given(st.lists(st.tuples(STATES, st.integers(0, 50)), max_size=8))
def test_a_leave_picks_the_earliest_holder_whatever_the_sagas(
    sagas: list[tuple[BuyInState, int]],
) -> None:
    held = [
        replace(buy_in(state), saga_id=f"b-{n}", created_at=AT + timedelta(seconds=minute))
        for n, (state, minute) in enumerate(sagas)
    ]
    holders = [s for s in held if s.state in HELD]
    if not holders:
        with pytest.raises(NotSeated):
            leaving(held, "l-1")
        return
    step = leaving(held, "l-1")
    chosen = min(holders, key=lambda s: s.created_at)
    assert step.saga.saga_id == chosen.saga_id and step.saga.state is BuyInState.LEAVING
    assert replace(step.saga, state=chosen.state) == chosen  # nothing else changed
    assert step.credits == () and step.freed is None
