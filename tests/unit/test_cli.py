"""The ``felt`` command line: every subcommand registers without loading the services."""

from __future__ import annotations

import subprocess
import sys

from felt.tools.cli import build_parser
from services.cli import SUBCOMMAND_MODULES

COMMANDS = {
    "phh",
    "verify-hand",
    "replay",
    "play",
    "table-service",
    "ladder",
    "solve",
    "lbr",
    "serve",
    "ai-worker",
    "projector",
    "lobby",
    "db",
    "audit",
    "sagas",
    "gateway",
    "config",
    "decisions",
}


def test_every_subcommand_is_registered() -> None:
    parser = build_parser(SUBCOMMAND_MODULES)
    choices = next(
        a.choices for a in parser._actions if a.dest == "command" and a.choices is not None
    )
    assert set(choices) == COMMANDS
    assert len(SUBCOMMAND_MODULES) == len(COMMANDS)


def test_building_the_parser_loads_no_server_code() -> None:
    """``felt phh verify`` and ``felt --help`` must not pay for gRPC, Redis or the services.

    Checked in a new interpreter: this test process has imported them already.
    """
    heavy = [
        "grpc",
        "redis",
        "google.protobuf",
        "services.serve",
        "felt.tools.client.verify_hand",
        "felt.tools.client.replay",
        "felt.tools.history",
        "textual",
    ]
    code = (
        "import sys\n"
        "from felt.tools.cli import build_parser\n"
        "from services.cli import SUBCOMMAND_MODULES\n"
        "build_parser(SUBCOMMAND_MODULES)\n"
        f"print(','.join(m for m in {heavy!r} if m in sys.modules))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == ""


def test_felt_help_imports_no_dev_tooling() -> None:
    """The production command lists ``felt ladder`` but loads ``felt_dev`` only when it runs."""
    code = (
        "import sys\n"
        "from services.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit as done:\n"
        "    assert done.code == 0\n"
        "print('LOADED=' + ','.join(m for m in sys.modules if m.split('.')[0] == 'felt_dev'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "ladder" in out  # listed in the help
    assert out.strip().splitlines()[-1] == "LOADED="


def test_a_deferred_subcommand_parses_its_own_arguments() -> None:
    """``felt ladder --help`` reaches the ladder's own parser (its options), imported then."""
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "ladder", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "usage: felt ladder" in done.stdout and "--hands" in done.stdout
    refused = subprocess.run(
        [sys.executable, "-m", "services.cli", "ladder", "--hands", "many"],
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 2 and "--hands: invalid int value" in refused.stderr


def test_a_subcommand_runs_its_program_when_called() -> None:
    """The light registration still reaches the real program (imported when the command runs)."""
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "verify-hand"], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "verify-hand: --table is required (or --public-id, or --file)" in done.stderr
