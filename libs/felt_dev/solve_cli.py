"""``felt solve``: compute hard's floor offline and write the tables the runtime ships.

Heads-up Draw (card buckets, ``felt_dev.solve.draw``) and heads-up Hold'em preflop
(hand classes, ``felt_dev.solve.holdem``), both by CFR+ (``felt_dev.solve.cfr``), seeded,
on one core. Prints each solve's size, time, game value and the abstract game's
exploitability, and writes ``draw.json`` and ``holdem.json`` to ``--out`` (by default
the runtime's ``felt/players/bots/data``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "felt" / "players" / "bots" / "data"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=25, help="sampling seed (default 25)")
    parser.add_argument("--deals", type=int, default=30000, help="Draw deals sampled")
    parser.add_argument("--samples", type=int, default=24, help="Hold'em boards per class pair")
    parser.add_argument("--iterations", type=int, default=300, help="CFR+ iterations per game")
    parser.add_argument("--game", choices=("draw", "holdem", "both"), default="both")
    parser.add_argument("--out", type=Path, default=DATA, help="directory for the tables")


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``solve`` to an argparse subparsers object."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "solve", help="solve hard's floor strategy tables offline (CFR+)", description=__doc__
    )
    add_arguments(parser)
    parser.set_defaults(handler=run)
    return parser


def _draw_stat(key: str, action: str, facing: bool) -> str | None:
    first = key.startswith("1:")
    if facing:
        return ("fold_first" if first else "fold_later") if action == "f" else None
    if first:
        # First in (nobody bet yet: the first to act, or the second after a check), the
        # record's ``opened`` / ``open_chances`` in Draw.
        return "open" if key in ("1:", "1:k") and action == "b" else None
    return "bet_later" if action == "b" else None


def _draw_bet_later(key: str, action: str) -> bool:
    """A bet or raise after the draw (the second round's keys start ``2:``)."""
    return key.startswith("2:") and action in "br"


def _draw_references(solver: Any, weights: Any) -> dict[str, float]:
    """The Draw floor's reference frequencies (``_draw_stat``), plus ``weak_bet_later``.

    ``weak_bet_later``: the share of the floor's bets and raises after the draw made
    with at most one pair (final buckets below two pair). Hard compares an opponent's
    shown bets after the draw with it (``SeatStats.shown_bettor_weak``,
    ``floor_play._bets_too_few_weak``); computed from the solve so that a new solve
    keeps the two consistent.
    """
    import numpy as np

    from felt.players.bots.floor import DRAW_FINAL, DRAW_STATES, FINAL_TWO_PAIR
    from felt_dev.solve.export import frequencies, share_in

    refs: dict[str, float] = frequencies(solver, weights, _draw_stat)
    weak = np.arange(DRAW_STATES) % len(DRAW_FINAL) < FINAL_TWO_PAIR
    share = share_in(solver, weights, _draw_bet_later, weak)
    if share is not None:
        refs["weak_bet_later"] = share
    return refs


def _holdem_stat(key: str, action: str, facing: bool) -> str | None:
    if key == "p:":
        return "open" if action in "ra" else None
    if key == "p:r":
        return "fold_to_open" if action == "f" else None
    if key == "p:rr":
        return "fold_to_3bet" if action == "f" else None
    return None


def run(args: argparse.Namespace) -> int:
    from felt_dev.solve import draw, holdem
    from felt_dev.solve.export import frequencies, table_json

    args.out.mkdir(parents=True, exist_ok=True)
    games = ("draw", "holdem") if args.game == "both" else (args.game,)
    for game in games:
        start = time.process_time()
        if game == "draw":
            weights, wins = draw.sample_deals(args.deals, args.seed)
            solver = draw.build(weights, wins)
            stat = _draw_stat
            size = f"{args.deals} deals, {draw.DRAW_STATES} states a seat"
            per = 1000.0 / draw.BIG_BET
        else:
            weights = holdem.chance_weights()
            wins = holdem.equities(args.samples, args.seed)
            solver = holdem.build(weights, wins)
            stat = _holdem_stat
            size = f"{holdem.CLASSES} classes, {args.samples} boards a class pair"
            per = 1000.0 / 2  # half big blinds to milli big blinds
        sampled = time.process_time() - start
        solver.run(args.iterations)
        elapsed = time.process_time() - start
        value = solver.value() * per
        gap = solver.exploitability() * per
        meta: dict[str, object] = {
            "game": game,
            "seed": args.seed,
            "iterations": args.iterations,
            "abstraction": size,
            "cpu_seconds": round(elapsed, 1),
            "value_mbb": round(value, 1),
            "abstract_exploitability_mbb": round(gap, 1),
            "reference": (
                _draw_references(solver, weights)
                if game == "draw"
                else frequencies(solver, weights, stat)
            ),
        }
        text = table_json(solver, meta)
        path = args.out / f"{game}.json"
        path.write_text(text, encoding="utf-8")
        print(
            f"{game}: {size}, {len(solver.tables)} decision nodes, {args.iterations} CFR+ "
            f"iterations, {elapsed:.0f} s CPU ({sampled:.0f} s sampling); first player's value "
            f"{value:+.1f} mbb/hand, abstract exploitability {gap:.1f} mbb/hand; "
            f"{path} {len(text.encode()) / 1024:.0f} KB; reference {meta['reference']}"
        )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``felt solve`` run as a deferred subcommand (imported only when it runs)."""
    parser = argparse.ArgumentParser(prog="felt solve", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))
