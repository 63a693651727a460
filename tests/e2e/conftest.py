"""Fixtures of the end-to-end tests: ``own_redis`` (function), a redis-server of the test's own
(``tests/e2e/own_redis.py``: append-only, ``appendfsync always``, in the test's temporary
directory), for tests that kill and restart Redis; stopped by pid at the test's end."""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator
from pathlib import Path

import pluggy
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


# What a failed end-to-end test prints of its services' logs: the lines at warning level or
# above, then the last lines of each log. The services are processes writing to files in the
# test's temporary directory; a failure seen only in CI (a run on a loaded machine) is then
# explained by its own output, the temporary directory being gone with the machine.
LOG_ALERTS = 40
LOG_TAIL = 15
LOG_FILES = 12
_ALERT_LEVELS = ('"level": "warning"', '"level": "error"', '"level": "critical"', "Traceback")


def service_log_summary(directory: Path) -> str:
    """The warning-or-worse lines and the tail of each ``*.log`` under ``directory``."""
    parts = []
    logs = sorted(directory.rglob("*.log"), key=lambda p: p.stat().st_mtime)[-LOG_FILES:]
    for log in logs:
        try:
            lines = log.read_text(errors="replace").splitlines()
        except OSError:
            continue
        alerts = [line for line in lines if any(level in line for level in _ALERT_LEVELS)]
        parts.append(f"--- {log.relative_to(directory)}: {len(lines)} lines, {len(alerts)} alerts")
        if alerts:
            parts.append(f"alerts (last {min(len(alerts), LOG_ALERTS)}):")
            parts.extend(line[:400] for line in alerts[-LOG_ALERTS:])
        parts.append("tail:")
        parts.extend(line[:400] for line in lines[-LOG_TAIL:])
    return "\n".join(parts)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pluggy.Result[pytest.TestReport], None]:
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    tmp_path = getattr(item, "funcargs", {}).get("tmp_path")
    if isinstance(tmp_path, Path) and tmp_path.exists():
        summary = service_log_summary(tmp_path)
        if summary:
            report.sections.append(("services' logs", summary))
