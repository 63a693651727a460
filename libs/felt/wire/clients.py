"""Who the client of a call is: its peer, or the client a trusted proxy names for it.

Limits counted per client address (sign-ups and sign-ins, watch streams per
address) count the gRPC peer. Behind a proxy (the HTTP gateway) every call
comes from the proxy, so every client behind it would share one count: the
whole web's 30 sign-ups an hour. The proxy names the client in the
``x-forwarded-for`` metadata instead, and a service believes that header only
from a peer it is told to trust (``FELT_TRUSTED_PROXIES``): anyone else could
write any address into it and so get a fresh count per call.

The reading is the usual one for ``X-Forwarded-For`` (and RFC 7239's
``Forwarded``, of which it is the older form): each proxy *appends* the
address it received the request from, so the header reads client first, then
each proxy but the last (the last is the peer). Only the right end is
trustworthy: a client can put anything at the left. So, from the right,
entries that are themselves trusted proxies are skipped, and the first one
that is not is the client; if every entry is a trusted proxy, the left-most
is (a proxy calling for itself).

A header a trusted proxy sends that cannot be read this way — over
:data:`MAX_FORWARDED_BYTES` or :data:`MAX_FORWARDED_HOPS`, an empty entry, or
an entry to be used that is not an address (``unknown``, a name, an address
with a zone) — is not guessed at: the call counts as the peer's own, the
proxy's address (and a warning is logged). That fails closed: such calls all
share the proxy's one count, and no client gains a count by it. They are not
refused: a proxy that misbehaves would otherwise fail every call behind it
over what is only a question of which count a call goes to.

Addresses are normalised: an IPv4-mapped IPv6 address (``::ffff:1.2.3.4``,
what a dual-stack listener reports for an IPv4 client) is the IPv4 address,
so one client is one count whichever way it arrives. What a service counts
per address (an IPv6 client by its /64 or /48) is the service's business;
this module says only who the client is, in the form of a gRPC peer string
so that whatever took ``context.peer()`` takes it unchanged.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import urllib.parse
from collections.abc import Iterable, Sequence
from typing import Any

import structlog

from felt.config.settings import IPNetwork, networks

log = structlog.get_logger("felt.api")

FORWARDED_FOR = "x-forwarded-for"
"""The metadata key in which a proxy names the client (comma-separated, appended to)."""
MAX_FORWARDED_BYTES = 1024
"""The most of ``x-forwarded-for`` read (all its values together); longer: the peer counts."""
MAX_FORWARDED_HOPS = 20
"""The most entries in ``x-forwarded-for``; more: the peer counts."""

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_PORT = re.compile(r"[0-9]{1,5}")


def _is_port(text: str) -> bool:
    return _PORT.fullmatch(text) is not None and int(text) <= 65535


def normalised(address: IPAddress) -> IPAddress:
    """``address``, an IPv4-mapped IPv6 one as the IPv4 address it maps."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _address(text: str) -> IPAddress | None:
    """An address without zone (``fe80::1%eth0`` is not one: a zone is a local name,
    and any number of them would name one address)."""
    if "%" in text:
        return None
    try:
        return normalised(ipaddress.ip_address(text))
    except ValueError:
        return None


def counted_address(address: IPAddress) -> str:
    """Whose count a client's streams and calls go to: an IPv4 address as it is, an IPv6 one
    by its /64. One subscriber is handed a whole /64 (RFC 6177) and may use any of its 2**64
    addresses, so counting single IPv6 addresses would give one client a fresh count per
    address it picks; the lobby's sign-ups count by the /48 on top (``sign_up_site``)."""
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network(f"{address}/64", strict=False))
    return str(address)


def peer_address(peer: str) -> IPAddress | None:
    """The address in gRPC's peer string (``ipv4:1.2.3.4:5``, ``ipv6:[::1]:5``, also
    percent-encoded ``ipv6:%5B::1%5D:5``), normalised; None for any other peer (a Unix
    socket's)."""
    kind, _, rest = peer.partition(":")
    rest = urllib.parse.unquote(rest)
    if kind not in ("ipv4", "ipv6") or ":" not in rest:
        return None
    return _address(rest.rsplit(":", 1)[0].removeprefix("[").removesuffix("]"))


