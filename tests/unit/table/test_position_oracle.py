"""Button and blinds over random seating histories, against an oracle written from RULES.md.

The table is driven through its pure core with joins, leaves, sit-outs and
returns, chips added, and hands played with random actions (so players bust),
through heads-up and back. Before every hand an oracle that knows only
RULES.md's text ("Betting obligations", Hold'em) says where the button and
the blinds go; the table must agree. The oracle walks the seats one by one
as a dealer would, rather than computing distances as ``felt.core.table.positions``
does, and it tracks on its own who would be dealt in.

RULES.md, as the oracle reads it:

- The big blind moves to the next seat dealt in after the last big blind.
- The small blind is the last big blind's seat (dead when that player is not
  dealt in). Heads-up, the button posts the small blind.
- The button goes to the last small blind's seat (a dead button when empty),
  but always sits before the small blind, never on or after the big blind;
  otherwise it goes to the nearest seat dealt in before the small blind.
- A table's first hand, and the first after it had fewer than two players
  dealt in, starts fresh: the button is the lowest-numbered seat dealt in.
- Newcomers and players back from sitting out are dealt in at once, wherever
  they sit, with no missed blind.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from felt.core.rules.commands import Act, ActionKind
from felt.core.rules.config import Variant
from felt.core.rules.events import BlindPosted, HandStarted
from felt.core.rules.legal import legal_actions
from felt.core.table.aggregate import (
    AddChips,
    CreateTable,
    LeaveSeat,
    PlayHand,
    SeatPlayer,
    SitIn,
    SitOut,
    StartNextHand,
    TableState,
)
from felt.core.table.events import TableConfig
from felt.core.table.positions import Positions
from tests.unit.table.tables import run

SMALL, BIG = 1, 2


@dataclass
class Oracle:
    """Where RULES.md puts the button and blinds, from who is dealt in hand after hand."""

    seat_count: int
    last: tuple[int, int, int] | None = None  # button, small blind, big blind

    def clockwise(self, seat: int) -> int:
        return (seat + 1) % self.seat_count

    def counter_clockwise(self, seat: int) -> int:
        return (seat - 1) % self.seat_count

    def forget_if_short(self, dealt_in: set[int]) -> None:
        """Fewer than two players dealt in: the next hand starts fresh."""
        if len(dealt_in) < 2:
            self.last = None

    def next_hand(self, dealt_in: set[int]) -> tuple[int, int, int]:
        assert len(dealt_in) >= 2
        if self.last is None:
            button = min(dealt_in)
            if len(dealt_in) == 2:
                small = button
            else:
                small = self.clockwise(button)
                while small not in dealt_in:
                    small = self.clockwise(small)
            big = self.clockwise(small)
            while big not in dealt_in:
                big = self.clockwise(big)
            self.last = (button, small, big)
            return self.last
        _, last_small, last_big = self.last
        big = self.clockwise(last_big)
        while big not in dealt_in:
            big = self.clockwise(big)
        if len(dealt_in) == 2:
            (other,) = dealt_in - {big}
            self.last = (other, other, big)
            return self.last
        small = last_big
        button = last_small
        # Walk clockwise from the seat after the big blind up to the small blind: the
        # button must be met on the way (strictly between them).
        seat, fine = self.clockwise(big), False
        while seat != small:
            if seat == button:
                fine = True
                break
            seat = self.clockwise(seat)
        if not fine:
            button = self.counter_clockwise(small)
            while button not in dealt_in:
                button = self.counter_clockwise(button)
        self.last = (button, small, big)
        return self.last


@dataclass
class Seat:
    player: str
    stack: int
    sitting_out: bool = False


def _dealt_in(seats: dict[int, Seat]) -> set[int]:
    return {n for n, s in seats.items() if not s.sitting_out and s.stack > 0}


def _play_randomly(state: TableState, rng: random.Random) -> TableState:
    """Play the running hand with random legal actions, all-ins often (players bust)."""
    while state.hand_running:
        hand = state.hand
        assert hand is not None
        legal = legal_actions(hand)
        assert legal is not None and legal.seat == hand.actor_seat
        choices = []
        if legal.can_fold:
            choices.append(Act(legal.seat, ActionKind.FOLD))
        if legal.can_check:
            choices += [Act(legal.seat, ActionKind.CHECK)] * 2
        if legal.call_amount is not None:
            choices += [Act(legal.seat, ActionKind.CALL)] * 2
        if legal.all_in_to is not None:
            choices.append(Act(legal.seat, ActionKind.ALL_IN))
        state = run(state, PlayHand(rng.choice(choices)))
    return state


def _history(seed: int, seat_count: int, steps: int) -> int:
    """One random seating history; returns how many hands it dealt."""
    rng = random.Random(seed)
    config = TableConfig("t", Variant.NLHE, seat_count, small_blind=SMALL, big_blind=BIG)
    state = run(None, CreateTable(config))
    oracle = Oracle(seat_count)
    seats: dict[int, Seat] = {}
    hands = 0
    joined = 0

    def sync() -> None:
        oracle.forget_if_short(_dealt_in(seats))

    for _ in range(steps):
        move = rng.random()
        empty = [n for n in range(seat_count) if n not in seats]
        if move < 0.2 and empty:
            seat = rng.choice(empty)
            joined += 1
            stack = rng.choice([3, 6, 10, 25])
            seats[seat] = Seat(f"p{joined}", stack)
            state = run(state, SeatPlayer(seat, f"p{joined}", "P", stack, "h"))
        elif move < 0.3 and seats:
            seat = rng.choice(sorted(seats))
            del seats[seat]
            state = run(state, LeaveSeat(seat))
        elif move < 0.37 and seats:
            seat = rng.choice(sorted(seats))
            if seats[seat].sitting_out:
                seats[seat].sitting_out = False
                state = run(state, SitIn(seat))
            else:
                seats[seat].sitting_out = True
                state = run(state, SitOut(seat))
        elif move < 0.42 and seats:
            seat = rng.choice(sorted(seats))
            seats[seat].stack += 10
            state = run(state, AddChips(seat, 10))
        elif len(_dealt_in(seats)) >= 2:
            dealt_in = _dealt_in(seats)
            expected = oracle.next_hand(dealt_in)
            state = run(state, StartNextHand(rng.randbytes(32)))
            hands += 1
            started = next(e for e in state.hand_events if isinstance(e, HandStarted))
            assert {s.seat for s in started.setup.seats} == dealt_in
            button, small, big = expected
            assert started.setup.button == button, (seed, expected)
            if state.hand_running:  # (a hand that ended at once may have reset them)
                assert state.positions == Positions(button, small, big), (seed, expected)
            posted = {e.seat: e.amount for e in state.hand_events if isinstance(e, BlindPosted)}
            assert posted.get(big) == min(BIG, seats[big].stack)
            if small in dealt_in:
                assert posted.get(small) == min(SMALL, seats[small].stack)
            # Only the two blinds post: newcomers and returning players owe nothing.
            assert set(posted) <= {small, big}
            state = _play_randomly(state, rng)
            for p in state.players:
                seats[p.seat].stack = p.stack
        sync()
    return hands


@pytest.mark.parametrize("seat_count", [3, 4, 6, 9])
def test_button_and_blinds_follow_rules_md_over_random_seating_histories(seat_count: int) -> None:
    hands = sum(_history(seed, seat_count, 80) for seed in range(40))
    assert hands > 400


def test_the_oracle_reads_the_issue_s_smallest_case() -> None:
    # A (0) and B (2) heads-up, then C sits at 1: button C, small blind B, big blind A.
    oracle = Oracle(3)
    assert oracle.next_hand({0, 2}) == (0, 0, 2)
    assert oracle.next_hand({0, 1, 2}) == (1, 2, 0)
