"""PokerKit as an independent oracle for PHH: a strict replay, for tests and benchmarks.

Felt never plays by PokerKit (RULES.md differs from it on odd chips and on
limit short all-ins); its tests check Felt's PHH export against PokerKit,
and the PHH benchmark times Felt against this replay. Importing this module
needs ``pokerkit``, which only the dev extra installs.
"""

from __future__ import annotations

import warnings

import pokerkit
from pokerkit.notation import parse_action

__all__ = ["load_history", "strict_replay"]


def load_history(data: bytes | str) -> pokerkit.HandHistory:
    """Parse PHH text with PokerKit (quietly: it warns about fields it does not use)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pokerkit.HandHistory.loads(data.decode() if isinstance(data, bytes) else data)


def strict_replay(history: pokerkit.HandHistory) -> pokerkit.State:
    """Apply every recorded action in order, repairing nothing; then finish the hand.

    Only what PHH leaves implicit is done between actions: burning a card
    before each board card (Felt deals none, PokerKit wants one). After the
    last action the hand is finished the way PokerKit's own iterator does.
    Raises ``ValueError`` at the first action PokerKit refuses.
    """
    state = history.create_state()
    for action in history.actions:
        while state.can_burn_card():
            state.burn_card("??")
        parse_action(state, action, history.parse_value)
    while state.status:
        if state.can_burn_card():
            state.burn_card("??")
        elif state.can_show_or_muck_hole_cards():
            state.show_or_muck_hole_cards()
        elif state.can_kill_hand():
            state.kill_hand()
        elif state.can_push_chips():
            state.push_chips()
        elif state.can_pull_chips():
            state.pull_chips()
        else:
            break
    return state
