"""How a lobby refusal reaches a gRPC client: status code, message and ``ErrorInfo`` reason
(domain ``felt.poker``, as the table service's)."""

from __future__ import annotations

from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]
from grpc_status import rpc_status  # type: ignore[import-untyped]

from services.lobby.refusals import Refused

Context = grpc.aio.ServicerContext[Any, Any]


async def fail(context: Context, error: Refused) -> None:
    """End the call with ``error``'s status (raises gRPC's abort)."""
    status = status_pb2.Status(code=error.code.value, message=error.message)
    if error.reason:
        info = error_details_pb2.ErrorInfo(reason=error.reason, domain="felt.poker")
        status.details.add().Pack(info)
    await context.abort_with_status(rpc_status.to_status(status))
