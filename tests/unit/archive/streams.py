"""Table streams for the archive's tests: whole tables played by the pure core, stored as the
table service stores them (envelope hand ids, timestamps), and the hands they archive as."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from felt.core.rules.config import Variant
from felt.core.table.events import AnyEvent, TableConfig
from felt.messages.events import EventMeta
from felt.storage.archive import ArchivedHand
from felt.storage.archive.projection import TableProjection
from felt.storage.archive.values import Cursor
from felt.storage.eventstore import StoredRecord
from felt.storage.eventstore.codec import encode_event
from services.table.stream import hand_ids
from tests.golden.record import Recorder

START = datetime(2026, 1, 1, tzinfo=UTC)


def table_config(table_id: str, variant: Variant, hands: int = 12) -> TableConfig:
    if variant is Variant.NLHE:
        return TableConfig(
            table_id, Variant.NLHE, 6, small_blind=5, big_blind=10, ante=1, hand_limit=hands
        )
    return TableConfig(
        table_id, Variant.DRAW5, 5, ante=2, small_bet=10, big_bet=20, hand_limit=hands
    )


def play_table(table_id: str, variant: Variant, hands: int = 12) -> list[AnyEvent]:
    """A table's whole history: joins, leaves, sit-outs, time-outs, voluntary shows, closing."""
    recorder = Recorder(table_id, table_config(table_id, variant, hands))
    recorder.play()
    return recorder.events


def stored(table_id: str, events: list[AnyEvent], start: datetime = START) -> list[StoredRecord]:
    """``events`` as the table service appends them: sequences, times and hand ids."""
    return [
        StoredRecord(
            sequence,
            encode_event(
                event,
                EventMeta(table_id, sequence, start + timedelta(seconds=sequence), hand_id=hand),
            ),
        )
        for sequence, (event, hand) in enumerate(
            zip(events, hand_ids(None, events), strict=True), start=1
        )
    ]


def archived(table_id: str, records: list[StoredRecord]) -> list[ArchivedHand]:
    """Every hand of ``records`` as the projection archives it, late shows joined in."""
    projection = TableProjection(table_id, Cursor())
    hands: dict[str, ArchivedHand] = {}
    for record in records:
        projection.feed(record)
        batch = projection.take()
        for hand in batch.hands:
            hands[hand.hand_id] = hand
        for late in batch.late:
            hands[late.hand_id] = hands[late.hand_id].with_late(late)
    return list(hands.values())
