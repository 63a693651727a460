"""The lobby's own refusals (the kit's :class:`~felt.service.refusals.Refused`, named once).

The application layer (``services.lobby.application``) raises them or lets a limit
error (``felt.wire.limits``) or ``RequestReused`` through; the shared RPC kit
(``felt.service``, through ``services.lobby.interceptors``) turns each into the status
and ``google.rpc.ErrorInfo`` the client gets.
"""

from __future__ import annotations

from felt.service.refusals import Code, ReasonValue, Refused, reason_of
from felt.service.refusals import common_refusal as refusal
from poker.v1.reason_pb2 import Reason

__all__ = ["Code", "Refused", "reason_of", "refusal", "unauthenticated"]


def unauthenticated(reason: ReasonValue, message: str) -> Refused:
    return Refused(Code.UNAUTHENTICATED, message, reason)


BAD_CREDENTIALS = Refused(
    Code.UNAUTHENTICATED, "no registered player has this name and password", Reason.BAD_CREDENTIALS
)
NOT_SIGNED_IN = unauthenticated(
    Reason.TOKEN_MISSING, "sign in first: send `authorization: Bearer <access_token>`"
)
SESSION_REVOKED = unauthenticated(
    Reason.SESSION_REVOKED,
    "this session was signed out (or its refresh token reused): sign in again",
)
NAME_TAKEN = Refused(Code.ALREADY_EXISTS, "another player has this display name", Reason.NAME_TAKEN)
ALREADY_ANSWERED = Refused(
    Code.FAILED_PRECONDITION,
    "this request was already answered, and its answer is no longer given again: sign in",
    Reason.REQUEST_ALREADY_ANSWERED,
)
