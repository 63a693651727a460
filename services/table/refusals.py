"""The table service's own refusals (the kit's :class:`~felt.service.refusals.Refused`).

The application layer (``services.table.application``) raises :class:`Refused`
or lets a rules, store or limit error through; :func:`refusal` names the
refusal each of those is. The shared RPC kit (``felt.service.rpc.fail``) turns a
refusal into the gRPC status the client gets. The codes are the ones a client can act on:
FAILED_PRECONDITION with the rules code for "not your turn" and friends,
ABORTED for a stale ``expected_sequence``, PERMISSION_DENIED for someone
else's seat, UNAVAILABLE ``TABLE_ELSEWHERE`` for a table another instance runs (retry
shortly; the reason tells a router that the instance answered, so it is alive).
"""

from __future__ import annotations

from felt.core.rules.commands import IllegalAction
from felt.service.refusals import Code, Refused, invalid, reason_of
from felt.storage.eventstore import VersionConflict
from felt.storage.idempotency import RequestKey, RequestReused
from felt.wire import limits
from poker.v1.reason_pb2 import Reason
from services.table.runtime import LeaseLost, RequestTooOld, TableQuarantined

__all__ = ["Code", "Refused", "invalid"]

# Rules codes that mean "the request is fine but the table is not in a state for it".
_PRECONDITION = Code.FAILED_PRECONDITION
_CODE_STATUS: dict[Reason.ValueType, Code] = {
    Reason.BAD_CONFIG: Code.INVALID_ARGUMENT,
    Reason.BAD_AMOUNT: Code.INVALID_ARGUMENT,
    Reason.BAD_SEAT: Code.INVALID_ARGUMENT,
    Reason.BAD_AI_LEVEL: Code.INVALID_ARGUMENT,
    Reason.BAD_DISCARD: Code.INVALID_ARGUMENT,
    Reason.TABLE_EXISTS: Code.ALREADY_EXISTS,
    Reason.SEAT_TAKEN: Code.ALREADY_EXISTS,
    Reason.ALREADY_SEATED: Code.ALREADY_EXISTS,
    Reason.NO_TABLE: Code.NOT_FOUND,
    Reason.SEAT_EMPTY: Code.NOT_FOUND,
    Reason.UNKNOWN_SEAT: _PRECONDITION,
}


def refusal(exc: Exception) -> Refused:
    """The refusal a refused command is (re-raises what is not a refusal)."""
    if isinstance(exc, Refused):
        return exc
    if isinstance(exc, RequestReused):
        return Refused(Code.INVALID_ARGUMENT, str(exc), Reason.REQUEST_ID_REUSED)
    if isinstance(exc, IllegalAction):
        # The rules core names its codes as plain strings (it imports no protos): each is a
        # declared Reason (tests/unit/web/test_i18n.py checks).
        reason = reason_of(exc.code)
        return Refused(_CODE_STATUS.get(reason, _PRECONDITION), exc.message, reason)
    if isinstance(exc, VersionConflict):
        return Refused(
            Code.ABORTED,
            f"the table moved on: it is at sequence {exc.actual}, not at the "
            "expected_sequence sent; read the view again and decide on it",
            Reason.STALE_SEQUENCE,
        )
    if isinstance(exc, LeaseLost):
        return Refused(
            Code.UNAVAILABLE,
            "this table-service instance is handing the table over; retry shortly",
            Reason.TABLE_ELSEWHERE,
        )
    if isinstance(exc, RequestTooOld):
        return Refused(
            Code.FAILED_PRECONDITION,
            "this request is too old to be answered again; read the table and decide afresh",
            Reason.REQUEST_TOO_OLD,
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
        Reason.TABLE_QUARANTINED,
    )


# A watcher dropped for reading too slowly (it resumes from the last event it got).
TOO_SLOW = Refused(
    Code.RESOURCE_EXHAUSTED,
    "this watch fell too far behind the table (read faster); watch again with "
    "from_sequence set to the last event received",
    Reason.WATCH_TOO_SLOW,
)


# A seat's stream opened with a token that a reissue (``SeatTokenReissued``) has voided.
TOKEN_REISSUED = Refused(
    Code.PERMISSION_DENIED,
    "this seat's token was reissued: the stream it opened has ended; watch with the new token",
    Reason.SEAT_TOKEN_REISSUED,
)
TOKEN_EXPIRED = Refused(
    Code.UNAUTHENTICATED,
    "the seat token this stream was opened with has expired: ask the lobby for a fresh one "
    "and watch again from the last event",
    Reason.SEAT_TOKEN_EXPIRED,
)


def unavailable(table_id: str) -> Refused:
    """Another instance runs ``table_id`` (the message does not repeat the id: a refusal never
    echoes what was sent)."""
    return Refused(
        Code.UNAVAILABLE,
        "this table is run by another table-service instance; retry shortly",
        Reason.TABLE_ELSEWHERE,
    )
