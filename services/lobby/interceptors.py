"""The lobby's calls through the shared RPC kit (``felt.service.interceptors``).

What is the lobby's own: the log context of a call (``rpc``, the method's name; then
``player_id`` once the caller is known), what an unreachable database is (a
connection lost or refused, too many connections, or a transaction PostgreSQL rolled
back: UNAVAILABLE, retry with the same request_id), and the
:class:`~services.lobby.auth.Caller` a call's bearer token makes
(:func:`current_caller`). The kit does the rest, as for the table service: deadline,
status mapping (refusals, values out of bounds, a reused request id), the auth-attempt
throttle (RESOURCE_EXHAUSTED ``AUTH_THROTTLED``, ``felt.wire.attempts``).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

import asyncpg

from felt.service import interceptors as kit
from felt.service.metrics import RpcMetrics
from felt.wire import limits
from felt.wire.clients import TrustedProxies
from services.lobby.auth import ANONYMOUS, Authenticator, Caller

_CALLER: ContextVar[Caller] = ContextVar("felt_lobby_caller", default=ANONYMOUS)

_UNAVAILABLE = (
    OSError,
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.TooManyConnectionsError,
    asyncpg.CannotConnectNowError,
    asyncpg.TransactionRollbackError,
)


def current_caller() -> Caller:
    """Who makes the current call (:func:`auth_interceptor`); anonymous outside a call."""
    return _CALLER.get()


def _log_fields(request: Any, method: str) -> Mapping[str, object]:
    request_id = getattr(request, "request_id", "")  # every mutation's; retries share it
    if request_id:
        return {"rpc": method, "request_id": request_id[: limits.LOGGED_ID_MAX]}
    return {"rpc": method}


def _player(caller: Caller) -> Mapping[str, object]:
    return {"player_id": caller.claim.player_id if caller.claim is not None else ""}


def call_interceptor(service: str, metrics: RpcMetrics | None = None) -> kit.CallInterceptor:
    """Log context, deadline, status mapping and (given ``metrics``) the RPC metrics for the
    methods of ``service``."""
    return kit.CallInterceptor(
        service,
        logger="felt.lobby",
        log_fields=_log_fields,
        refusal=lambda error: None,  # the lobby's refusals are all the kit's
        unavailable=_UNAVAILABLE,
        unavailable_message=(
            "the lobby's database is unavailable; retry shortly with the same request_id"
        ),
        metrics=metrics,
    )


def auth_interceptor(
    service: str, authenticator: Authenticator, proxies: TrustedProxies | None = None
) -> kit.AuthInterceptor[Caller]:
    """Puts the caller the bearer token makes where handlers read it (:func:`current_caller`)."""
    return kit.bearer_interceptor(
        service,
        lambda token, _metadata, client: authenticator.authenticate(token, client),
        _CALLER,
        proxies,
        _player,
    )
