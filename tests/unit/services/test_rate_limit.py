"""A caller's changes are rate-limited per token bucket (``services.table.ratelimit``)."""

from __future__ import annotations

import pytest

from services.table.ratelimit import RateLimiter, RateLimits


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_then_the_sustained_rate() -> None:
    clock = Clock()
    limiter = RateLimiter(RateLimits(per_second=2, burst=3), clock)
    assert [limiter.take("seat/0/h") for _ in range(4)] == [True, True, True, False]
    assert limiter.take("seat/1/h")  # another caller has its own bucket
    clock.now += 0.5  # one token back
    assert limiter.take("seat/0/h") and not limiter.take("seat/0/h")
    clock.now += 100  # never more than the burst
    assert [limiter.take("seat/0/h") for _ in range(4)] == [True, True, True, False]


def test_a_refused_call_spends_nothing() -> None:
    clock = Clock()
    limiter = RateLimiter(RateLimits(per_second=1, burst=1), clock)
    assert limiter.take("c") and not limiter.take("c") and not limiter.take("c")
    clock.now += 1.0
    assert limiter.take("c")


def test_the_limiter_remembers_a_bounded_number_of_callers() -> None:
    limiter = RateLimiter(RateLimits(per_second=1, burst=1, max_callers=10), Clock())
    for n in range(1000):
        limiter.take(f"caller-{n}")
    assert len(limiter) == 10


@pytest.mark.parametrize(
    ("env", "error"),
    [
        ({"FELT_SEAT_RATE_PER_S": "0"}, "FELT_SEAT_RATE_PER_S"),
        ({"FELT_SEAT_RATE_PER_S": "lots"}, "FELT_SEAT_RATE_PER_S"),
        ({"FELT_SEAT_RATE_BURST": "-1"}, "FELT_SEAT_RATE_BURST"),
    ],
)
def test_settings_out_of_range_are_refused(env: dict[str, str], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        RateLimits.from_env(env)
    assert RateLimits.from_env({"FELT_SEAT_RATE_PER_S": "2.5"}).per_second == 2.5
