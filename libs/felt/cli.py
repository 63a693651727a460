"""The ``felt`` command: one entry point, with subcommands that live in their own modules.

Each subcommand module exposes ``register(subparsers)``, which adds its
parser(s) and sets ``handler`` (a function of the parsed arguments that
returns the exit status). Adding a command (``felt serve``, ``felt ladder``,
...) means writing such a module and naming it in :data:`SUBCOMMAND_MODULES`;
modules import their heavy dependencies inside the handler, so one command's
imports do not slow down or break the others.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ["SUBCOMMAND_MODULES", "build_parser", "main"]

SUBCOMMAND_MODULES: tuple[str, ...] = (
    "felt.phh.cli",
    "felt.client.verify_hand_cli",
    "services.table.cli",
    "felt.bots.ladder_cli",
    "services.serve_cli",
    "services.ai_worker.cli",
)
"""Modules whose ``register(subparsers)`` adds a subcommand, in help order."""


def build_parser() -> argparse.ArgumentParser:
    """The ``felt`` parser with every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="felt", description="Felt: an event-sourced poker backend."
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``felt`` with ``argv`` (default: the process arguments); returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        status = args.handler(args)
    except BrokenPipeError:  # e.g. `felt phh verify ... | head`
        sys.stderr.close()
        return 1
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
