"""The web client's translations (web/src/i18n/*.json): complete in every language.

English is the reference: every language has exactly its keys, with the same
{placeholders}, and no message is empty. Every ``google.rpc.ErrorInfo`` reason the
services can send has an ``error.<REASON>`` message, so a refusal always reaches the
player as a sentence in their language. The reasons are read from the services' own
source (the string arguments of every refusal constructor, reasons kept in constants, the
table service's reason-to-status table), so a new reason without a translation fails here.
(docs/api.md is not read: it names enum values and settings in the same upper case.)
"""

from __future__ import annotations

import ast
import functools
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
I18N = ROOT / "web" / "src" / "i18n"
LANGUAGES = ("en", "lt", "da", "pl", "nb")
# A placeholder: "{name}", or the head of a counted one, "{n, plural, one {…} other {…}}"
# (ICU MessageFormat's plural argument, web/src/format.ts).
PLACEHOLDER = re.compile(r"\{(\w+)(?:\}|\s*,\s*plural\s*,)")
REASON = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")

# Calls whose string arguments are ErrorInfo reasons (or rules codes that become them).
REFUSALS = {
    "Refused",
    "_refuse",
    "_bad",
    "IllegalAction",
    "LimitError",
    "BadToken",
    "TableRefused",
    "unauthenticated",
    "refused",
}
SOURCES = ("services", "libs/felt/core/rules", "libs/felt/core/table", "libs/felt/wire")


def messages(code: str) -> dict[str, str]:
    data: dict[str, str] = json.loads((I18N / f"{code}.json").read_text(encoding="utf-8"))
    return data


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


@functools.cache
def server_reasons() -> frozenset[str]:
    """Every reason string passed to a refusal in the services and the core they run."""
    found: set[str] = set()
    for base in SOURCES:
        for path in (ROOT / base).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and _name(node.func) in REFUSALS:
                    args = [*node.args, *(k.value for k in node.keywords)]
                    for arg in args:
                        found.update(
                            sub.value
                            for sub in ast.walk(arg)
                            if isinstance(sub, ast.Constant)
                            and isinstance(sub.value, str)
                            and REASON.match(sub.value)
                        )
    # A reason kept in a module constant and passed by name (the gateway's REASON = "...").
    for path in (ROOT / "services").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and "REASON" in t.id for t in node.targets)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
                and REASON.match(node.value.value)
            ):
                found.add(node.value.value)
    # The table service maps rules codes to status codes in one table: its keys too.
    refusals = ast.parse((ROOT / "services/table/refusals.py").read_text(encoding="utf-8"))
    for node in ast.walk(refusals):
        if isinstance(node, ast.Dict):
            found.update(
                key.value
                for key in node.keys
                if isinstance(key, ast.Constant)
                and isinstance(key.value, str)
                and REASON.match(key.value)
            )
    return frozenset(found)


def test_the_reason_scan_finds_the_known_reasons() -> None:
    """The scan itself works: it sees reasons from the lobby, the table service and the rules."""
    reasons = server_reasons()
    assert {"NAME_TAKEN", "TABLES_UNAVAILABLE", "SEAT_TAKEN", "BELOW_MIN_RAISE", "BAD_NAME"} <= (
        reasons
    )
    assert len(reasons) > 50


@pytest.mark.parametrize("code", LANGUAGES)
def test_every_language_has_every_key_with_its_placeholders(code: str) -> None:
    reference = messages("en")
    lang = messages(code)
    assert sorted(set(reference) - set(lang)) == [], f"{code} lacks these messages"
    assert sorted(set(lang) - set(reference)) == [], f"{code} has messages English lacks"
    for key, text in lang.items():
        assert text.strip(), f"{code}: {key} is empty"
        assert set(PLACEHOLDER.findall(text)) == set(PLACEHOLDER.findall(reference[key])), (
            f"{code}: {key} has other placeholders than English"
        )


@pytest.mark.parametrize("code", LANGUAGES)
def test_every_server_reason_has_a_message(code: str) -> None:
    lang = messages(code)
    missing = sorted(r for r in server_reasons() if f"error.{r}" not in lang)
    assert missing == [], f"{code}: no error.<REASON> message for {missing}"


def test_the_languages_the_client_offers_are_these_files() -> None:
    index = (I18N / "index.ts").read_text(encoding="utf-8")
    offered = re.findall(r'code: "(\w+)"', index)
    assert tuple(offered) == LANGUAGES
    assert {p.stem for p in I18N.glob("*.json")} == set(LANGUAGES)


# Words issue #21 found wrong, as each community's poker sites would not write them (docs/web.md,
# "Languages"): the deck's cryptographic commitment read as a moral obligation (Danish
# "forpligtelse", Norwegian "forpliktelse", Lithuanian "įsipareigojimas"), Lithuanian
# "Atsakyti" (answer) for Call (the call buttons must say "Sulyginti"; "atsakyti į statymą",
# to answer a bet, stays right in a sentence) and "Sudėtingas" (complicated) for the hard AI,
# Danish "Hold'em uden grænse".
WRONG_WORDS = {
    "lt": ("įsipareig", "sudėtingas", "sudetingas"),
    "da": ("forpligt", "uden grænse", "uden graense"),
    "nb": ("forplikt",),
}
RIGHT_WORDS = {  # key: what the message starts with
    "lt": {
        "action.call": "Sulyginti",
        "table.preCallAny": "Sulyginti",
        "action.fold": "Mesti",
        "ai.hard": "Sunkus",
    },
    "da": {"action.call": "Syn", "variant.nlhe": "No-Limit Hold'em"},
    "pl": {"action.call": "Sprawdź", "action.fold": "Pas", "action.check": "Czekaj"},
    "nb": {"action.call": "Syn", "action.fold": "Kast", "action.check": "Sjekk"},
}


@pytest.mark.parametrize("code", LANGUAGES)
def test_the_poker_words_read_as_the_communitys_sites_write_them(code: str) -> None:
    lang = messages(code)
    for key, text in lang.items():
        for wrong in WRONG_WORDS.get(code, ()):
            assert wrong not in text.lower(), f"{code}: {key} says {wrong!r}: {text}"
        if code == "pl" and "zobowiązani" in text:  # Polish: the cryptographic sense, said once
            assert "kryptograficzn" in text or key.startswith("replay."), f"pl: {key}: {text}"
    for key, start in RIGHT_WORDS.get(code, {}).items():
        assert lang[key].startswith(start), f"{code}: {key} is {lang[key]!r}"
