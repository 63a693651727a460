"""How a refused call is told to the client: status code, message and ``ErrorInfo`` reason.

Handlers and the use cases they call raise :class:`Refused` (or let a rules,
store or limit error through); ``services.table.interceptors`` turns them into
the gRPC status the client gets, so that mapping lives here, once. The codes
are the ones a client can act on: FAILED_PRECONDITION with the rules code for
"not your turn" and friends, ABORTED for a stale ``expected_sequence``,
PERMISSION_DENIED for someone else's seat, UNAVAILABLE for a table another
instance runs (retry shortly). ``ErrorInfo.domain`` is ``felt.poker``.
"""

from __future__ import annotations

from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]
from grpc_status import rpc_status  # type: ignore[import-untyped]

from felt.api import limits
from felt.eventstore import VersionConflict
from felt.idempotency import RequestKey, RequestReused
from felt.rules.commands import IllegalAction
from services.table.runtime import LeaseLost, TableQuarantined

Context = grpc.aio.ServicerContext[Any, Any]

# Rules codes that mean "the request is fine but the table is not in a state for it".
_PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION
_CODE_STATUS: dict[str, grpc.StatusCode] = {
    "BAD_CONFIG": grpc.StatusCode.INVALID_ARGUMENT,
    "BAD_AMOUNT": grpc.StatusCode.INVALID_ARGUMENT,
    "BAD_SEAT": grpc.StatusCode.INVALID_ARGUMENT,
    "BAD_AI_LEVEL": grpc.StatusCode.INVALID_ARGUMENT,
    "BAD_DISCARD": grpc.StatusCode.INVALID_ARGUMENT,
    "TABLE_EXISTS": grpc.StatusCode.ALREADY_EXISTS,
    "SEAT_TAKEN": grpc.StatusCode.ALREADY_EXISTS,
    "ALREADY_SEATED": grpc.StatusCode.ALREADY_EXISTS,
    "NO_TABLE": grpc.StatusCode.NOT_FOUND,
    "SEAT_EMPTY": grpc.StatusCode.NOT_FOUND,
    "UNKNOWN_SEAT": _PRECONDITION,
}


class Refused(Exception):
    """A call refused with ``code``, ``message`` and (optionally) an ``ErrorInfo`` reason."""

    def __init__(self, code: grpc.StatusCode, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.code, self.message, self.reason = code, message, reason


_Abort = Refused  # the name the handlers used first


def invalid(exc: limits.LimitError) -> _Abort:
    """A value out of its bounds (``felt.api.limits``): INVALID_ARGUMENT, never the value."""
    return _Abort(grpc.StatusCode.INVALID_ARGUMENT, exc.message, exc.reason)


async def fail(context: Context, error: _Abort) -> None:
    status = status_pb2.Status(code=error.code.value[0], message=error.message)
    if error.reason:
        info = error_details_pb2.ErrorInfo(reason=error.reason, domain="felt.poker")
        status.details.add().Pack(info)
    await context.abort_with_status(rpc_status.to_status(status))


def refusal(exc: Exception) -> _Abort:
    """The status a refused command gets."""
    if isinstance(exc, _Abort):
        return exc
    if isinstance(exc, RequestReused):
        return _Abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc), "REQUEST_ID_REUSED")
    if isinstance(exc, IllegalAction):
        return _Abort(_CODE_STATUS.get(exc.code, _PRECONDITION), exc.message, exc.code)
    if isinstance(exc, VersionConflict):
        return _Abort(
            grpc.StatusCode.ABORTED,
            f"the table moved on: it is at sequence {exc.actual}, not {exc.expected}; "
            "read the view again and decide on it",
            "STALE_SEQUENCE",
        )
    if isinstance(exc, LeaseLost):
        return _Abort(
            grpc.StatusCode.UNAVAILABLE,
            "this table-service instance is handing the table over; retry shortly",
        )
    raise exc


def first_answer(request: RequestKey, stored: bytes) -> bytes:
    """The first answer to ``request``; a refusal if its id was used for other content."""
    try:
        return request.open(stored)
    except RequestReused as exc:
        raise refusal(exc) from None


def quarantined(exc: TableQuarantined) -> _Abort:
    return _Abort(
        grpc.StatusCode.FAILED_PRECONDITION,
        f"table {exc.table_id} is quarantined: its stored state cannot be applied "
        f"({exc.reason}); an operator has to repair it",
        "TABLE_QUARANTINED",
    )


# A watcher dropped for reading too slowly (it resumes from the last event it got).
TOO_SLOW = _Abort(
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    "this watch fell too far behind the table (read faster); watch again with "
    "from_sequence set to the last event received",
    "WATCH_TOO_SLOW",
)


def unavailable(table_id: str) -> _Abort:
    return _Abort(
        grpc.StatusCode.UNAVAILABLE,
        f"table {table_id} is run by another table-service instance; retry shortly",
    )
