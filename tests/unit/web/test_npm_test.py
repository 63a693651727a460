"""The web client's own unit tests (``cd web && npm test``: src/**/*.test.ts under Node's test
runner) run with the Python suite, so ``make test`` fails when they do: route parsing of bad
links, plural forms in every language, the bet-size reset, pre-actions, running out of chips,
the join's request-id reuse, the hand evaluator and the log's order. Skipped without Node or
web/node_modules (``make web`` installs them)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

WEB = Path(__file__).resolve().parents[3] / "web"


def test_the_web_clients_unit_tests_pass() -> None:
    node = shutil.which("node")
    if node is None or not (WEB / "node_modules" / ".bin" / "tsc").exists():
        pytest.skip("needs node and web/node_modules (make web)")
    run = subprocess.run(
        [node, "scripts/test.mjs"], cwd=WEB, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "# fail 0" in run.stdout
