"""A random table played by a real ``TableRuntime`` on a store, archived, trimmed and rebuilt.

Shared by the unit test (``MemoryEventStore``) and the integration test
(``RedisEventStore``): the same commands the pure model played
(``tests.unit.table.random_tables``) are run through the runtime, which
writes its own snapshots and trims after each one; the projector's archived
position is raised at random moments (as the projector would, a little
behind). A fresh runtime rebuilt from what is left must be the table the
whole stream folds to, and nothing after the archived position is ever gone.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from random import Random

from felt.core.table.aggregate import replay_table
from felt.storage.eventstore import EventStore, EventsTrimmed
from felt.storage.idempotency import server_key
from services.table.runtime import TableRuntime
from services.table.snapshots import SnapshotPolicy
from services.table.stream import rebuild
from tests.unit.table.random_tables import RandomTable


class _Clock:
    """A clock that moves a second per reading: snapshots get distinct times."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


async def play_archive_trim_rebuild(
    store: EventStore,
    table: RandomTable,
    every: int,
    retain_s: int,
    seed: int,
    table_id: str = "",
) -> None:
    """Run ``table``'s commands on ``store``, archive and trim as it goes, then check a rebuild.

    ``table_id`` names the table in the store (by default its config's id).
    """
    t = table_id or table.config.table_id
    chance = Random(seed)
    clock = _Clock()
    policy = SnapshotPolicy(every, timedelta(seconds=retain_s))
    runtime = TableRuntime(t, store, clock=clock, snapshots=policy)
    await runtime.stop()  # no timers: only the commands given run
    whole = []  # every record, read before anything could be trimmed from it
    for n, command in enumerate(table.commands):
        outcome = await runtime.run(command, server_key("test", t, n))
        whole.extend(await store.read(t, outcome.sequence - len(outcome.events)))
        if chance.random() < 0.3:
            # The projector, somewhat behind the table.
            await store.record_archived(t, chance.randint(0, outcome.sequence))
        await runtime.trimmed()
    archived = await store.archived(t)
    latest = await store.latest_snapshot(t)

    # What is left: nothing after the archived position went, nor the latest snapshot.
    try:
        first = (await store.read(t))[0].sequence if whole else 1
    except EventsTrimmed as trimmed:
        first = trimmed.first_available
    assert first <= archived + 1
    if latest:
        assert first <= latest
    tail = await store.read(t, first - 1)
    assert tail == whole[first - 1 :]

    # The rebuilt table is the whole stream's, and the pure model's.
    rebuilt = TableRuntime(t, store, clock=clock, snapshots=policy)
    await rebuilt.load()
    full = rebuild(whole)
    assert rebuilt.state == full.state == replay_table(table.events)
    assert rebuilt.version == full.version == len(whole)
    assert rebuilt.seated_at == full.seated_at
    assert rebuilt.last_event_at == full.last_event_at
    assert rebuilt.turn_started_at == full.turn_started_at
    assert rebuilt.deck_sequences == [s for s in full.deck_sequences if s >= rebuilt.loaded_from]
    assert rebuilt.loaded_from == (latest or 1)
