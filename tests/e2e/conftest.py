"""Fixtures of the end-to-end tests: ``own_redis`` (function), a redis-server of the test's own
(``tests/e2e/own_redis.py``: append-only, ``appendfsync always``, in the test's temporary
directory), for tests that kill and restart Redis; stopped by pid at the test's end."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.e2e.own_redis import OwnRedis


@pytest.fixture
async def own_redis(tmp_path: Path) -> AsyncIterator[OwnRedis]:
    server = OwnRedis(tmp_path / "redis", fsync="always")
    await server.start()
    try:
        yield server
    finally:
        await server.close()
