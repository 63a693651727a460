"""``felt lbr``: estimate how much each AI level can be beaten heads-up (local best response).

Plays ``felt_dev.lbr``'s local best response against each of ``--levels`` in each game,
``--deals`` duplicate deals each (twice as many hands), seeded, and prints LBR's winnings
in milli big blinds per hand (Hold'em) or milli big bets per hand (Draw) with 95%
intervals, plus the CPU time. Every level is played on the same deals and random
streams, so it then prints, for each other level, LBR's winnings against it minus
against hard (or the last level named), deal by deal, with a 95% interval. The bots
play without a record of LBR (their default play). ``--breakdown`` then prints where the
winnings arise (``felt_dev.lbr.breakdown``: by the street and size of LBR's last bet or
raise, the bot's raises it answered, position and how the hand ended, each level's share
with the board's luck out and, in brackets, the chips; each level minus hard, paired) and
the bot's fold rate to each of LBR's bet sizes on each street.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--levels", default="easy,normal,hard", help="bots to measure")
    parser.add_argument("--variant", choices=("holdem", "draw", "both"), default="both")
    parser.add_argument("--deals", type=int, default=200, help="duplicate deals per bot and game")
    parser.add_argument("--particles", type=int, default=24, help="belief size (bot hands)")
    parser.add_argument("--rollouts", type=int, default=8, help="runouts per equity estimate")
    parser.add_argument("--seed", type=int, default=25, help="seed of decks and beliefs")
    parser.add_argument(
        "--sizes",
        default="0.5,1",
        help="LBR's bet sizes, fractions of the pot, comma-separated (all-in is always added)",
    )
    parser.add_argument(
        "--refill",
        type=int,
        default=72,
        help="Hold'em: fresh hands drawn when the belief wears down (0: none, one "
        "random particle set as before)",
    )
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="also print where LBR's winnings arise (by its last bet's street and size, "
        "position, how the hand ended; each level minus hard, paired) and the bot's fold "
        "rate to each of LBR's bet sizes per street",
    )
    parser.add_argument(
        "--luck",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="subtract the board's luck from Hold'em hands (unbiased; --no-luck: raw results)",
    )


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``lbr`` to an argparse subparsers object."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "lbr",
        help="local best response: how much each AI level can be beaten heads-up",
        description=__doc__,
    )
    add_arguments(parser)
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from felt.core.rules.config import Variant
    from felt_dev.lbr import Estimate, paired, play

    variants = {"holdem": (Variant.NLHE,), "draw": (Variant.DRAW5,)}.get(
        args.variant, (Variant.NLHE, Variant.DRAW5)
    )
    sizes = tuple(float(x) for x in args.sizes.split(",") if x.strip())
    for variant in variants:
        results: list[Estimate] = []
        for level in [x.strip() for x in args.levels.split(",") if x.strip()]:
            start = time.process_time()
            est = play(
                variant,
                level,
                args.deals,
                args.seed,
                args.particles,
                args.rollouts,
                sizes=sizes,
                luck=args.luck,
                refill=args.refill,
            )
            cpu = time.process_time() - start
            print(f"{est.line()}, {cpu:.0f} s CPU; {est.raw_line()}", flush=True)
            results.append(est)
        # Each other level against hard (or the last level named), deal by deal.
        ref = next((e for e in results if e.bot == "hard"), results[-1])
        for est in results:
            if est is not ref:
                diff = paired(est, ref)
                print(f"{diff.line()} (paired); {diff.raw_line()}", flush=True)
        if args.breakdown:
            print_breakdown(results, ref)
    return 0


def print_breakdown(results: Sequence[Any], ref: Any) -> None:
    """Tables of ``felt_dev.lbr.breakdown`` and ``fold_rates`` for each estimate, side by side."""
    from felt_dev.lbr import SPOTS, breakdown, fold_rates, paired_breakdown

    others = [e for e in results if e is not ref]
    for name, spot in SPOTS.items():
        tables = {e.bot: {b.label: b for b in breakdown(e, spot)} for e in results}
        diffs = {e.bot: paired_breakdown(e, ref, spot) for e in others}
        order = sorted(
            {label for t in tables.values() for label in t},
            key=lambda label: (
                -max(abs(t[label].mean) if label in t else 0 for t in tables.values())
            ),
        )
        head = f"| {name} | " + " | ".join(
            f"{e.bot}: hands, mbb/hand [95%] (chips)" for e in results
        )
        head += "".join(f" | {e.bot} - {ref.bot}, paired" for e in others) + " |"
        print()
        print(head)
        print("|---" * (1 + len(results) + len(others)) + "|")
        for label in order:
            cells = []
            for e in results:
                b = tables[e.bot].get(label)
                cells.append(
                    "0"
                    if b is None
                    else f"{b.hands} {b.mean:+.0f} [{b.mean - b.half_width:+.0f}, "
                    f"{b.mean + b.half_width:+.0f}] ({b.chips:+.0f})"
                )
            for e in others:
                m, h = diffs[e.bot].get(label, (0.0, 0.0))
                cells.append(f"{m:+.0f} [{m - h:+.0f}, {m + h:+.0f}]")
            print(f"| {label} | " + " | ".join(cells) + " |")
    rates = {e.bot: fold_rates(e) for e in results}
    keys = sorted({k for r in rates.values() for k in r}, key=_street_order)
    print()
    print("| LBR bets | " + " | ".join(f"{e.bot}: bets, folds (predicted)" for e in results) + " |")
    print("|---" * (1 + len(results)) + "|")
    for key in keys:
        cells = []
        for e in results:
            if key not in rates[e.bot]:
                cells.append("0")
                continue
            n, folds, predicted = rates[e.bot][key]
            cells.append(f"{n}, {folds / n:.0%} ({predicted:.0%})")
        print(f"| {key[0]} {key[1]} | " + " | ".join(cells) + " |")


_ORDER = ("preflop", "flop", "turn", "river", "pre-draw", "post-draw")


def _street_order(key: tuple[str, str]) -> tuple[int, str]:
    street, size = key
    return (_ORDER.index(street) if street in _ORDER else len(_ORDER), size)


def main(argv: Sequence[str] | None = None) -> int:
    """``felt lbr`` run as a deferred subcommand (imported only when it runs)."""
    parser = argparse.ArgumentParser(prog="felt lbr", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))
