"""Structured logging for Felt (structlog).

Services call ``configure_logging()`` once at start-up: one JSON object per line, what a log
collector reads, unless ``FELT_LOG_FORMAT`` says otherwise or (``auto``, the default) the log
goes to a terminal or the process runs in development mode, where a person reads it; developer
tools call ``configure_logging(json=False)`` for coloured console output. Context bound with
``bind_contextvars(table_id=..., hand_id=..., seat=...)`` is merged into every event logged
from the same task or thread, so a service binds the table/hand/seat once per request:

    from felt.service.logging import bound_contextvars, configure_logging, get_logger

    configure_logging()
    log = get_logger(__name__)
    with bound_contextvars(table_id="t1", hand_id=42):
        log.info("hand_started", seats=6)

Records from the standard library's ``logging`` (grpc, redis-py, asyncio, ...) go through the
same renderer, so a service's output is uniformly JSON.
"""

from __future__ import annotations

import logging as stdlib_logging
import sys
from typing import IO, Any

import structlog
from structlog.contextvars import (
    bind_contextvars,
    bound_contextvars,
    clear_contextvars,
    unbind_contextvars,
)
from structlog.typing import Processor

from felt.config import settings as S

__all__ = [
    "bind_contextvars",
    "bound_contextvars",
    "clear_contextvars",
    "configure_logging",
    "get_logger",
    "json_logs",
    "unbind_contextvars",
]


def _level_number(level: str | int) -> int:
    if isinstance(level, int):
        return level
    number = stdlib_logging.getLevelName(level.upper())
    if not isinstance(number, int):
        raise ValueError(f"unknown log level: {level!r}")
    return number


def json_logs(out: IO[str], dev: bool | None = None) -> bool:
    """Whether log lines to ``out`` are JSON: ``FELT_LOG_FORMAT``, or for ``auto`` JSON unless
    ``out`` is a terminal or in development mode (``dev``; None: ``FELT_DEV_MODE``)."""
    chosen = S.FELT_LOG_FORMAT.read()
    if chosen != "auto":
        return chosen == "json"
    development = S.FELT_DEV_MODE.read() if dev is None else dev
    return not (development or out.isatty())


def configure_logging(
    json: bool | None = None,
    level: str | int = "INFO",
    *,
    stream: IO[str] | None = None,
    dev: bool | None = None,
) -> None:
    """Configure structlog and the standard library's logging.

    json: render one JSON object per line (services); False renders for a console (dev);
    None (the default) chooses as :func:`json_logs` does, with ``dev``.
    level: minimum level, a name ("DEBUG", "INFO", ...) or a ``logging`` number.
    stream: where to write; defaults to ``sys.stderr`` (stdout stays free for CLI output).
    """
    level_no = _level_number(level)
    out = stream if stream is not None else sys.stderr
    if json is None:
        json = json_logs(out, dev)

    shared: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.StackInfoRenderer(),
    ]
    renderer: Processor
    if json:
        # Tracebacks as data, but never a frame's local variables: a local may hold a
        # token or a secret (structlog's default shows them).
        shared.append(
            structlog.processors.ExceptionRenderer(
                structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
            )
        )
        renderer = structlog.processors.JSONRenderer()
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=out.isatty())

    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            *shared,
            structlog.stdlib.PositionalArgumentsFormatter(),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )

    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
    )
    handler = stdlib_logging.StreamHandler(out)
    handler.setFormatter(formatter)
    root = stdlib_logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, "_felt_handler", False):
            root.removeHandler(old)
    handler._felt_handler = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level_no)


def get_logger(name: str | None = None, **initial_values: Any) -> structlog.stdlib.BoundLogger:
    """A structlog logger; ``initial_values`` are bound to every event it logs."""
    logger: structlog.stdlib.BoundLogger = structlog.stdlib.get_logger(name, **initial_values)
    return logger
