"""Subcommands of the ``felt`` command that live in the library, and the parser machinery.

Each subcommand module exposes ``register(subparsers)``, which adds its
parser(s) and sets ``handler`` (a function of the parsed arguments that
returns the exit status). Modules import their heavy dependencies inside the
handler, so one command's imports do not slow down or break the others.

The library names no service: the installed ``felt`` command is composed in
``services.cli``, which adds the services' subcommands (``felt serve``,
``felt table-service``, ``felt ai-worker``) to :data:`LIBRARY_COMMANDS`.
Adding a library command means writing such a module and naming it here.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ["LIBRARY_COMMANDS", "build_parser", "main"]

LIBRARY_COMMANDS: tuple[str, ...] = (
    "felt.tools.phh.cli",
    "felt.tools.client.verify_hand_cli",
    "felt.tools.client.replay_cli",
    "felt.tools.client.play_cli",
    "felt.tools.config_cli",
    "felt.tools.decisions_cli",
)
"""Library modules whose ``register(subparsers)`` adds a subcommand, in help order."""


def build_parser(modules: Sequence[str] = LIBRARY_COMMANDS) -> argparse.ArgumentParser:
    """The ``felt`` parser with the subcommands of ``modules``."""
    parser = argparse.ArgumentParser(
        prog="felt", description="Felt: an event-sourced poker backend."
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in modules:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None, modules: Sequence[str] = LIBRARY_COMMANDS) -> int:
    """Run ``felt`` with ``argv`` (default: the process arguments); returns the exit status."""
    args = build_parser(modules).parse_args(argv)
    try:
        status = args.handler(args)
    except BrokenPipeError:  # e.g. `felt phh verify ... | head`
        sys.stderr.close()
        return 1
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
