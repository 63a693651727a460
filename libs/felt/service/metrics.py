"""One process's Prometheus metrics: its registry and the RPC metrics every service shares.

Each process (or each service object a test starts several of in one process) has
one ``CollectorRegistry``; :class:`RpcMetrics` holds it with the two RPC metrics the
kit's :class:`~felt.service.interceptors.CallInterceptor` records for every call:

* ``felt_rpc_requests_total{service,method,code}``: calls ended, by status code
  (``OK``, or the refusal's code; a stream is counted when it ends);
* ``felt_rpc_duration_seconds{service,method}``: how long they took (a stream: its
  whole life).

A service's own metrics go in the same registry (a subclass, or ``registry=`` when
they already have one), so ``/metrics`` (:mod:`felt.service.metrics_server`) serves
them all. Labels are bounded: a method name and a status code, never a table or a
player. The children of each label set are cached, so a call costs two dictionary
lookups and two increments (measured in ``docs/operations.md#metrics``).
"""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

__all__ = ["RPC_BUCKETS", "RpcMetrics", "metric_names"]

# A call is a few hundred microseconds on loopback; a stream lives for minutes.
RPC_BUCKETS = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    60.0,
    600.0,
)


class RpcMetrics:
    """A process's registry and the RPC metrics the shared interceptor records in it."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "felt_rpc_requests",
            "RPCs ended, by service, method and status code (a stream when it ends).",
            ["service", "method", "code"],
            registry=self.registry,
        )
        self.duration = Histogram(
            "felt_rpc_duration_seconds",
            "Time an RPC took, by service and method (a stream: its whole life).",
            ["service", "method"],
            registry=self.registry,
            buckets=RPC_BUCKETS,
        )
        self._counted: dict[tuple[str, str, str], Any] = {}
        self._timed: dict[tuple[str, str], Any] = {}

    def observe_rpc(
        self, service: str, method: str, code: str, seconds: float, request: Any
    ) -> None:
        """Count one ended call of ``service``'s ``method``. Subclasses add what a call means
        for their service (``request`` is the call's request message) and call this."""
        counted = self._counted.get((service, method, code))
        if counted is None:
            counted = self._counted[service, method, code] = self.requests.labels(
                service, method, code
            )
        timed = self._timed.get((service, method))
        if timed is None:
            timed = self._timed[service, method] = self.duration.labels(service, method)
        counted.inc()
        timed.observe(seconds)

    def exposition(self) -> bytes:
        """The registry in the Prometheus text format (what ``/metrics`` serves)."""
        return generate_latest(self.registry)


def metric_names(registry: CollectorRegistry) -> set[str]:
    """Every sample name ``registry`` can expose (``_total``, ``_bucket``, ... included) and
    every family name: what an alert rule or a dashboard may name."""
    names: set[str] = set()
    for family in registry.collect():
        names.add(family.name)
        if family.type == "counter":
            names.add(f"{family.name}_total")
        if family.type == "histogram":
            names.update(f"{family.name}{s}" for s in ("_bucket", "_sum", "_count"))
        names.update(sample.name for sample in family.samples)
    return names
