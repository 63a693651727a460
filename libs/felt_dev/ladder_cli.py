"""``felt ladder``: play the bot ladder and report who beats whom, with confidence.

Heads-up matches and full tables (6-max Hold'em, 5-handed Draw: the first bot
against a field of the second), duplicate dealt. Without ``--seed`` a fresh
secret seed is drawn and printed: decks derive from it, so no bot can
predict them, and passing the printed seed reproduces the run exactly.

``register(subparsers)`` adds the command to the ``felt`` CLI; ``main()`` runs it
standalone (``python -m felt_dev.ladder_cli``). Work is split into chunks of
deals and spread over ``--workers`` processes; results are written as CSV and
JSON (with the paired differences and the verdict of ``felt_dev.verdict``), as
Markdown and drawn as a PNG (bars with 95% confidence intervals, one panel per
variant) when ``--out`` is given.

Bots from outside the package join with ``--bots MODULE``: the module's ``BOTS``
(name -> factory) are registered (``felt.players.bots.register``) and its ``GROUPS`` (name ->
bot names) may be named by ``--opponents``, which plays each of ``--levels`` (default
hard, normal, easy) against each opponent: ``felt ladder --bots felt_styles
--opponents development --levels hard`` plays hard against the development half of
the opponent styles. The library never names such a module: the caller does.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import multiprocessing
import secrets
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from felt_dev.ladder import Chunk, PairingResult
    from felt_dev.verdict import Check, Difference

# The bots, the rules core and matplotlib are imported by the handler, not here, so
# that registering the command costs the rest of the ``felt`` CLI nothing.
VARIANT_CHOICES = ("both", "draw", "nlhe")
TABLE_CHOICES = ("both", "heads-up", "full")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--hands",
        type=int,
        default=20000,
        help="hands per pairing, variant and table format (played as hands/seats deals, each "
        "once per seat rotation; default 20000)",
    )
    parser.add_argument("--variant", choices=VARIANT_CHOICES, default="both")
    parser.add_argument(
        "--tables",
        choices=TABLE_CHOICES,
        default="both",
        help="heads-up, full tables (6-max Hold'em, 5-handed Draw) or both (default)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="run seed (decks and bot RNGs); default: a fresh secret one, printed",
    )
    parser.add_argument("--workers", type=int, default=1, help="processes to play in parallel")
    parser.add_argument("--out", type=Path, default=None, help="directory for CSV/JSON/PNG")
    parser.add_argument(
        "--pairings",
        default="",
        help="comma-separated A:B pairings to play instead of the full ladder (e.g. hard:normal)",
    )
    parser.add_argument(
        "--bots",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE and register its BOTS (and GROUPS) so pairings can name them "
        "(repeatable; e.g. --bots felt_styles)",
    )
    parser.add_argument(
        "--opponents",
        default="",
        help="comma-separated bots or --bots groups to pit each of --levels against, "
        "instead of the full ladder (e.g. development,maniac)",
    )
    parser.add_argument(
        "--mix",
        default="",
        help="comma-separated --bots groups (or +-joined bots) to seat as one mixed field "
        "around each of --levels at full tables (e.g. development: lag, nit, ... in turn)",
    )
    parser.add_argument(
        "--levels",
        default="hard,normal,easy",
        help="the bots that face --opponents (default hard,normal,easy)",
    )
    parser.add_argument(
        "--chunk",
        type=int,
        default=250,
        help="deals per work unit (each rotation is one table for that many deals: its "
        "opponent model learns over them)",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``ladder`` to an argparse subparsers object; the handler is ``args.handler(args)``."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "ladder",
        help="play the AI levels against each other and the baselines (duplicate, heads-up)",
        description=__doc__,
    )
    add_arguments(parser)
    parser.set_defaults(handler=run)
    return parser


def _pairings(text: str) -> tuple[tuple[str, str], ...]:
    from felt_dev.ladder import PAIRINGS

    if not text.strip():
        return PAIRINGS
    out = []
    for item in text.split(","):
        first, _, second = item.strip().partition(":")
        if not first or not second:
            raise SystemExit(f"bad pairing {item!r}: write A:B, e.g. hard:normal")
        out.append((first, second))
    return tuple(out)


def load_bots(modules: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Import each module, register its ``BOTS``; returns the ``GROUPS`` they declare."""
    import importlib
    from collections.abc import Mapping

    from felt.players.bots import register

    groups: dict[str, tuple[str, ...]] = {}
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ImportError as e:
            raise SystemExit(f"--bots {name}: cannot import it ({e})") from None
        bots = getattr(module, "BOTS", None)
        if not isinstance(bots, Mapping):
            raise SystemExit(f"--bots {name}: the module has no BOTS mapping (name -> factory)")
        try:
            register(bots)
        except ValueError as e:
            raise SystemExit(f"--bots {name}: {e}") from None
        for group, members in dict(getattr(module, "GROUPS", {})).items():
            groups[str(group)] = tuple(str(m) for m in members)
    return groups


