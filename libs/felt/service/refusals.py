"""Why a service refuses a call, without gRPC: a status :class:`Code`, a message, a reason.

The use cases of every service raise :class:`Refused`; the kit's interceptors
(:mod:`felt.service.interceptors`) turn it into the status and the
``google.rpc.ErrorInfo`` the client gets (:func:`felt.service.rpc.fail`).

The reason is declared once, in ``protos/poker/v1/reason.proto`` (``poker.v1.Reason``):
code passes a generated value (``Reason.NOT_YOUR_TURN``), never a string, and the
wire carries the value's name (``ErrorInfo.reason = "NOT_YOUR_TURN"``), as it always
has. :attr:`Refused.reason` holds that name, ready to send or to compare.
"""

from __future__ import annotations

import enum
from typing import TypeAlias

from google.rpc import error_details_pb2  # type: ignore[import-untyped]

from felt.storage.idempotency import RequestReused
from felt.wire import limits
from poker.v1.reason_pb2 import Reason

DOMAIN = "felt.poker"
"""``ErrorInfo.domain`` of every refusal a Felt service (or the gateway) sends."""

ReasonValue: TypeAlias = Reason.ValueType
NO_REASON: ReasonValue = Reason.REASON_UNSPECIFIED


class Code(enum.Enum):
    """The status codes Felt's services answer with (named and numbered as gRPC's)."""

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


def reason_name(reason: ReasonValue) -> str:
    """The wire form of ``reason``: its name ("" for none, which sends no ``ErrorInfo``)."""
    return "" if reason == NO_REASON else Reason.Name(reason)


def reason_of(name: str) -> ReasonValue:
    """The declared reason named ``name`` (a reason read back from another refusal or from
    the wire); :data:`NO_REASON` for "" or a name no service declares."""
    try:
        return Reason.Value(name) if name else NO_REASON
    except ValueError:
        return NO_REASON


class Refused(Exception):
    """A call refused with ``code``, ``message`` and (optionally) an ``ErrorInfo`` reason.

    ``message`` is for a person and never echoes what the client sent; ``reason`` is
    what a client acts on (:attr:`reason` is its name, "" for none)."""

    def __init__(self, code: Code, message: str, reason: ReasonValue = NO_REASON) -> None:
        super().__init__(message)
        self.code, self.message, self.reason = code, message, reason_name(reason)

    @classmethod
    def relayed(cls, code: Code, message: str, reason: str) -> Refused:
        """A refusal passing on a reason already named (a stored saga's refusal, which a
        table refused with): sent as it came, since it was a declared reason's name."""
        refused = cls(code, message)
        refused.reason = reason
        return refused


def invalid(exc: limits.LimitError) -> Refused:
    """A value out of its bounds (``felt.wire.limits``): INVALID_ARGUMENT, never the value."""
    return Refused(Code.INVALID_ARGUMENT, exc.message, reason_of(exc.reason))


def common_refusal(exc: Exception) -> Refused | None:
    """The refusal every service makes of ``exc`` alike (a refusal, a value out of its
    bounds, a request id reused for other content), or None."""
    if isinstance(exc, Refused):
        return exc
    if isinstance(exc, limits.LimitError):
        return invalid(exc)
    if isinstance(exc, RequestReused):
        return Refused(Code.INVALID_ARGUMENT, str(exc), Reason.REQUEST_ID_REUSED)
    return None


def error_info(reason: str) -> error_details_pb2.ErrorInfo:
    """The ``google.rpc.ErrorInfo`` a refusal with reason name ``reason`` carries."""
    return error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN)
