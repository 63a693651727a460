"""Who a call's client is (``felt.wire.clients``): a trusted proxy's ``x-forwarded-for``,
read from the right, else the peer; and what the lobby and the table service count of it."""

from __future__ import annotations

import ipaddress
import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from felt.wire.clients import (
    FORWARDED_FOR,
    MAX_FORWARDED_BYTES,
    MAX_FORWARDED_HOPS,
    IPAddress,
    TrustedProxies,
    as_peer,
    forwarded_address,
    normalised,
    peer_address,
)
from services.lobby.application import client_address, sign_up_site
from services.lobby.server import LobbyServerConfig
from services.settings import ConfigError, trusted_proxies
from services.table.server import TableServerConfig
from services.table.watch import client_address as watched_address

PROXIES = TrustedProxies.parse("127.0.0.1, 10.0.0.0/8, fd00::/8")
GATEWAY = "ipv4:127.0.0.1:41234"


class Context:
    """What ``TrustedProxies.caller`` reads of a ``grpc.aio.ServicerContext``."""

    def __init__(self, peer: str, *metadata: tuple[str, str]) -> None:
        self._peer, self._metadata = peer, metadata

    def peer(self) -> str:
        return self._peer

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata


# ------------------------------------------------------------------ strategies

ipv4 = st.ip_addresses(v=4)
ipv6 = st.ip_addresses(v=6)
addresses: st.SearchStrategy[IPAddress] = st.one_of(ipv4, ipv6).map(normalised)
trusted_hops: st.SearchStrategy[IPAddress] = st.one_of(
    st.just(ipaddress.IPv4Address("127.0.0.1")),
    st.integers(0, 2**24 - 1).map(lambda n: ipaddress.IPv4Address((10 << 24) + n)),
    st.integers(0, 2**120 - 1).map(lambda n: ipaddress.IPv6Address((0xFD << 120) + n)),
)
untrusted = addresses.filter(lambda a: not PROXIES.trusts(a))


@st.composite
def written(draw: st.DrawFn, address: IPAddress) -> str:
    """``address`` as some proxy may write it: bare, with a port, bracketed, IPv4-mapped,
    padded with spaces."""
    port = draw(st.integers(1, 65535))
    if isinstance(address, ipaddress.IPv4Address):
        text = draw(
            st.sampled_from(
                [str(address), f"{address}:{port}", f"::ffff:{address}", f"[::ffff:{address}]"]
            )
        )
    else:
        text = draw(st.sampled_from([str(address), f"[{address}]", f"[{address}]:{port}"]))
    pad = st.sampled_from(["", " ", "  ", "\t"])
    return draw(pad) + text + draw(pad)


@st.composite
def split_values(draw: st.DrawFn, entries: list[str]) -> list[str]:
    """``entries`` as one or several ``x-forwarded-for`` values (repeated metadata)."""
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(entries) - 1)), max_size=3)))
    bounds = [0, *[c for c in cuts if c < len(entries)], len(entries)]
    return [",".join(entries[a:b]) for a, b in itertools.pairwise(bounds) if a < b]


# ------------------------------------------------------------------ properties


@given(untrusted, st.lists(st.one_of(st.text(max_size=60), addresses.map(str)), max_size=4))
def test_an_untrusted_peer_is_its_own_client_whatever_it_writes(
    peer: IPAddress, values: list[str]
) -> None:
    """A direct client cannot name another address: its header is ignored."""
    assert PROXIES.client(as_peer(peer), values) == as_peer(peer)
    assert TrustedProxies().client(GATEWAY, values) == GATEWAY  # trusting nobody: the default


@given(st.data(), untrusted, st.lists(trusted_hops, max_size=5), st.lists(addresses, max_size=5))
def test_the_client_is_the_right_most_entry_that_is_not_a_trusted_proxy(
    data: st.DataObject,
    client: IPAddress,
    proxies: list[IPAddress],
    left: list[IPAddress],
) -> None:
    """Whatever the client put at the left (any addresses), and however many trusted proxies
    appended after it, the client is the entry the first trusted proxy appended."""
    entries = [data.draw(written(a)) for a in [*left, client, *proxies]]
    values = data.draw(split_values(entries))
    assert PROXIES.client(GATEWAY, values) == as_peer(client)
    assert PROXIES.caller(Context(GATEWAY, *((FORWARDED_FOR, v) for v in values))) == (
        as_peer(client)
    )


@given(st.data(), st.lists(trusted_hops, min_size=1, max_size=6))
def test_a_chain_of_trusted_proxies_only_names_its_left_most(
    data: st.DataObject, proxies: list[IPAddress]
) -> None:
    entries = [data.draw(written(a)) for a in proxies]
    assert PROXIES.client(GATEWAY, [",".join(entries)]) == as_peer(proxies[0])


@given(st.lists(st.text(max_size=80), min_size=1, max_size=4))
def test_any_header_names_the_peer_or_one_of_its_addresses(values: list[str]) -> None:
    """Junk is never guessed at: the answer is the peer (the proxy's own count) or an
    address an entry holds, and never an exception."""
    got = PROXIES.client(GATEWAY, values)
    named = {forwarded_address(e) for v in values for e in v.split(",")} - {None}
    assert got == GATEWAY or got in {as_peer(a) for a in named if a is not None}


