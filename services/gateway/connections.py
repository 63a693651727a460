"""What one HTTP connection may hold of the gateway, and for how long.

uvicorn bounds an idle keep-alive connection (``timeout_keep_alive``) and
nothing else: a client that sent a request's head and then its body a byte now
and then held its connection, a file descriptor and a request task for ever
(2,000 such connections took the gateway from 25 descriptors to 2,026), and
one address could open as many as it liked. :class:`BoundedConnection` is
uvicorn's httptools protocol (``uvicorn.Config(http=...)``) with those bounds
(``services.gateway.config.ConnectionBounds``):

* **the head**: at most ``MAX_HEAD_BYTES`` (431 and closed past it), whole
  ``head_timeout_s`` after the connection's start or its first byte (closed);
* **the body**: whole ``body_timeout_s`` after its head, and once
  ``body_grace_s`` is over, checked every second, at least ``body_min_rate``
  bytes of it for each second since the grace ended; a body too slow is answered 408
  (or, when the answer has begun, the connection is closed). Time during
  which the gateway itself stopped reading (uvicorn's flow control: the
  application has not read what came) does not count against the client's
  rate. A request whose body is complete is bound no more: a ``WatchTable``
  stream (a small request, then a long answer) lasts as long as it lasts;
* **connections per client address** (an IPv6 client by its /64, as the
  other per-address counts: ``felt.wire.clients.counted_address``) and in
  all: past a cap the new connection is answered 429 (per address) or 503
  (in all) and closed before anything of it is read. A peer in
  ``FORWARDED_ALLOW_IPS`` is a proxy carrying many clients: it counts toward
  the total only, and the proxy bounds its own clients' connections.

HTTP/2 is not served here (uvicorn speaks HTTP/1.1): an ingress that speaks
it to browsers terminates it and applies its own bounds.
"""

from __future__ import annotations

import asyncio
import ipaddress
from typing import ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from services.gateway.caps import counted_host
from services.gateway.config import ConnectionBounds

# The most a request may send before its body (request line and headers): a token, a content
# type and a browser's usual headers are well under 8 KiB.
MAX_HEAD_BYTES = 32 * 1024
_FED = 4096  # the parser is fed a request's head this much at a time (see BoundedConnection)
_TICK_S = 1.0  # how often a body's rate is checked, once its grace is over


def _answer(status: bytes, text: bytes) -> bytes:
    return (
        b"HTTP/1.1 " + status + b"\r\ncontent-type: text/plain\r\n"
        b"content-length: %d\r\nconnection: close\r\n\r\n" % len(text)
    ) + text


_TOO_LARGE = _answer(b"431 Request Header Fields Too Large", b"request head is too large")
_TOO_SLOW = _answer(b"408 Request Timeout", b"request body too slow")
_TOO_MANY_HERE = _answer(
    b"429 Too Many Requests", b"too many connections from this address; close one first"
)
_TOO_MANY = _answer(b"503 Service Unavailable", b"the gateway is at its limit of connections")


class TrustedPeers:
    """The peers in uvicorn's ``FORWARDED_ALLOW_IPS`` (its reading: comma-separated
    addresses and networks, ``*`` for any; an entry that is neither is matched as text)."""

    def __init__(self, setting: str) -> None:
        entries = [e.strip() for e in setting.split(",") if e.strip()]
        self.everyone = "*" in entries
        self.literals: set[str] = set()
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for entry in entries:
            try:
                self.networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                self.literals.add(entry)

    def __contains__(self, host: str) -> bool:
        if self.everyone or host in self.literals:
            return True
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return any(address in network for network in self.networks)


class ConnectionCounts:
    """The connections one server holds: per counted client address and in all."""

    def __init__(self, bounds: ConnectionBounds, proxies: TrustedPeers) -> None:
        self.bounds = bounds
        self.proxies = proxies
        self.total = 0
        self.per_address: dict[str, int] = {}

    def admit(self, host: str | None) -> tuple[str | None, bytes | None]:
        """Counts a new connection from ``host``: the key it was counted under (``None``:
        the total only) and ``None``; or, past a cap, ``(None, the refusal to send)``."""
        if self.total >= self.bounds.total:
            return None, _TOO_MANY
        key = None if host is None or host in self.proxies else counted_host(host)
        if key is not None:
            held = self.per_address.get(key, 0)
            if held >= self.bounds.per_address:
                return None, _TOO_MANY_HERE
            self.per_address[key] = held + 1
        self.total += 1
        return key, None

    def release(self, key: str | None) -> None:
        self.total -= 1
        if key is not None:
            left = self.per_address[key] - 1
            if left:
                self.per_address[key] = left
            else:
                del self.per_address[key]


