"""``TrimPoints.take``: the newest snapshot old enough, and only it and the newer ones kept.

Checked against the plain rule (scan every known snapshot) on random histories: the
bisection must give the same snapshot and keep the same list, whatever the times.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from services.table.snapshots import TrimPoints

T0 = datetime(2026, 12, 3, tzinfo=UTC)


def _scanned(known: list[tuple[int, datetime]], now: datetime, retain: timedelta) -> int:
    ripe = [i for i, (_, at) in enumerate(known) if at <= now - retain]
    if not ripe:
        return 0
    del known[: ripe[-1]]
    return known[0][0]


@given(
    gaps=st.lists(st.integers(0, 50), max_size=40),
    takes=st.lists(st.tuples(st.integers(0, 2500), st.integers(0, 600)), max_size=8),
)
def test_take_is_the_newest_ripe_snapshot(gaps: list[int], takes: list[tuple[int, int]]) -> None:
    points, reference = TrimPoints(), []
    at = T0
    for sequence, gap in enumerate(gaps, start=1):
        at += timedelta(seconds=gap)  # oldest first, some written in the same second
        points.add(sequence * 10, at)
        reference.append((sequence * 10, at))
    for now_s, retain_s in sorted(takes):
        now, retain = T0 + timedelta(seconds=now_s), timedelta(seconds=retain_s)
        assert points.take(now, retain) == _scanned(reference, now, retain)
        assert points.known == reference


def test_nothing_ripe_keeps_everything() -> None:
    points = TrimPoints()
    points.add(5, T0)
    points.add(9, T0 + timedelta(seconds=30))
    assert points.take(T0 + timedelta(seconds=10), timedelta(seconds=60)) == 0
    assert [s for s, _ in points.known] == [5, 9]
    assert points.take(T0 + timedelta(seconds=95), timedelta(seconds=60)) == 9
    assert [s for s, _ in points.known] == [9]
