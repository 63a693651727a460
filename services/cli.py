"""The installed ``felt`` command: the library's subcommands and the services'.

This is where the services meet the library's command line (the library
names no service) and the development tooling's (``felt ladder``, from
``felt_dev``, which the runtime library never imports, and which is deferred: only its
name is registered, ``felt_dev`` is imported when ``felt ladder`` runs). Each service's
``cli`` module only registers its options; its program is imported when the command runs.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from felt.tools import cli

SUBCOMMAND_MODULES: tuple[str | cli.Deferred, ...] = (
    *cli.LIBRARY_COMMANDS,
    cli.Deferred(
        "ladder",
        "felt_dev.ladder_cli",
        "play the AI levels against each other and the baselines (duplicate, heads-up)",
    ),
    cli.Deferred(
        "solve", "felt_dev.solve_cli", "solve hard's floor strategy tables offline (CFR+)"
    ),
    cli.Deferred(
        "lbr",
        "felt_dev.lbr_cli",
        "local best response: how much each AI level can be beaten heads-up",
    ),
    "services.table.cli",
    "services.serve_cli",
    "services.ai_worker.cli",
    "services.projector.cli",
    "services.lobby.cli",
    "services.lobby.db_cli",
    "services.lobby.audit_cli",
    "services.lobby.sagas_cli",
    "services.gateway.cli",
)
"""Every module whose ``register(subparsers)`` adds a ``felt`` subcommand, in help order."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``felt`` with ``argv`` (default: the process arguments); returns the exit status."""
    return cli.main(argv, SUBCOMMAND_MODULES)


if __name__ == "__main__":
    sys.exit(main())
