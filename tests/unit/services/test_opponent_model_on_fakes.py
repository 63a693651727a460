"""The opponent model the runtime feeds is the one the stream used to be read back for.

Before, the table manager built an AI request's model by reading the table's
stream back from the store and decoding it, incrementally per table, on
every request (``_reread`` below is that code, kept here as the reference).
Now ``TableRuntime`` feeds its model the events it folds after each append
(``services.table.opponents``). Random tables of both variants and the
golden streams, played by a real runtime on the in-memory store (with
snapshots, trims and the archived position rising at random), give the same
model at every version either way.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from random import Random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from felt.core.table.events import AnyEvent
from felt.core.table.redaction import redact_event
from felt.core.table.stats import SeatStats
from felt.messages.events import from_stored_event
from felt.players.bots.opponents import ModelBuilder, build_stats
from felt.storage.eventstore import EventStore, EventsTrimmed, MemoryEventStore, StoredRecord
from felt.storage.idempotency import server_key
from poker.events.v1 import events_pb2 as epb
from services.table.opponents import OpponentModel
from services.table.runtime import TableRuntime
from services.table.snapshots import SnapshotPolicy
from tests.golden.record import decode_stream, stream_path
from tests.golden.record_live import LIVE
from tests.unit.table.random_tables import RandomTable, random_table

Models = dict[str, tuple[ModelBuilder, int]]


async def _reread(
    store: EventStore, models: Models, table_id: str, version: int
) -> dict[int, SeatStats]:
    """The table manager's model before this change: the stream read back since last time."""
    builder, done = models.get(table_id, (ModelBuilder(), 0))
    try:
        records = await store.read(table_id, from_sequence=min(done, version))
    except EventsTrimmed as trimmed:
        builder, done = ModelBuilder(), trimmed.first_available - 1
        records = await store.read(table_id, from_sequence=done)
    for record in records:
        if record.sequence <= done:
            continue
        if record.sequence > version:
            break
        event, _ = from_stored_event(epb.StoredEvent.FromString(record.payload))
        builder.observe(redact_event(event, None))
        done = record.sequence
    models[table_id] = (builder, done)
    return builder.stats


class _Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


async def _play(table: RandomTable, seed: int) -> int:
    """Run ``table`` through a runtime; compare the models whenever an AI would be asked."""
    t = table.config.table_id
    store = MemoryEventStore()
    chance = Random(seed)
    runtime = TableRuntime(
        t, store, clock=_Clock(), snapshots=SnapshotPolicy(1, timedelta(seconds=0))
    )
    await runtime.stop()  # no timers: only the commands given run
    models: Models = {}
    compared = 0
    for n, command in enumerate(table.commands):
        outcome = await runtime.run(command, server_key("test", t, n))
        if chance.random() < 0.3:
            await store.record_archived(t, chance.randint(0, outcome.sequence))
        await runtime.trimmed()
        if chance.random() < 0.05:
            await runtime.load()  # a reload (as after a lost append): the model starts again
            models.clear()  # as a new owner's manager would
        # Asked after every append, as at a table where an AI seat acts on every turn. (The
        # old model, asked less often, started again from what was left whenever a trim
        # passed the last event it had read; the fed one never misses an event.)
        new = await runtime.opponent_stats(runtime.version)
        assert new == await _reread(store, models, t, runtime.version), n
        compared += 1
    return compared


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=random_table(), seed=st.integers(0, 2**32))
def test_the_fed_model_is_the_read_back_one_on_random_tables(table: RandomTable, seed: int) -> None:
    asyncio.run(_play(table, seed))


class _CountingStore(MemoryEventStore):
    """The in-memory store, counting whole reads."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    async def read(
        self, table_id: str, from_sequence: int = 0, count: int | None = None
    ) -> list[StoredRecord]:
        self.reads += 1
        return await super().read(table_id, from_sequence, count)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=random_table())
def test_after_its_start_the_model_is_fed_not_read(table: RandomTable) -> None:
    """Once started, the model follows the appends: the store is not read for it again."""

    async def main() -> None:
        store = _CountingStore()
        t = table.config.table_id
        runtime = TableRuntime(t, store, clock=_Clock())
        await runtime.stop()
        for n, command in enumerate(table.commands):
            await runtime.run(command, server_key("test", t, n))
            before = store.reads
            await runtime.opponent_stats(runtime.version)
            assert store.reads == before + (1 if n == 0 else 0), n

    asyncio.run(main())


def test_the_golden_streams_model_the_same_folded_in_batches_or_read_at_once() -> None:
    """The recorded streams (the live ones from real AI play too): the fed model after each
    batch is the whole prefix's fresh fold."""
    for name in ("holdem", "draw", *LIVE):
        events: list[AnyEvent] = decode_stream(stream_path(name).read_text().split())
        model = OpponentModel(ModelBuilder(), 0)
        step = 7
        for start in range(0, len(events), step):
            batch = events[start : start + step]
            model.fold(batch, start + len(batch))
            prefix = events[: start + len(batch)]
            assert model.stats == build_stats(redact_event(e, None) for e in prefix), name
        assert model.done == len(events)
