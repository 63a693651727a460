"""Benchmark of Felt's native evaluator and equity against phevaluator and eval7.

Not a test: run ``python bench/evaluator.py``. Everything is measured in the
same run on the same pre-generated hands so that the ratios are meaningful on
whatever machine runs it.

Targets: Felt's best-of-7 per-call rate >= 0.5x phevaluator's native call, and
Felt's 10,000-sample hold'em equity <= 5 ms.
"""

from __future__ import annotations

import random
import statistics
import time
import warnings
from collections.abc import Callable, Sequence

from phevaluator import _pheval  # type: ignore[import-untyped]

from felt.core import _native
from felt.players.equity import draw_equity, holdem_equity

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import eval7  # type: ignore[import-untyped]

N_HANDS = 200_000
ROUNDS = 7
EQUITY_SAMPLES = 10_000
EQUITY_RUNS = 15


def per_call_rate(fn: Callable[..., int], hands: Sequence[tuple[int, ...]]) -> float:
    """Best-of-ROUNDS evaluations per second, one Python call per hand."""
    best = 0.0
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for h in hands:
            fn(*h)
        best = max(best, len(hands) / (time.perf_counter() - start))
    return best


def batch_rate(buf: bytes, n: int) -> float:
    """Best-of-ROUNDS evaluations per second through ``evaluate_many``."""
    best = 0.0
    for _ in range(ROUNDS):
        start = time.perf_counter()
        _native.evaluate_many(buf, 7)
        best = max(best, n / (time.perf_counter() - start))
    return best


def median_ms(fn: Callable[[int], object]) -> float:
    times = []
    for run in range(EQUITY_RUNS):
        start = time.perf_counter()
        fn(run)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main() -> None:
    rng = random.Random(2024)
    hands = [tuple(rng.sample(range(52), 7)) for _ in range(N_HANDS)]
    buf = bytes(c for h in hands for c in h)

    ph = per_call_rate(_pheval.evaluate_7cards, hands)
    felt = per_call_rate(_native.evaluate, hands)
    batch = batch_rate(buf, N_HANDS)
    print(f"7-card evaluation, {N_HANDS:,} random hands, best of {ROUNDS}")
    row("(a) phevaluator _pheval.evaluate_7cards (baseline)", f"{ph / 1e6:6.2f} M/s")
    row(
        "(b) felt.core._native.evaluate, one call per hand",
        f"{felt / 1e6:6.2f} M/s = {felt / ph:.2f}x baseline (target >= 0.5x)",
    )
    row(
        "(c) felt.core._native.evaluate_many, one batch",
        f"{batch / 1e6:6.2f} M/s = {batch / ph:.2f}x baseline",
    )

    hero_e7 = [eval7.Card("As"), eval7.Card("Kd")]
    any_two = eval7.HandRange("22+,A2+,K2+,Q2+,J2+,T2+,92+,82+,72+,62+,52+,42+,32")
    e7_ms = median_ms(
        lambda _: eval7.py_hand_vs_range_monte_carlo(hero_e7, any_two, [], EQUITY_SAMPLES)
    )
    felt_ms = median_ms(
        lambda seed: holdem_equity("AsKd", opponents=1, samples=EQUITY_SAMPLES, seed=seed)
    )
    ranged_ms = median_ms(
        lambda seed: holdem_equity(
            "AsKd", opponents=["TT+,AQs+,AQo+", None], samples=EQUITY_SAMPLES, seed=seed
        )
    )
    draw_ms = median_ms(
        lambda seed: draw_equity(
            "AsKdQh7c2d", "AsKd", opponent_draws=[3], samples=EQUITY_SAMPLES, seed=seed
        )
    )
    draw3_ms = median_ms(
        lambda seed: draw_equity(
            "AsKdQh7c2d", "AsKd", opponent_draws=[0, 1, 3], samples=EQUITY_SAMPLES, seed=seed
        )
    )
    print(f"\nEquity, {EQUITY_SAMPLES:,} samples, median of {EQUITY_RUNS} runs")
    row("(d) eval7 py_hand_vs_range_monte_carlo, AsKd vs any two", f"{e7_ms:6.2f} ms")
    row(
        "    felt holdem_equity, AsKd vs any two",
        f"{felt_ms:6.2f} ms = {e7_ms / felt_ms:.2f}x eval7's speed (target <= 5 ms)",
    )
    row("    felt holdem_equity, AsKd vs TT+,AQ+ and a random hand", f"{ranged_ms:6.2f} ms")
    row("    felt draw_equity, keep AK vs one opponent drawing 3", f"{draw_ms:6.2f} ms")
    row("    felt draw_equity, keep AK vs opponents drawing 0, 1, 3", f"{draw3_ms:6.2f} ms")
    met = felt >= 0.5 * ph and felt_ms <= 5.0
    print(f"\ntargets {'met' if met else 'NOT met'}")


def row(label: str, figure: str) -> None:
    print(f"  {label:<58} {figure}")


if __name__ == "__main__":
    main()
