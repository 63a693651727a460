"""Random tables of both variants, played through the pure core with snapshots at deals.

``random_table`` draws a config and then a walk of table commands (seating,
leaving, sitting out and in, adding chips, deals, random legal moves,
time-outs, shows, closing); refused commands change nothing and are skipped.
Every deal due for a snapshot starts with one (``snapshot_of`` of the state
before it), as the table service writes it. The result is the stream as
batches (each one atomic append), for the snapshot tests to fold in pieces.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

from felt.core.rules.commands import Act, ActionKind, Discard, IllegalAction, ShowCards
from felt.core.rules.config import Variant
from felt.core.rules.legal import legal_actions
from felt.core.table.aggregate import (
    AddChips,
    CloseTable,
    CreateTable,
    LeaveSeat,
    PlayHand,
    SeatPlayer,
    SitIn,
    SitOut,
    StartNextHand,
    TableCommand,
    TableState,
    TimeOut,
    execute_table,
    snapshot_of,
)
from felt.core.table.events import AnyEvent, PlayerLeft, PlayerSeated, TableConfig


@dataclass
class RandomTable:
    """A table's stream as the batches it was appended in, and where its snapshots are."""

    config: TableConfig
    batches: list[list[AnyEvent]] = field(default_factory=list)
    snapshot_batches: list[int] = field(default_factory=list)  # indexes into ``batches``
    commands: list[TableCommand] = field(default_factory=list)  # each batch's, in order
    hands: int = 0

    @property
    def events(self) -> list[AnyEvent]:
        return [e for batch in self.batches for e in batch]

    def first_sequence(self, batch: int) -> int:
        """The sequence of the first event of ``batches[batch]`` (1-based)."""
        return 1 + sum(len(b) for b in self.batches[:batch])


def _config(draw: st.DrawFn, table_id: str) -> TableConfig:
    if draw(st.booleans()):
        bb = draw(st.sampled_from([2, 10]))
        return TableConfig(
            table_id,
            Variant.NLHE,
            draw(st.integers(2, 9)),
            small_blind=bb // 2,
            big_blind=bb,
            ante=draw(st.sampled_from([0, 0, 1])),
            max_timeouts=draw(st.sampled_from([0, 1, 2])),
            hand_limit=draw(st.sampled_from([0, 0, 0, 6])),
        )
    small = draw(st.sampled_from([2, 4]))
    return TableConfig(
        table_id,
        Variant.DRAW5,
        draw(st.integers(2, 6)),
        ante=1,
        small_bet=small,
        big_bet=2 * small,
        raise_cap=draw(st.integers(1, 4)),
        allow_all_in=draw(st.booleans()),
        max_timeouts=draw(st.sampled_from([0, 1, 2])),
        hand_limit=draw(st.sampled_from([0, 0, 0, 6])),
    )


def _move(draw: st.DrawFn, state: TableState) -> PlayHand | TimeOut | None:
    hand = state.hand
    if hand is None or hand.ended or hand.actor_seat is None:
        return None
    seat = hand.actor_seat
    legal = legal_actions(hand)
    assert legal is not None
    if draw(st.integers(0, 9)) == 0:
        return TimeOut(seat)
    if legal.max_discard is not None:
        own = hand.seat_state(seat)
        assert own is not None
        cards = draw(st.lists(st.sampled_from(own.hole), unique=True, max_size=legal.max_discard))
        return PlayHand(Discard(seat, tuple(cards)))
    choices: list[Act] = []
    if legal.can_check:
        choices.append(Act(seat, ActionKind.CHECK))
    if legal.can_fold:
        choices.append(Act(seat, ActionKind.FOLD))
    if legal.call_amount is not None:
        choices += [Act(seat, ActionKind.CALL)] * 3
    if legal.min_raise_to is not None and legal.max_raise_to is not None:
        kind = ActionKind.BET if legal.bet else ActionKind.RAISE
        to = draw(st.integers(legal.min_raise_to, legal.max_raise_to))
        choices.append(Act(seat, kind, to))
    if legal.all_in_to is not None:
        choices.append(Act(seat, ActionKind.ALL_IN))
    return PlayHand(draw(st.sampled_from(choices)))


def _command(draw: st.DrawFn, state: TableState, serial: int) -> TableCommand | None:
    if state.hand_running and draw(st.integers(0, 5)):
        return _move(draw, state)  # mostly play on: the hands are what snapshots cut between
    if not state.hand_running and draw(st.booleans()):
        return StartNextHand(draw(st.binary(min_size=32, max_size=32)))
    seat = draw(st.integers(0, state.config.seat_count - 1))
    kind = draw(
        st.sampled_from(
            ["seat"] * 4
            + ["deal"] * 4
            + ["move"] * 14
            + ["leave", "sit_out", "sit_in", "chips", "show", "close"]
        )
    )
    if kind == "seat":
        stack = draw(st.integers(1, 400))
        level = draw(st.sampled_from(["", "", "easy", "hard"]))
        wait = draw(st.integers(0, 3)) == 0  # refused at Draw (no big blind): skipped
        return SeatPlayer(seat, f"p{serial}", f"P{serial}", stack, f"{serial:064x}", level, wait)
    if kind == "deal":
        return StartNextHand(draw(st.binary(min_size=32, max_size=32)))
    if kind == "move":
        return _move(draw, state)
    if kind == "leave":
        return LeaveSeat(seat)
    if kind == "sit_out":
        return SitOut(seat)
    if kind == "sit_in":
        return SitIn(seat, draw(st.booleans()))
    if kind == "chips":
        return AddChips(seat, draw(st.integers(1, 100)))
    if kind == "show":
        return PlayHand(ShowCards(seat))
    if draw(st.integers(0, 5)) == 0:
        return CloseTable("done")
    return None


@st.composite
def random_table(
    draw: st.DrawFn, table_id: str = "t", max_steps: int = 160, every: int = 0
) -> RandomTable:
    """A table played at random, with a snapshot every ``every`` hands (0: drawn, 1 to 3)."""
    config = _config(draw, table_id)
    every = every or draw(st.integers(1, 3))
    table = RandomTable(config)
    state, events = execute_table(None, CreateTable(config))
    table.batches.append(events)
    table.commands.append(CreateTable(config))
    seated: dict[int, int] = {}
    version = len(events)
    # A few players first (then anyone may come and go), so that most tables play hands.
    opening: list[TableCommand | None] = [
        SeatPlayer(seat, f"o{seat}", f"O{seat}", draw(st.integers(20, 400)), f"{seat:064x}")
        for seat in range(draw(st.integers(2, config.seat_count)))
    ]
    steps = draw(st.integers(10, max_steps))
    for serial in range(-len(opening), steps):
        command = opening[serial] if serial < 0 else _command(draw, state, serial)
        if command is None:
            continue
        try:
            after, events = execute_table(state, command)
        except IllegalAction:
            continue
        if isinstance(command, StartNextHand) and state.hands_played % every == 0:
            events = [snapshot_of(state, seated), *events]
            table.snapshot_batches.append(len(table.batches))
        for offset, event in enumerate(events, start=1):
            if isinstance(event, PlayerSeated):
                seated[event.seat] = version + offset
            elif isinstance(event, PlayerLeft):
                seated.pop(event.seat, None)
        version += len(events)
        table.batches.append(events)
        table.commands.append(command)
        state = after
        table.hands = state.hands_played
    return table
