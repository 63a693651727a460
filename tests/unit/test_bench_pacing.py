"""The arithmetic of the people-paced load test (``bench/_pacing.py``): its steps, its
percentiles, the tables per core it derives and when it stops growing."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _pacing() -> ModuleType:
    """``bench/_pacing.py`` by its path (bench/ is no package: its scripts run as files)."""
    spec = importlib.util.spec_from_file_location("bench_pacing", BENCH / "_pacing.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


pacing = _pacing()


def test_steps_double_up_to_the_last_which_is_always_planned() -> None:
    assert pacing.plan_steps(25, 200) == [25, 50, 100, 200]
    assert pacing.plan_steps(25, 300) == [25, 50, 100, 200, 300]
    assert pacing.plan_steps(25, 25) == [25]
    assert pacing.plan_steps(50, 10) == [10]
    with pytest.raises(ValueError):
        pacing.plan_steps(0, 10)


def test_percentiles_are_nearest_rank() -> None:
    values = [float(v) for v in range(100, 0, -1)]  # 1..100, unordered
    assert pacing.percentile(values, 50) == 50.0
    assert pacing.percentile(values, 99) == 99.0
    assert pacing.percentile(values, 100) == 100.0
    assert pacing.percentile([7.0], 99) == 7.0
    assert pacing.percentile([], 50) == 0.0
    assert pacing.percentile([1.0, 2.0, 3.0], 1) == 1.0
    with pytest.raises(ValueError):
        pacing.percentile(values, 0)


def test_tables_per_core_is_the_pace_over_the_cpu_per_action() -> None:
    # 1.5 ms of CPU per action, an action every 3 s: 0.5 ms per table-second, 2,000 a core.
    assert pacing.tables_per_core(0.0015, 3.0) == pytest.approx(2000)
    assert pacing.tables_per_core(0.0, 3.0) == 0.0


def test_growing_stops_at_a_saturated_core_a_slow_tail_or_a_late_generator() -> None:
    step = pacing.StepFigures
    assert pacing.stop_reason(step(100, 0.5, 0.5, 40.0, 0.0)) is None
    assert "table service" in pacing.stop_reason(step(100, 0.95, 0.5, 40.0, 0.0))
    assert "p99" in pacing.stop_reason(step(100, 0.5, 0.5, 1500.0, 0.0))
    assert "saturated" in pacing.stop_reason(step(100, 0.5, 0.95, 40.0, 0.0))
    assert "saturated" in pacing.stop_reason(step(100, 0.5, 0.5, 40.0, 0.02))
