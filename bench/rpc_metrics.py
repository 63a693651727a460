"""Benchmark of what the RPC metrics add to a call: the shared ``CallInterceptor`` with and
without the table service's ``TableMetrics``, and the metered event store's per-event check.

Not a test: run ``python bench/rpc_metrics.py`` (``--help`` for options).

The interceptor wraps a handler that returns at once, so the figure is the wrapper alone
(log context, deadline check, status mapping, and with metrics: two clock reads, the cached
counter and histogram children, the ``SubmitAction`` outcome). Each figure is the best of
``--rounds`` interleaved rounds, the one least disturbed by other load on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from felt.service.interceptors import CallInterceptor
from poker.events.v1 import events_pb2
from poker.v1 import table_service_pb2 as pb
from services.table.interceptors import call_interceptor
from services.table.metrics import TableMetrics, _starts_hand

SERVICE = "poker.v1.TableService"


class _Context:
    """What the interceptor asks of a call's context on the success path."""

    def time_remaining(self) -> float | None:
        return None


async def _handler(request: Any, context: Any) -> Any:
    return request


async def _per_call(interceptor: CallInterceptor, calls: int) -> float:
    guarded = interceptor.unary(_handler, "SubmitAction")
    request = pb.SubmitActionRequest(table_id="t-1", request_id="r-1", seat=1)
    context: Any = _Context()
    start = time.perf_counter()
    for _ in range(calls):
        await guarded(request, context)
    return (time.perf_counter() - start) / calls


def _per_event(events: int) -> float:
    event = events_pb2.StoredEvent(sequence=5, table_id="t-1", hand_id="t-1:4")
    event.player_folded.seat = 1
    data = event.SerializeToString()
    start = time.perf_counter()
    for _ in range(events):
        _starts_hand(data)
    return (time.perf_counter() - start) / events


async def main(rounds: int, calls: int) -> None:
    plain = call_interceptor(SERVICE)
    metered = call_interceptor(SERVICE, TableMetrics())
    best = {"plain": float("inf"), "metered": float("inf"), "event": float("inf")}
    for _ in range(rounds):
        best["plain"] = min(best["plain"], await _per_call(plain, calls))
        best["metered"] = min(best["metered"], await _per_call(metered, calls))
        best["event"] = min(best["event"], _per_event(calls))
    us = {name: seconds * 1e6 for name, seconds in best.items()}
    print(f"CallInterceptor, no metrics     {us['plain']:6.2f} us/call")
    print(f"CallInterceptor, TableMetrics   {us['metered']:6.2f} us/call")
    print(f"  added by the metrics          {us['metered'] - us['plain']:6.2f} us/call")
    print(f"hand check of an appended event {us['event']:6.2f} us/event")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (best kept)")
    parser.add_argument("--calls", type=int, default=50_000, help="calls per round")
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.calls))
