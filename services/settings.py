"""Reading a service's settings from the environment, the same way in every service.

A setting that is malformed or out of its range stops the service before it
touches anything, with a message that names the setting (:class:`ConfigError`;
the ``felt`` commands exit with status 2).
"""

from __future__ import annotations

from collections.abc import Mapping

from felt.wire.attempts import AttemptLimits
from felt.wire.clients import TrustedProxies

TRUE = ("1", "true", "yes", "on")
"""What a yes/no setting accepts as yes (anything else is no)."""


class ConfigError(ValueError):
    """The configuration is unsafe or malformed: the service refuses to start (say why)."""


def int_setting(env: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    """The integer setting ``name`` within [low, high]; ``default`` when unset."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be an integer, not {raw!r}") from None
    if not low <= value <= high:
        raise ConfigError(f"{name} must be between {low} and {high}, not {value}")
    return value


def trusted_proxies(env: Mapping[str, str]) -> TrustedProxies:
    """``FELT_TRUSTED_PROXIES``: the proxies (the gateway) whose ``x-forwarded-for`` names
    the client that per-address limits count (``felt.wire.clients``), comma-separated
    addresses and networks; unset or empty: none (every call counts as its peer)."""
    try:
        return TrustedProxies.parse(env.get("FELT_TRUSTED_PROXIES", ""))
    except ValueError as exc:
        raise ConfigError(f"FELT_TRUSTED_PROXIES: {exc}") from None


def attempt_limits(env: Mapping[str, str]) -> AttemptLimits:
    """``FELT_AUTH_FAILURE_BURST`` and ``FELT_AUTH_FAILURE_PER_MIN``: the failed credential
    attempts one client address may make (``felt.wire.attempts``)."""
    try:
        return AttemptLimits.from_env(env)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def reflection_setting(env: Mapping[str, str], dev: bool) -> bool:
    """``FELT_GRPC_REFLECTION``: whether a gRPC server answers reflection (its services'
    schema, for grpcurl and friends): ``1`` on, ``0`` off; unset, on in development mode
    only. In production it tells anyone who reaches the port every internal call's shape."""
    raw = env.get("FELT_GRPC_REFLECTION", "").strip().lower()
    if not raw:
        return dev
    if raw in TRUE:
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ConfigError("FELT_GRPC_REFLECTION must be 1 or 0")
