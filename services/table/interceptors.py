"""Cross-cutting concerns of the table service's calls, as ``grpc.aio`` server interceptors.

Both wrap every method of ``poker.v1.TableService``, unary and streaming
(``WatchTable``) alike, once per method (the wrapped handler is cached), so
that handlers only translate and call the use cases
(``services.table.application``, ``services.table.queries``).

``CallInterceptor``, the outer one, per call:

* binds the log context: ``table_id`` (cut to ``limits.LOGGED_ID_MAX``: it is
  unchecked yet), ``seat`` when the request names one, and ``hand_id`` unbound
  (``...``) until the table is known; reset afterwards (structlog's
  ``bound_contextvars`` does the same but copies the whole context twice);
* refuses a call whose deadline has already passed (DEADLINE_EXCEEDED) before
  any work: its client has given up, and a mutation must not start then;
* maps what the call raised (a unary call, or a stream before or between its
  messages) to the status the client gets (``services.table.errors``): a
  :class:`~services.table.refusals.Refused`, a value out of its bounds
  (INVALID_ARGUMENT), a quarantined table (FAILED_PRECONDITION
  ``TABLE_QUARANTINED``), unreachable storage (UNAVAILABLE), anything else
  (INTERNAL, logged with its traceback).

``AuthInterceptor``, the inner one, reads the bearer token once and puts the
:class:`~services.table.auth.Caller` it makes where the handler reads it
(:func:`current_caller`). It refuses nothing itself but a client whose failed
attempts are past their allowance (RESOURCE_EXHAUSTED ``AUTH_THROTTLED``,
counted by the client's address, ``felt.wire.attempts``): what a call needs
(the admin, a seat's token, its occupant) is checked by the use case, in the
order the call's refusals have always come in.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator
from contextvars import ContextVar
from typing import Any

import grpc
import structlog
from google.protobuf.message import Message
from redis.exceptions import RedisError
from structlog.contextvars import bind_contextvars, reset_contextvars

from felt.wire import limits
from felt.wire.clients import TrustedProxies, counted_peer
from services.table.auth import ANONYMOUS, Authenticator, Caller, bearer, seat_token_header
from services.table.errors import Context, fail
from services.table.refusals import Code, Refused, invalid, quarantined
from services.table.runtime import TableQuarantined

log = structlog.get_logger("felt.table")

Unary = Callable[[Any, Context], Awaitable[Any]]
Stream = Callable[[Any, Context], AsyncGenerator[Any]]
_HANDLER = Any  # grpc.RpcMethodHandler (its stubs type the behaviours as synchronous)

_CALLER: ContextVar[Caller] = ContextVar("felt_table_caller", default=ANONYMOUS)


def current_caller() -> Caller:
    """Who makes the current call (``AuthInterceptor``); anonymous outside a call."""
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


class _MethodInterceptor(grpc.aio.ServerInterceptor):
    """Wraps the unary and server-streaming methods of one service, once per method."""

    def __init__(self, service: str) -> None:
        self.prefix = f"/{service}/"
        self._wrapped: dict[str, tuple[_HANDLER, _HANDLER]] = {}

    def unary(self, behavior: Unary) -> Unary:
        raise NotImplementedError

    def stream(self, behavior: Stream) -> Stream:
        raise NotImplementedError

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[_HANDLER | None]],
        details: grpc.HandlerCallDetails,
    ) -> _HANDLER | None:
        handler = await continuation(details)
        method: str = details.method
        if handler is None or not method.startswith(self.prefix):
            return handler
        cached = self._wrapped.get(method)
        if cached is not None and cached[0] is handler:
            return cached[1]
        if handler.unary_unary is not None:
            wrapped = grpc.unary_unary_rpc_method_handler(
                self.unary(handler.unary_unary),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        elif handler.unary_stream is not None:
            wrapped = grpc.unary_stream_rpc_method_handler(
                self.stream(handler.unary_stream),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        else:
            return handler  # client streaming: none in this service
        self._wrapped[method] = (handler, wrapped)
        return wrapped


class CallInterceptor(_MethodInterceptor):
    """Log context, deadline and status mapping for the methods of ``service``."""

    def unary(self, behavior: Unary) -> Unary:
        async def guarded(request: Any, context: Context) -> Any:
            with _call_context(request, context):
                try:
                    _check_deadline(context)
                    return await behavior(request, context)
                except Exception as exc:
                    await fail(context, _refusal(exc))
            raise AssertionError("unreachable")  # pragma: no cover - fail raises

        return guarded

    def stream(self, behavior: Stream) -> Stream:
        async def guarded(request: Any, context: Context) -> AsyncGenerator[Any]:
            with _call_context(request, context):
                try:
                    _check_deadline(context)
                    async with contextlib.aclosing(behavior(request, context)) as messages:
                        async for message in messages:
                            yield message
                except Exception as exc:
                    await fail(context, _refusal(exc))

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

    def _caller(self, context: Context) -> Caller:
        metadata = context.invocation_metadata()
        token = bearer(metadata)
        client = counted_peer(self.proxies.caller(context)) if token else ""
        return self.authenticator.authenticate(token, seat_token_header(metadata), client)

    def unary(self, behavior: Unary) -> Unary:
        async def authenticated(request: Any, context: Context) -> Any:
            token = _CALLER.set(self._caller(context))
            try:
                return await behavior(request, context)
            finally:
                _CALLER.reset(token)

        return authenticated

    def stream(self, behavior: Stream) -> Stream:
        async def authenticated(request: Any, context: Context) -> AsyncGenerator[Any]:
            token = _CALLER.set(self._caller(context))
            try:
                async with contextlib.aclosing(behavior(request, context)) as messages:
                    async for message in messages:
                        yield message
            finally:
                with contextlib.suppress(ValueError):  # finalized in another context
                    _CALLER.reset(token)

        return authenticated


@contextlib.contextmanager
def _call_context(request: Any, context: Context) -> Iterator[None]:
    """The call's log context, for as long as it runs."""
    table_id = request.table_id[: limits.LOGGED_ID_MAX]  # unchecked yet: log no megabytes
    seat = seat_of(request)
    if seat is None:
        tokens = bind_contextvars(table_id=table_id, hand_id=...)
    else:
        tokens = bind_contextvars(table_id=table_id, seat=seat, hand_id=...)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):  # a stream finalized in another context
            reset_contextvars(**tokens)


def _check_deadline(context: Context) -> None:
    remaining = context.time_remaining()
    if remaining is not None and remaining <= 0:
        raise Refused(Code.DEADLINE_EXCEEDED, "the call's deadline has passed")


def _refusal(error: Exception) -> Refused:
    """What the client is told about ``error`` (logged here; gRPC's own aborts pass)."""
    if isinstance(error, grpc.aio.AbortError):
        raise error  # the call was ended with its status already (e.g. a watcher dropped)
    if isinstance(error, Refused | limits.LimitError | TableQuarantined):
        if isinstance(error, limits.LimitError):
            exc = invalid(error)
        elif isinstance(error, TableQuarantined):
            exc = quarantined(error)
        else:
            exc = error
        log.info("request_refused", code=exc.code.name, reason=exc.reason, detail=exc.message)
        return exc
    if isinstance(error, RedisError | OSError):
        log.warning("storage_unavailable", error=repr(error))
        return Refused(Code.UNAVAILABLE, "the table's storage is unreachable; retry shortly")
    log.exception("request_failed")
    return Refused(Code.INTERNAL, "internal error")
