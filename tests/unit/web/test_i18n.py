"""The web client's translations (web/src/i18n/*.json): complete in every language.

English is the reference: every language has exactly its keys, with the same
{placeholders}, and no message is empty. Every refusal reason a service can send is
declared once, in ``poker.v1.Reason`` (protos/poker/v1/reason.proto; server code uses
the generated enum, tests/unit/test_reasons.py), and has an ``error.<REASON>`` message in
every language, so a refusal always reaches the player as a sentence in their language;
and no ``error.<X>`` message names a reason that does not exist (a renamed or misspelt
one would never be shown).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from poker.v1.reason_pb2 import Reason

ROOT = Path(__file__).resolve().parents[3]
I18N = ROOT / "web" / "src" / "i18n"
LANGUAGES = ("en", "lt", "da", "pl", "nb")
# A placeholder: "{name}", or the head of a counted one, "{n, plural, one {…} other {…}}"
# (ICU MessageFormat's plural argument, web/src/format.ts).
PLACEHOLDER = re.compile(r"\{(\w+)(?:\}|\s*,\s*plural\s*,)")
# Messages under error.* that are no reason: the fallback for a reason this client does
# not know (a newer server's), which shows the reason itself.
NOT_REASONS = {"error.unknown"}


def messages(code: str) -> dict[str, str]:
    data: dict[str, str] = json.loads((I18N / f"{code}.json").read_text(encoding="utf-8"))
    return data


def server_reasons() -> frozenset[str]:
    """Every reason a service may send: the declared ``poker.v1.Reason`` values."""
    return frozenset(v.name for v in Reason.DESCRIPTOR.values if v.number != 0)


def test_the_declared_reasons_are_the_known_ones() -> None:
    reasons = server_reasons()
    assert {"NAME_TAKEN", "TABLES_UNAVAILABLE", "SEAT_TAKEN", "BELOW_MIN_RAISE", "BAD_NAME"} <= (
        reasons
    )
    assert {"AUTH_THROTTLED", "WATCH_GRANT_EXPIRED", "HOUSE_LIMIT_REACHED"} <= reasons
    assert len(reasons) > 100


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


@pytest.mark.parametrize("code", LANGUAGES)
def test_every_reason_message_names_a_declared_reason(code: str) -> None:
    named = {k for k in messages(code) if k.startswith("error.")} - NOT_REASONS
    unknown = sorted(k for k in named if k.removeprefix("error.") not in server_reasons())
    assert unknown == [], f"{code}: these name no poker.v1.Reason (reason.proto): {unknown}"


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
