"""Golden streams (tests/golden) replay to the states they were recorded with.

Each stream is a whole table's history: synthetic ones played by the pure core
(``tests.golden.record`` says how), and ones the real services wrote, AI workers
playing ``felt serve --dev``'s demo tables (``tests.golden.record_live``). The
fold of its events must show every viewer exactly what it showed when recorded.
A failure means a change altered what stored events mean: undo it, or, when
that is the intent, record again (``python -m tests.golden.record``,
``python -m tests.golden.record_live``) and say why in the commit.
"""

from __future__ import annotations

import json

import pytest

from felt.core.rules.events import CardsShown, HandEnded, StreetStarted
from felt.core.table.events import (
    DeckCommitted,
    PlayerLeft,
    PlayerSatOut,
    PlayerSeated,
    TableClosed,
    TableSnapshotTaken,
)
from felt.storage.eventstore.codec import decode_event
from tests.golden.record import CONFIGS, decode_stream, stream_path, views, views_path
from tests.golden.record_live import LIVE


@pytest.mark.parametrize("name", sorted(CONFIGS) + sorted(LIVE))
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


@pytest.mark.parametrize("name", sorted(LIVE))
def test_a_live_stream_is_what_the_services_wrote(name: str) -> None:
    """Recorded from a real run: envelopes, snapshots, commitments, AI seats' own actions."""
    decoded = [decode_event(bytes.fromhex(line)) for line in stream_path(name).read_text().split()]
    events = [e for e, _ in decoded]
    kinds = {type(e) for e in events}
    assert {TableSnapshotTaken, DeckCommitted, StreetStarted, CardsShown} <= kinds
    assert sum(isinstance(e, HandEnded) for e in events) == 12
    assert {e.ai_level for e in events if isinstance(e, PlayerSeated)} == {"easy", "normal", "hard"}
    metas = [m for _, m in decoded]
    assert [m.sequence for m in metas] == list(range(1, len(metas) + 1))
    assert all(m.table_id == LIVE[name] and m.recorded_at is not None for m in metas)
    keys = {m.request_key.split("/")[0] for m in metas}
    assert keys == {"c", "s", "k"}  # the AI workers', the service's timers', the demo set-up's
