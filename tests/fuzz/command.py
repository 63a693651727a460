"""What the two fuzzers' long-run commands share (``python -m tests.fuzz``, ``python -m
tests.fuzz.lobby``): their options, the set-up they need before running, and the report of
what they found. Each command keeps what is its own: the stack it starts and its figures."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping

from hypothesis.internal.conjecture import engine

from felt.service.logging import configure_logging
from tests.fuzz.run import Finding


def fuzz_arguments(
    prog: str, description: str | None, *, examples: int, steps: int, shrink_seconds: float
) -> argparse.Namespace:
    """The command's options, parsed: run time, batch and sequence sizes, shrinking, logs."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--minutes", type=float, default=30.0, help="how long to run")
    parser.add_argument("--examples", type=int, default=examples, help="sequences per batch")
    parser.add_argument("--steps", type=int, default=steps, help="steps per sequence (at most)")
    parser.add_argument("--no-shrink", action="store_true", help="report unshrunk sequences")
    parser.add_argument(
        "--shrink-seconds",
        type=float,
        default=shrink_seconds,
        help="time to shrink each new violation (hypothesis' own limit is 300 s)",
    )
    parser.add_argument("--log-level", default="CRITICAL", help="the services' log level")
    args = parser.parse_args()
    configure_logging(json=True, level=args.log_level, stream=sys.stderr)
    # An internal of hypothesis (no setting exists): each shrink reruns whole sequences
    # against a freshly started stack, so the default 5 minutes per violation is long.
    engine.MAX_SHRINKING_SECONDS = int(args.shrink_seconds)
    return args


def print_violations(findings: Iterable[Finding], found: Mapping[str, list[str]]) -> None:
    """Each new violation's shrunk sequence, then every kind found with its details."""
    for finding in findings:
        print(f"\n== {', '.join(finding.kinds)} ==\n{finding.message}\n{finding.reproduction}")
    print("\n== violations found ==")
    for kind, details in sorted(found.items()):
        print(f"- {kind}")
        for detail in details:
            print(f"    {detail[:600]}")
