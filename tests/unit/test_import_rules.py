"""The allowed import directions (docs/architecture.md, "Import rules"), checked on the source.

* The pure core (``felt.rules``, ``felt.table``) does no I/O, reads no clock and draws no
  randomness of its own: it imports only the standard library's pure modules and the
  core's own value modules. ``felt.rules`` (a hand) never imports ``felt.table`` (a table).
* A service (a package under ``services/``) never imports another service; the modules at
  the top of ``services/`` (the ``felt`` command, ``felt serve``, shared gRPC set-up) are
  where services are composed.
* The library (``libs/felt``) never names a service, not even in a string.
* The opponent styles (``libs/felt_styles``, issue #25) are dev tooling: they may import
  ``felt`` but never a service, and ``felt`` never imports them (nor names them in a
  string): the ladder loads them only when its caller names the module (``--bots``).

Imports inside functions count too: a lazy import is still an import.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIBS = ROOT / "libs" / "felt"
STYLES = ROOT / "libs" / "felt_styles"
SERVICES = ROOT / "services"

# What the pure core may import: pure standard-library modules, and the core itself.
CORE_STDLIB = {
    "__future__",
    "abc",
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
CORE_FELT = ("felt.rules", "felt.table", "felt.cards", "felt.record", "felt.evaluator")
# Named by the issue that set these rules: never in the core, whatever else changes.
NEVER_IN_CORE = {"redis", "grpc", "asyncpg", "time", "os", "random", "secrets", "asyncio"}


def _module_name(path: Path) -> str:
    base = ROOT / "libs" if path.is_relative_to(ROOT / "libs") else ROOT
    return ".".join(path.relative_to(base).with_suffix("").parts).removesuffix(".__init__")


def _imports(path: Path) -> Iterator[str]:
    """Every module ``path`` imports (absolute names; relative imports resolved)."""
    tree = ast.parse(path.read_text(), str(path))
    package = _module_name(path).rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                yield f"{parent}.{node.module}" if node.module else parent
            elif node.module:
                yield node.module


def _sources(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


CORE = [p for d in ("rules", "table") for p in _sources(LIBS / d)]


@pytest.mark.parametrize("path", CORE, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_core_imports_only_pure_modules(path: Path) -> None:
    module = _module_name(path)
    for name in _imports(path):
        top = name.split(".")[0]
        assert top not in NEVER_IN_CORE, f"{module} imports {name}"
        if top == "felt":
            assert any(_under(name, allowed) for allowed in CORE_FELT), f"{module} imports {name}"
            if module.startswith("felt.rules"):
                assert not _under(name, "felt.table"), f"a hand ({module}) imports {name}"
        else:
            assert top in CORE_STDLIB, f"{module} imports {name}: not a pure module"


def test_services_never_import_each_other() -> None:
    services = sorted(p.name for p in SERVICES.iterdir() if (p / "__init__.py").exists())
    assert {"table", "ai_worker"} <= set(services)
    for service in services:
        for path in _sources(SERVICES / service):
            for name in _imports(path):
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
    for path in _sources(LIBS):
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


def test_the_rules_find_the_imports_they_forbid() -> None:
    """The checker itself: it sees lazy, relative and aliased imports."""
    source = ROOT / "tests" / "unit" / "test_import_rules.py"
    found = set(_imports(source))
    assert {"ast", "pathlib", "pytest"} <= found
