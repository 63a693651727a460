"""Subcommands of the ``felt`` command that live in the library, and the parser machinery.

Each subcommand module exposes ``register(subparsers)``, which adds its
parser(s) and sets ``handler`` (a function of the parsed arguments that
returns the exit status). Modules import their heavy dependencies inside the
handler, so one command's imports do not slow down or break the others.

The library names no service: the installed ``felt`` command is composed in
``services.cli``, which adds the services' subcommands (``felt serve``,
``felt table-service``, ``felt ai-worker``) to :data:`LIBRARY_COMMANDS`.
Adding a library command means writing such a module and naming it here.

A :class:`Deferred` subcommand is not imported to build the parser at all: only its name
and a line of help are registered, and its module (whose ``main(argv)`` parses its own
arguments) is imported when the command runs. That is how the installed command offers
the development tooling (``felt ladder``, from ``felt_dev``) without a production
process ever loading it.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["LIBRARY_COMMANDS", "Deferred", "build_parser", "main"]


@dataclass(frozen=True, slots=True)
class Deferred:
    """A subcommand ``name`` run by ``module.main(argv)``, imported only when it runs."""

    name: str
    module: str
    help: str

    def run(self, argv: Sequence[str]) -> int:
        return int(importlib.import_module(self.module).main(list(argv)))


LIBRARY_COMMANDS: tuple[str, ...] = (
    "felt.tools.phh.cli",
    "felt.tools.client.verify_hand_cli",
    "felt.tools.client.replay_cli",
    "felt.tools.client.play_cli",
    "felt.tools.config_cli",
    "felt.tools.decisions_cli",
)
"""Library modules whose ``register(subparsers)`` adds a subcommand, in help order."""


def build_parser(modules: Sequence[str | Deferred] = LIBRARY_COMMANDS) -> argparse.ArgumentParser:
    """The ``felt`` parser with the subcommands of ``modules`` (a deferred one only named)."""
    parser = argparse.ArgumentParser(
        prog="felt", description="Felt: an event-sourced poker backend."
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in modules:
        if isinstance(name, Deferred):
            stub = subparsers.add_parser(name.name, help=name.help, add_help=False)
            stub.add_argument("argv", nargs=argparse.REMAINDER)
            stub.set_defaults(handler=lambda args, command=name: command.run(args.argv))
        else:
            importlib.import_module(name).register(subparsers)
    return parser


def main(
    argv: Sequence[str] | None = None, modules: Sequence[str | Deferred] = LIBRARY_COMMANDS
) -> int:
    """Run ``felt`` with ``argv`` (default: the process arguments); returns the exit status.
    A deferred subcommand gets the rest of ``argv`` unparsed (its own parser reads it)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    for command in modules:
        if isinstance(command, Deferred) and argv[:1] == [command.name]:
            return command.run(argv[1:])
    args = build_parser(modules).parse_args(argv)
    try:
        status = args.handler(args)
    except BrokenPipeError:  # e.g. `felt phh verify ... | head`
        sys.stderr.close()
        return 1
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
