"""Running the fuzzer: a bounded run (the CI test), and a timed run that goes on past failures."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from tests.fuzz.machine import Harness, machine_for


def fuzz_settings(examples: int, steps: int, shrink: bool = True) -> settings:
    """Bounded by examples and steps only (no time limits): the service is slow to start."""
    phases = [Phase.explicit, Phase.reuse, Phase.generate]
    if shrink:
        phases.append(Phase.shrink)
    return settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        database=None,
        phases=phases,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )


def run_bounded(harness: Harness, config: settings) -> None:
    """One hypothesis run of the machine (raises on the first violation, after shrinking)."""
    run_state_machine_as_test(machine_for(harness), settings=config)


@dataclass
class Finding:
    kinds: list[str]
    message: str
    reproduction: str


@dataclass
class Report:
    minutes: float = 0.0
    findings: list[Finding] = field(default_factory=list)


def run_timed(
    harness: Harness,
    minutes: float,
    examples: int,
    steps: int,
    shrink: bool,
    progress: Callable[[str], None],
) -> Report:
    """Run batches until ``minutes`` are up. A violation's kind becomes known after it is
    reported once, so later batches look for other defects instead of finding it again."""
    report = Report()
    start = time.monotonic()
    end = start + minutes * 60
    while time.monotonic() < end:
        try:
            run_bounded(harness, fuzz_settings(examples, steps, shrink))
        except Exception as exc:
            # The kinds the reported (shrunk) sequence violates; kinds met only while
            # shrinking stay unknown, so that they get their own reproduction later.
            # A flaky failure (one that did not replay: timing) carries the original inside.
            text = "\n".join(f"{e}\n" + "\n".join(getattr(e, "__notes__", [])) for e in _walk(exc))
            new = re.findall(r"^\[([^\]]+)\]", text, re.MULTILINE) or [type(exc).__name__]
            new = list(dict.fromkeys(new))
            notes = text
            report.findings.append(Finding(new, type(exc).__name__, notes))
            harness.known.update(new)
            progress(f"violation: {', '.join(new)}\n{notes}\n")
        progress(
            f"{(time.monotonic() - start) / 60:.1f} min: {harness.calls} calls, "
            f"{harness.sequences} sequences, {harness.hands} hands dealt, "
            f"{harness.showdowns} pots won at showdown, {len(harness.found)} violation kinds"
        )
    report.minutes = (time.monotonic() - start) / 60
    return report


def _walk(exc: BaseException) -> list[BaseException]:
    """``exc`` and, for an exception group (hypothesis's FlakyFailure), every exception in it."""
    out = [exc]
    for inner in getattr(exc, "exceptions", ()):
        out.extend(_walk(inner))
    return out
