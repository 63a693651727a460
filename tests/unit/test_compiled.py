"""The list of mypyc-compiled modules and its stale-build check (``felt.compiled``)."""

from __future__ import annotations

import importlib.machinery
import os
import warnings
from pathlib import Path

import pytest

import felt
from felt import compiled
from felt.compiled import COMPILED_MODULES, PACKAGE, stale_modules

SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


def _touch(path: Path, mtime: float) -> None:
    path.write_text("")
    os.utime(path, (mtime, mtime))


def test_a_source_edited_after_its_build_is_stale(tmp_path: Path) -> None:
    _touch(tmp_path / "engine.py", 2_000)
    _touch(tmp_path / f"engine{SUFFIX}", 1_000)
    _touch(tmp_path / "fold.py", 1_000)
    _touch(tmp_path / f"fold{SUFFIX}", 2_000)
    _touch(tmp_path / "legal.py", 2_000)  # not compiled: pure Python is never stale
    assert stale_modules(tmp_path, ("engine", "fold", "legal")) == ["engine"]


def test_the_installed_build_is_current() -> None:
    assert stale_modules() == []


def test_every_listed_module_exists() -> None:
    assert Path(felt.__file__).parent == PACKAGE
    for name in COMPILED_MODULES:
        assert (PACKAGE / f"{name}.py").is_file(), name


def test_only_a_source_checkout_is_checked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An installed wheel unpacks .py and .so in any order: no warning there."""
    installed = tmp_path / "site-packages" / "felt"
    (installed / "core" / "rules").mkdir(parents=True)
    _touch(installed / "core" / "rules" / "engine.py", 2_000)
    _touch(installed / "core" / "rules" / f"engine{SUFFIX}", 1_000)
    monkeypatch.setattr(compiled, "PACKAGE", installed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled.warn_if_stale()
    checkout = tmp_path / "repo" / "libs" / "felt"
    (checkout / "core" / "rules").mkdir(parents=True)
    _touch(tmp_path / "repo" / "setup.py", 1_000)
    _touch(checkout / "core" / "rules" / "engine.py", 2_000)
    _touch(checkout / "core" / "rules" / f"engine{SUFFIX}", 1_000)
    monkeypatch.setattr(compiled, "PACKAGE", checkout)
    with pytest.warns(RuntimeWarning, match="core/rules/engine changed after"):
        compiled.warn_if_stale()
