"""Why the lobby refuses a call, without gRPC: a status :class:`Code`, a message, a reason.

The application layer (``services.lobby.application``) raises :class:`Refused`
or lets a limit error (``felt.wire.limits``) or ``RequestReused`` through;
``services.lobby.interceptors`` turns them into the status and
``google.rpc.ErrorInfo`` the client gets. (The table service has its own: a
service never imports another.)
"""

from __future__ import annotations

import enum

from felt.storage.idempotency import RequestReused
from felt.wire import limits


class Code(enum.Enum):
    """The status codes the lobby answers with (named and numbered as gRPC's)."""

    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    INTERNAL = 13
    UNAVAILABLE = 14
    UNAUTHENTICATED = 16


class Refused(Exception):
    """A call refused with ``code``, ``message`` and an ``ErrorInfo`` reason."""

    def __init__(self, code: Code, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.code, self.message, self.reason = code, message, reason


def refusal(exc: Exception) -> Refused | None:
    """The refusal ``exc`` is, or None when it is not one (a fault)."""
    if isinstance(exc, Refused):
        return exc
    if isinstance(exc, limits.LimitError):
        return Refused(Code.INVALID_ARGUMENT, exc.message, exc.reason)
    if isinstance(exc, RequestReused):
        return Refused(Code.INVALID_ARGUMENT, str(exc), "REQUEST_ID_REUSED")
    return None


def unauthenticated(reason: str, message: str) -> Refused:
    return Refused(Code.UNAUTHENTICATED, message, reason)


BAD_CREDENTIALS = Refused(
    Code.UNAUTHENTICATED, "no registered player has this name and password", "BAD_CREDENTIALS"
)
NOT_SIGNED_IN = unauthenticated(
    "TOKEN_MISSING", "sign in first: send `authorization: Bearer <access_token>`"
)
SESSION_REVOKED = unauthenticated(
    "SESSION_REVOKED", "this session was signed out (or its refresh token reused): sign in again"
)
NAME_TAKEN = Refused(Code.ALREADY_EXISTS, "another player has this display name", "NAME_TAKEN")
ALREADY_ANSWERED = Refused(
    Code.FAILED_PRECONDITION,
    "this request was already answered, and its answer is no longer given again: sign in",
    "REQUEST_ALREADY_ANSWERED",
)
