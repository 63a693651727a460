"""The services' shared RPC kit (``felt.service``), the parts that need no server.

The interceptors and the serve loop run in every integration test of the table service,
the lobby and the gateway; these are the pure parts both services rely on: reading
credentials from metadata, the auth-attempt throttle, what a refusal becomes, and a
start-up step given up when the stop signal comes first (``until_stopped``).
"""

from __future__ import annotations

import asyncio

import pytest

from felt.service.bearer import bearer, counted, header
from felt.service.refusals import Code, Refused, common_refusal, error_info
from felt.service.rpc import started_unless_stopped, until_stopped
from felt.storage.idempotency import RequestReused
from felt.wire import limits
from felt.wire.attempts import AttemptLimits, FailedAttempts
from poker.v1.reason_pb2 import Reason


def test_bearer_reads_only_a_text_bearer_header() -> None:
    assert bearer((("authorization", "Bearer  tok-1 "),)) == "tok-1"
    assert bearer((("x-other", "Bearer no"), ("authorization", "Bearer yes"))) == "yes"
    assert bearer((("authorization", "Basic dXNlcg=="),)) == ""
    assert bearer((("authorization", b"Bearer bytes"),)) == ""  # binary metadata: not a token
    assert bearer(None) == bearer(()) == ""
    assert header((("x-felt-seat-token", " s1 "),), "x-felt-seat-token") == "s1"
    assert header((("x-felt-seat-token", b"s1"),), "x-felt-seat-token") == ""


def test_guesses_are_counted_then_refused_unless_genuine_by_signature() -> None:
    attempts = FailedAttempts(AttemptLimits(burst=2, per_minute=1), lambda: 0.0)  # time stands
    compared: list[str] = []

    def login(credential: str) -> str:
        def full() -> str:
            compared.append(credential)  # a static credential compared: what a guess probes
            return credential

        return counted(attempts, "10.0.0.1", full, lambda: credential, lambda c: c == "bad")

    assert login("bad") == "bad"
    assert login("good") == "good"  # a genuine one spends nothing
    assert login("bad") == "bad"
    assert attempts.exhausted("10.0.0.1")
    compared.clear()
    with pytest.raises(Refused) as refused:
        login("bad")
    assert (refused.value.code, refused.value.reason) == (Code.RESOURCE_EXHAUSTED, "AUTH_THROTTLED")
    assert login("good") == "good"  # genuine by its signature alone: still let through
    assert compared == []  # past the allowance, nothing is compared
    # Another address, or none (not counted), is not held back by this one's guesses.
    assert counted(attempts, "10.0.0.2", lambda: "bad", lambda: "bad", lambda c: True) == "bad"
    assert counted(attempts, "", lambda: "bad", lambda: "bad", lambda c: True) == "bad"
    assert counted(None, "10.0.0.1", lambda: "bad", lambda: "bad", lambda c: True) == "bad"


def test_what_every_service_makes_of_a_refusal_a_limit_and_a_reused_id() -> None:
    own = Refused(Code.NOT_FOUND, "no table has this table_id", Reason.NO_TABLE)
    assert common_refusal(own) is own
    bounded = common_refusal(limits.LimitError(Reason.BAD_SEAT, "seat must be 0 to 8"))
    assert bounded is not None
    assert (bounded.code, bounded.reason, bounded.message) == (
        Code.INVALID_ARGUMENT,
        "BAD_SEAT",
        "seat must be 0 to 8",
    )
    reused = common_refusal(RequestReused())
    assert reused is not None and reused.reason == "REQUEST_ID_REUSED"
    assert common_refusal(ValueError("a fault, not a refusal")) is None
    relayed = Refused.relayed(Code.FAILED_PRECONDITION, "the table refused", "SEAT_TAKEN")
    assert relayed.reason == "SEAT_TAKEN"
    info = error_info(own.reason)
    assert (info.reason, info.domain) == ("NO_TABLE", "felt.poker")


async def test_a_start_up_step_is_given_up_when_the_stop_comes_first() -> None:
    """``until_stopped``: the step's end (True), or the stop's (False: the step cancelled and
    awaited, not left running); a step's error is raised."""
    stop = asyncio.Event()
    assert await until_stopped(stop, asyncio.sleep(0)) is True
    ended: list[str] = []

    async def opens_for_ever() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            ended.append("cancelled")

    asyncio.get_running_loop().call_later(0.01, stop.set)
    assert await until_stopped(stop, opens_for_ever()) is False
    assert ended == ["cancelled"]
    assert await until_stopped(stop, opens_for_ever()) is False  # stopped already: not run
    assert ended == ["cancelled"]

    async def fails() -> None:
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        await until_stopped(asyncio.Event(), fails())


async def test_a_start_stopped_meanwhile_finishes_within_its_grace_or_is_cancelled() -> None:
    """``started_unless_stopped``: a start that ends within the grace after the stop is let
    end (its value returned: the caller then stops it gracefully); one still running after it
    is cancelled and awaited (None); with no stop, the start's value; its errors raised."""
    stop = asyncio.Event()
    assert await started_unless_stopped(stop, asyncio.sleep(0, "up"), "svc") == "up"

    async def slow_start(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "up"

    loop = asyncio.get_running_loop()
    loop.call_later(0.01, stop.set)
    assert await started_unless_stopped(stop, slow_start(0.05), "svc", grace_s=5) == "up"
    ended: list[str] = []

    async def stuck() -> str:
        try:
            await asyncio.Event().wait()
        finally:
            ended.append("cancelled")
        return "never"

    assert await started_unless_stopped(stop, stuck(), "svc", grace_s=0.02) is None
    assert ended == ["cancelled"]

    async def refused() -> str:
        raise ValueError("port in use")

    with pytest.raises(ValueError, match="port in use"):
        await started_unless_stopped(asyncio.Event(), refused(), "svc")
