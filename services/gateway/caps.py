"""Caps on the server streams (``WatchTable``) a caller may hold through the gateway.

Behind the gateway every browser reaches the table service from the
gateway's address, so the table service's cap per client address would count
them all as one client (docs/architecture.md, "Watchers"). The gateway
counts for it: per bearer token (a seat), per client address (whatever
tokens it sends, or none; an IPv6 client by its /64, which one subscriber
holds whole, as the services count: ``felt.wire.clients.counted_address``)
and in all; past one, RESOURCE_EXHAUSTED ``TOO_MANY_WATCHES`` before
anything is sent upstream.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from typing import TypeVar

from connectrpc.code import Code

from felt.wire.clients import counted_address, forwarded_address
from poker.v1.reason_pb2 import Reason
from services.gateway.config import WatchCaps
from services.gateway.errors import refused

REASON = Reason.TOO_MANY_WATCHES
_K = TypeVar("_K")


class StreamCaps:
    """Counts the open streams per token, per address and in all."""

    def __init__(self, caps: WatchCaps) -> None:
        self.caps = caps
        self.total = 0
        self.per_token: dict[bytes, int] = {}
        self.per_address: dict[str, int] = {}

    @contextlib.contextmanager
    def admit(self, token: str, address: str) -> Iterator[None]:
        """Inside: one stream counted for ``token`` (may be empty: anonymous) and
        ``address`` (the client's host as the HTTP server saw it; counted by its /64 when
        IPv6); refused (a ``ConnectError``) past a cap."""
        address = counted_host(address)
        # Only a digest of the token is kept as the key: the map outlives no stream, but a
        # token is a seat's secret and needs no copy in a dictionary.
        key = hashlib.sha256(token.encode()).digest() if token else b""
        if self.total >= self.caps.total:
            raise refused(
                Code.RESOURCE_EXHAUSTED, "the gateway is at its limit of watch streams", REASON
            )
        if self.per_address.get(address, 0) >= self.caps.per_address:
            raise refused(
                Code.RESOURCE_EXHAUSTED,
                f"at most {self.caps.per_address} watch streams per client address; "
                "close one first",
                REASON,
            )
        if key and self.per_token.get(key, 0) >= self.caps.per_token:
            raise refused(
                Code.RESOURCE_EXHAUSTED,
                f"at most {self.caps.per_token} watch streams per token; close one first",
                REASON,
            )
        self.total += 1
        self.per_address[address] = self.per_address.get(address, 0) + 1
        if key:
            self.per_token[key] = self.per_token.get(key, 0) + 1
        try:
            yield
        finally:
            self.total -= 1
            _release(self.per_address, address)
            if key:
                _release(self.per_token, key)


def counted_host(host: str) -> str:
    """The count ``host`` (an address without port) goes to: ``counted_address`` of it, or
    the text as it is when it is no address (a Unix socket's peer)."""
    address = forwarded_address(host)
    return host if address is None else counted_address(address)


def _release(counts: dict[_K, int], key: _K) -> None:
    left = counts[key] - 1
    if left:
        counts[key] = left
    else:
        del counts[key]
