"""The ledger's and the house's pure rules (``services.lobby.domain.ledger`` and ``.house``):
which movements there are, what each leaves of a balance, when a free top-up is allowed,
and what settling a closing lounge's AI seat returns. Both adapters call these, so the
contract suites (tests/integration/lobby) check the storage around them; here the rules
alone, over every input."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from poker.v1.reason_pb2 import Reason
from services.lobby.domain import house
from services.lobby.domain import ledger as rules
from services.lobby.ports import Account, InsufficientChips, Kind, TopUpRefused

AT = datetime(2026, 1, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)
CHIPS = st.integers(-(10**12), 10**12)


@given(st.sampled_from(list(Kind)), CHIPS)
def test_a_move_takes_chips_to_a_table_and_back_only(kind: Kind, amount: int) -> None:
    if kind in (Kind.GRANT, Kind.TOP_UP) or amount <= 0:
        with pytest.raises(ValueError):
            rules.movement(kind, amount)
        return
    delta = rules.movement(kind, amount)
    assert abs(delta) == amount and (delta < 0) == (kind is Kind.BUY_IN)


@given(st.integers(0, 10**12), st.integers(1, 10**12), st.sampled_from(sorted(rules.MOVED)))
def test_a_balance_never_goes_below_zero(balance: int, amount: int, kind: Kind) -> None:
    delta = rules.movement(kind, amount)
    if balance + delta < 0:
        with pytest.raises(InsufficientChips) as refused:
            rules.balance_after(balance, delta)
        assert (refused.value.balance, refused.value.wanted) == (balance, amount)
    else:
        assert rules.balance_after(balance, delta) == balance + delta >= 0


@given(
    st.integers(0, 10_000),
    st.integers(0, 10_000),
    st.one_of(st.none(), st.integers(-180, 180)),
    st.integers(-10, 5_000),
)
def test_a_free_top_up_is_for_low_chips_once_an_hour(
    balance: int, at_tables: int, minutes_since: int | None, amount: int
) -> None:
    last = None if minutes_since is None else AT - timedelta(minutes=minutes_since)
    account = Account("p1", balance, last)
    below = 1_000

    def top_up() -> int:
        return rules.top_up(account, amount, below, HOUR, AT, at_tables)

    if amount <= 0:
        with pytest.raises(ValueError):
            top_up()
    elif balance + at_tables >= below:
        with pytest.raises(TopUpRefused) as refused:
            top_up()
        assert refused.value.reason == Reason.Name(Reason.NOT_LOW)
    elif last is not None and last + HOUR > AT:
        with pytest.raises(TopUpRefused) as refused:
            top_up()
        assert (
            refused.value.reason == Reason.Name(Reason.COOLING_DOWN)
            and refused.value.next_at == last + HOUR
        )
    else:
        assert top_up() == balance + amount


@given(st.booleans(), st.booleans(), st.integers(-5, 10**9))
def test_a_vacated_ai_seat_returns_its_stack_to_the_house_that_funded_it(
    held: bool, funded: bool, stack: int
) -> None:
    settled = house.settle_ai(held, funded, stack)
    if not held:
        assert settled is None  # settled already: nothing changes
    else:
        assert settled is not None
        assert settled.returned == (stack if funded and stack > 0 else 0)


def test_an_ai_seat_is_funded_with_at_least_one_chip() -> None:
    assert house.funding(500) == -500
    for amount in (0, -1):
        with pytest.raises(ValueError):
            house.funding(amount)
