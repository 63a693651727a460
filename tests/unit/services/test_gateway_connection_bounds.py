"""The gateway's connection bounds: their settings, who is a trusted proxy, the counts."""

from __future__ import annotations

import pytest

from services.gateway.config import ConnectionBounds, GatewayConfig
from services.gateway.connections import ConnectionCounts, TrustedPeers
from services.settings import ConfigError


def test_settings_and_their_defaults() -> None:
    assert GatewayConfig.from_env({}).connections == ConnectionBounds()
    assert GatewayConfig.from_env({}).forwarded_allow_ips == "127.0.0.1,::1"
    config = GatewayConfig.from_env(
        {
            "FELT_GATEWAY_HEAD_TIMEOUT_MS": "2000",
            "FELT_GATEWAY_BODY_TIMEOUT_MS": "4000",
            "FELT_GATEWAY_BODY_MIN_RATE": "0",
            "FELT_GATEWAY_BODY_GRACE_MS": "1500",
            "FELT_GATEWAY_CONNECTIONS_PER_ADDRESS": "8",
            "FELT_GATEWAY_CONNECTIONS_MAX": "100",
            "FORWARDED_ALLOW_IPS": "10.0.0.0/8",
        }
    )
    assert config.connections == ConnectionBounds(2.0, 4.0, 0, 1.5, 8, 100)
    assert config.forwarded_allow_ips == "10.0.0.0/8"
    for name, value in (
        ("FELT_GATEWAY_BODY_TIMEOUT_MS", "0"),
        ("FELT_GATEWAY_HEAD_TIMEOUT_MS", "soon"),
        ("FELT_GATEWAY_CONNECTIONS_PER_ADDRESS", "0"),
        ("FELT_GATEWAY_BODY_MIN_RATE", "-1"),
    ):
        with pytest.raises(ConfigError, match=name):
            GatewayConfig.from_env({name: value})


def test_trusted_peers_read_as_uvicorn_reads_them() -> None:
    peers = TrustedPeers("127.0.0.1, 10.0.0.0/8,fd00::/8, unix-peer")
    assert "127.0.0.1" in peers
    assert "10.1.2.3" in peers
    assert "::ffff:10.1.2.3" in peers  # a dual-stack listener's IPv4 client
    assert "fd00::1" in peers
    assert "unix-peer" in peers
    assert "11.0.0.1" not in peers and "not-an-address" not in peers
    assert "203.0.113.9" in TrustedPeers("*")
    assert "127.0.0.1" not in TrustedPeers("")


def test_connections_counted_per_address_and_in_all() -> None:
    counts = ConnectionCounts(ConnectionBounds(per_address=2, total=4), TrustedPeers("10.0.0.1"))
    a1, refusal = counts.admit("192.0.2.1")
    assert refusal is None
    counts.admit("192.0.2.1")
    _, refusal = counts.admit("192.0.2.1")
    assert refusal is not None and refusal.startswith(b"HTTP/1.1 429 ")
    # one IPv6 client is its /64
    counts.admit("2001:db8::1")
    _, refusal = counts.admit("2001:db8::2")
    assert refusal is None
    _, refusal = counts.admit("10.0.0.1")  # a proxy: only the total, which is full
    assert refusal is not None and refusal.startswith(b"HTTP/1.1 503 ")
    counts.release(a1)
    key, refusal = counts.admit("10.0.0.1")
    assert refusal is None and key is None
    assert counts.total == 4 and counts.per_address == {"192.0.2.1": 1, "2001:db8::/64": 2}


def test_the_refresh_cookies_secure_setting() -> None:
    assert GatewayConfig.from_env({}).secure_cookie == "auto"
    assert GatewayConfig.from_env({"FELT_GATEWAY_SECURE_COOKIE": "always"}).secure_cookie == (
        "always"
    )
    with pytest.raises(ConfigError, match="FELT_GATEWAY_SECURE_COOKIE"):
        GatewayConfig.from_env({"FELT_GATEWAY_SECURE_COOKIE": "yes"})
