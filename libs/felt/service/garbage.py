"""How a long-running service process tunes Python's garbage collector once it has started.

A request makes many short-lived objects but few reference cycles, so the default thresholds
(a young collection every 700 allocations, a full one every hundred of those) spend a service's
CPU scanning what reference counting frees anyway, and a full collection walks every object the
process holds: in the gateway with a thousand open streams, their buffers, generators and
scopes. What start-up created is frozen out of the collector's sight (``gc.freeze``: imports,
configuration, the clients' channels), and young objects are collected every 20,000
allocations instead of 700. Cycles are still collected; less often.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 20_000


def collect_less_often() -> None:
    """Collect now, freeze what survives, and raise the young generation's threshold."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, 20, 20)
