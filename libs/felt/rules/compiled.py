"""Which rules modules run compiled (mypyc), and whether a build is older than its source.

``setup.py`` compiles the engine's hot modules at install time. In an
editable install an edited ``.py`` keeps losing to its older compiled
``.so`` until the next ``make install``; :func:`stale_modules` finds those,
and the package warns about them at import so that nobody tests old code.
"""

from __future__ import annotations

import importlib.machinery
import warnings
from pathlib import Path

COMPILED_MODULES = ("engine", "fold", "legal", "pots")


def stale_modules(directory: Path, names: tuple[str, ...] = COMPILED_MODULES) -> list[str]:
    """Modules in ``directory`` whose compiled build is older than their source."""
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


def warn_if_stale() -> None:
    """Warn (once, at import) when an edited rules module is shadowed by an old build."""
    stale = stale_modules(Path(__file__).parent)
    if stale:
        warnings.warn(
            f"felt.rules modules {', '.join(stale)} changed after they were compiled; "
            "the old compiled code runs until `make install` rebuilds it",
            RuntimeWarning,
            stacklevel=2,
        )
