"""``felt config``: the effective settings, where each comes from, secrets masked.

It reads every declared setting (``felt.config.settings``) from the environment, as the
services would, and prints its value and source (``environment`` or ``default``); a
secret is ``****``, a URL's password too. A malformed or out-of-range value is reported
with the message the service would stop with, and the command exits with status 2, so an
operator can check an environment before starting anything. Checks that involve the mode
or two settings (a production secret's length) are the services' own, made at start.

``--markdown`` prints the table of ``docs/operations.md`` ("Environment"), generated from
the declarations; ``--write-docs FILE`` puts it in place between its markers (a unit test
fails when the docs and the declarations differ).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from felt.config.settings import (
    SERVICES,
    SETTINGS,
    ConfigError,
    Env,
    Setting,
    environment,
    read_by,
)

BEGIN = "<!-- settings: generated from libs/felt/config/settings.py (felt config --markdown) -->"
END = "<!-- end of settings -->"
HEADER = "| variable | default | values | read by | used for |\n|---|---|---|---|---|"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "config",
        help="print the effective settings (secrets masked); exit 2 if one is invalid",
        description="Print every setting Felt reads from the environment: its effective value "
        "and where it comes from (default or environment), with secrets and URL passwords "
        "masked. Exits with status 2, naming the setting, when a value is malformed or out "
        "of range. The settings are declared in libs/felt/config/settings.py.",
    )
    p.add_argument("--service", choices=sorted(SERVICES), help="only the settings it reads")
    p.add_argument("--verbose", "-v", action="store_true", help="add each setting's help")
    p.add_argument(
        "--markdown", action="store_true", help="print docs/operations.md's table of settings"
    )
    p.add_argument(
        "--write-docs",
        metavar="FILE",
        type=Path,
        help="replace the table of settings in FILE (docs/operations.md) by the generated one",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.write_docs is not None:
        path: Path = args.write_docs
        path.write_text(with_table(path.read_text()))
        print(f"felt config: wrote the table of settings in {path}")
        return 0
    if args.markdown:
        print(markdown_table())
        return 0
    chosen = read_by(args.service) if args.service else SETTINGS
    lines, errors = effective(chosen, environment(), verbose=args.verbose)
    print("\n".join(lines))
    for error in errors:
        print(f"felt config: {error}", file=sys.stderr)
    return 2 if errors else 0


def effective(
    chosen: tuple[Setting[object], ...], env: Env, *, verbose: bool = False
) -> tuple[list[str], list[str]]:
    """The lines ``felt config`` prints for ``chosen`` (name, masked value, source), and the
    message of each invalid one."""
    rows: list[tuple[str, str, str, str]] = []
    errors: list[str] = []
    for setting in chosen:
        try:
            shown = setting.shown(env)
        except ConfigError as exc:
            shown = "(invalid)"
            errors.append(str(exc))
        rows.append((setting.name, shown, setting.source(env), setting.help))
    width = max((len(name) for name, *_ in rows), default=0)
    value_width = min(max((len(value) for _, value, *_ in rows), default=0), 40)
    lines = []
    for name, value, source, help_text in rows:
        lines.append(f"{name:<{width}}  {value:<{value_width}}  ({source})".rstrip())
        if verbose:
            lines.append(f"{'':<{width}}  {help_text}")
    return lines, errors


def markdown_table() -> str:
    """``docs/operations.md``'s table of settings, one row per declared setting."""
    rows = [HEADER]
    for s in SETTINGS:
        accepts = s.accepts() + (" (secret)" if s.secret and s.accepts() != "secret" else "")
        cells = (
            f"`{s.name}`",
            s.documented_default(),
            accepts,
            ", ".join(s.services),
            s.doc or s.help,
        )
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def with_table(document: str) -> str:
    """``document`` with the text between :data:`BEGIN` and :data:`END` replaced by the
    generated table (``ValueError`` if the markers are missing)."""
    start, end = document.index(BEGIN) + len(BEGIN), document.index(END)
    return document[:start] + "\n" + markdown_table() + "\n" + document[end:]
