"""Helpers for driving a table through its pure core in unit tests."""

from __future__ import annotations

from felt.core.table.aggregate import (
    PlayHand,
    TableCommand,
    TableState,
    decide_table,
    fold,
    passive_action,
)


def run(state: TableState | None, command: TableCommand) -> TableState:
    """Decide ``command`` and fold its events."""
    return fold(state, decide_table(state, command))


def play_out(state: TableState) -> TableState:
    """Play the running hand to its end with every seat passive (check, else fold; stand pat)."""
    while state.hand_running:
        assert state.hand is not None
        state = run(state, PlayHand(passive_action(state.hand)))
    return state
