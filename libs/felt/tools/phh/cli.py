"""``felt phh verify`` and ``felt phh export``: the PHH tools on the command line.

``verify`` replays hand histories through Felt's rules core and prints one
line per failing file, then ``N passed, M failed`` (``, K skipped`` when
files of other variants were found); it exits 0 only when nothing failed.
Thousands of files are verified on every CPU (this process and ``--jobs`` - 1
workers, each on its own shard), since each hand is independent and the
replay is CPU-bound.

``export`` replays one PHH file through Felt and writes the hand back as
Felt played it (its events as PHH, amounts in the file's own units), in full
or as one player saw it: a normalised record, and the same code path that
writes Felt's own hands.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from felt.tools.phh.replay import VerifyResult

__all__ = ["jobs_for", "register", "run_export", "run_verify", "verify_files"]

PARALLEL_MIN_FILES = 256
"""Below this many files one process is faster than starting workers."""


def register(subparsers: Any) -> None:
    """Add ``phh verify`` and ``phh export`` to the ``felt`` command."""
    phh = subparsers.add_parser("phh", help="PHH hand histories: verify and export")
    commands = phh.add_subparsers(dest="phh_command", metavar="COMMAND", required=True)

    verify = commands.add_parser(
        "verify",
        help="replay .phh files through Felt's rules and compare the results",
        description="Replay PHH hand histories (files, or directories searched recursively "
        "for *.phh) through Felt's rules core. Prints one line per failing file and a "
        "summary line; exits 1 if any file failed.",
    )
    verify.add_argument("paths", nargs="+", metavar="PATH", help="a .phh file or a directory")
    verify.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=0,
        help="worker processes (default 0: one per CPU for large runs, else 1)",
    )
    verify.add_argument(
        "-v", "--verbose", action="store_true", help="also print skipped files and notes"
    )
    verify.set_defaults(handler=run_verify)

    export = commands.add_parser(
        "export",
        help="replay a .phh file through Felt and write the hand back as PHH",
        description="Replay one PHH hand through Felt's rules core and write Felt's "
        "hand (its events) as PHH, in full or as one player saw it.",
    )
    export.add_argument("path", metavar="FILE", help="a .phh file")
    export.add_argument(
        "--seat", metavar="pN", help="write the hand as player pN saw it (others' cards ????)"
    )
    export.add_argument("-o", "--output", metavar="OUT", help="write here instead of stdout")
    export.set_defaults(handler=run_export)


def jobs_for(requested: int, files: int) -> int:
    """Worker processes for a run: as requested, else one per CPU for large runs."""
    if requested > 0:
        return requested
    if files < PARALLEL_MIN_FILES:
        return 1
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)


def verify_files(files: Sequence[str], jobs: int = 1) -> Iterator[VerifyResult]:
    """Verify ``files`` in order, on ``jobs`` CPUs when more than one.

    The files are cut into ``jobs`` contiguous shards: this process verifies
    the first while ``jobs - 1`` worker processes verify the others, each
    sending its results back in one message. So every CPU replays hands (a
    pool that fed its workers in small chunks kept this process busy just
    passing results on) and results still come out in file order.
    """
    from felt.tools.phh.replay import verify_file

    if jobs <= 1 or len(files) < 2 * jobs:
        yield from map(verify_file, files)
        return
    import multiprocessing
    import threading

    # Forking is the cheapest start, but unsafe once other threads exist (a lock
    # held by one would stay held in the child): then start from a clean server.
    methods = multiprocessing.get_all_start_methods()
    context: multiprocessing.context.BaseContext
    if threading.active_count() > 1 and "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
    else:
        context = multiprocessing.get_context("fork" if "fork" in methods else None)
    cuts = [len(files) * k // jobs for k in range(jobs + 1)]
    with context.Pool(jobs - 1) as pool:
        shards = [
            pool.apply_async(_verify_shard, (files[cuts[k] : cuts[k + 1]],)) for k in range(1, jobs)
        ]
        yield from map(verify_file, files[: cuts[1]])
        for shard in shards:
            yield from shard.get()


def _verify_shard(files: Sequence[str]) -> list[VerifyResult]:
    """A worker's share of :func:`verify_files` (a module-level function, so it pickles)."""
    from felt.tools.phh.replay import verify_file

    return list(map(verify_file, files))


def run_verify(args: argparse.Namespace) -> int:
    """``felt phh verify``: returns 0 only when no file failed."""
    from felt.tools.phh.replay import Status, iter_phh_files

    files = list(iter_phh_files(args.paths))
    counts = dict.fromkeys(Status, 0)
    out = sys.stdout
    for result in verify_files(files, jobs_for(args.jobs, len(files))):
        counts[result.status] += 1
        if result.status == Status.FAILED:
            print(f"{result.path}: {result.reason}", file=out)
        elif args.verbose and result.reason:
            print(f"{result.path}: {result.status}: {result.reason}", file=out)
    if not files:
        print("no .phh files found", file=sys.stderr)
    summary = f"{counts[Status.PASSED]} passed, {counts[Status.FAILED]} failed"
    if counts[Status.SKIPPED]:
        summary += f", {counts[Status.SKIPPED]} skipped"
    print(summary, file=out)
    out.flush()
    return 0 if counts[Status.FAILED] == 0 else 1


def _player(text: str, count: int) -> int:
    number = text[1:] if text[:1] in ("p", "P") else text
    if not number.isdigit() or not 1 <= int(number) <= count:
        raise ValueError(f"--seat {text!r}: expected p1..p{count}")
    return int(number) - 1


def run_export(args: argparse.Namespace) -> int:
    """``felt phh export``: 0 on success, 1 if the file cannot be read or replayed."""
    from felt.tools.phh.export import export_phh
    from felt.tools.phh.parse import PhhError, load
    from felt.tools.phh.replay import ReplayError, replay_hand

    try:
        hand = load(args.path)
        viewer = None if args.seat is None else _player(args.seat, hand.player_count)
        replayed = replay_hand(hand, keep_events=True)
    except (OSError, PhhError, ReplayError, ValueError) as e:
        print(f"{args.path}: {e}", file=sys.stderr)
        return 1
    text = export_phh(replayed.events, viewer=viewer, scale=hand.scale)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0
