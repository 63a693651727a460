"""Why the table service refuses a call, without gRPC: a status :class:`Code`, a message, a reason.

The application layer (``services.table.application``) raises :class:`Refused`
or lets a rules, store or limit error through; :func:`refusal` names the
refusal each of those is. ``services.table.errors`` turns a refusal into the
gRPC status the client gets. The codes are the ones a client can act on:
FAILED_PRECONDITION with the rules code for "not your turn" and friends,
ABORTED for a stale ``expected_sequence``, PERMISSION_DENIED for someone
else's seat, UNAVAILABLE for a table another instance runs (retry shortly).
"""

from __future__ import annotations

import enum

from felt.core.rules.commands import IllegalAction
from felt.storage.eventstore import VersionConflict
from felt.storage.idempotency import RequestKey, RequestReused
from felt.wire import limits
from services.table.runtime import LeaseLost, TableQuarantined


class Code(enum.Enum):
    """The status codes the table service answers with (named as gRPC names them)."""

    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    INTERNAL = 13
    UNAVAILABLE = 14
    UNAUTHENTICATED = 16


# Rules codes that mean "the request is fine but the table is not in a state for it".
_PRECONDITION = Code.FAILED_PRECONDITION
_CODE_STATUS: dict[str, Code] = {
    "BAD_CONFIG": Code.INVALID_ARGUMENT,
    "BAD_AMOUNT": Code.INVALID_ARGUMENT,
    "BAD_SEAT": Code.INVALID_ARGUMENT,
    "BAD_AI_LEVEL": Code.INVALID_ARGUMENT,
    "BAD_DISCARD": Code.INVALID_ARGUMENT,
    "TABLE_EXISTS": Code.ALREADY_EXISTS,
    "SEAT_TAKEN": Code.ALREADY_EXISTS,
    "ALREADY_SEATED": Code.ALREADY_EXISTS,
    "NO_TABLE": Code.NOT_FOUND,
    "SEAT_EMPTY": Code.NOT_FOUND,
    "UNKNOWN_SEAT": _PRECONDITION,
}


class Refused(Exception):
    """A call refused with ``code``, ``message`` and (optionally) an ``ErrorInfo`` reason."""

    def __init__(self, code: Code, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.code, self.message, self.reason = code, message, reason


def invalid(exc: limits.LimitError) -> Refused:
    """A value out of its bounds (``felt.wire.limits``): INVALID_ARGUMENT, never the value."""
    return Refused(Code.INVALID_ARGUMENT, exc.message, exc.reason)


def refusal(exc: Exception) -> Refused:
    """The refusal a refused command is (re-raises what is not a refusal)."""
    if isinstance(exc, Refused):
        return exc
    if isinstance(exc, RequestReused):
        return Refused(Code.INVALID_ARGUMENT, str(exc), "REQUEST_ID_REUSED")
    if isinstance(exc, IllegalAction):
        return Refused(_CODE_STATUS.get(exc.code, _PRECONDITION), exc.message, exc.code)
    if isinstance(exc, VersionConflict):
        return Refused(
            Code.ABORTED,
            f"the table moved on: it is at sequence {exc.actual}, not at the "
            "expected_sequence sent; read the view again and decide on it",
            "STALE_SEQUENCE",
        )
    if isinstance(exc, LeaseLost):
        return Refused(
            Code.UNAVAILABLE,
            "this table-service instance is handing the table over; retry shortly",
        )
    if isinstance(exc, limits.LimitError):
        return invalid(exc)
    if isinstance(exc, TableQuarantined):
        return quarantined(exc)
    raise exc


def first_answer(request: RequestKey, stored: bytes) -> bytes:
    """The first answer to ``request``; a refusal if its id was used for other content."""
    try:
        return request.open(stored)
    except RequestReused as exc:
        raise refusal(exc) from None


def quarantined(exc: TableQuarantined) -> Refused:
    return Refused(
        Code.FAILED_PRECONDITION,
        "this table is quarantined: its stored state cannot be applied "
        f"({exc.reason}); an operator has to repair it",
        "TABLE_QUARANTINED",
    )


# A watcher dropped for reading too slowly (it resumes from the last event it got).
TOO_SLOW = Refused(
    Code.RESOURCE_EXHAUSTED,
    "this watch fell too far behind the table (read faster); watch again with "
    "from_sequence set to the last event received",
    "WATCH_TOO_SLOW",
)


# A seat's stream opened with a token that a reissue (``SeatTokenReissued``) has voided.
TOKEN_REISSUED = Refused(
    Code.PERMISSION_DENIED,
    "this seat's token was reissued: the stream it opened has ended; watch with the new token",
    "SEAT_TOKEN_REISSUED",
)
TOKEN_EXPIRED = Refused(
    Code.UNAUTHENTICATED,
    "the seat token this stream was opened with has expired: ask the lobby for a fresh one "
    "and watch again from the last event",
    "SEAT_TOKEN_EXPIRED",
)


def unavailable(table_id: str) -> Refused:
    """Another instance runs ``table_id`` (the message does not repeat the id: a refusal never
    echoes what was sent)."""
    return Refused(
        Code.UNAVAILABLE, "this table is run by another table-service instance; retry shortly"
    )
