"""The answer policy: submit a decision to the table, and say what its outcome means.

A late or duplicate answer (FAILED_PRECONDITION, ABORTED, NOT_FOUND, or the
idempotent replay of an earlier answer) is harmless and acknowledged; an
action the service calls INVALID_ARGUMENT is a bot bug (dead-lettered); any
other failure (UNAVAILABLE, DEADLINE_EXCEEDED, an auth problem) is transient:
the request stays pending and is retried after a claim.

An answer goes to the instance that owns the table (:class:`OwnerSubmit`, the shared
``felt.service.table_router``), retried there once at once when an UNAVAILABLE shows that
the table moved (the request id makes the retry harmless).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from datetime import UTC, datetime
from typing import Any, Protocol

import grpc
import structlog

from felt.service.table_router import OwnerCalls
from poker.v1 import ai_pb2
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from services.ai_worker.decide import Decision
from services.ai_worker.metrics import WorkerMetrics

log = structlog.get_logger("felt.ai_worker")

HARMLESS = {
    # The table moved on (someone timed the seat out, or the answer is a duplicate).
    grpc.StatusCode.FAILED_PRECONDITION: "refused",
    grpc.StatusCode.ABORTED: "stale",
    # The table is gone.
    grpc.StatusCode.NOT_FOUND: "gone",
}
AUTH = {grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED}


class SubmitStub(Protocol):
    """What the worker needs of the table service (a ``TableServiceStub``, or a test's fake)."""

    async def SubmitAction(
        self, request: pb.SubmitActionRequest, *, metadata: Any, timeout: float
    ) -> pb.SubmitActionResponse: ...


class OwnerSubmit:
    """``SubmitAction`` at the table's owner, wherever it runs now."""

    def __init__(self, calls: OwnerCalls[rpc.TableServiceAsyncStub]) -> None:
        self.calls = calls

    async def SubmitAction(
        self, request: pb.SubmitActionRequest, *, metadata: Any, timeout: float
    ) -> pb.SubmitActionResponse:
        # ``timeout`` bounds both attempts together: a retry at the new owner gets what the
        # first left of it, so the answer never overruns the decision's deadline.
        until = time.monotonic() + timeout

        def submit(stub: rpc.TableServiceAsyncStub) -> Awaitable[pb.SubmitActionResponse]:
            left = max(0.05, until - time.monotonic())
            return stub.SubmitAction(request, metadata=metadata, timeout=left)

        return await self.calls.call(request.table_id, submit)


class Answerer:
    """Submits decisions with the AI token, within the request's deadline."""

    def __init__(
        self, stub: SubmitStub, ai_token: str, rpc_timeout_s: float, metrics: WorkerMetrics
    ) -> None:
        self.stub = stub
        self.metadata = (("authorization", f"Bearer {ai_token}"),)
        self.rpc_timeout_s = rpc_timeout_s
        self.metrics = metrics

    async def submit(
        self, request: ai_pb2.DecisionRequest, decision: Decision, deadline: datetime | None
    ) -> str | None:
        """Answer the table; returns the outcome, or None when the answer should be retried.

        An outcome starting with ``invalid`` means the action was refused as malformed.
        """
        timeout = self.rpc_timeout_s
        if deadline is not None:
            # Past the deadline (plus slack for clock skew) the answer is refused anyway.
            remaining = (deadline - datetime.now(UTC)).total_seconds() + 1.0
            timeout = max(0.1, min(timeout, remaining))
        call = pb.SubmitActionRequest(
            table_id=request.table_id,
            seat=request.seat,
            request_id=request.request_id,
            expected_sequence=request.expected_sequence,
            action=decision.action,
            sequence_only=True,  # the table builds no view for us: we read the sequence only
        )
        try:
            response = await self.stub.SubmitAction(call, metadata=self.metadata, timeout=timeout)
        except grpc.aio.AioRpcError as err:
            code = err.code()
            if code in HARMLESS:
                log.info(
                    "ai_answer_refused",
                    code=code.name,
                    detail=err.details(),
                    action=str(decision.command),
                )
                return HARMLESS[code]
            if code == grpc.StatusCode.INVALID_ARGUMENT:
                self.metrics.errors.labels(kind="invalid").inc()
                log.error("ai_answer_invalid", detail=err.details(), action=str(decision.command))
                return f"invalid action {decision.command}: {err.details()}"
            kind = "auth" if code in AUTH else "transient"
            self.metrics.errors.labels(kind=kind).inc()
            log.warning(
                "ai_answer_failed", code=code.name, detail=err.details(), retry="after claim"
            )
            return None
        # DEBUG: at hundreds of decisions/s a line each would dominate the log (and cost ~10%
        # CPU); the table's event stream records every action, the metrics count them.
        log.debug(
            "ai_decided",
            level=decision.level,
            action=str(decision.command),
            sequence=response.sequence,
        )
        return "accepted"
