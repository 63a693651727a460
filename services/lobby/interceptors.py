"""Cross-cutting concerns of the lobby's calls, as ``grpc.aio`` server interceptors.

As the table service's (``services/table/interceptors.py``), once per method:

``CallInterceptor``, the outer one: binds the log context (``rpc``), refuses a
call whose deadline has already passed (DEADLINE_EXCEEDED) before any work,
and maps what the call raised to the status the client gets
(``services.lobby.errors``): a :class:`~services.lobby.refusals.Refused`, a
value out of its bounds or a reused request id (INVALID_ARGUMENT), an
unreachable database or a transaction PostgreSQL rolled back (UNAVAILABLE:
retry with the same request_id), anything else (INTERNAL, logged with its
traceback).

``AuthInterceptor``, the inner one: reads the bearer token once, puts the
:class:`~services.lobby.auth.Caller` where handlers read it
(:func:`current_caller`) and binds ``player_id`` to the log context. It
refuses nothing but a client whose failed attempts are past their allowance
(RESOURCE_EXHAUSTED ``AUTH_THROTTLED``, counted by the client's address,
``felt.wire.attempts``): what a call needs is checked by its use case.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

import asyncpg
import grpc
import structlog
from structlog.contextvars import bind_contextvars, reset_contextvars

from felt.wire.clients import TrustedProxies, counted_peer
from services.lobby.auth import ANONYMOUS, Authenticator, Caller, bearer
from services.lobby.errors import Context, fail
from services.lobby.refusals import Code, Refused, refusal

log = structlog.get_logger("felt.lobby")

Unary = Callable[[Any, Context], Awaitable[Any]]
_HANDLER = Any  # grpc.RpcMethodHandler

_CALLER: ContextVar[Caller] = ContextVar("felt_lobby_caller", default=ANONYMOUS)


def current_caller() -> Caller:
    """Who makes the current call (``AuthInterceptor``); anonymous outside a call."""
    return _CALLER.get()


class _MethodInterceptor(grpc.aio.ServerInterceptor):
    """Wraps the unary methods of one service, once per method (the lobby streams nothing)."""

    def __init__(self, service: str) -> None:
        self.prefix = f"/{service}/"
        self._wrapped: dict[str, tuple[_HANDLER, _HANDLER]] = {}

    def unary(self, behavior: Unary, method: str) -> Unary:
        raise NotImplementedError

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[_HANDLER | None]],
        details: grpc.HandlerCallDetails,
    ) -> _HANDLER | None:
        handler = await continuation(details)
        method: str = details.method
        if handler is None or not method.startswith(self.prefix) or handler.unary_unary is None:
            return handler
        cached = self._wrapped.get(method)
        if cached is not None and cached[0] is handler:
            return cached[1]
        wrapped = grpc.unary_unary_rpc_method_handler(
            self.unary(handler.unary_unary, method[len(self.prefix) :]),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
        self._wrapped[method] = (handler, wrapped)
        return wrapped


class CallInterceptor(_MethodInterceptor):
    """Log context, deadline and status mapping for the methods of ``service``."""

    def unary(self, behavior: Unary, method: str) -> Unary:
        async def guarded(request: Any, context: Context) -> Any:
            tokens = bind_contextvars(rpc=method)
            try:
                remaining = context.time_remaining()
                if remaining is not None and remaining <= 0:
                    raise Refused(Code.DEADLINE_EXCEEDED, "the call's deadline has passed")
                return await behavior(request, context)
            except Exception as exc:
                await fail(context, _status(exc))
            finally:
                reset_contextvars(**tokens)
            raise AssertionError("unreachable")  # pragma: no cover - fail raises

        return guarded


class AuthInterceptor(_MethodInterceptor):
    """Puts the caller the bearer token makes where handlers read it (:func:`current_caller`)."""

    def __init__(
        self,
        service: str,
        authenticator: Authenticator,
        proxies: TrustedProxies | None = None,
    ) -> None:
        super().__init__(service)
        self.authenticator = authenticator
        self.proxies = proxies if proxies is not None else TrustedProxies()

    def unary(self, behavior: Unary, method: str) -> Unary:
        async def authenticated(request: Any, context: Context) -> Any:
            sent = bearer(context.invocation_metadata())
            client = counted_peer(self.proxies.caller(context)) if sent else ""
            caller = self.authenticator.authenticate(sent, client)
            token = _CALLER.set(caller)
            player = caller.claim.player_id if caller.claim is not None else ""
            bound = bind_contextvars(player_id=player)
            try:
                return await behavior(request, context)
            finally:
                reset_contextvars(**bound)
                _CALLER.reset(token)

        return authenticated


def _status(error: Exception) -> Refused:
    """What the client is told about ``error`` (logged here; gRPC's own aborts pass)."""
    if isinstance(error, grpc.aio.AbortError):
        raise error
    refused = refusal(error)
    if refused is not None:
        log.info("request_refused", code=refused.code.name, reason=refused.reason)
        return refused
    if isinstance(
        error,
        OSError
        | asyncpg.PostgresConnectionError
        | asyncpg.InterfaceError
        | asyncpg.TooManyConnectionsError
        | asyncpg.CannotConnectNowError
        | asyncpg.TransactionRollbackError,
    ):
        log.warning("storage_unavailable", error=repr(error))
        return Refused(
            Code.UNAVAILABLE,
            "the lobby's database is unavailable; retry shortly with the same request_id",
        )
    log.exception("request_failed")
    return Refused(Code.INTERNAL, "internal error")
