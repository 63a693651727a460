"""The services' settings that need more than the reader (``felt.config.settings``).

Every environment variable is declared, read and range-checked there; a setting that is
malformed or out of its range stops the service before it touches anything, with a
message that names the setting (:class:`ConfigError`; the ``felt`` commands exit with
status 2). What stays here turns a declared value into what the services use.
"""

from __future__ import annotations

from felt.config.settings import (
    FELT_GRPC_REFLECTION,
    FELT_TRUSTED_PROXIES,
    TRUE,
    ConfigError,
    Env,
)
from felt.wire.attempts import AttemptLimits
from felt.wire.clients import TrustedProxies

__all__ = ["TRUE", "ConfigError", "attempt_limits", "reflection_setting", "trusted_proxies"]


def trusted_proxies(env: Env) -> TrustedProxies:
    """``FELT_TRUSTED_PROXIES``: the proxies (the gateway) whose ``x-forwarded-for`` names
    the client that per-address limits count (``felt.wire.clients``), comma-separated
    addresses and networks; unset or empty: none (every call counts as its peer)."""
    return TrustedProxies.parse(FELT_TRUSTED_PROXIES.read(env))  # read: ConfigError if bad


def attempt_limits(env: Env) -> AttemptLimits:
    """``FELT_AUTH_FAILURE_BURST`` and ``FELT_AUTH_FAILURE_PER_MIN``: the failed credential
    attempts one client address may make (``felt.wire.attempts``)."""
    return AttemptLimits.from_env(env)


def reflection_setting(env: Env, dev: bool) -> bool:
    """``FELT_GRPC_REFLECTION``: whether a gRPC server answers reflection (its services'
    schema, for grpcurl and friends); unset, on in development mode only. In production it
    tells anyone who reaches the port every internal call's shape."""
    chosen = FELT_GRPC_REFLECTION.read(env)
    return dev if chosen is None else chosen
