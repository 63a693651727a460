"""Failed credential attempts, throttled per client address.

Found by review (issue #20): 800 wrong guesses of the service credential at 134
a second, unthrottled. Every service that checks a bearer token (the table
service, the lobby, the gateway for its own refusals) keeps one
:class:`FailedAttempts`: a token bucket per client (``felt.wire.clients``'
``counted_peer``: the address, an IPv6 one by its /64), of which each failed
attempt spends one. Successful calls spend nothing, so players never notice it.

While a client's bucket is empty its calls are answered RESOURCE_EXHAUSTED
(reason :data:`THROTTLED`) *before* any static credential (the admin or AI
token, the operator's) is compared, so a guesser learns nothing from them: a
right guess is refused like a wrong one. A token that checks out by its
signature alone (a seat token, an access token: unforgeable without a secret)
still passes, so clients that share an address with a guesser (a NAT, or every
client behind a gateway a service does not trust: ``FELT_TRUSTED_PROXIES``)
keep playing.

Buckets live in the process's memory, at most ``max_clients`` of them (the
least recently used go first). Pure: the clock is passed in.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from felt.config.settings import FELT_AUTH_FAILURE_BURST, FELT_AUTH_FAILURE_PER_MIN
from poker.v1.reason_pb2 import Reason

THROTTLED = Reason.AUTH_THROTTLED
"""The ``ErrorInfo`` reason of a call refused because its address failed too often."""

MESSAGE = (
    "too many failed credential attempts from this address: wait a minute, then send a valid token"
)
"""What a throttled caller is told (the same words in every service)."""


@dataclass(frozen=True, slots=True)
class AttemptLimits:
    """How many failed attempts one client may make: ``burst`` at once, then ``per_minute``."""

    burst: int = FELT_AUTH_FAILURE_BURST.default
    per_minute: int = FELT_AUTH_FAILURE_PER_MIN.default
    max_clients: int = 100_000

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> AttemptLimits:
        """``FELT_AUTH_FAILURE_BURST`` and ``FELT_AUTH_FAILURE_PER_MIN`` (declared, with
        their ranges, in ``felt.config.settings``); a ``ConfigError`` names a bad one."""
        return cls(FELT_AUTH_FAILURE_BURST.read(env), FELT_AUTH_FAILURE_PER_MIN.read(env))


class FailedAttempts:
    """Token buckets per client: :meth:`failed` spends one, :meth:`exhausted` says none is
    left."""

    def __init__(
        self, limits: AttemptLimits | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limits = limits if limits is not None else AttemptLimits()
        self.clock = clock
        # client -> (attempts left, when last filled); least recently used first
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def _left(self, client: str) -> tuple[float, float]:
        limits, now = self.limits, self.clock()
        left, then = self._buckets.get(client, (float(limits.burst), now))
        return min(float(limits.burst), left + (now - then) * limits.per_minute / 60), now

    def exhausted(self, client: str) -> bool:
        """Whether ``client`` has no failed attempt left (it is then refused, see above)."""
        if client not in self._buckets:
            return False
        left, _ = self._left(client)
        return left < 1.0

    def failed(self, client: str) -> None:
        """Count one failed attempt of ``client``."""
        left, now = self._left(client)
        self._buckets.pop(client, None)
        self._buckets[client] = (max(0.0, left - 1.0), now)
        if len(self._buckets) > self.limits.max_clients:
            self._buckets.popitem(last=False)

    def __len__(self) -> int:
        return len(self._buckets)
