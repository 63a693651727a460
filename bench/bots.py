"""Hard-bot decision latency (p50/p99/max) at real decision points, both variants.

The hard bot runs Monte Carlo equity on every decision, so its latency bounds
how fast an AI seat answers. Decision points come from heads-up ladder hands
(hard against normal), and each is timed on its own, including building the
bot's inputs (the view and the redacted history), as a server would.

Run: ``python bench/bots.py [--hands N]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from felt.bots import get_bot
from felt.bots.hard import HardBot, warm_up
from felt.bots.ladder import deck_for, hand_id_for, hand_setup, master_key
from felt.rules.commands import StartHand
from felt.rules.config import Variant
from felt.rules.engine import execute
from felt.rules.events import Event
from felt.rules.legal import legal_actions
from felt.rules.views import redact_all, view_for


def measure(variant: Variant, hands: int, seed: int) -> list[float]:
    """Milliseconds per hard-bot decision over ``hands`` hands against the normal bot."""
    hard, normal = HardBot(), get_bot("normal")
    timings: list[float] = []
    for deal in range(hands):
        hard_seat = deal % 2
        bots = {hard_seat: hard, 1 - hard_seat: normal}
        rngs = {s: random.Random(f"{seed}:{deal}:{s}") for s in (0, 1)}
        key = master_key(seed)
        deck = deck_for(variant, key, deal)
        setup = hand_setup(variant, hand_id_for(key, str(deal)), deck, (deal // 2) % 2)
        state, events = execute(None, StartHand(setup))
        history: list[Event] = list(events)
        while not state.ended:
            legal = legal_actions(state)
            assert legal is not None
            seat = legal.seat
            started = time.perf_counter()
            command = bots[seat].decide(
                view_for(state, seat), redact_all(history, seat), legal, rngs[seat]
            )
            if seat == hard_seat:
                timings.append((time.perf_counter() - started) * 1000)
            state, events = execute(state, command)
            history.extend(events)
    return timings


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=300, help="hands per variant")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    warm_up()  # one-time tables, as a server does at start-up
    for variant in (Variant.NLHE, Variant.DRAW5):  # and warm the interpreter's caches
        measure(variant, 5, args.seed + 1)
    print(f"{'variant':<7} {'decisions':>9} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for variant in (Variant.NLHE, Variant.DRAW5):
        t = measure(variant, args.hands, args.seed)
        print(
            f"{variant.value:<7} {len(t):>9} {statistics.median(t):>8.2f} "
            f"{percentile(t, 99):>8.2f} {max(t):>8.2f}"
        )


if __name__ == "__main__":
    main()
