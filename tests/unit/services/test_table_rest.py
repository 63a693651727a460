"""When a table with nobody to play for rests (``services.table.rest``), with no clock or
server, and the setting that configures it (``FELT_TABLE_IDLE_GRACE_S``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from felt.config import settings as S
from felt.core.rules.config import Variant
from felt.core.table.aggregate import CreateTable, LeaveSeat, SeatPlayer, TableState, execute_table
from felt.core.table.events import TableConfig
from services.settings import ConfigError
from services.table.rest import RestPolicy, has_person
from services.table.server import TableServerConfig

T0 = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)
GRACE = RestPolicy(timedelta(seconds=30))


def table(*seats: str) -> TableState:
    """A table with a seat per entry: an AI level, or "" for a person."""
    state, _ = execute_table(None, CreateTable(TableConfig("t", Variant.NLHE, 6, 5, 10)))
    for seat, level in enumerate(seats):
        state, _ = execute_table(state, SeatPlayer(seat, f"p{seat}", f"P{seat}", 1000, "", level))
    return state


def test_only_a_seat_without_an_ai_level_is_a_person() -> None:
    assert not has_person(table())
    assert not has_person(table("easy", "hard"))
    assert has_person(table("easy", ""))


def test_the_grace_counts_from_when_the_last_person_or_watcher_went() -> None:
    bots, mixed = table("easy", "normal"), table("easy", "")
    since = GRACE.idle_since(None, bots, 0, T0)
    assert since == T0
    # Kept while nobody comes, so the grace is not pushed back by every event.
    later = T0 + timedelta(seconds=20)
    assert GRACE.idle_since(since, bots, 0, later) == T0
    assert not GRACE.rests(since, later)
    assert GRACE.rests(since, T0 + timedelta(seconds=30))
    # A watcher or a person: somebody is there, and the count starts over when they go.
    assert GRACE.idle_since(since, bots, 1, later) is None
    assert GRACE.idle_since(since, mixed, 0, later) is None
    assert not GRACE.rests(None, T0 + timedelta(days=1))


def test_a_person_who_leaves_starts_the_grace() -> None:
    state = table("easy", "hard", "")
    assert GRACE.idle_since(None, state, 0, T0) is None
    left, _ = execute_table(state, LeaveSeat(2))
    assert not has_person(left)
    assert GRACE.idle_since(None, left, 0, T0) == T0


def test_no_grace_never_rests() -> None:
    never = RestPolicy.of_seconds(0)
    assert never.grace is None and RestPolicy().grace is None
    assert not never.rests(T0, T0 + timedelta(days=365))
    assert RestPolicy.of_seconds(5).grace == timedelta(seconds=5)


def test_the_setting_a_minute_by_default_zero_never_and_bounded() -> None:
    assert TableServerConfig.from_env({}).idle_grace_s == S.FELT_TABLE_IDLE_GRACE_S.default == 60
    assert TableServerConfig.from_env({"FELT_TABLE_IDLE_GRACE_S": "0"}).idle_grace_s == 0
    assert TableServerConfig.from_env({"FELT_TABLE_IDLE_GRACE_S": "5"}).idle_grace_s == 5
    for bad in ("-1", "86401", "1m"):
        with pytest.raises(ConfigError, match="FELT_TABLE_IDLE_GRACE_S"):
            TableServerConfig.from_env({"FELT_TABLE_IDLE_GRACE_S": bad})
