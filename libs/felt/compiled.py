"""Which of Felt's modules run compiled (mypyc), and whether a build is older than its source.

``setup.py`` compiles the hot path of a hand at install time: the rules
core and its value classes, and the PHH reader and replay that drive it
through thousands of real hands. This list is the one place that names
them: ``setup.py`` reads it, and the Makefile runs this file (it prints the
paths) to know when a rebuild is due.

In an editable install an edited ``.py`` keeps losing to its older compiled
``.so`` until the next ``make install``; :func:`stale_modules` finds those,
and ``felt`` warns about them at import so that nobody tests old code.
"""

from __future__ import annotations

import importlib.machinery
import warnings
from pathlib import Path

PACKAGE = Path(__file__).parent

COMPILED_MODULES = (
    "core/record",
    "core/rules/commands",
    "core/rules/config",
    "core/rules/events",
    "core/rules/engine",
    "core/rules/fold",
    "core/rules/legal",
    "core/rules/pots",
    "core/rules/variants",
    "core/rules/views",
    "core/table/player",
    "core/table/events",
    "core/table/positions",
    "core/table/aggregate",
    "tools/phh/parse",
    "tools/phh/replay",
)
"""Module paths relative to ``libs/felt`` (without ``.py``)."""


def stale_modules(
    directory: Path | None = None, names: tuple[str, ...] = COMPILED_MODULES
) -> list[str]:
    """Modules under ``directory`` whose compiled build is older than their source."""
    directory = PACKAGE if directory is None else directory
    stale = []
    for name in names:
        source = directory / f"{name}.py"
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            built = directory / f"{name}{suffix}"
            try:
                if built.stat().st_mtime < source.stat().st_mtime:
                    stale.append(name)
            except FileNotFoundError:
                continue
            break
    return stale


def _in_source_checkout() -> bool:
    """True when ``felt`` runs from the repository (an editable install): ``libs/felt``.

    Only there can a source be edited after its build. An installed wheel
    unpacks each ``.py`` beside its ``.so`` in whatever order, so comparing
    their times would warn for nothing.
    """
    return PACKAGE.parent.name == "libs" and (PACKAGE.parent.parent / "setup.py").is_file()


def warn_if_stale() -> None:
    """Warn (once, at import) when an edited compiled module is shadowed by an old build."""
    if not _in_source_checkout():
        return
    stale = stale_modules()
    if stale:
        warnings.warn(
            f"felt modules {', '.join(stale)} changed after they were compiled; "
            "the old compiled code runs until `make install` rebuilds it",
            RuntimeWarning,
            stacklevel=2,
        )


if __name__ == "__main__":
    # For the Makefile: the sources whose change calls for a rebuild.
    print(" ".join(f"libs/felt/{name}.py" for name in COMPILED_MODULES))
