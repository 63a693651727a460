"""Cross-cutting concerns of the table service's calls, as ``grpc.aio`` server interceptors.

``CallInterceptor`` wraps every unary ``poker.v1.TableService`` method once
(the wrapped handler is cached per method) so that handlers only translate
and call the use cases. Per call it:

* binds the log context: ``table_id`` (cut to ``limits.LOGGED_ID_MAX``: it is
  unchecked yet), ``seat`` when the request names one, and ``hand_id`` unbound
  (``...``) until the table is known; reset afterwards (structlog's
  ``bound_contextvars`` does the same but copies the whole context twice);
* refuses a call whose deadline has already passed (DEADLINE_EXCEEDED) before
  any work: its client has given up, and a mutation must not start then;
* maps what the call raised to the status the client gets
  (``services.table.errors``): a :class:`~services.table.errors.Refused`, a
  value out of its bounds (INVALID_ARGUMENT), a quarantined table
  (FAILED_PRECONDITION ``TABLE_QUARANTINED``), unreachable storage
  (UNAVAILABLE), anything else (INTERNAL, logged with its traceback).

The streaming method (``WatchTable``) is left to its handler, which keeps its
own refusals (admission limits, slow readers) and messages.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import structlog
from google.protobuf.message import Message
from redis.exceptions import RedisError
from structlog.contextvars import bind_contextvars, reset_contextvars

from felt.api import limits
from services.table.errors import Context, Refused, fail, invalid, quarantined
from services.table.runtime import TableQuarantined

log = structlog.get_logger("felt.table")

Unary = Callable[[Any, Context], Awaitable[Any]]
_HANDLER = Any  # grpc.RpcMethodHandler (its stubs type the behaviours as synchronous)


def seat_of(request: Message) -> int | None:
    """The seat a request names for its log lines: a plain ``seat`` always, an optional one
    only when set (None: the request names no seat)."""
    field = request.DESCRIPTOR.fields_by_name.get("seat")
    if field is None:
        return None
    if field.has_presence and not request.HasField("seat"):
        return None
    return int(getattr(request, "seat"))  # noqa: B009 - the field's name is data here


class CallInterceptor(grpc.aio.ServerInterceptor):
    """Log context, deadline and status mapping for the unary methods of ``service``."""

    def __init__(self, service: str) -> None:
        self.prefix = f"/{service}/"
        self._wrapped: dict[str, tuple[_HANDLER, _HANDLER]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[_HANDLER | None]],
        details: grpc.HandlerCallDetails,
    ) -> _HANDLER | None:
        handler = await continuation(details)
        method: str = details.method
        if handler is None or handler.unary_unary is None or not method.startswith(self.prefix):
            return handler
        cached = self._wrapped.get(method)
        if cached is not None and cached[0] is handler:
            return cached[1]
        wrapped = grpc.unary_unary_rpc_method_handler(
            _guarded(handler.unary_unary),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
        self._wrapped[method] = (handler, wrapped)
        return wrapped


def _guarded(behavior: Unary) -> Unary:
    async def guarded(request: Any, context: Context) -> Any:
        table_id = request.table_id[: limits.LOGGED_ID_MAX]  # unchecked yet: log no megabytes
        seat = seat_of(request)
        if seat is None:
            tokens = bind_contextvars(table_id=table_id, hand_id=...)
        else:
            tokens = bind_contextvars(table_id=table_id, seat=seat, hand_id=...)
        try:
            remaining = context.time_remaining()
            if remaining is not None and remaining <= 0:
                raise Refused(grpc.StatusCode.DEADLINE_EXCEEDED, "the call's deadline has passed")
            return await behavior(request, context)
        except (Refused, limits.LimitError, TableQuarantined) as refused:
            if isinstance(refused, limits.LimitError):
                exc = invalid(refused)
            elif isinstance(refused, TableQuarantined):
                exc = quarantined(refused)
            else:
                exc = refused
            log.info("request_refused", code=exc.code.name, reason=exc.reason, detail=exc.message)
            await fail(context, exc)
        except (RedisError, OSError) as exc:
            log.warning("storage_unavailable", error=repr(exc))
            await fail(
                context,
                Refused(
                    grpc.StatusCode.UNAVAILABLE,
                    "the table's storage is unreachable; retry shortly",
                ),
            )
        except Exception:
            log.exception("request_failed")
            await fail(context, Refused(grpc.StatusCode.INTERNAL, "internal error"))
        finally:
            reset_contextvars(**tokens)
        raise AssertionError("unreachable")  # pragma: no cover - fail raises

    return guarded
