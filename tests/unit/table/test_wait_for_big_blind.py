"""Wait for the big blind (RULES.md, "Chips at the table and sitting out"; issue 21).

A player who sits down, or back in, choosing to wait is not dealt in until the
big blind would reach their seat; then they are dealt in and post it. Without
the choice a newcomer is dealt in at once owing no blind (test_positions.py).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from felt.core.rules.commands import IllegalAction
from felt.core.rules.config import Variant
from felt.core.rules.events import BlindPosted, HandStarted
from felt.core.table.aggregate import (
    CreateTable,
    LeaveSeat,
    SeatPlayer,
    SitIn,
    SitOut,
    StartNextHand,
    TableState,
    decide_table,
    fold,
    snapshot_of,
    state_from_snapshot,
)
from felt.core.table.events import PlayerSatIn, PlayerSeated, PlayerWaitingForBigBlind, TableConfig
from tests.unit.table.random_tables import RandomTable, random_table
from tests.unit.table.tables import play_out, run

NLHE = Variant.NLHE
STACK = 1000


def _table(seats: tuple[int, ...], seat_count: int = 6) -> TableState:
    state = run(None, CreateTable(TableConfig("t", NLHE, seat_count, small_blind=5, big_blind=10)))
    for seat in seats:
        state = run(state, SeatPlayer(seat, f"p{seat}", f"P{seat}", STACK, "h"))
    return state


def _deal(state: TableState, n: int) -> TableState:
    """Deal hand ``n`` and play it out passively."""
    return play_out(run(state, StartNextHand(bytes([n]) * 32)))


def _started(state: TableState) -> HandStarted:
    return next(e for e in state.hand_events if isinstance(e, HandStarted))


def _dealt(state: TableState) -> list[int]:
    return [s.seat for s in _started(state).setup.seats]


def _blinds(state: TableState) -> dict[int, int]:
    return {e.seat: e.amount for e in state.hand_events if isinstance(e, BlindPosted)}


def test_a_newcomer_waiting_is_dealt_in_only_at_the_big_blind_and_posts_it() -> None:
    state = _deal(_table((0, 1, 2, 3)), 1)  # button 0, blinds 1 and 2
    assert _blinds(state) == {1: 5, 2: 10}
    # Seat 5 sits between the big blind (2 -> 3 next) and the button: it would be dealt in
    # at once without posting; waiting, it sits out the next hand.
    events = decide_table(state, SeatPlayer(5, "p5", "P5", STACK, "h", "", True))
    assert events == [PlayerSeated(5, "p5", "P5", STACK, "h"), PlayerWaitingForBigBlind(5)]
    state = run(state, SeatPlayer(5, "p5", "P5", STACK, "h", "", True))
    waiting = state.player(5)
    assert waiting is not None and waiting.waiting_for_big_blind
    assert state.active_seats() == [0, 1, 2, 3]
    state = _deal(state, 2)
    assert _dealt(state) == [2, 3, 0, 1]  # not seat 5: the big blind is seat 3's
    assert _blinds(state) == {2: 5, 3: 10}
    state = run(state, StartNextHand(b"\x03" * 32))
    assert 5 in _dealt(state)
    assert _blinds(state) == {3: 5, 5: 10}  # the big blind reached seat 5: it posts it
    now = state.player(5)
    assert now is not None and not now.waiting_for_big_blind


def test_without_the_choice_a_newcomer_is_dealt_in_at_once_owing_nothing() -> None:
    state = _deal(_table((0, 1, 2, 3)), 1)
    state = run(state, SeatPlayer(5, "p5", "P5", STACK, "h"))
    state = run(state, StartNextHand(b"\x02" * 32))
    assert 5 in _dealt(state)
    assert 5 not in _blinds(state)


def test_a_player_back_from_sitting_out_may_wait_for_the_big_blind() -> None:
    state = _deal(_table((0, 1, 2, 3, 4)), 1)  # blinds 1 and 2
    state = run(state, SitOut(4))
    state = _deal(state, 2)  # blinds 2 and 3
    assert 4 not in _dealt(state)
    events = decide_table(state, SitIn(4, wait_for_big_blind=True))
    assert events == [PlayerSatIn(4), PlayerWaitingForBigBlind(4)]
    state = run(state, SitIn(4, wait_for_big_blind=True))
    state = run(state, StartNextHand(b"\x03" * 32))
    assert 4 in _dealt(state)
    assert _blinds(state) == {3: 5, 4: 10}


def test_sitting_out_again_ends_the_wait() -> None:
    state = _deal(_table((0, 1, 2, 3)), 1)
    state = run(state, SeatPlayer(5, "p5", "P5", STACK, "h", "", True))
    state = run(state, SitOut(5))
    player = state.player(5)
    assert player is not None and player.sitting_out and not player.waiting_for_big_blind
    state = run(state, SitIn(5))
    state = run(state, StartNextHand(b"\x02" * 32))
    assert 5 in _dealt(state)  # sat in without waiting: dealt in at once
    assert 5 not in _blinds(state)


def test_a_fresh_start_has_no_big_blind_to_wait_for() -> None:
    # A table whose first hand is not dealt yet: the waiting player is dealt in.
    state = _table((0,))
    state = run(state, SeatPlayer(3, "p3", "P3", STACK, "h", "", True))
    assert state.can_start_hand()
    state = run(state, StartNextHand(b"\x01" * 32))
    assert _dealt(state) == [3, 0]  # heads-up from fresh: button (and small blind) on seat 0
    assert _blinds(state) == {0: 5, 3: 10}


def test_the_wait_survives_a_snapshot() -> None:
    state = _deal(_table((0, 1, 2, 3)), 1)
    state = run(state, SeatPlayer(5, "p5", "P5", STACK, "h", "", True))
    restored = state_from_snapshot(snapshot_of(state, {}))
    assert restored.active_seats() == state.active_seats() == [0, 1, 2, 3]
    player = restored.player(5)
    assert player is not None and player.waiting_for_big_blind


@pytest.mark.parametrize("command", [SeatPlayer(2, "p2", "P2", 500, "h", "", True), SitIn(0, True)])
def test_draw_has_no_big_blind_to_wait_for(command: SeatPlayer | SitIn) -> None:
    config = TableConfig("d", Variant.DRAW5, 4, ante=1, small_bet=2, big_bet=4)
    state = run(None, CreateTable(config))
    state = run(state, SeatPlayer(0, "p0", "P0", 500, "h"))
    state = run(state, SitOut(0))
    with pytest.raises(IllegalAction) as refused:
        decide_table(state, command)
    assert refused.value.code == "NO_BIG_BLIND"


@settings(max_examples=60, deadline=None)
@given(
    seat_count=st.integers(3, 9),
    data=st.data(),
)
def test_a_waiting_player_is_never_dealt_in_before_the_big_blind_reaches_them(
    seat_count: int, data: st.DataObject
) -> None:
    """Over random seatings: never dealt before the big blind, then posts exactly it."""
    seats = data.draw(
        st.lists(st.integers(0, seat_count - 1), min_size=2, max_size=seat_count - 1, unique=True)
    )
    state = _table(tuple(seats), seat_count)
    bought = STACK * len(seats)
    hands = 0
    for _ in range(data.draw(st.integers(1, 3))):
        hands += 1
        state = _deal(state, hands)
    free = [s for s in range(seat_count) if s not in seats]
    newcomer = data.draw(st.sampled_from(free))
    mid_hand = data.draw(st.booleans())
    if mid_hand:
        hands += 1
        state = run(state, StartNextHand(bytes([hands]) * 32))
    state = run(state, SeatPlayer(newcomer, "new", "New", STACK, "h", "", True))
    bought += STACK
    state = play_out(state)
    # Others may leave or sit out meanwhile; the big blind still moves seat by seat.
    if data.draw(st.booleans()) and len(seats) > 2:
        gone = data.draw(st.sampled_from(seats))
        if data.draw(st.booleans()):
            left = state.player(gone)
            assert left is not None
            bought -= left.stack  # taken away with the player
            state = run(state, LeaveSeat(gone))
        else:
            state = run(state, SitOut(gone))
    last_big = state.positions.big_blind if state.positions else None
    for _ in range(seat_count + 1):
        hands += 1
        state = run(state, StartNextHand(bytes([hands]) * 32))
        started = _started(state)
        dealt = [s.seat for s in started.setup.seats]
        if newcomer in dealt:
            # Dealt in exactly when the big blind reaches the seat, posting the big blind.
            assert state.positions is not None and state.positions.big_blind == newcomer
            assert _blinds(state)[newcomer] == 10
            before = last_big
            if before is not None:
                # The seat is the first seat dealt in after the last big blind.
                ahead = sorted(dealt, key=lambda s: (s - before - 1) % seat_count)
                assert ahead[0] == newcomer
            break
        assert state.positions is not None and state.positions.big_blind != newcomer
        last_big = state.positions.big_blind
        state = play_out(state)
    else:
        pytest.fail("the waiting player was never dealt in")
    state = play_out(state)
    # Every chip is where the ledger says: what sat down, less what left, is on the table.
    assert sum(p.stack for p in state.players) == bought


@settings(max_examples=80, deadline=None)
@given(random_table())
def test_waiting_never_stalls_a_table_that_could_play(table: RandomTable) -> None:
    """Over random tables (waits drawn among the seatings and sit-ins): whenever two seats
    could play, a hand can be dealt, so a seat waits for a big blind that does come."""
    state = None
    for batch in table.batches:
        state = fold(state, batch)
        if state.closed or state.hand_running:
            continue
        ready = [
            p.seat
            for p in state.players
            if not p.sitting_out and not p.leaving and p.stack >= state.min_stack
        ]
        if len(ready) >= 2:
            assert len(state.active_seats()) >= 2, (ready, state.positions, state.players)
