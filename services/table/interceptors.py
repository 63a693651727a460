"""The table service's calls through the shared RPC kit (``felt.service.interceptors``).

What is the table service's own: the log context of a call (``table_id``, cut to
``limits.LOGGED_ID_MAX`` since it is unchecked yet; ``seat`` when the request names
one; its ``request_id``, when it has one; ``hand_id`` unbound, ``...``, until the
table is known), the refusal a quarantined table is (FAILED_PRECONDITION
``TABLE_QUARANTINED``), what unreachable storage is (Redis, UNAVAILABLE), and the
:class:`~services.table.auth.Caller` a call's bearer token and seat-token header make
(:func:`current_caller`). The kit does the rest, as for the lobby: deadline, status
mapping, the RPC metrics, the auth-attempt throttle (RESOURCE_EXHAUSTED
``AUTH_THROTTLED``, ``felt.wire.attempts``).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from google.protobuf.message import Message

from felt.service import interceptors as kit
from felt.service.bearer import header
from felt.service.metrics import RpcMetrics
from felt.service.refusals import Refused
from felt.storage.redis_client import REDIS_ERRORS
from felt.wire import limits
from felt.wire.clients import TrustedProxies
from felt.wire.tokens import SEAT_TOKEN_HEADER
from services.table.auth import ANONYMOUS, Authenticator, Caller
from services.table.refusals import quarantined
from services.table.runtime import TableQuarantined

_CALLER: ContextVar[Caller] = ContextVar("felt_table_caller", default=ANONYMOUS)


def current_caller() -> Caller:
    """Who makes the current call (:func:`auth_interceptor`); anonymous outside a call."""
    return _CALLER.get()


def seat_of(request: Message) -> int | None:
    """The seat a request names for its log lines: a plain ``seat`` always, an optional one
    only when set (None: the request names no seat)."""
    field = request.DESCRIPTOR.fields_by_name.get("seat")
    if field is None:
        return None
    if field.has_presence and not request.HasField("seat"):
        return None
    return int(getattr(request, "seat"))  # noqa: B009 - the field's name is data here


def _log_fields(request: Any, method: str) -> Mapping[str, object]:
    table_id = request.table_id[: limits.LOGGED_ID_MAX]  # unchecked yet: log no megabytes
    fields: dict[str, object] = {"table_id": table_id, "hand_id": ...}
    seat = seat_of(request)
    if seat is not None:
        fields["seat"] = seat
    request_id = getattr(request, "request_id", "")  # every mutation's; retries share it
    if request_id:
        fields["request_id"] = request_id[: limits.LOGGED_ID_MAX]
    return fields


def _refusal(error: Exception) -> Refused | None:
    return quarantined(error) if isinstance(error, TableQuarantined) else None


def call_interceptor(service: str, metrics: RpcMetrics | None = None) -> kit.CallInterceptor:
    """Log context, deadline, status mapping and (given ``metrics``) the RPC metrics for the
    methods of ``service``."""
    return kit.CallInterceptor(
        service,
        logger="felt.table",
        log_fields=_log_fields,
        refusal=_refusal,
        unavailable=REDIS_ERRORS,
        unavailable_message="the table's storage is unreachable; retry shortly",
        metrics=metrics,
    )


def auth_interceptor(
    service: str, authenticator: Authenticator, proxies: TrustedProxies | None = None
) -> kit.AuthInterceptor[Caller]:
    """Puts the caller the bearer token (and the seat-token header) make where handlers read
    it (:func:`current_caller`)."""
    return kit.bearer_interceptor(
        service,
        lambda token, metadata, client: authenticator.authenticate(
            token, header(metadata, SEAT_TOKEN_HEADER), client
        ),
        _CALLER,
        proxies,
    )