class BoundedConnection(HttpToolsProtocol):
    """uvicorn's httptools protocol with the bounds of this module's docstring.

    httptools buffers a header's value whole before handing it on, and uvicorn sets no bound
    with it (``h11_max_incomplete_event_size`` is h11's only), so everything is fed to the
    parser in pieces of at most ``_FED`` bytes, and a head's pieces are counted and cut to
    what is left of ``MAX_HEAD_BYTES`` until the parser says it is complete: the parser
    never holds more of one head than that, the next request's of a pipelined read too (it
    was fed whole with the body before it, uncounted: one read past the bound). The body
    (the RPCs bound its size) is timed from its head to its end.
    Made per server by :func:`bounded_protocol`, which sets ``bounds`` and ``counts``.
    """

    bounds: ClassVar[ConnectionBounds] = ConnectionBounds()
    counts: ClassVar[ConnectionCounts]

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._head_bytes = 0
        self._in_body = False
        self._ended = self._begun = False  # in the piece being fed: a message ended, one began
        self._head_timer: asyncio.TimerHandle | None = None
        self._body_deadline: asyncio.TimerHandle | None = None
        self._rate_timer: asyncio.TimerHandle | None = None
        self._body_bytes = 0
        self._counted = False
        self._count_key: str | None = None
        super().connection_made(transport)  # type: ignore[arg-type]
        key, refusal = self.counts.admit(self.client[0] if self.client else None)
        if refusal is not None:
            self.transport.write(refusal)
            self.transport.close()
            return
        self._counted, self._count_key = True, key
        self._arm_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head()
        self._disarm_body()
        if self._counted:
            self._counted = False
            self.counts.release(self._count_key)
        super().connection_lost(exc)

    # The head

    def _arm_head(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(self.bounds.head_timeout_s, self._head_too_slow)

    def _disarm_head(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if not self._in_body and not self.transport.is_closing():
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        if self.transport.is_closing():
            return  # refused, or cut: nothing more of it is read
        if not self._in_body:
            self._arm_head()
        while data:
            if self._in_body:
                size = _FED
            else:
                size = min(_FED, MAX_HEAD_BYTES - self._head_bytes)
                if size <= 0:  # the parser holds MAX_HEAD_BYTES of this head, still open
                    self.transport.write(_TOO_LARGE)
                    self.transport.close()
                    return
            piece, data = data[:size], data[size:]
            self._ended = self._begun = False
            super().data_received(piece)
            if self.transport.is_closing():
                return
            if not self._in_body:
                # A head not complete yet: this piece's bytes count towards it. One that
                # began inside the piece (after a message that ended there) is counted the
                # whole piece, the most of it the piece can hold: the parser never takes
                # more than MAX_HEAD_BYTES of one head, pipelined or not.
                if self._ended:
                    self._head_bytes = len(piece) if self._begun else 0
                else:
                    self._head_bytes += len(piece)

    def on_message_begin(self) -> None:
        self._begun = True
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._in_body = True
        self._disarm_head()
        super().on_headers_complete()
        self._arm_body()

    # The body

    def _arm_body(self) -> None:
        self._body_bytes = 0
        bounds = self.bounds
        self._body_deadline = self.loop.call_later(bounds.body_timeout_s, self._body_too_slow)
        if bounds.body_min_rate and bounds.body_grace_s < bounds.body_timeout_s:
            # The rate is owed from the grace's end: checked a tick later, then every tick.
            owed_from = self.loop.time() + bounds.body_grace_s
            self._rate_timer = self.loop.call_later(
                bounds.body_grace_s + _TICK_S, self._check_rate, owed_from, 0
            )

    def _disarm_body(self) -> None:
        for timer in (self._body_deadline, self._rate_timer):
            if timer is not None:
                timer.cancel()
        self._body_deadline = self._rate_timer = None

    def _check_rate(self, owed_from: float, owed_bytes: int) -> None:
        """Every tick after the grace: the body's bytes beyond ``owed_bytes`` at least
        ``body_min_rate`` for each second since ``owed_from``, else the body is too slow."""
        now = self.loop.time()
        if self.flow.read_paused:
            # The gateway is not reading (the application has not taken what came): the
            # client cannot send, so this tick is not owed.
            owed_from, owed_bytes = now, self._body_bytes
        elif self._body_bytes - owed_bytes < self.bounds.body_min_rate * (now - owed_from):
            self._body_too_slow()
            return
        self._rate_timer = self.loop.call_later(_TICK_S, self._check_rate, owed_from, owed_bytes)

    def _body_too_slow(self) -> None:
        """Cut the connection: 408 if the answer has not begun (the application, still
        waiting for the body, is told the client is gone)."""
        self._disarm_body()
        if self.transport.is_closing():
            return
        cycle = self.cycle
        if cycle is not None and not cycle.response_started:
            self.transport.write(_TOO_SLOW)
        if cycle is not None:
            cycle.disconnected = True
            cycle.message_event.set()
        self.transport.close()

    def on_body(self, body: bytes) -> None:
        self._body_bytes += len(body)
        super().on_body(body)

    def on_message_complete(self) -> None:
        self._in_body = False
        self._head_bytes = 0
        self._ended, self._begun = True, False  # what follows in the piece is the next head
        self._disarm_body()
        super().on_message_complete()


def bounded_protocol(bounds: ConnectionBounds, forwarded_allow_ips: str) -> type[HttpToolsProtocol]:
    """A :class:`BoundedConnection` class for one server: ``bounds``, and counts of its own."""
    counts = ConnectionCounts(bounds, TrustedPeers(forwarded_allow_ips))
    return type("BoundedConnection", (BoundedConnection,), {"bounds": bounds, "counts": counts})
