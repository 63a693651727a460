"""A seat's mutations are rate-limited: every accepted one is an event kept in the stream.

Found by review: one seat token alternating SitOut and SitIn wrote 800 events a
second, each kept in Redis, and a table's rebuild reads its whole stream, so a
spammed table grows slower to load for every instance that adopts it. Each
caller at each table (a seat token; the AI workers for one seat of one table)
gets a token bucket: a sustained ``per_second`` with bursts of ``burst``. The
key names the table (``services.table.application.rate_key``): keyed by the
seat alone, seat N of every AI table an instance ran shared one bucket, and
thousands of AI actions were refused (and timed out) in a busy run. A call past it is refused
(``RESOURCE_EXHAUSTED``, reason ``RATE_LIMITED``) before anything is decided.
Play never comes near it: a seat acts once per turn.

Buckets live in this instance's memory, at most ``max_callers`` of them (the
least recently used go first), so the limiter's own memory is bounded too.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from felt.config.settings import FELT_SEAT_RATE_BURST, FELT_SEAT_RATE_PER_S


@dataclass(frozen=True, slots=True)
class RateLimits:
    """How fast one caller may change tables (environment: ``FELT_SEAT_RATE_*``)."""

    per_second: float = FELT_SEAT_RATE_PER_S.default
    burst: int = FELT_SEAT_RATE_BURST.default
    max_callers: int = 100_000

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> RateLimits:
        """``FELT_SEAT_RATE_PER_S`` (0.1-10,000) and ``FELT_SEAT_RATE_BURST`` (1-100,000)."""
        return cls(FELT_SEAT_RATE_PER_S.read(env), FELT_SEAT_RATE_BURST.read(env))


class RateLimiter:
    """Token buckets per caller; ``take`` spends one token or says no."""

    def __init__(
        self, limits: RateLimits | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limits = limits if limits is not None else RateLimits()
        self.clock = clock
        # caller -> (tokens left, when last filled); oldest use first
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take(self, caller: str) -> bool:
        """Spend one of ``caller``'s tokens; False (nothing spent) when it has none."""
        limits, now = self.limits, self.clock()
        tokens, then = self._buckets.pop(caller, (float(limits.burst), now))
        tokens = min(float(limits.burst), tokens + (now - then) * limits.per_second)
        allowed = tokens >= 1.0
        self._buckets[caller] = (tokens - 1.0 if allowed else tokens, now)
        if len(self._buckets) > limits.max_callers:
            self._buckets.popitem(last=False)
        return allowed

    def __len__(self) -> int:
        return len(self._buckets)
