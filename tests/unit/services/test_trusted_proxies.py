"""Whose address a service counts: a trusted proxy's word (x-forwarded-for), else the peer."""

from __future__ import annotations

import pytest

from services.grpc_server import TrustedProxies
from services.settings import ConfigError


class Context:
    def __init__(self, peer: str, *metadata: tuple[str, str]) -> None:
        self._peer, self._metadata = peer, metadata

    def peer(self) -> str:
        return self._peer

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata


def test_only_a_trusted_proxy_names_the_client() -> None:
    proxies = TrustedProxies.from_env({"FELT_TRUSTED_PROXIES": "127.0.0.1, 10.0.0.0/8"})
    forwarded = ("x-forwarded-for", "203.0.113.7")
    assert proxies.caller(Context("ipv4:127.0.0.1:5000", forwarded)) == "ipv4:203.0.113.7:0"
    assert proxies.caller(Context("ipv4:10.1.2.3:5000", forwarded)) == "ipv4:203.0.113.7:0"
    assert proxies.caller(Context("ipv6:%5B::ffff:127.0.0.1%5D:5", forwarded)) == (
        "ipv4:203.0.113.7:0"
    )
    six = ("x-forwarded-for", "2001:db8::1")
    assert proxies.caller(Context("ipv4:127.0.0.1:5000", six)) == "ipv6:[2001:db8::1]:0"
    # Anyone else's header is ignored, and so is a header that names no address.
    assert proxies.caller(Context("ipv4:198.51.100.1:9", forwarded)) == "ipv4:198.51.100.1:9"
    junk = ("x-forwarded-for", "not an address")
    assert proxies.caller(Context("ipv4:127.0.0.1:5000", junk)) == "ipv4:127.0.0.1:5000"
    assert proxies.caller(Context("ipv4:127.0.0.1:5000")) == "ipv4:127.0.0.1:5000"
    # Untrusting by default.
    assert TrustedProxies().caller(Context("ipv4:127.0.0.1:1", forwarded)) == "ipv4:127.0.0.1:1"


def test_a_malformed_setting_is_refused() -> None:
    with pytest.raises(ConfigError):
        TrustedProxies.from_env({"FELT_TRUSTED_PROXIES": "localhost"})