@functools.lru_cache(maxsize=4096)
def counted_peer(peer: str) -> str:
    """Whose count a caller goes to, from gRPC's peer string (``context.peer()``, or behind
    the gateway the client it names: ``TrustedProxies``): its address without the port
    (``ipv4:1.2.3.4:5`` -> ``1.2.3.4``, an IPv4-mapped IPv6 one too), an IPv6 one by its
    /64 (``counted_address``); other forms (a Unix socket) as they are.

    Cached, bounded (least recently used out): a connection's calls all name the same
    peer, and parsing it cost a few microseconds of every call; names that keep changing
    only cycle through the cache."""
    address = peer_address(peer)
    return peer if address is None else counted_address(address)


def forwarded_address(entry: str) -> IPAddress | None:
    """One ``x-forwarded-for`` entry's address, normalised: ``1.2.3.4``, ``2001:db8::1``,
    and with a port as some proxies write it (``1.2.3.4:80``, ``[2001:db8::1]:80``,
    ``[2001:db8::1]``); None for anything else (``unknown``, a host name, junk)."""
    text = entry.strip(" \t")
    if text.startswith("["):
        host, bracket, port = text[1:].partition("]")
        if not bracket or (port and not (port[:1] == ":" and _is_port(port[1:]))):
            return None
        return _address(host) if ":" in host else None  # brackets hold an IPv6 literal
    if text.count(":") == 1:  # an IPv4 address and a port
        host, _, port = text.partition(":")
        address = _address(host) if _is_port(port) else None
        return address if isinstance(address, ipaddress.IPv4Address) else None
    return _address(text)


def as_peer(address: IPAddress) -> str:
    """``address`` as a gRPC peer string, port 0 (a forwarded client's port is not known)."""
    if isinstance(address, ipaddress.IPv6Address):
        return f"ipv6:[{address}]:0"
    return f"ipv4:{address}:0"


class TrustedProxies:
    """The proxies whose ``x-forwarded-for`` names the client (none by default)."""

    def __init__(self, networks: Iterable[IPNetwork] = ()) -> None:
        self.networks: tuple[IPNetwork, ...] = tuple(networks)

    @classmethod
    def parse(cls, text: str) -> TrustedProxies:
        """From a comma-separated list of addresses and networks (``127.0.0.1, 10.0.0.0/8,
        fd00::/8``), as ``felt.config.settings.networks`` reads and checks it (``ValueError``
        naming the entry that is not one)."""
        return cls(networks(text))

    def __bool__(self) -> bool:
        return bool(self.networks)

    def __repr__(self) -> str:
        return f"TrustedProxies({', '.join(map(str, self.networks))})"

    def trusts(self, address: IPAddress | None) -> bool:
        if address is None:
            return False
        address = normalised(address)
        return any(address in network for network in self.networks)

    def client(self, peer: str, forwarded: Sequence[str]) -> str:
        """The client of a call from ``peer`` with these ``x-forwarded-for`` values (in
        the order received), as a gRPC peer string: ``peer`` itself unless it is a
        trusted proxy that names a client (see the module's docstring)."""
        if not self.networks or not forwarded or not self.trusts(peer_address(peer)):
            return peer  # nobody's word but a trusted proxy's: a client could write any
        header = ",".join(forwarded)  # repeated fields are one list (RFC 9110, 5.3)
        if len(header.encode()) > MAX_FORWARDED_BYTES:
            return self._ignored(peer, f"longer than {MAX_FORWARDED_BYTES} bytes")
        entries = header.split(",")
        if len(entries) > MAX_FORWARDED_HOPS:
            return self._ignored(peer, f"more than {MAX_FORWARDED_HOPS} entries")
        client = peer
        for entry in reversed(entries):
            address = forwarded_address(entry)
            if address is None:
                return self._ignored(peer, "an entry that is not an address")
            client = as_peer(address)
            if not self.trusts(address):
                break  # the right-most entry that is not one of ours: the client
        return client

    def caller(self, context: Any) -> str:
        """The client of the call ``context`` is of (a ``grpc.aio.ServicerContext``), as a
        gRPC peer string: what to count instead of ``context.peer()``."""
        forwarded = [
            value
            for key, value in context.invocation_metadata() or ()
            if key == FORWARDED_FOR and isinstance(value, str)
        ]
        return self.client(context.peer(), forwarded)

    @staticmethod
    def _ignored(peer: str, why: str) -> str:
        log.warning("forwarded_for_ignored", peer=peer, why=why)
        return peer