def _against(
    opponents: str, levels: str, groups: dict[str, tuple[str, ...]]
) -> tuple[tuple[str, str], ...]:
    """Each level against each opponent (groups expanded), checked against the known bots."""
    from felt.players.bots import known_bots

    names: list[str] = []
    for item in (x.strip() for x in opponents.split(",")):
        if item:
            names.extend(groups.get(item, (item,)))
    firsts = [x.strip() for x in levels.split(",") if x.strip()]
    known = set(known_bots())
    for name in [*firsts, *names]:
        if name not in known:
            raise SystemExit(f"unknown bot {name!r}; known: {', '.join(known_bots())}")
    return tuple((first, opp) for opp in dict.fromkeys(names) for first in firsts)


def _mixes(
    mixes: str, levels: str, groups: dict[str, tuple[str, ...]]
) -> tuple[tuple[str, str], ...]:
    """Each level against each mixed field (a group's members, or bots joined by ``+``),
    checked against the known bots; the field is the pairing's second name, ``+``-joined."""
    from felt.players.bots import known_bots
    from felt_dev.ladder import MIX

    known = set(known_bots())
    firsts = [x.strip() for x in levels.split(",") if x.strip()]
    fields = []
    for item in (x.strip() for x in mixes.split(",")):
        if not item:
            continue
        members = groups.get(item, tuple(item.split(MIX)))
        for name in (*firsts, *members):
            if name not in known:
                raise SystemExit(f"unknown bot {name!r}; known: {', '.join(known_bots())}")
        fields.append(MIX.join(members))
    return tuple((first, field) for field in fields for first in firsts)


def run(args: argparse.Namespace) -> int:
    """Play the ladder described by ``args``, print the table, write outputs; exit status."""
    from felt.core.rules.config import Variant
    from felt_dev.ladder import chunks, format_table, play_chunk, summarize
    from felt_dev.verdict import exploitation, tally, verdict

    if args.hands < 2:
        raise SystemExit("--hands must be at least 2 (one duplicate pair)")
    variants = {
        "nlhe": (Variant.NLHE,),
        "draw": (Variant.DRAW5,),
        "both": (Variant.NLHE, Variant.DRAW5),
    }[args.variant]
    if args.seed is None:
        args.seed = secrets.randbelow(2**62)
    print(f"seed {args.seed}", file=sys.stderr)
    groups = load_bots(args.bots)
    if args.opponents.strip() or args.mix.strip():
        if args.pairings.strip():
            raise SystemExit("--opponents/--mix and --pairings choose the pairings: give one")
        pairings = _against(args.opponents, args.levels, groups) if args.opponents.strip() else ()
        pairings += _mixes(args.mix, args.levels, groups)
    else:
        pairings = _pairings(args.pairings)
    formats = ("heads-up", "full") if args.tables == "both" else (args.tables,)
    work = list(chunks(variants, pairings, args.hands, args.seed, max(1, args.chunk), formats))
    results: dict[tuple[Variant, int, str, str], dict[int, list[float]]] = {}
    for c in work:
        results.setdefault((c.variant, c.seats, c.first, c.second), {})
    started = time.perf_counter()
    bar = _progress(sum(c.count * c.seats for c in work), args.no_progress)

    def collect(done: tuple[Chunk, list[float]]) -> None:
        chunk, pairs = done
        results[(chunk.variant, chunk.seats, chunk.first, chunk.second)][chunk.start] = pairs
        bar.update(chunk.seats * chunk.count)

    if args.workers > 1:
        with multiprocessing.get_context("fork").Pool(args.workers) as pool:
            for done in pool.imap_unordered(play_chunk, work):
                collect(done)
    else:
        for c in work:
            collect(play_chunk(c))
    bar.close()
    elapsed = time.perf_counter() - started
    summary = []
    deals: dict[tuple[Variant, int, str, str], list[float]] = {}
    for key, parts in results.items():
        variant, seats, first, second = key
        deals[key] = [x for start in sorted(parts) for x in parts[start]]
        summary.append(summarize(variant, first, second, deals[key], seats))
    differences = exploitation(deals, summary)
    checks = verdict(summary, differences)
    print(format_table(summary))
    print("\n" + tally(checks), end="")
    print(f"\n{sum(r.hands for r in summary)} hands in {elapsed:.0f} s (seed {args.seed})")
    if args.out is not None:
        paths = write_outputs(args.out, summary, vars(args), elapsed, differences, checks)
        print("wrote " + ", ".join(str(p) for p in paths))
    return 0


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, hidden: bool) -> Any:
    if hidden:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, unit="hand", smoothing=0.05, file=sys.stderr)


