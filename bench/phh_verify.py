"""Benchmark: Felt's PHH verifier against PokerKit's strict replay of the same hands.

Not a test. In one run it times, over the same list of files:

* the baseline, PokerKit 0.7.7 replaying each file strictly: load it with
  ``pokerkit.HandHistory.load`` and apply every action in order, repairing
  nothing (only the burn card PokerKit wants before each board card is
  supplied), then run the hand to its end; and
* Felt's ``felt.tools.phh.replay.verify_file`` on each file, in this process
  (parse, replay through ``felt.core.rules``, compare stacks): the per-CPU
  comparison; and
* ``felt phh verify``'s own loop (``verify_files``) on as many CPUs as it
  uses by default (one per CPU; ``--jobs`` overrides), which is how the
  command runs. PokerKit has no parallel replay, so its figure stays the
  one-process baseline; both ratios are printed.

Each timing is the best of ``--repeat`` rounds (default 5), the least
disturbed by other load; a round times each run once, in turn, so a slow
spell of a shared machine hits all of them alike, and each starts after a
garbage collection, as in a new process. It prints wall and CPU time, hands
per second and the speed-ups (the target is at least 10x): best time over
best time, and the median of the rounds' own ratios.
``--profile`` adds a cProfile summary of Felt's run; it cannot see inside
the compiled modules (``felt.compiled``), for which ``perf record -g`` on
this script shows where the time goes.

    .venv/bin/python bench/phh_verify.py [PATH ...] [--jobs N] [--repeat 5] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import importlib.metadata
import pstats
import statistics
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import pokerkit

from felt.tools.phh.cli import jobs_for, verify_files
from felt.tools.phh.oracle import load_history, strict_replay
from felt.tools.phh.parse import clear_action_cache
from felt.tools.phh.replay import iter_phh_files, verify_file

DEFAULT_CORPUS = Path(__file__).resolve().parents[1].parent / "shared/conformance/phh"


def pokerkit_strict(path: str) -> bool:
    """Replay one file in PokerKit, strictly (``felt.tools.phh.oracle``); True when it replays."""
    with open(path, "rb") as f:
        history = load_history(f.read())
    try:
        strict_replay(history)
    except ValueError:
        return False
    return True


def pokerkit_iterate(path: str) -> bool:
    """PokerKit's own (lenient) iteration over a file's states, for reference."""
    with open(path, "rb") as f, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        history = pokerkit.HandHistory.load(f)
        try:
            for _ in history:
                pass
        except ValueError:
            return False
    return True


class Timings:
    """Each run's wall and CPU time in every round, and its last counts."""

    def __init__(self) -> None:
        self.wall: dict[str, list[float]] = {}
        self.cpu: dict[str, list[float]] = {}
        self.counts: dict[str, Counter[str]] = {}

    def best(self, name: str) -> tuple[float, float, Counter[str]]:
        return min(self.wall[name]), min(self.cpu[name]), self.counts[name]

    def round_ratio(self, baseline: str, name: str) -> float:
        """The median over rounds of ``baseline``'s wall time over ``name``'s in that round."""
        return statistics.median(
            b / t for b, t in zip(self.wall[baseline], self.wall[name], strict=True)
        )


def timed_rounds(runs: dict[str, Callable[[], Counter[str]]], repeat: int) -> Timings:
    """Time each run once per round, for ``repeat`` rounds.

    A round runs each once, in turn, so a slow spell of a shared machine
    falls on all of them alike rather than on whichever was timed then.
    """
    timings = Timings()
    for _ in range(max(1, repeat)):
        for name, run in runs.items():
            gc.collect()  # no run pays for collecting the garbage of the one before
            wall, cpu = time.perf_counter(), time.process_time()
            counts = run()
            timings.wall.setdefault(name, []).append(time.perf_counter() - wall)
            timings.cpu.setdefault(name, []).append(time.process_time() - cpu)
            timings.counts[name] = counts
    return timings


def report(name: str, files: int, wall: float, cpu: float, counts: Counter[str]) -> None:
    print(
        f"{name:<26} {wall:8.3f} s wall {cpu:8.3f} s cpu {files / wall:9.0f} hands/s   "
        + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", default=[str(DEFAULT_CORPUS)])
    parser.add_argument(
        "--jobs",
        type=int,
        default=0,
        help="also time Felt on N CPUs (default: as `felt phh verify` runs, one per CPU)",
    )
    parser.add_argument(
        "--repeat", type=int, default=5, help="rounds, each timing every run once (the best counts)"
    )
    parser.add_argument("--lenient", action="store_true", help="also time PokerKit's iterator")
    parser.add_argument("--profile", action="store_true", help="cProfile Felt's run")
    args = parser.parse_args(argv)

    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        print(f"skipped: {', '.join(missing)} not found (the shared PHH corpus)", file=sys.stderr)
        return 0
    files = list(iter_phh_files(args.paths))
    if not files:
        print("no .phh files found", file=sys.stderr)
        return 1
    for path in files:  # read every file once so both runs start with a warm page cache
        Path(path).read_bytes()
    version = importlib.metadata.version("pokerkit")
    print(f"{len(files)} files, Python {sys.version.split()[0]}, pokerkit {version}")

    jobs = args.jobs or jobs_for(0, len(files))

    def pokerkit(replay: Callable[[str], bool]) -> Callable[[], Counter[str]]:
        return lambda: Counter("ok" if replay(p) else "refused" for p in files)

    def run_felt() -> Counter[str]:
        clear_action_cache()  # every run starts cold, as `felt phh verify` does
        return Counter(str(verify_file(p).status) for p in files)

    def run_command() -> Counter[str]:
        clear_action_cache()  # before the workers fork, so they start cold too
        return Counter(str(r.status) for r in verify_files(files, jobs))

    runs = {"pokerkit": pokerkit(pokerkit_strict), "felt": run_felt}
    if jobs > 1:
        runs["command"] = run_command
    if args.lenient:
        runs["lenient"] = pokerkit(pokerkit_iterate)
    timings = timed_rounds(runs, args.repeat)

    pk_wall, pk_cpu, pk_counts = timings.best("pokerkit")
    report("pokerkit strict (baseline)", len(files), pk_wall, pk_cpu, pk_counts)
    if args.lenient:
        report("pokerkit iterate", len(files), *timings.best("lenient"))
    felt_wall, felt_cpu, felt_counts = timings.best("felt")
    report("felt verify (1 process)", len(files), felt_wall, felt_cpu, felt_counts)
    print(
        f"speed-up: {pk_wall / felt_wall:.1f}x wall, {pk_cpu / felt_cpu:.1f}x cpu (target >= 10x); "
        f"median of the rounds' own ratios {timings.round_ratio('pokerkit', 'felt'):.1f}x"
    )
    if jobs > 1:
        wall, _, counts = timings.best("command")
        print(
            f"{f'felt verify ({jobs} CPUs)':<26} {wall:8.3f} s wall "
            f"{len(files) / wall:27.0f} hands/s   "
            + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        )
        print(
            f"speed-up of `felt phh verify` on {jobs} CPUs: {pk_wall / wall:.1f}x wall, "
            f"median of the rounds' {timings.round_ratio('pokerkit', 'command'):.1f}x "
            "(PokerKit has no parallel replay: its baseline is one process)"
        )
    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(run_felt)
        stats = pstats.Stats(profile, stream=sys.stdout)
        stats.sort_stats("tottime").print_stats(15)
        stats.sort_stats("cumulative").print_stats("felt", 25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
