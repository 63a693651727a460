"""The lounges' pure rules (``services.lobby.domain.lounges``): an owner's cap, and the
lifecycle's moves, each from one state only and never back, over every pair of states."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.lobby.domain import lounges as rules
from services.lobby.ports import Lounge, LoungeSeat, LoungeState, TooManyLounges

AT = datetime(2026, 1, 1, tzinfo=UTC)
SEATS = (LoungeSeat(0, "ai-0", "Bot", 2, 500), LoungeSeat(3, "p1", "P1", 0, 300))
ORDER = [LoungeState.CREATING, LoungeState.OPEN, LoungeState.CLOSING, LoungeState.CLOSED]


def lounge(state: LoungeState) -> Lounge:
    return Lounge("l-1", 1, "owner", "Lounge", 1, b"", 10, 6, 100, 1_000, None, state, AT, SEATS)


@given(st.integers(0, 50), st.one_of(st.none(), st.integers(0, 50)))
def test_an_owner_may_own_fewer_than_the_cap(owned: int, most: int | None) -> None:
    if most is not None and owned >= most:
        with pytest.raises(TooManyLounges):
            rules.check_room(owned, most)
    else:
        rules.check_room(owned, most)


@given(st.sampled_from(list(LoungeState)), st.sampled_from(sorted(rules.MOVES_FROM)))
def test_a_lounge_moves_from_one_state_only_and_never_back(
    state: LoungeState, to: LoungeState
) -> None:
    after = rules.moved(lounge(state), to, "TABLE_REFUSED")
    if state is not rules.MOVES_FROM[to]:
        assert after is None
        return
    assert after is not None and after.state is to
    assert after.seats == (() if to in (LoungeState.FAILED, LoungeState.CLOSED) else SEATS)
    assert after.failure == "TABLE_REFUSED"
    if state in ORDER and to in ORDER:
        assert ORDER.index(to) == ORDER.index(state) + 1  # forward, one step
    assert rules.moved(after, to) is None  # once
