"""A logged traceback never carries a frame's local variables: one may hold a token or a
secret (structlog's dict tracebacks show them unless told not to)."""

from __future__ import annotations

import io
import json
import logging

import structlog

from felt.service.logging import configure_logging

SECRET = "a-secret-that-must-never-reach-a-log-0123456789"


def _fails(token: str) -> None:
    secret = SECRET  # a local, as in a credential check
    raise TypeError(f"cannot compare {len(token)} characters with {len(secret)}")


def test_a_logged_exception_shows_where_but_never_the_locals() -> None:
    out = io.StringIO()
    configure_logging(json=True, stream=out)
    try:
        try:
            _fails("v1.abc.é")
        except TypeError:
            structlog.get_logger("felt.test").exception("request_failed")
        line = json.loads(out.getvalue().strip().splitlines()[-1])
    finally:
        logging.getLogger().handlers.clear()
        structlog.reset_defaults()
    assert line["event"] == "request_failed"
    assert "TypeError" in json.dumps(line["exception"])
    assert "_fails" in json.dumps(line["exception"])
    assert SECRET not in out.getvalue()
    assert "v1.abc" not in out.getvalue()
