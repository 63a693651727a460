"""The arithmetic of ``bench/people_load.py``: its steps, percentiles, and what it derives.

Pure functions, kept apart so that ``tests/unit/test_bench_pacing.py`` checks them without
starting a service (``make bench`` skips ``bench/_*.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


def plan_steps(first: int, max_tables: int) -> list[int]:
    """Table counts that double from ``first`` up to ``max_tables``, which ends the plan
    even when it is no doubling of ``first`` (25, 50, 100, 200, 300 for 25 and 300)."""
    if first < 1 or max_tables < 1:
        raise ValueError("table counts are positive")
    steps: list[int] = []
    count = min(first, max_tables)
    while count < max_tables:
        steps.append(count)
        count *= 2
    steps.append(max_tables)
    return steps


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (nearest rank, 0 < p <= 100) of ``values``; 0 when empty."""
    if not 0 < p <= 100:
        raise ValueError("p is in (0, 100]")
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))  # ceil(n * p / 100), at least the first
    return ordered[int(rank) - 1]


def tables_per_core(cpu_per_action_s: float, pace_s: float) -> float:
    """Tables one core of a service could run at one action every ``pace_s`` per table.

    A table at that pace costs ``cpu_per_action_s / pace_s`` CPU seconds per second (what
    the service spends between actions, deals, timers and watch feeds included, since the
    CPU measured is all the service's over the actions of the window), so a core of it
    runs the inverse. Derived from CPU time, which other load on the machine hardly moves,
    not from the tables a shared machine happened to reach.
    """
    if cpu_per_action_s <= 0:
        return 0.0
    return pace_s / cpu_per_action_s


@dataclass(frozen=True)
class StepFigures:
    """What one step measured, as far as deciding whether to grow further needs it."""

    tables: int
    service_cores: float  # the table service's CPU seconds per second (all its instances)
    front_cores: float  # the same of the gateway, the load generator (and AI workers)
    p99_ms: float
    late_share: float  # of the tables' turns, those the generator took late


def stop_reason(
    step: StepFigures, max_cores: float = 0.9, max_p99_ms: float = 1000.0
) -> str | None:
    """Why growing past ``step`` makes no sense, or None to go on.

    * the table service used ``max_cores`` of its core or more: saturated;
    * action latency p99 over ``max_p99_ms``: people would notice;
    * the other core (the gateway and the load generator) used ``max_cores`` or more, or
      the generator took more than 1% of the turns late: it no longer keeps the pace, so
      more tables would not load the table service any further. (Counting the actions made
      against those the pace asks for would not tell: a turn between hands, before the
      next deal, finds nobody to act.)
    """
    if step.service_cores >= max_cores:
        return f"table service at {step.service_cores:.2f} of a core (>= {max_cores:g})"
    if step.p99_ms > max_p99_ms:
        return f"action p99 {step.p99_ms:.0f} ms (> {max_p99_ms:g} ms)"
    if step.front_cores >= max_cores or step.late_share > 0.01:
        return (
            f"the gateway's and the load generator's core is saturated "
            f"({step.front_cores:.2f} of it used, {step.late_share:.1%} of the turns late)"
        )
    return None
