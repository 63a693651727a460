"""A gRPC status, as the service sent it, in Connect's terms; and the gateway's own refusals.

The services' status codes map one to one onto Connect's codes (the Connect
protocol took gRPC's list; only ``CANCELLED`` is spelled ``canceled``). Their
``google.rpc.ErrorInfo`` (the reason a client acts on, e.g. ``NOT_YOUR_TURN``)
travels in the ``grpc-status-details-bin`` trailer as a ``google.rpc.Status``;
each of its details is handed on as it came, an ``Any`` of the same type and
bytes, so a Connect client finds the same ``ErrorInfo`` a gRPC client would.
"""

from __future__ import annotations

import grpc
import structlog
from connectrpc.code import Code
from connectrpc.errors import ConnectError, ErrorDetail
from google.protobuf.message import DecodeError
from google.rpc import status_pb2  # type: ignore[import-untyped]
from protobuf.wkt import Any as AnyDetail

from felt.service.refusals import ReasonValue, error_info, reason_name

log = structlog.get_logger("felt.gateway")

_DETAILS_KEY = "grpc-status-details-bin"

_CODES: dict[grpc.StatusCode, Code] = {
    status: Code[status.name if status is not grpc.StatusCode.CANCELLED else "CANCELED"]
    for status in grpc.StatusCode
    if status is not grpc.StatusCode.OK
}


def connect_code(status: grpc.StatusCode) -> Code:
    """The Connect code of a gRPC status (OK, which is never an error, as UNKNOWN)."""
    return _CODES.get(status, Code.UNKNOWN)


def from_grpc(error: grpc.aio.AioRpcError) -> ConnectError:
    """What the client is told about a call the service ended with ``error``."""
    code = connect_code(error.code())
    message = error.details() or ""
    if code is Code.UNAVAILABLE and not _has_details(error):
        # The channel's own failure (no service answered): say which side failed. Its text
        # ("failed to connect to all addresses; last error: ... ipv4:10.1.2.3:50051: ...")
        # names the cluster's addresses: logged here, never told to a client.
        log.warning("gateway_upstream_unreachable", error=message)
        message = "the service is unreachable from the gateway; retry shortly"
    return ConnectError(code, message, _details(error))


def _trailer(error: grpc.aio.AioRpcError) -> bytes | None:
    for key, value in error.trailing_metadata() or ():
        if key == _DETAILS_KEY and isinstance(value, bytes):
            return value
    return None


def _has_details(error: grpc.aio.AioRpcError) -> bool:
    return _trailer(error) is not None


def _details(error: grpc.aio.AioRpcError) -> list[ErrorDetail]:
    raw = _trailer(error)
    if raw is None:
        return []
    status = status_pb2.Status()
    try:
        status.ParseFromString(raw)
    except DecodeError:
        return []
    return [ErrorDetail(AnyDetail(type_url=d.type_url, value=d.value)) for d in status.details]


def refused(code: Code, message: str, reason: ReasonValue) -> ConnectError:
    """A refusal of the gateway's own, with an ``ErrorInfo`` as the services send theirs
    (:func:`felt.service.refusals.error_info`)."""
    info = error_info(reason_name(reason))
    detail = AnyDetail(
        type_url="type.googleapis.com/google.rpc.ErrorInfo", value=info.SerializeToString()
    )
    return ConnectError(code, message, [ErrorDetail(detail)])


def internal(exc: Exception) -> ConnectError:
    """What the client is told of the gateway's own failure ``exc`` (logged with its
    traceback): INTERNAL and no more. The Connect library would send ``str(exc)`` as the
    message of any other exception (a path, an address, a library's words)."""
    log.error("gateway_internal_error", exc_info=exc)
    return ConnectError(Code.INTERNAL, "internal error in the gateway")
