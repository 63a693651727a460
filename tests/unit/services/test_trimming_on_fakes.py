"""Rebuilt after trimming, a table is the one its whole stream folds to (the in-memory store).

Random tables of both variants played by a real ``TableRuntime`` that writes
snapshots and trims, with the projector's archived position raised at random;
the same check runs on Redis in ``tests/integration/table/test_trimming.py``.
"""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from felt.storage.eventstore import MemoryEventStore
from tests.unit.services.trimming import play_archive_trim_rebuild
from tests.unit.table.random_tables import RandomTable, random_table


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    table=random_table(),
    every=st.integers(1, 3),
    retain_s=st.sampled_from([0, 0, 5]),
    seed=st.integers(0, 2**32),
)
def test_a_table_rebuilt_after_trimming_is_the_whole_streams(
    table: RandomTable, every: int, retain_s: int, seed: int
) -> None:
    asyncio.run(play_archive_trim_rebuild(MemoryEventStore(), table, every, retain_s, seed))
