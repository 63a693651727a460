"""docs/architecture.md's module map matches the library's tree, both ways.

The map's first table has a row per folder of the library (``libs/felt`` and
``libs/felt_dev``): every package has its row, every module directly in it is named
(backticked) in that row, every row names a folder that exists, and its rank is the
layer's rank in the import-rule test's ``LAYERS``. A newcomer reading the map finds
the tree as it is.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.unit.test_import_rules import LAYERS, layer_of

ROOT = Path(__file__).resolve().parents[2]
LIBS = ROOT / "libs"
DOC = ROOT / "docs" / "architecture.md"
FOLDERS = ("felt", "felt_dev")


def _map_rows() -> dict[str, tuple[str, str]]:
    """The layer table's rows: folder (``libs/felt/core/``) -> (rank, what)."""
    text = DOC.read_text()
    section = text[text.index("## Module map") : text.index("### Import rules")]
    rows: dict[str, tuple[str, str]] = {}
    for line in section.splitlines():
        match = re.fullmatch(r"\| (\S+) \| `(libs/[^`]+/)` \| (.+) \|", line)
        if match:
            rank, where, what = match.groups()
            assert where not in rows, f"{where} has two rows"
            rows[where] = (rank, what)
    return rows


def _folders() -> list[Path]:
    out: list[Path] = []
    for top in FOLDERS:
        out += [p for p in [LIBS / top, *(LIBS / top).rglob("*")] if p.is_dir()]
    return sorted(p for p in out if p.name != "__pycache__")


def _named(what: str) -> set[str]:
    return set(re.findall(r"`([^`]+)`", what))


def test_every_folder_has_a_row_and_every_row_a_folder() -> None:
    rows = _map_rows()
    folders = {f"{p.relative_to(ROOT).as_posix()}/" for p in _folders()}
    assert set(rows) == folders


def test_every_module_is_named_in_its_folders_row() -> None:
    rows = _map_rows()
    for folder in _folders():
        _, what = rows[f"{folder.relative_to(ROOT).as_posix()}/"]
        named = _named(what)
        if (folder / "__init__.py").is_file():
            modules = {p.stem for p in folder.glob("*.py")} - {"__init__"}
        else:  # the C sources
            modules = {p.name for p in folder.iterdir() if p.is_file()}
        assert modules <= named, f"{folder}: not in the module map: {sorted(modules - named)}"


def test_each_rows_rank_is_its_layers() -> None:
    for where, (rank, _) in _map_rows().items():
        module = where.removeprefix("libs/").rstrip("/").replace("/", ".")
        layer = layer_of(module)
        if layer is None:
            assert module == "felt" and rank == "-", where
        else:
            assert rank == str(LAYERS[layer]), f"{where}: rank {rank}, LAYERS says {layer}"