@given(st.data(), untrusted, st.lists(addresses, min_size=1, max_size=4))
def test_a_malformed_entry_to_be_read_falls_back_to_the_peer(
    data: st.DataObject, client: IPAddress, left: list[IPAddress]
) -> None:
    junk = data.draw(st.sampled_from(["", "unknown", "_hidden", "example.com", "1.2.3", "[::1"]))
    hops = [data.draw(written(a)) for a in left]
    # The entry read (the right-most, its appender trusted) is junk: the proxy's own count.
    assert PROXIES.client(GATEWAY, [",".join([*hops, junk])]) == GATEWAY
    assert PROXIES.client(GATEWAY, [",".join([*hops, junk, "10.0.0.1"])]) == GATEWAY
    # Junk left of the client (what a client wrote before the first proxy) is never read.
    assert PROXIES.client(GATEWAY, [f"{junk},{client}"]) == as_peer(client)


@given(untrusted, st.integers(0, 50))
def test_headers_over_their_bounds_fall_back_to_the_peer(client: IPAddress, extra: int) -> None:
    hops = [str(client)] * (MAX_FORWARDED_HOPS + 1 + extra)
    assert PROXIES.client(GATEWAY, [",".join(hops)]) == GATEWAY
    assert PROXIES.client(GATEWAY, [",".join(hops[:MAX_FORWARDED_HOPS])]) == as_peer(client)
    long = " " * (MAX_FORWARDED_BYTES + extra) + str(client)
    assert PROXIES.client(GATEWAY, [long]) == GATEWAY
    # The bound is on all the values together: split, it is the same header.
    assert PROXIES.client(GATEWAY, [long[:600], long[600:]]) == GATEWAY


# ------------------------------------------------------------------ examples


def test_ipv4_mapped_addresses_are_the_ipv4_address() -> None:
    mapped_gateway = "ipv6:%5B::ffff:127.0.0.1%5D:5"  # a dual-stack listener's IPv4 peer
    assert PROXIES.client(mapped_gateway, ["::ffff:203.0.113.7"]) == "ipv4:203.0.113.7:0"
    assert PROXIES.client(GATEWAY, ["203.0.113.7, ::ffff:10.1.2.3"]) == "ipv4:203.0.113.7:0"
    assert peer_address("ipv6:[::ffff:1.2.3.4]:9") == ipaddress.IPv4Address("1.2.3.4")
    # Configured as a mapped network, a proxy is still the IPv4 network it maps.
    assert TrustedProxies.parse("::ffff:10.0.0.0/104").trusts(ipaddress.ip_address("10.9.9.9"))


def test_entries_that_are_not_one_address() -> None:
    for entry in ("fe80::1%eth0", "1.2.3.4:99999", "1.2.3.4:", "[1.2.3.4]", "[::1]x", "::1:80]"):
        assert forwarded_address(entry) is None, entry
    assert forwarded_address(" [2001:db8::1]:443 ") == ipaddress.IPv6Address("2001:db8::1")
    assert peer_address("unix:/run/felt.sock") is None
    # A Unix-socket peer is never a trusted proxy: its header is ignored.
    assert PROXIES.client("unix:/run/felt.sock", ["203.0.113.7"]) == "unix:/run/felt.sock"


def test_what_each_service_counts_of_a_forwarded_client() -> None:
    """The units are those of a direct client: the lobby counts sign-ins per IPv4 address
    and IPv6 /64, sign-ups per IPv6 /48; the table service counts watches per IPv4 address
    and IPv6 /64 too (by single IPv6 addresses, one client had 2**64 counts)."""
    six = PROXIES.client(GATEWAY, ["2001:db8:1:2:3:4:5:6"])
    assert client_address(six) == "2001:db8:1:2::/64"
    assert sign_up_site(client_address(six)) == "2001:db8:1::/48"
    four = PROXIES.client(GATEWAY, ["203.0.113.7:5555"])
    assert client_address(four) == "203.0.113.7" == watched_address(four)
    assert watched_address(six) == "2001:db8:1:2::/64"
    assert watched_address("ipv6:[2001:db8:1:2:ffff::9]:1") == watched_address(six)
    assert watched_address("ipv6:[2001:db8:1:3::1]:1") == "2001:db8:1:3::/64"
    assert (
        watched_address("ipv6:[::ffff:1.2.3.4]:9")
        == "1.2.3.4"
        == watched_address(as_peer(ipaddress.IPv4Address("1.2.3.4")))
    )


@pytest.mark.parametrize(
    "raw",
    [
        "localhost",
        "10.0.0.1/8",
        "0.0.0.0/0",
        "::/0",
        "::ffff:0.0.0.0/96",
        "10.0.0.0/33",
        "10.0.0.0/8;1.2.3.4",
    ],
)
def test_a_malformed_setting_stops_both_services(raw: str) -> None:
    env = {"FELT_TRUSTED_PROXIES": raw, "DATABASE_URL": "postgresql://x/y"}
    with pytest.raises(ConfigError, match="FELT_TRUSTED_PROXIES"):
        trusted_proxies(env)
    with pytest.raises(ConfigError, match="FELT_TRUSTED_PROXIES"):
        LobbyServerConfig.from_env(env)
    with pytest.raises(ConfigError, match="FELT_TRUSTED_PROXIES"):
        TableServerConfig.from_env(env)


def test_both_services_read_the_setting_the_same_way() -> None:
    env: dict[str, Any] = {"FELT_TRUSTED_PROXIES": " 10.0.0.0/8 ,, 2001:db8::7 ,"}
    lobby, table = LobbyServerConfig.from_env(env).proxies, TableServerConfig.from_env(env).proxies
    assert (
        lobby.networks
        == table.networks
        == (
            ipaddress.ip_network("10.0.0.0/8"),
            ipaddress.ip_network("2001:db8::7/128"),
        )
    )
    assert not LobbyServerConfig.from_env({}).proxies  # unset: nobody is trusted
    assert not TableServerConfig.from_env({"FELT_TRUSTED_PROXIES": ""}).proxies
