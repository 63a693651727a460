"""Recorded table streams, replayed in tests/unit/test_golden_replay.py to catch drift.

A golden stream is a whole table's history for one variant, played by the pure
core with a seeded random policy and every kind of table event (joins, leaves
mid-hand, sit-outs and returns, chips added, time-outs, busts, all-ins with side
pots, draws of every size, voluntary shows, the table closing at its hand
limit). Beside each stream the recorder stores what the fold of those events
shows every viewer (a spectator and each seat) after every hand and at the end.

Replaying must give the same views byte for byte: a change to ``apply`` (or to
anything it uses) that changes what a stored stream means is caught, as
Temporal's replayer catches nondeterminism in recorded histories. Events are
the contract: when a change is meant to alter the fold, record again and say
why in the commit:

    python -m tests.golden.record
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

from google.protobuf import json_format

from felt.core.rules.commands import Act, ActionKind, Discard, IllegalAction, ShowCards
from felt.core.rules.config import Variant
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
    TableCommand,
    TableState,
    TimeOut,
    apply_event,
    execute_table,
)
from felt.core.table.events import AnyEvent, TableConfig
from felt.messages.events import EventMeta
from felt.storage.eventstore.codec import decode_event, encode_event
from felt.wire.convert import table_view_to_proto

HERE = Path(__file__).resolve().parent
CONFIGS = {
    "holdem": TableConfig(
        "golden-holdem", Variant.NLHE, 6, small_blind=5, big_blind=10, ante=1, hand_limit=40
    ),
    "draw": TableConfig(
        "golden-draw", Variant.DRAW5, 5, ante=2, small_bet=10, big_bet=20, hand_limit=40
    ),
}


def stream_path(name: str) -> Path:
    return HERE / f"{name}.events.jsonl"


def views_path(name: str) -> Path:
    return HERE / f"{name}.views.json"


def _seed(name: str, hand: int) -> bytes:
    return hashlib.sha256(f"golden:{name}:{hand}".encode()).digest()


class Recorder:
    """Drives one table through its pure core and keeps every event it causes."""

    def __init__(self, name: str, config: TableConfig | None = None) -> None:
        self.name = name
        self.config = config or CONFIGS[name]
        self.rng = random.Random(f"golden:{name}")
        self.state: TableState | None = None
        self.events: list[AnyEvent] = []
        self.joined = 0

    def run(self, command: TableCommand) -> bool:
        try:
            self.state, events = execute_table(self.state, command)
        except IllegalAction:
            return False
        self.events.extend(events)
        return True

    @property
    def table(self) -> TableState:
        assert self.state is not None
        return self.state

    def seat(self, seat: int) -> None:
        self.joined += 1
        stack = self.rng.choice((60, 150, 400, 1000))
        self.run(SeatPlayer(seat, f"p{self.joined}", f"Player {self.joined}", stack, "h" * 64))

    def between_hands(self) -> None:
        """Joins, leaves, sit-outs, returns and top-ups, at random."""
        for seat in range(self.table.config.seat_count):
            player = self.table.player(seat)
            roll = self.rng.random()
            if player is None:
                if roll < 0.5:
                    self.seat(seat)
            elif player.sitting_out and roll < 0.6:
                self.run(SitIn(seat))
            elif roll < 0.06:
                self.run(LeaveSeat(seat))
            elif roll < 0.12:
                self.run(SitOut(seat))
            elif player.stack < 40 and roll < 0.5:
                self.run(AddChips(seat, 200))

    def act(self) -> None:
        hand = self.table.hand
        assert hand is not None
        legal = legal_actions(hand)
        assert legal is not None
        seat = legal.seat
        roll = self.rng.random()
        if roll < 0.03:
            self.run(TimeOut(seat))
            return
        if roll < 0.05 and self.table.player(seat) is not None:
            self.run(LeaveSeat(seat))  # folded at its turn from now on
            return
        if legal.max_discard is not None:
            count = self.rng.randint(0, legal.max_discard)
            own = hand.seat_state(seat)
            assert own is not None
            self.run(PlayHand(Discard(seat, tuple(self.rng.sample(own.hole, count)))))
            return
        choices: list[Act] = []
        if legal.can_check:
            choices += [Act(seat, ActionKind.CHECK)] * 3
        if legal.call_amount is not None:
            choices += [Act(seat, ActionKind.CALL)] * 3
        if legal.can_fold:
            choices.append(Act(seat, ActionKind.FOLD))
        if legal.min_raise_to is not None and legal.max_raise_to is not None:
            kind = ActionKind.BET if legal.bet else ActionKind.RAISE
            to = self.rng.randint(legal.min_raise_to, legal.max_raise_to)
            choices += [Act(seat, kind, legal.min_raise_to), Act(seat, kind, to)]
        if legal.all_in_to is not None:
            choices.append(Act(seat, ActionKind.ALL_IN))
        self.run(PlayHand(self.rng.choice(choices)))

    def play(self) -> None:
        self.run(CreateTable(self.config))
        for seat in range(3):
            self.seat(seat)
        hand = 0
        while not self.table.closed:
            self.between_hands()
            hand += 1
            if not self.run(StartNextHand(_seed(self.name, hand))):
                continue
            while self.table.hand_running:
                self.act()
            for seat in range(self.table.config.seat_count):
                if self.rng.random() < 0.1:
                    self.run(PlayHand(ShowCards(seat)))
            assert hand < 500, "the table never closed"


def views(events: list[AnyEvent]) -> list[dict[str, object]]:
    """What every viewer sees of the fold of ``events`` after each hand and at the end."""
    from felt.core.rules.events import HandEnded

    out: list[dict[str, object]] = []
    state: TableState | None = None
    for sequence, event in enumerate(events, start=1):
        state = apply_event(state, event)
        if isinstance(event, HandEnded) or sequence == len(events):
            viewers: list[int | None] = [None, *range(state.config.seat_count)]
            out.append(
                {
                    "sequence": sequence,
                    "views": [
                        json_format.MessageToDict(table_view_to_proto(state, viewer, sequence))
                        for viewer in viewers
                    ],
                }
            )
    return out


def encode_stream(name: str, events: list[AnyEvent]) -> list[str]:
    table_id = CONFIGS[name].table_id
    return [
        encode_event(event, EventMeta(table_id, sequence)).hex()
        for sequence, event in enumerate(events, start=1)
    ]


def decode_stream(lines: list[str]) -> list[AnyEvent]:
    return [decode_event(bytes.fromhex(line))[0] for line in lines]


def main() -> int:
    for name in CONFIGS:
        recorder = Recorder(name)
        recorder.play()
        lines = encode_stream(name, recorder.events)
        assert decode_stream(lines) == recorder.events
        stream_path(name).write_text("\n".join(lines) + "\n")
        views_path(name).write_text(json.dumps(views(recorder.events), indent=1) + "\n")
        print(f"{name}: {len(lines)} events, {recorder.table.hands_played} hands")
    return 0


if __name__ == "__main__":
    sys.exit(main())
