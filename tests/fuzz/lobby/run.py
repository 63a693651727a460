"""Running the lobby fuzzer: a bounded run (the CI test), and a timed run past failures."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

from tests.fuzz.lobby.harness import Harness
from tests.fuzz.lobby.machine import machine_for
from tests.fuzz.run import Finding, Report, _walk, fuzz_settings

__all__ = ["fuzz_settings", "run_bounded", "run_timed"]


def run_bounded(harness: Harness, config: settings) -> None:
    """One hypothesis run of the machine (raises on the first violation, after shrinking)."""
    run_state_machine_as_test(machine_for(harness), settings=config)


def run_timed(
    harness: Harness,
    minutes: float,
    examples: int,
    steps: int,
    shrink: bool,
    progress: Callable[[str], None],
) -> Report:
    """Run batches until ``minutes`` are up. A violation's kind is known once reported, so
    later batches look for other defects instead of finding it again."""
    report = Report()
    start = time.monotonic()
    end = start + minutes * 60
    while time.monotonic() < end:
        try:
            run_bounded(harness, fuzz_settings(examples, steps, shrink))
        except Exception as exc:
            text = "\n".join(f"{e}\n" + "\n".join(getattr(e, "__notes__", [])) for e in _walk(exc))
            kinds = re.findall(r"^\[([^\]]+)\]", text, re.MULTILINE) or [type(exc).__name__]
            kinds = list(dict.fromkeys(kinds))
            report.findings.append(Finding(kinds, type(exc).__name__, text))
            harness.known.update(kinds)
            progress(f"violation: {', '.join(kinds)}\n{text}\n")
        progress(
            f"{(time.monotonic() - start) / 60:.1f} min: {harness.calls} calls "
            f"({harness.refusals} refused), {harness.sequences} sequences, "
            f"{harness.hands} hands dealt, {len(harness.found)} violation kinds"
        )
    report.minutes = (time.monotonic() - start) / 60
    return report
