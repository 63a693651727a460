"""Refusal reasons are declared once, in ``protos/poker/v1/reason.proto`` (``poker.v1.Reason``).

Server code names a reason by its generated value (``Reason.NOT_YOUR_TURN``), never by a
string typed again: a misspelt string would reach clients as a reason no client and no
translation knows. This scans ``services/`` and ``libs/`` for string literals passed as a
reason: an argument of a refusal's constructor, a ``reason=`` keyword, a constant named
``*REASON*``, or a comparison with a ``.reason``.

The pure core (``felt.core.rules``, ``felt.core.table``) is the one exception: it imports no protos,
so its rules codes (``IllegalAction("NOT_YOUR_TURN", ...)``) are strings, which the table
service passes on as reasons; every one of them must be a declared reason.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from poker.v1.reason_pb2 import Reason

ROOT = Path(__file__).resolve().parents[2]
CORE = (ROOT / "libs/felt/core/rules", ROOT / "libs/felt/core/table")
GENERATED = ROOT / "libs/poker"
SHAPE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")

# Calls whose arguments are reasons: the refusals of the services, the gateway and the
# library, and the exceptions that carry a reason to them.
REFUSALS = {
    "Refused",
    "relayed",
    "LimitError",
    "BadToken",
    "TokenError",
    "TableRefused",
    "of",
    "TopUpRefused",
    "unauthenticated",
    "refused",
    "_bad",
    "ErrorInfo",
    "error_info",
}
CORE_REFUSALS = {"IllegalAction", "_refuse"}


def declared() -> set[str]:
    return {v.name for v in Reason.DESCRIPTOR.values if v.number != 0}


def _sources(*roots: Path) -> Iterator[Path]:
    for root in roots:
        yield from sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _shaped(node: ast.AST) -> Iterator[str]:
    """Reason-shaped string literals in ``node`` (an f-string's text parts too)."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and SHAPE.match(sub.value):
            yield sub.value


def literals_passed_as_reason(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, literal) for each reason string typed in ``tree`` (see the module docstring)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if _name(node.func) in REFUSALS:
                for arg in [*node.args, *(k.value for k in node.keywords)]:
                    if isinstance(arg, ast.Constant):
                        yield from ((node.lineno, s) for s in _shaped(arg))
            for keyword in node.keywords:
                if keyword.arg in ("reason", "error_reason"):
                    yield from ((node.lineno, s) for s in _shaped(keyword.value))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            named = any(isinstance(t, ast.Name) and "REASON" in t.id for t in targets)
            if named and node.value is not None:
                yield from ((node.lineno, s) for s in _shaped(node.value))
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(s, ast.Attribute) and s.attr == "reason" for s in sides):
                for side in sides:
                    yield from ((node.lineno, s) for s in _shaped(side))


def _outside_core(path: Path) -> bool:
    return not any(path.is_relative_to(c) for c in (*CORE, GENERATED))


SERVER_SOURCES = [p for p in _sources(ROOT / "services", ROOT / "libs") if _outside_core(p)]


@pytest.mark.parametrize("path", SERVER_SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_reason_is_typed_as_a_string(path: Path) -> None:
    typed = list(literals_passed_as_reason(ast.parse(path.read_text(encoding="utf-8"))))
    assert typed == [], f"use poker.v1.Reason (reason_pb2) instead of these strings: {typed}"


def test_the_scan_sees_a_typed_reason() -> None:
    """The scan itself works: each way of typing a reason is found."""
    source = """
raise Refused(Code.NOT_FOUND, "no table", "NO_TABLE")
raise limits.LimitError("BAD_SEAT", "seat must be 0 to 8")
log.info("refused", reason="SEAT_TAKEN")
REASON = "TOO_MANY_WATCHES"
if exc.reason == "HAND_RUNNING": pass
raise Refused(Code.NOT_FOUND, "no table", Reason.NO_TABLE)
"""
    found = sorted(s for _, s in literals_passed_as_reason(ast.parse(source)))
    assert found == ["BAD_SEAT", "HAND_RUNNING", "NO_TABLE", "SEAT_TAKEN", "TOO_MANY_WATCHES"]


def core_codes() -> set[str]:
    """The rules codes the pure core refuses a command with."""
    found: set[str] = set()
    for path in _sources(*CORE):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and _name(node.func) in CORE_REFUSALS:
                for arg in node.args[:1]:
                    found.update(_shaped(arg))
    return found


def test_every_rules_code_is_a_declared_reason() -> None:
    codes = core_codes()
    assert {"NOT_YOUR_TURN", "BELOW_MIN_RAISE", "SEAT_TAKEN", "NO_TABLE"} <= codes
    assert sorted(codes - declared()) == [], "declare these in protos/poker/v1/reason.proto"


def test_the_wire_name_of_a_reason_is_its_enum_name() -> None:
    """What a refusal sends is the value's name, as clients have always read it."""
    from felt.service.refusals import Code, Refused, reason_of

    refused = Refused(Code.FAILED_PRECONDITION, "wait for your turn", Reason.NOT_YOUR_TURN)
    assert refused.reason == "NOT_YOUR_TURN"
    assert Refused(Code.INTERNAL, "internal error").reason == ""
    assert reason_of("NOT_YOUR_TURN") == Reason.NOT_YOUR_TURN
    assert reason_of("NO_SUCH_REASON") == reason_of("") == Reason.REASON_UNSPECIFIED
