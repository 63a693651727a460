"""The lobby's Prometheus metrics: the RPC metrics every service has, sign-ups, and the
buy-in recovery's (``services.lobby.recovery.RecoveryMetrics``), in one registry.

Sign-ups are counted from the calls that make an account (the shared interceptor hands
every ended call to :meth:`LobbyMetrics.observe_rpc`), so no use case changes for them.
"""

from __future__ import annotations

from typing import Any

from prometheus_client import Counter

from felt.service.metrics import RpcMetrics
from services.lobby.recovery import RecoveryMetrics

# The calls that make an account, and the kind of sign-up each is.
SIGN_UPS = {"CreateGuest": "guest", "Register": "registered", "UpgradeGuest": "upgraded"}


class LobbyMetrics(RpcMetrics):
    """One lobby's metrics; ``recovery`` is the recovery pass's, in the same registry."""

    def __init__(self, recovery: RecoveryMetrics | None = None) -> None:
        self.recovery = recovery or RecoveryMetrics()
        super().__init__(self.recovery.registry)
        self.sign_ups = Counter(
            "felt_lobby_sign_ups",
            "Accounts made, by kind (guest, registered, upgraded: a guest who registered).",
            ["kind"],
            registry=self.registry,
        )

    def observe_rpc(
        self, service: str, method: str, code: str, seconds: float, request: Any
    ) -> None:
        super().observe_rpc(service, method, code, seconds, request)
        kind = SIGN_UPS.get(method)
        if kind is not None and code == "OK":
            self.sign_ups.labels(kind).inc()
