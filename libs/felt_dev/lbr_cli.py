"""``felt lbr``: estimate how much each AI level can be beaten heads-up (local best response).

Plays ``felt_dev.lbr``'s local best response against each of ``--levels`` in each game,
``--deals`` duplicate deals each (twice as many hands), seeded, and prints LBR's winnings
in milli big blinds per hand (Hold'em) or milli big bets per hand (Draw) with 95%
intervals, plus the CPU time. The bots play without a record of LBR (their default play).
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
    from felt_dev.lbr import play

    variants = {"holdem": (Variant.NLHE,), "draw": (Variant.DRAW5,)}.get(
        args.variant, (Variant.NLHE, Variant.DRAW5)
    )
    for variant in variants:
        for level in [x.strip() for x in args.levels.split(",") if x.strip()]:
            start = time.process_time()
            est = play(variant, level, args.deals, args.seed, args.particles, args.rollouts)
            cpu = time.process_time() - start
            print(f"{est.line()}, {cpu:.0f} s CPU", flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``felt lbr`` run as a deferred subcommand (imported only when it runs)."""
    parser = argparse.ArgumentParser(prog="felt lbr", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))
