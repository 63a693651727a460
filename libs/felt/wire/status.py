"""Reading a refused call's status on the client side: the ``google.rpc.ErrorInfo`` reason.

Every Felt service refuses with a status code and an ``ErrorInfo`` whose
``reason`` says what to do (docs/api.md). Clients (the lobby calling the
table service, ``felt play``, tests) read it here, in one place.
"""

from __future__ import annotations

import grpc
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]


def error_reason(err: grpc.aio.AioRpcError) -> str:
    """The ``google.rpc.ErrorInfo.reason`` of a refused call, else the status code's name."""
    for key, value in err.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info) and info.reason:
                    return str(info.reason)
    return str(err.code().name)
