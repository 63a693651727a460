"""Every gRPC server Felt starts binds its port exclusively.

gRPC turns ``SO_REUSEPORT`` on by default, so a second server started on the
port of a running one binds silently and the kernel splits the connections
between the two: half the calls for a table just created on one answer
``NOT_FOUND`` from the other. Felt's servers ask for ``grpc.so_reuseport = 0``
and bind through :func:`bind`, which turns gRPC's terse bind failure into a
message that says what to do.
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from collections.abc import Mapping
from typing import Any

import grpc

from services.settings import ConfigError

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


FORWARDED_FOR = "x-forwarded-for"
"""The metadata key in which the gateway names the client it forwards a call for."""


class TrustedProxies:
    """The proxies (the gateway) whose word on the caller's address a service takes.

    Behind the gateway every call comes from the gateway's address, so limits
    counted per client address (sign-ups and sign-ins at the lobby, watch
    streams at the table service) would count all its clients as one. The
    gateway names the client in ``x-forwarded-for``; a service believes it only
    from a peer in ``FELT_TRUSTED_PROXIES`` (addresses or networks, comma
    separated: ``127.0.0.1``, ``10.0.0.0/8``), since anyone else could write it.
    """

    def __init__(self, networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()):
        self.networks = networks

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> TrustedProxies:
        raw = env.get("FELT_TRUSTED_PROXIES", "")
        try:
            return cls(tuple(ipaddress.ip_network(p.strip()) for p in raw.split(",") if p.strip()))
        except ValueError as exc:
            raise ConfigError(f"FELT_TRUSTED_PROXIES: {exc}") from None

    def caller(self, context: Any) -> str:
        """gRPC's peer string for the caller: the peer's own, or, from a trusted proxy that
        names one, the forwarded client's (as ``ipv4:A:0`` / ``ipv6:[A]:0``)."""
        peer: str = context.peer()
        if not self.networks or not self._trusted(peer):
            return peer
        for key, value in context.invocation_metadata() or ():
            if key == FORWARDED_FOR:
                try:
                    client = ipaddress.ip_address(str(value).rsplit(",", 1)[-1].strip())
                except ValueError:
                    return peer
                if isinstance(client, ipaddress.IPv6Address):
                    return f"ipv6:[{client}]:0"
                return f"ipv4:{client}:0"
        return peer

    def _trusted(self, peer: str) -> bool:
        kind, _, rest = peer.partition(":")
        if kind not in ("ipv4", "ipv6"):
            return False
        host = urllib.parse.unquote(rest).rsplit(":", 1)[0].strip("[]")
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return any(address in network for network in self.networks)
