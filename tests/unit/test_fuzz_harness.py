"""The API fuzzer's harness: a step that hangs is reported with where it waits, and it has
ended (cancelled) before the next step or example runs.

The one hung step seen in CI (the service's stop waiting for a renewal loop whose
cancellation was lost) said only "a step did not finish", and the cancelled step went on
afterwards, starting a service beside the next example's: that example, hypothesis's replay,
then failed differently (every call to its table refused TABLE_ELSEWHERE).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from tests.fuzz import machine
from tests.fuzz.machine import Harness, StepHung


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5.0)
    loop.close()


def test_a_hung_step_says_where_it_waits_and_ends_before_the_next(
    loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(machine, "STEP_TIMEOUT", 0.3)
    harness = Harness(env=None, loop=loop)  # type: ignore[arg-type]  # no service needed
    ended = threading.Event()

    async def waits_for_ever() -> None:
        await asyncio.Event().wait()

    async def step() -> None:
        try:
            await waits_for_ever()
        finally:
            await asyncio.sleep(0.2)  # a step takes a moment to end when cancelled
            ended.set()

    with pytest.raises(StepHung) as caught:
        harness.run(step())
    assert "waits_for_ever (tests/unit/test_fuzz_harness.py:" in str(caught.value)
    assert ended.is_set()  # before run returned: the next step starts after it
    assert harness.run(asyncio.sleep(0, "next")) == "next"


def test_a_step_that_does_not_end_when_cancelled_is_said_so(
    loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(machine, "STEP_TIMEOUT", 0.3)
    monkeypatch.setattr(machine, "CANCEL_WAIT", 0.3)
    harness = Harness(env=None, loop=loop)  # type: ignore[arg-type]
    release = threading.Event()

    async def stubborn() -> None:
        while not release.is_set():
            try:
                await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                continue  # swallowed, as a callee can

    with pytest.raises(StepHung) as caught:
        harness.run(stubborn())
    release.set()
    harness.run(asyncio.sleep(0.2))  # it ends now
    assert "stubborn (tests/unit/test_fuzz_harness.py:" in str(caught.value)
    assert "did not end in 0.3 s when cancelled" in str(caught.value)
