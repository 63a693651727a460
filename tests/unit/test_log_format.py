"""Log lines are JSON in production (``felt.service.logging.json_logs``): unless the log goes
to a terminal or the process runs in development mode, or ``FELT_LOG_FORMAT`` says otherwise."""

from __future__ import annotations

import io
import json
import logging

import pytest
import structlog

from felt.service.logging import bound_contextvars, configure_logging, json_logs


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FELT_LOG_FORMAT", raising=False)
    monkeypatch.delenv("FELT_DEV_MODE", raising=False)


def test_auto_is_json_unless_a_terminal_or_development_mode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert json_logs(io.StringIO())
    assert not json_logs(Terminal())
    assert not json_logs(io.StringIO(), dev=True)
    monkeypatch.setenv("FELT_DEV_MODE", "1")
    assert not json_logs(io.StringIO())
    assert json_logs(io.StringIO(), dev=False)  # the command's own --dev, when it says


def test_the_setting_forces_either(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FELT_LOG_FORMAT", "json")
    assert json_logs(Terminal(), dev=True)
    monkeypatch.setenv("FELT_LOG_FORMAT", "console")
    assert not json_logs(io.StringIO(), dev=False)


def test_a_services_line_is_json_with_its_ids_bound() -> None:
    out = io.StringIO()
    configure_logging(stream=out)
    try:
        with bound_contextvars(table_id="t-1", hand_id="t-1:3", seat=2, request_id="r-9"):
            structlog.get_logger("felt.test").info("action_accepted", version=7)
        line = json.loads(out.getvalue().splitlines()[-1])
    finally:
        for handler in list(logging.getLogger().handlers):
            if getattr(handler, "_felt_handler", False):
                logging.getLogger().removeHandler(handler)
    assert line["event"] == "action_accepted"
    assert (line["table_id"], line["hand_id"], line["seat"], line["request_id"]) == (
        "t-1",
        "t-1:3",
        2,
        "r-9",
    )
