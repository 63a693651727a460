"""How a refusal reaches a gRPC client: status code, message and ``ErrorInfo`` reason.

The use cases raise :class:`~services.table.refusals.Refused` (gRPC-free);
``services.table.interceptors`` calls :func:`fail` with it, so that this
mapping lives here, once. ``ErrorInfo.domain`` is ``felt.poker``.
"""

from __future__ import annotations

from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]
from grpc_status import rpc_status  # type: ignore[import-untyped]

from services.table.refusals import Refused

Context = grpc.aio.ServicerContext[Any, Any]


def status_code(refused: Refused) -> grpc.StatusCode:
    """The gRPC status code of a refusal (the codes share their names)."""
    return grpc.StatusCode[refused.code.name]


async def fail(context: Context, error: Refused) -> None:
    """End the call with ``error``'s status (raises gRPC's abort)."""
    status = status_pb2.Status(code=error.code.value, message=error.message)
    if error.reason:
        info = error_details_pb2.ErrorInfo(reason=error.reason, domain="felt.poker")
        status.details.add().Pack(info)
    await context.abort_with_status(rpc_status.to_status(status))
