"""A refusal on the wire, and the life of a service process: serve until a signal, stop
gracefully, turn a refused start into a message and exit status 2.

:func:`fail` is the one place a :class:`~felt.service.refusals.Refused` becomes a gRPC
status (code, message, ``google.rpc.ErrorInfo`` in ``grpc-status-details-bin``).
:func:`serve_until_stopped` and :func:`run` are the loop and the command-line wrapper
that ``felt table-service`` and ``felt lobby`` shared as copies.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol, TypeVar

import grpc
import structlog
from google.rpc import status_pb2  # type: ignore[import-untyped]
from grpc_status import rpc_status  # type: ignore[import-untyped]

from felt.service.refusals import Refused, error_info

Context = grpc.aio.ServicerContext[Any, Any]

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


async def fail(context: Context, error: Refused) -> None:
    """End the call with ``error``'s status (raises gRPC's abort); the codes share gRPC's
    numbers."""
    status = status_pb2.Status(code=error.code.value, message=error.message)
    if error.reason:
        status.details.add().Pack(error_info(error.reason))
    await context.abort_with_status(rpc_status.to_status(status))


class Running(Protocol):
    """A started server: the port it listens on, and a graceful stop."""

    @property
    def port(self) -> int: ...

    async def stop(self) -> None: ...


def on_stop_signal(callback: Callable[[], object]) -> None:
    """Call ``callback`` on the running loop when SIGTERM or SIGINT arrives."""
    loop = asyncio.get_running_loop()
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, callback)


def stop_event() -> asyncio.Event:
    """An event set by SIGTERM or SIGINT (handled on the running loop from now on)."""
    stop = asyncio.Event()
    on_stop_signal(stop.set)
    return stop


T = TypeVar("T")


async def _unless_stopped(
    stop: asyncio.Event, work: Awaitable[T], grace_s: float
) -> asyncio.Future[T] | None:
    """``work`` run to its end, or until ``stop`` is set and ``grace_s`` more have passed:
    the finished future (its result or error to read), or None when it was cancelled."""
    task = asyncio.ensure_future(work)
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait((task, stopped), return_when=asyncio.FIRST_COMPLETED)
        if not task.done() and grace_s > 0:
            await asyncio.wait((task,), timeout=grace_s)
    finally:
        stopped.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    return None if task.cancelled() else task


async def until_stopped(stop: asyncio.Event, work: Coroutine[Any, Any, None]) -> bool:
    """Run ``work`` unless ``stop`` is set first: True when it finished, False when ``stop``
    came first (``work`` is then cancelled and awaited). Its errors are raised."""
    if stop.is_set():
        work.close()  # never started
        return False
    done = await _unless_stopped(stop, work, 0.0)
    if done is None:
        return False
    done.result()  # raises what ended it
    return True


# How long a start interrupted by a stop signal may go on: one about to finish is let finish
# and then stopped gracefully; one stuck (an unreachable Redis or table service) is cancelled.
START_GRACE_S = 5.0


async def started_unless_stopped(
    stop: asyncio.Event, start: Awaitable[T], name: str, grace_s: float = START_GRACE_S
) -> T | None:
    """What ``start`` returns, or None when ``stop`` was set while it ran and it did not
    finish within ``grace_s`` after: then it is cancelled (what it had opened goes with the
    process; leases lapse by their TTL) and ``<name>_stopped_while_starting`` is logged.

    The signals are handled from before the start (``stop_event``), so a stop while a
    service starts is neither lost nor Python's default (SIGTERM ending the process at once,
    with nothing stopped or logged); and a start that hangs does not make Ctrl-C wait for it.
    """
    done = await _unless_stopped(stop, start, grace_s)
    if done is None:
        event = f"{name.replace(' ', '_')}_stopped_while_starting"
        structlog.get_logger("felt.service").info(event)
        return None
    return done.result()


async def serve_until_stopped(
    start: Awaitable[Running],
    name: str,
    *,
    started: Callable[[], None] | None = None,
    ready: asyncio.Event | None = None,
) -> None:
    """Start the server, serve until SIGTERM or SIGINT, then stop it gracefully.

    ``started`` runs once the server is up; then ``<name> listening on port N`` is printed
    (what scripts and tests wait for) and ``ready`` set. The signals are handled from before
    the start: the server answers calls (and the table service holds leases) before ``start``
    returns, so a signal meanwhile stops it gracefully once it is up, rather than ending the
    process at once with nothing stopped or logged (Python's default for SIGTERM); a start
    still running ``START_GRACE_S`` after the signal is cancelled
    (``started_unless_stopped``)."""
    stop = stop_event()
    running = await started_unless_stopped(stop, start, name)
    if running is None:
        return
    if started is not None:
        started()
    print(f"{name} listening on port {running.port}", flush=True)
    if ready is not None:
        ready.set()
    await stop.wait()
    await running.stop()


def run(
    main: Coroutine[Any, Any, None],
    command: str,
    refused: tuple[type[Exception], ...],
    event: str,
    logger: str,
) -> int:
    """Run a service's ``main`` to its end: 0, or 2 with a message on stderr (and the log
    event ``event``) when it refused to start with one of ``refused`` (bad settings, a
    port in use), logged by ``logger``."""
    try:
        asyncio.run(main)
    except refused as exc:
        structlog.get_logger(logger).error(event, error=str(exc))
        print(f"{command}: {exc}", file=sys.stderr, flush=True)
        return 2
    return 0
