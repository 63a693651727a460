"""Cross-cutting concerns of a service's calls, as ``grpc.aio`` server interceptors.

Both wrap every unary and server-streaming method of one gRPC service, once per
method (the wrapped handler is cached), so that handlers only translate and call
the use cases. A service composes them with what is its own: the log context of a
call, the refusals its own errors are, what "storage unreachable" means for it, and
how it authenticates.

``CallInterceptor``, the outer one, per call:

* binds the log context the service derives from the request and method, reset
  afterwards (structlog's ``bound_contextvars`` does the same but copies the whole
  context twice);
* refuses a call whose deadline has already passed (DEADLINE_EXCEEDED) before any
  work: its client has given up, and a mutation must not start then;
* maps what the call raised (a unary call, or a stream before or between its
  messages) to the status the client gets (:func:`felt.service.rpc.fail`): a
  refusal (:func:`~felt.service.refusals.common_refusal`, then the service's own),
  unreachable storage (UNAVAILABLE, the service's message), anything else
  (INTERNAL, logged with its traceback). gRPC's own aborts pass untouched;
* records the call in the process's :class:`~felt.service.metrics.RpcMetrics`, when it
  is given one: its method, the status code it ended with and how long it took (a
  stream when it ends: ``CANCELLED`` when its client went away).

``AuthInterceptor``, the inner one, authenticates the caller once (the service's
``authenticate``, which reads the bearer token and counts a bad one against the
client's address, refusing RESOURCE_EXHAUSTED ``AUTH_THROTTLED`` past its allowance:
:mod:`felt.service.bearer`) and puts the caller in a
context variable the handlers read; what a call needs is checked by its use case.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Mapping
from contextvars import ContextVar
from typing import Any, Generic, TypeVar

import grpc
import structlog
from structlog.contextvars import bind_contextvars, reset_contextvars

from felt.service.bearer import Metadata, bearer
from felt.service.metrics import RpcMetrics
from felt.service.refusals import Code, Refused, common_refusal
from felt.service.rpc import Context, fail
from felt.wire.clients import TrustedProxies, counted_peer
from poker.v1.reason_pb2 import Reason

Unary = Callable[[Any, Context], Awaitable[Any]]
Stream = Callable[[Any, Context], AsyncGenerator[Any]]
_HANDLER = Any  # grpc.RpcMethodHandler (its stubs type the behaviours as synchronous)

LogFields = Callable[[Any, str], Mapping[str, object]]
"""The log context of a call: (request, method name) -> fields to bind."""
Refusal = Callable[[Exception], Refused | None]
"""The refusal a service-specific error is, or None (not a refusal of this service)."""
C = TypeVar("C")


class Frame:
    """A response already encoded, its ``data`` sent as it is (:func:`frames_as_they_are`).

    Its own type, so that only what was made to be sent as bytes skips the serializer:
    a handler that yields plain ``bytes`` by mistake gets the serializer's error, never
    its bytes on the wire unchecked. A wrapper, not a ``bytes`` subclass: gRPC's writer
    takes exactly ``bytes`` from a serializer.
    """

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


def frames_as_they_are(
    serialize: Callable[[Any], bytes] | None,
) -> Callable[[Any], bytes] | None:
    """A stream's response serializer that sends a :class:`Frame` as it is: a message
    encoded once for many streams (the table service's spectators' frames, issue #23);
    anything else is serialized as before."""
    if serialize is None:
        return None

    def serializer(message: Any) -> bytes:
        return message.data if isinstance(message, Frame) else serialize(message)

    return serializer


class MethodInterceptor(grpc.aio.ServerInterceptor):
    """Wraps the unary and server-streaming methods of one service, once per method."""

    def __init__(self, service: str) -> None:
        self.service = service
        self.prefix = f"/{service}/"
        self._wrapped: dict[str, tuple[_HANDLER, _HANDLER]] = {}

    def unary(self, behavior: Unary, method: str) -> Unary:
        raise NotImplementedError

    def stream(self, behavior: Stream, method: str) -> Stream:
        raise NotImplementedError

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[_HANDLER | None]],
        details: grpc.HandlerCallDetails,
    ) -> _HANDLER | None:
        handler = await continuation(details)
        full: str = details.method
        if handler is None or not full.startswith(self.prefix):
            return handler
        cached = self._wrapped.get(full)
        if cached is not None and cached[0] is handler:
            return cached[1]
        method = full[len(self.prefix) :]
        if handler.unary_unary is not None:
            wrapped = grpc.unary_unary_rpc_method_handler(
                self.unary(handler.unary_unary, method),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        elif handler.unary_stream is not None:
            wrapped = grpc.unary_stream_rpc_method_handler(
                self.stream(handler.unary_stream, method),
                request_deserializer=handler.request_deserializer,
                response_serializer=frames_as_they_are(handler.response_serializer),
            )
        else:
            return handler  # client streaming: no Felt service has any
        self._wrapped[full] = (handler, wrapped)
        return wrapped


class CallInterceptor(MethodInterceptor):
    """Log context, deadline and status mapping for the methods of ``service``."""

    def __init__(
        self,
        service: str,
        *,
        logger: str,
        log_fields: LogFields,
        refusal: Refusal,
        unavailable: tuple[type[BaseException], ...],
        unavailable_message: str,
        metrics: RpcMetrics | None = None,
    ) -> None:
        super().__init__(service)
        self.log = structlog.get_logger(logger)
        self.log_fields, self.refusal = log_fields, refusal
        self.unavailable, self.unavailable_message = unavailable, unavailable_message
        self.metrics = metrics

    def unary(self, behavior: Unary, method: str) -> Unary:
        async def guarded(request: Any, context: Context) -> Any:
            async with _Guarded(self, request, method, context):
                _check_deadline(context)
                return await behavior(request, context)
            raise AssertionError("unreachable")  # pragma: no cover - fail raises

        return guarded

    def stream(self, behavior: Stream, method: str) -> Stream:
        async def guarded(request: Any, context: Context) -> AsyncGenerator[Any]:
            async with _Guarded(self, request, method, context):
                _check_deadline(context)
                async with contextlib.aclosing(behavior(request, context)) as messages:
                    async for message in messages:
                        yield message

        return guarded

    def _status(self, error: Exception) -> Refused:
        """What the client is told about ``error`` (logged here; gRPC's own aborts pass)."""
        if isinstance(error, grpc.aio.AbortError):
            raise error  # the call was ended with its status already (e.g. a watcher dropped)
        refused = common_refusal(error) or self.refusal(error)
        if refused is not None:
            self.log.info(
                "request_refused",
                code=refused.code.name,
                reason=refused.reason,
                detail=refused.message,
            )
            return refused
        if isinstance(error, self.unavailable):
            self.log.warning("storage_unavailable", error=repr(error))
            # With its reason (an ErrorInfo): the service answered, so a router keeps it as
            # the table's owner rather than marking a live instance unreachable.
            return Refused(Code.UNAVAILABLE, self.unavailable_message, Reason.STORAGE_UNAVAILABLE)
        self.log.exception("request_failed")
        return Refused(Code.INTERNAL, "internal error")


class _Guarded:
    """One call of a :class:`CallInterceptor`, unary or a stream alike (``async with``
    around its work): its log context bound for as long as it runs, what it raised mapped
    to the status its client gets (:meth:`CallInterceptor._status`; gRPC's own aborts,
    a cancellation and a stream closed early pass), and the call recorded in the metrics.
    A class rather than ``asynccontextmanager``: it runs on every call."""

    __slots__ = ("call", "context", "method", "request", "started", "tokens")

    def __init__(self, call: CallInterceptor, request: Any, method: str, context: Context) -> None:
        self.call, self.request, self.method, self.context = call, request, method, context
        self.started = 0.0
        self.tokens: Mapping[str, Any] = {}

    async def __aenter__(self) -> None:
        self.started = time.perf_counter()
        self.tokens = bind_contextvars(**self.call.log_fields(self.request, self.method))

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: object
    ) -> bool:
        try:
            if isinstance(error, grpc.aio.AbortError | asyncio.CancelledError | GeneratorExit):
                self._observe(_ended(self.context, error))
            elif isinstance(error, Exception):
                refused = self.call._status(error)
                # Counted before the status goes out: ``fail`` (gRPC's ``abort``) sends it and
                # only then returns here, so a client that has its answer and reads /metrics at
                # once would not find its call counted yet.
                self._observe(refused.code.name)
                await fail(self.context, refused)  # raises: the call ends with this status
                return True  # pragma: no cover - fail raises
            else:
                self._observe("OK")
            return False
        finally:
            with contextlib.suppress(ValueError):  # a stream finalized in another context
                reset_contextvars(**self.tokens)

    def _observe(self, code: str) -> None:
        metrics = self.call.metrics
        if metrics is not None:
            metrics.observe_rpc(
                self.call.service,
                self.method,
                code,
                time.perf_counter() - self.started,
                self.request,
            )


_STATUS_NAMES = {status.value[0]: status.name for status in grpc.StatusCode}


def _ended(context: Context, error: BaseException) -> str:
    """The status code of a call gRPC ended itself: an abort's (already on the context),
    or ``CANCELLED`` when the client went away."""
    if isinstance(error, grpc.aio.AbortError):
        with contextlib.suppress(Exception):  # code() is recent in grpc.aio
            code = context.code()
            if isinstance(code, grpc.StatusCode):
                return code.name
            if isinstance(code, int):
                return _STATUS_NAMES.get(code, "UNKNOWN")
        return "UNKNOWN"
    return "CANCELLED"


def _check_deadline(context: Context) -> None:
    remaining = context.time_remaining()
    if remaining is not None and remaining <= 0:
        raise Refused(Code.DEADLINE_EXCEEDED, "the call's deadline has passed")


class AuthInterceptor(MethodInterceptor, Generic[C]):
    """Puts the caller ``authenticate`` makes of a call into ``caller`` (a context
    variable the handlers read), with ``log_fields(caller)`` bound to the log context."""

    def __init__(
        self,
        service: str,
        authenticate: Callable[[Context], C],
        caller: ContextVar[C],
        log_fields: Callable[[C], Mapping[str, object]] | None = None,
    ) -> None:
        super().__init__(service)
        self.authenticate, self.caller, self.log_fields = authenticate, caller, log_fields

    @contextlib.contextmanager
    def _as_caller(self, context: Context) -> Iterator[None]:
        caller = self.authenticate(context)
        token = self.caller.set(caller)
        bound = bind_contextvars(**self.log_fields(caller)) if self.log_fields else {}
        try:
            yield
        finally:
            with contextlib.suppress(ValueError):  # a stream finalized in another context
                reset_contextvars(**bound)
            with contextlib.suppress(ValueError):
                self.caller.reset(token)

    def unary(self, behavior: Unary, method: str) -> Unary:
        async def authenticated(request: Any, context: Context) -> Any:
            with self._as_caller(context):
                return await behavior(request, context)

        return authenticated

    def stream(self, behavior: Stream, method: str) -> Stream:
        async def authenticated(request: Any, context: Context) -> AsyncGenerator[Any]:
            with self._as_caller(context):
                async with contextlib.aclosing(behavior(request, context)) as messages:
                    async for message in messages:
                        yield message

        return authenticated


def bearer_interceptor(
    service: str,
    authenticate: Callable[[str, Metadata, str], C],
    caller: ContextVar[C],
    proxies: TrustedProxies | None = None,
    log_fields: Callable[[C], Mapping[str, object]] | None = None,
) -> AuthInterceptor[C]:
    """An :class:`AuthInterceptor` for a service whose callers send a bearer token: the
    service's ``authenticate(token, metadata, client)`` makes the caller, ``client`` the
    address a bad token counts against (the peer, or the client a trusted proxy of
    ``proxies`` names; ``""`` when no token was sent: nothing to count)."""
    trusted = proxies if proxies is not None else TrustedProxies()

    def from_call(context: Context) -> C:
        metadata = context.invocation_metadata()
        token = bearer(metadata)
        client = counted_peer(trusted.caller(context)) if token else ""
        return authenticate(token, metadata, client)

    return AuthInterceptor(service, from_call, caller, log_fields)
