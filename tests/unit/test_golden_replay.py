"""Golden streams (tests/golden) replay to the states they were recorded with.

Each stream is a whole table's history (``tests.golden.record`` says how it was
played); the fold of its events must show every viewer exactly what it showed
when recorded. A failure means a change altered what stored events mean: undo
it, or, when that is the intent, record again (``python -m tests.golden.record``)
and say why in the commit.
"""

from __future__ import annotations

import json

import pytest

from felt.core.rules.events import HandEnded
from felt.core.table.events import PlayerLeft, PlayerSatOut, TableClosed
from tests.golden.record import CONFIGS, decode_stream, stream_path, views, views_path


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_a_golden_stream_replays_to_its_recorded_views(name: str) -> None:
    events = decode_stream(stream_path(name).read_text().split())
    recorded = json.loads(views_path(name).read_text())
    replayed = views(events)
    assert [v["sequence"] for v in replayed] == [v["sequence"] for v in recorded]
    for now, then in zip(replayed, recorded, strict=True):
        assert now == then, f"{name}: the fold differs after event {then['sequence']}"


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_a_golden_stream_covers_the_table_events(name: str) -> None:
    """The streams keep exercising what they were recorded for."""
    events = decode_stream(stream_path(name).read_text().split())
    kinds = {type(e) for e in events}
    assert {HandEnded, PlayerLeft, PlayerSatOut, TableClosed} <= kinds
    assert sum(isinstance(e, HandEnded) for e in events) == 40
