"""Hard-bot decision latency (p50/p99/max) at real decision points, both variants.

The hard bot runs Monte Carlo equity on every decision, so its latency bounds
how fast an AI seat answers. Decision points come from ladder hands (hard
against normal, heads-up and at a full table: 6-max Hold'em, 5-handed Draw),
with the table's opponent model folded across hands as the service does; each
is timed on its own, including building the bot's inputs (the view and the
redacted history), as a server would. Wall time is what a server sees; on a
shared, loaded machine it includes time the process waited for a core, so
the CPU time each decision used (``time.process_time``) is printed beside it:
that is the bot's own cost.

Run: ``python bench/bots.py [--hands N]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from felt.core.rules.commands import StartHand
from felt.core.rules.config import Variant
from felt.core.rules.engine import execute
from felt.core.rules.events import Event
from felt.core.rules.legal import legal_actions
from felt.core.rules.views import redact_all, view_for
from felt.players.bots import get_bot
from felt.players.bots.hard import HardBot, warm_up
from felt.players.bots.opponents import ModelBuilder
from felt_dev.ladder import FULL_TABLE, deck_for, hand_id_for, hand_setup, master_key


def measure(variant: Variant, hands: int, seed: int, seats: int = 2) -> list[tuple[float, float]]:
    """(wall, CPU) milliseconds per hard-bot decision over ``hands`` hands against normal bots."""
    hard, normal = HardBot(), get_bot("normal")
    timings: list[tuple[float, float]] = []
    model = ModelBuilder()
    key = master_key(seed)
    for deal in range(hands):
        hard_seat = deal % seats
        bots = {s: hard if s == hard_seat else normal for s in range(seats)}
        rngs = {s: random.Random(f"{seed}:{deal}:{s}") for s in range(seats)}
        deck = deck_for(variant, key, deal, seats)
        button = (deal // seats) % seats
        setup = hand_setup(variant, hand_id_for(key, str(deal)), deck, button, seats)
        table = model.stats
        state, events = execute(None, StartHand(setup))
        history: list[Event] = list(events)
        while not state.ended:
            legal = legal_actions(state)
            assert legal is not None
            seat = legal.seat
            started, cpu = time.perf_counter(), time.process_time()
            command = bots[seat].decide(
                view_for(state, seat), redact_all(history, seat), legal, rngs[seat], table
            )
            if seat == hard_seat:
                wall = (time.perf_counter() - started) * 1000
                timings.append((wall, (time.process_time() - cpu) * 1000))
            state, events = execute(state, command)
            history.extend(events)
        model.observe_all(redact_all(history, None))
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
    print(
        f"{'variant':<7} {'seats':>5} {'decisions':>9} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}"
        f" {'cpu p50':>8} {'cpu p99':>8}"
    )
    for variant in (Variant.NLHE, Variant.DRAW5):
        for seats in (2, FULL_TABLE[variant]):
            both = measure(variant, args.hands, args.seed, seats)
            t, c = [w for w, _ in both], [u for _, u in both]
            print(
                f"{variant.value:<7} {seats:>5} {len(t):>9} {statistics.median(t):>8.2f} "
                f"{percentile(t, 99):>8.2f} {max(t):>8.2f} "
                f"{statistics.median(c):>8.2f} {percentile(c, 99):>8.2f}"
            )


if __name__ == "__main__":
    main()
