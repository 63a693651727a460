"""The API fuzzer, short run: random hostile call sequences against a real service on loopback.

Every TableService RPC, with random and hostile fields, several seats and
spectators, foreign and server-pattern request ids; the invariants (no
INTERNAL/UNKNOWN, chips conserved, refusals change nothing, no card a caller
may not see, health answers) are checked after every step. See
``tests.fuzz.machine`` and docs/testing.md; ``python -m tests.fuzz --minutes 30``
is the long run.
"""

from __future__ import annotations

import asyncio

import pytest

from tests.fuzz.machine import Harness
from tests.fuzz.run import fuzz_settings, run_bounded
from tests.integration.table.harness import TableEnv


@pytest.mark.timeout(300)
async def test_api_fuzz_short_run(table_env: TableEnv) -> None:
    harness = Harness(table_env, asyncio.get_running_loop())
    try:
        # Bounded by examples and steps (each example starts a fresh service): about fifteen
        # seconds on two cores, longer under load (hence its own timeout). No shrinking here:
        # a failure prints its whole sequence.
        config = fuzz_settings(examples=12, steps=25, shrink=False)
        await asyncio.to_thread(run_bounded, harness, config)
    finally:
        await harness.stop()
    assert harness.sequences >= 12
    assert harness.calls > 100
    # The AI seats were played from the requests the service published (each checked for
    # leaks): a harness reading the wrong stream would skip both quietly.
    assert harness.decisions_read > 0
