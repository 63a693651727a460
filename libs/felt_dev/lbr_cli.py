"""``felt lbr``: estimate how much each AI level can be beaten heads-up (local best response).

Plays ``felt_dev.lbr``'s local best response against each of ``--levels`` in each game,
``--deals`` duplicate deals each (twice as many hands), seeded, and prints LBR's winnings
in milli big blinds per hand (Hold'em) or milli big bets per hand (Draw) with 95%
intervals, plus the CPU time. Every level is played on the same deals and random
streams, so it then prints, for each other level, LBR's winnings against it minus
against hard (or the last level named), deal by deal, with a 95% interval. The bots
play without a record of LBR (their default play).
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
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``felt lbr`` run as a deferred subcommand (imported only when it runs)."""
    parser = argparse.ArgumentParser(prog="felt lbr", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))
