"""RULES.md: a table may be limited by number of hands (Draw: "the game ends after the
configured number of hands"). The time limit is the service's (tests/integration/table/
test_clock.py): the core has no clock."""

from __future__ import annotations

import pytest

from felt.core.rules.commands import IllegalAction
from felt.core.rules.config import Variant
from felt.core.table.aggregate import CreateTable, SeatPlayer, StartNextHand, TableState
from felt.core.table.events import TableConfig
from tests.unit.table.tables import play_out, run

CONFIGS = {
    Variant.NLHE: TableConfig("t", Variant.NLHE, 6, small_blind=5, big_blind=10, hand_limit=3),
    Variant.DRAW5: TableConfig(
        "t", Variant.DRAW5, 6, ante=5, small_bet=10, big_bet=20, hand_limit=3
    ),
}


def _table(variant: Variant) -> TableState:
    state = run(None, CreateTable(CONFIGS[variant]))
    for seat in (0, 1, 2):
        state = run(state, SeatPlayer(seat, f"p{seat}", f"P{seat}", 1000, "h"))
    return state


@pytest.mark.parametrize("variant", list(CONFIGS))
def test_the_table_closes_after_its_configured_number_of_hands(variant: Variant) -> None:
    state = _table(variant)
    for hand in range(1, 4):
        assert state.can_start_hand() and not state.closed
        state = play_out(run(state, StartNextHand(bytes([hand]) * 32)))
        assert state.hands_played == hand
    assert state.closed and not state.can_start_hand()
    with pytest.raises(IllegalAction) as refused:
        run(state, StartNextHand(b"4" * 32))
    assert refused.value.code == "TABLE_CLOSED"
    # Chips are conserved across the hands (nothing is cashed out; nobody won real money).
    assert sum(p.stack for p in state.players) == 3 * 1000


def test_without_a_limit_the_table_goes_on() -> None:
    state = run(None, CreateTable(TableConfig("t", Variant.NLHE, 6, small_blind=5, big_blind=10)))
    for seat in (0, 1):
        state = run(state, SeatPlayer(seat, f"p{seat}", f"P{seat}", 1000, "h"))
    for hand in range(1, 6):
        state = play_out(run(state, StartNextHand(bytes([hand]) * 32)))
    assert state.hands_played == 5 and not state.closed and state.can_start_hand()
