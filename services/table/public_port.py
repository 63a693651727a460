"""The table service's public port, when it also has an internal one (``FELT_TABLE_INTERNAL_ADDR``).

The internal calls (``felt.wire.access.SERVICE_ONLY``: seating, chips, closing,
watch grants) always need the service credential, and the gateway never forwards
them. With an internal port as well, the public port (``FELT_TABLE_ADDR``, the one
the gateway reaches) does not serve them at all: they are ``PERMISSION_DENIED``
before any credential is looked at, so a cluster's NetworkPolicy can admit the
gateway to the public port and only the lobby and the AI workers to the internal
one (deploy/k8s/network.yaml). Without an internal port (development, ``make
run``) the one port serves every call, as before.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from felt.service.refusals import Code, Refused
from felt.service.rpc import fail
from felt.wire.access import SERVICE_ONLY
from poker.v1.reason_pb2 import Reason

INTERNAL_ONLY = (
    "an internal call, not served on the table service's public port; "
    "call its internal port (FELT_TABLE_INTERNAL_ADDR)"
)


async def _refuse(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> None:
    # Through the kit, with a declared reason, as every refusal: a lobby pointed at the wrong
    # port is told why, not left with a bare status.
    await fail(context, Refused(Code.PERMISSION_DENIED, INTERNAL_ONLY, Reason.SERVICE_ONLY))


_HANDLER = Any  # grpc.RpcMethodHandler (its stubs type the behaviours as synchronous)
_REFUSED: _HANDLER = grpc.unary_unary_rpc_method_handler(_refuse)


class PublicPortInterceptor(grpc.aio.ServerInterceptor):
    """Refuses the service's internal RPCs (they are all unary) on the public port."""

    def __init__(self, service: str) -> None:
        self.internal = frozenset(f"/{service}/{m}" for m in SERVICE_ONLY.get(service, ()))

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[_HANDLER | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> _HANDLER | None:
        if handler_call_details.method in self.internal:
            return _REFUSED
        return await continuation(handler_call_details)