def write_outputs(
    out: Path,
    results: Sequence[PairingResult],
    options: dict[str, Any],
    elapsed: float,
    differences: Sequence[Difference] = (),
    checks: Sequence[Check] = (),
) -> list[Path]:
    """Write ``ladder.csv``, ``ladder.json``, ``ladder.md`` and ``ladder.png`` into ``out``.

    The JSON carries the paired differences and the verdict's checks
    (``felt_dev.verdict``) beside the results; the Markdown is the same run
    as tables for the docs.
    """
    from felt_dev.verdict import markdown

    out.mkdir(parents=True, exist_ok=True)
    rows = [r.as_dict() for r in results]
    csv_path = out / "ladder.csv"
    with csv_path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    json_path = out / "ladder.json"
    meta = {k: (str(v) if isinstance(v, Path) else v) for k, v in options.items() if k != "handler"}
    document = {
        "options": meta,
        "seconds": round(elapsed, 1),
        "results": rows,
        "differences": [d.as_dict() for d in differences],
        "checks": [c.as_dict() for c in checks],
    }
    json_path.write_text(json.dumps(document, indent=2) + "\n")
    md_path = out / "ladder.md"
    md_path.write_text(markdown(results, differences, checks))
    png_path = out / "ladder.png"
    plot(results, png_path)
    return [csv_path, json_path, md_path, png_path]


def bar_label(pairing: str, width: int = 40) -> str:
    """A chart label: a long mix (``hard vs mix a+b+...``) wrapped after a ``+`` so that
    it stays within about ``width`` characters a line and does not run into the bars."""
    lines = [""]
    for part in pairing.split("+"):
        piece = part if lines[-1] == "" else "+" + part
        if lines[-1] and len(lines[-1]) + len(piece) > width:
            lines[-1] += "+"
            lines.append(part)
        else:
            lines[-1] += piece
    return "\n".join(lines)


def plot(results: Sequence[PairingResult], path: Path) -> None:
    """Horizontal bars with 95% CI error bars, one panel per variant."""
    try:
        import matplotlib
    except ImportError:
        needed = "felt ladder draws its chart with matplotlib: pip install 'felt[ladder]'"
        raise SystemExit(needed) from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from felt_dev.ladder import table_name

    panels = list(dict.fromkeys((r.variant, r.seats) for r in results))
    # Rows are as tall as a bar, or more where a wrapped label runs to several lines.
    tallest = max(
        sum(
            max(1.0, 0.55 * (bar_label(r.pairing).count("\n") + 1))
            for r in results
            if (r.variant, r.seats) == p
        )
        for p in panels
    )
    cols = min(2, len(panels))
    nrows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(
        nrows, cols, figsize=(7.5 * cols, (0.4 * tallest + 1.5) * nrows), squeeze=False
    )
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    for ax, (variant, seats) in zip(axes.flat, panels, strict=False):
        rows = [r for r in results if (r.variant, r.seats) == (variant, seats)][::-1]
        ys = list(range(len(rows)))
        values = [r.per100 for r in rows]
        errors = [r.per100 - r.ci_low for r in rows]
        colors = [
            "#2b8a3e" if r.ci_low > 0 else "#c92a2a" if r.ci_high < 0 else "#868e96" for r in rows
        ]
        ax.barh(ys, values, xerr=errors, color=colors, capsize=3, ecolor="#212529")
        ax.set_yticks(ys, [bar_label(r.pairing) for r in rows])
        ax.axvline(0, color="#212529", linewidth=0.8)
        unit = rows[0].unit if rows else ""
        hands = rows[0].hands if rows else 0
        table = table_name(seats)
        ax.set_title(f"{variant} {table}: first bot's result\n({unit}, {hands} hands, 95% CI)")
        ax.set_xlabel(unit)
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="felt ladder", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
