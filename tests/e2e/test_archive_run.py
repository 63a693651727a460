"""The archive's done-when, shortened (issue 12): a bot run of a few hundred hands at tables
of both variants with two projectors and trimming on leaves every hand archived once and
equal to its stream, the streams and request records trimmed to what live tables need, and
the AI decision stream trimmed. ``python -m tests.archive_run --hands 2000`` is the long run;
``tests/archive_run.py`` says what is checked."""

from __future__ import annotations

import pytest
import redis.asyncio as redis_async_lib

from tests.archive_run import run
from tests.e2e.test_projector_kill import archive_db  # noqa: F401 - the fixture
from tests.e2e.test_serve import Launcher, launcher  # noqa: F401 - the fixture

pytestmark = pytest.mark.timeout(240)
# AI seats' actions are no longer held back by the per-seat rate limit, so 250 hands took
# about 6 s: too short for the decision stream's once-a-second trims to show. 750 take ~20 s.
HANDS = 750


async def test_a_bot_run_leaves_every_hand_archived_once_and_redis_trimmed(
    launcher: Launcher,  # noqa: F811
    redis: redis_async_lib.Redis,
    archive_db: str,  # noqa: F811
) -> None:
    figures = await run(launcher, redis, archive_db, hands=HANDS, tables_per_variant=2, limit_s=150)
    print(figures.report())
    assert figures.hands >= HANDS
    assert figures.entries_left < figures.entries_appended // 3
