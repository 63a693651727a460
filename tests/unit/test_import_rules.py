"""The allowed import directions (docs/architecture.md, "Import rules"), checked on the source.

* **Layers.** Every module of the library sits in one layer of :data:`LAYERS`
  (``felt.core`` at the bottom, ``felt_dev`` at the top) and imports only from its
  own layer or from layers below it: never upward, never sideways into another
  layer of the same rank. A module in no layer fails too, so a new folder is placed
  on purpose.
* The pure core (``felt.core``) does no I/O, reads no clock and draws no randomness
  of its own: it imports only the standard library's pure modules and the core
  itself. A hand (``felt.core.rules``) never imports a table (``felt.core.table``).
* A service (a package under ``services/``) never imports another service; the modules at
  the top of ``services/`` (the ``felt`` command, ``felt serve``, shared gRPC set-up) are
  where services are composed. Services never import the dev tooling (``felt_dev``).
* The library (``libs/felt``) never names a service, not even in a string.
* The opponent styles (``libs/felt_styles``, issue #25) are dev tooling: they may import
  ``felt`` but never a service, and ``felt`` never imports them (nor names them in a
  string): the ladder loads them only when its caller names the module (``--bots``).

Imports inside functions count too: a lazy import is still an import. Relative imports
are resolved, ``from felt import x`` counts as importing ``felt.x``, and a string that is
exactly a module's dotted name (``importlib.import_module("felt.x")``) counts as well.
:func:`test_the_checker_sees_lazy_relative_and_aliased_imports` proves it on sources
written for it.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIBS = ROOT / "libs" / "felt"
DEV = ROOT / "libs" / "felt_dev"
STYLES = ROOT / "libs" / "felt_styles"
SERVICES = ROOT / "services"

LAYERS: dict[str, int] = {
    "felt.core": 0,  # the pure core: cards, evaluator, records, a hand, a table
    "felt.messages": 1,  # the core's values and events as protobuf messages (both boundaries)
    "felt.config": 1,  # every setting read from the environment, declared once (stdlib only)
    "felt.wire": 2,  # the API's conversions, bounds, credentials and access
    "felt.storage": 2,  # storage ports, their adapters and fakes, the stored-event codec
    "felt.players": 2,  # the bots and equity
    "felt.service": 3,  # what every service uses: logs, metrics
    "felt.tools": 3,  # the library's commands and clients, hand histories
    "felt_dev": 4,  # development tooling, outside the runtime
}
"""Layer package -> rank. A module may import its own layer and layers of lower rank."""

PACKAGE_ROOT = {"felt", "felt.compiled"}
"""The package itself (its version, the compiled-module list): importable from anywhere."""

# What the pure core may import: pure standard-library modules, and the core itself.
CORE_STDLIB = {
    "__future__",
    "abc",
    "array",
    "bisect",
    "collections",
    "dataclasses",
    "enum",
    "functools",
    "hashlib",
    "hmac",
    "itertools",
    "math",
    "operator",
    "typing",
}
# Named by the issue that set these rules: never in the core, whatever else changes.
NEVER_IN_CORE = {"redis", "grpc", "asyncpg", "time", "os", "random", "secrets", "asyncio"}

_DOTTED_MODULE = re.compile(r"(felt|felt_dev|services)(\.[A-Za-z_]\w*)+")


def _module_name(path: Path) -> str:
    base = ROOT / "libs" if path.is_relative_to(ROOT / "libs") else ROOT
    return ".".join(path.relative_to(base).with_suffix("").parts).removesuffix(".__init__")


def imports_of(source: str, module: str, is_package: bool = False) -> Iterator[str]:
    """Every module ``source`` (the text of ``module``) imports, as absolute names.

    Anywhere in the file (inside functions too); relative imports resolved against
    ``module`` (a package's ``__init__`` is its own package); ``from a import b``
    yields ``a`` and ``a.b`` (``b`` may be a module: ``from felt import core``);
    a string constant that is exactly the dotted name of a module in a layer or a
    service counts as naming that module (``importlib.import_module``).
    """
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - (node.level - 1)])
                origin = f"{base}.{node.module}" if node.module else base
            else:
                origin = node.module or ""
            yield origin
            yield from (f"{origin}.{alias.name}" for alias in node.names if alias.name != "*")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and _DOTTED_MODULE.fullmatch(node.value)
            and (layer_of(node.value) or node.value.startswith("services."))
        ):
            yield node.value  # a logger's name (get_logger) is in no layer: not counted


def _imports(path: Path) -> Iterator[str]:
    return imports_of(path.read_text(), _module_name(path), path.name == "__init__.py")


def _sources(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def layer_of(name: str) -> str | None:
    """The layer package ``name`` belongs to, or None (outside the library, or unplaced)."""
    return next((layer for layer in LAYERS if _under(name, layer)), None)


def _in_package_root(name: str) -> bool:
    return name == "felt" or any(_under(name, m) for m in PACKAGE_ROOT - {"felt"})


def layer_violations(module: str, imported: Iterator[str] | list[str]) -> list[str]:
    """What ``module`` imports against the layer table (empty: it keeps to it)."""
    own = layer_of(module)
    problems = []
    if own is None and module not in PACKAGE_ROOT:
        problems.append(f"{module} is in no layer of LAYERS")
    for name in imported:
        if name.split(".")[0] not in ("felt", "felt_dev") or _in_package_root(name):
            continue
        theirs = layer_of(name)
        if theirs is None:
            # "felt.x" from "from felt import x" where x is not a module of a layer: only the
            # package root itself (``from felt import __version__``) is allowed.
            if name.rpartition(".")[0] == "felt" and name.rpartition(".")[2] in ("__version__",):
                continue
            problems.append(f"{module} imports {name}, which is in no layer")
        elif own is not None and theirs != own and LAYERS[theirs] >= LAYERS[own]:
            way = "upward" if LAYERS[theirs] > LAYERS[own] else "sideways"
            problems.append(f"{module} ({own}) imports {name} ({theirs}): {way}")
    return problems


LIBRARY = [*_sources(LIBS), *_sources(DEV)]


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_library_keeps_to_its_layers(path: Path) -> None:
    assert layer_violations(_module_name(path), list(_imports(path))) == []


def test_every_package_of_the_library_is_in_the_layer_table() -> None:
    tops = {f"felt.{p.name}" for p in LIBS.iterdir() if (p / "__init__.py").is_file()}
    modules = {f"felt.{p.stem}" for p in LIBS.glob("*.py")} - {"felt.__init__"}
    assert tops == {layer for layer in LAYERS if layer.startswith("felt.")}
    assert modules == PACKAGE_ROOT - {"felt"}, "a module at the top of libs/felt has no layer"


CORE = _sources(LIBS / "core")


@pytest.mark.parametrize("path", CORE, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_core_imports_only_pure_modules(path: Path) -> None:
    module = _module_name(path)
    for name in _imports(path):
        top = name.split(".")[0]
        assert top not in NEVER_IN_CORE, f"{module} imports {name}"
        if top == "felt":
            assert _under(name, "felt.core"), f"{module} imports {name}"
            if module.startswith("felt.core.rules"):
                assert not _under(name, "felt.core.table"), f"a hand ({module}) imports {name}"
        else:
            assert top in CORE_STDLIB, f"{module} imports {name}: not a pure module"


def test_services_never_import_each_other_nor_the_dev_tooling() -> None:
    services = sorted(p.name for p in SERVICES.iterdir() if (p / "__init__.py").exists())
    assert {"table", "ai_worker"} <= set(services)
    for service in services:
        for path in _sources(SERVICES / service):
            for name in _imports(path):
                assert not _under(name, "felt_dev"), f"{_module_name(path)} imports {name}"
                for other in services:
                    if other != service:
                        assert not _under(name, f"services.{other}"), (
                            f"{_module_name(path)} (service {service}) imports {name}"
                        )


@pytest.mark.parametrize(
    ("package", "named"),
    [("services", "services."), ("felt_styles", "felt_styles")],
    ids=["a service", "the opponent styles"],
)
def test_the_library_never_names(package: str, named: str) -> None:
    """Neither imported nor named in a string (a lazy ``importlib`` call included)."""
    for path in LIBRARY:
        module = _module_name(path)
        for name in _imports(path):
            assert not _under(name, package), f"{module} imports {name}"
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert not node.value.startswith(named), f"{module} names {node.value!r}"


def test_the_opponent_styles_import_felt_but_no_service() -> None:
    sources = _sources(STYLES)
    assert sources, "libs/felt_styles holds the opponent styles"
    for path in sources:
        for name in _imports(path):
            top = name.split(".")[0]
            assert top != "services", f"{_module_name(path)} imports {name}"
            assert top in {"felt", "felt_styles", "__future__"} or top in sys.stdlib_module_names, (
                f"{_module_name(path)} imports {name}: the styles need only felt and the stdlib"
            )


SYNTHETIC = """
import json
import felt.players.bots as bots
from felt import tools
from . import sibling
from ..limits import CHIP_CAP
from ...core import cards
from ... import storage as store


def lazy() -> None:
    from felt.service.logging import configure
    import felt_dev.ladder


class Lazy:
    def method(self) -> None:
        from felt.messages.values import card_to_proto as encode


COMMANDS = ("felt.tools.phh.cli",)
"""


def test_the_checker_sees_lazy_relative_and_aliased_imports() -> None:
    """The checker itself, on a source written to hide imports from a naive reader."""
    found = set(imports_of(SYNTHETIC, "felt.wire.forms.example"))
    assert {
        "json",
        "felt.players.bots",  # aliased: import ... as
        "felt.tools",  # aliased: from felt import <package>
        "felt.wire.forms.sibling",  # relative, one level
        "felt.wire.limits",  # relative, two levels
        "felt.core.cards",  # relative, three levels
        "felt.storage",  # relative, from ... import <package> as
        "felt.service.logging",  # lazy, in a function
        "felt_dev.ladder",  # lazy, plain import
        "felt.messages.values",  # lazy, in a method, aliased name
        "felt.tools.phh.cli",  # named in a string (importlib)
    } <= found
    # In a package's __init__, "." is the package itself.
    in_init = set(imports_of(SYNTHETIC, "felt.wire.forms", is_package=True))
    assert {"felt.wire.forms.sibling", "felt.wire.limits", "felt.core.cards"} <= in_init

    problems = layer_violations("felt.wire.forms.example", sorted(found))
    for upward_or_sideways in (
        "felt.players.bots",
        "felt.tools",
        "felt.storage",
        "felt.service.logging",
        "felt_dev.ladder",
        "felt.tools.phh.cli",
    ):
        assert any(f"imports {upward_or_sideways} " in p for p in problems), upward_or_sideways
    for allowed in ("felt.core.cards", "felt.messages.values", "felt.wire.limits", "json"):
        assert not any(f"imports {allowed} " in p for p in problems), allowed
    assert layer_violations("felt.core.cards", ["felt.messages.events"]) == [
        "felt.core.cards (felt.core) imports felt.messages.events (felt.messages): upward"
    ]
    assert layer_violations("felt.unplaced", []) == ["felt.unplaced is in no layer of LAYERS"]
