"""Every gRPC server Felt starts binds its port exclusively.

gRPC turns ``SO_REUSEPORT`` on by default, so a second server started on the
port of a running one binds silently and the kernel splits the connections
between the two: half the calls for a table just created on one answer
``NOT_FOUND`` from the other. Felt's servers ask for ``grpc.so_reuseport = 0``
and bind through :func:`bind`, which turns gRPC's terse bind failure into a
message that says what to do.
"""

from __future__ import annotations

from typing import Any

import grpc

# Options every Felt gRPC server is created with (sync and asyncio alike).
EXCLUSIVE_PORT: tuple[tuple[str, Any], ...] = (("grpc.so_reuseport", 0),)


class PortInUse(RuntimeError):
    """The listen address is taken (by another server, perhaps another Felt) or not ours to bind."""


def server_options(*extra: tuple[str, Any]) -> list[tuple[str, Any]]:
    """``extra`` options with the exclusive-port option added (it cannot be turned off here)."""
    return [*(o for o in extra if o[0] != "grpc.so_reuseport"), *EXCLUSIVE_PORT]


def aio_server(*extra: tuple[str, Any], **kwargs: Any) -> grpc.aio.Server:
    """A ``grpc.aio`` server that will bind its port exclusively."""
    return grpc.aio.server(options=server_options(*extra), **kwargs)


def bind(server: grpc.Server | grpc.aio.Server, address: str) -> int:
    """Listen on ``address`` (insecure); the port bound. Raises :class:`PortInUse` on failure."""
    try:
        port = server.add_insecure_port(address)
    except RuntimeError as exc:
        raise PortInUse(_message(address)) from exc
    if not port:  # older gRPC releases answer 0 instead of raising
        raise PortInUse(_message(address))
    return port


def _message(address: str) -> str:
    return (
        f"cannot listen on {address}: the port is in use (is another Felt table service "
        "running there?) or the address is not this machine's; stop the other server or "
        "choose another address (FELT_TABLE_ADDR)"
    )
