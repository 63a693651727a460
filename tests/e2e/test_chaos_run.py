"""The chaos run, shortened (issue 24, item 7): six lounges of both variants, a few hands at
each with people joining and leaving, every kind of process SIGKILLed once and Redis once,
and then nothing lost: chips conserved in SQL and in the streams, every hand archived once
and equal to its stream, no gap or duplicate, every acknowledged action kept, no saga left in
flight. ``python -m tests.chaos_run`` is the long run; ``tests/chaos_run.py`` says what is
checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chaos_run import KINDS, run
from tests.e2e.own_redis import OwnRedis
from tests.e2e.test_projector_kill import archive_database
from tests.e2e.test_serve import Launcher

pytestmark = pytest.mark.timeout(240)
HANDS = 60


async def test_a_short_chaos_run_loses_nothing(
    own_redis: OwnRedis, database_url: str, tmp_path: Path
) -> None:
    launcher = Launcher(own_redis.url, tmp_path)
    try:
        async with archive_database(database_url, "felt_chaos") as dsn:
            figures = await run(
                own_redis,
                launcher,
                dsn,
                hands=HANDS,
                tables=6,
                people=3,
                kills_per_kind=1,
                redis_restarts=1,
                seed=7,
                gap_s=(1.0, 3.0),
                limit_s=180,
            )
    finally:
        await launcher.stop_all()
    print(figures.report())  # pytest -s
    assert figures.hands >= HANDS and figures.archived == figures.hands
    assert all(figures.kills[kind] == 1 for kind in KINDS) and figures.kills["redis"] == 1
    assert figures.acknowledged > 0 and figures.lost == 0
    assert figures.tables == {"VARIANT_NLHE": 3, "VARIANT_DRAW5": 3}
