"""The rules for a new display name (``services.lobby.names``): look-alikes share a skeleton,
scripts that copy Latin's letters are not mixed with it, joiners only where a script needs
them, and the lobby's AI labels are reserved. Refusals never repeat the name."""

from __future__ import annotations

import pytest

from felt.wire.limits import LimitError
from services.lobby.names import is_ai_label, name_key, new_display_name, skeleton

ZWJ, ZWNJ = "\u200d", "\u200c"


def refusal(name: str) -> LimitError:
    with pytest.raises(LimitError) as refused:
        new_display_name(name)
    if name.strip():
        assert name.strip() not in refused.value.message  # never the rejected value
    return refused.value


def test_a_cyrillic_a_has_the_latin_name_s_skeleton() -> None:
    latin, cyrillic = "alice", "\u0430lice"  # U+0430 CYRILLIC SMALL LETTER A
    assert latin != cyrillic and name_key(latin) != name_key(cyrillic)
    assert skeleton(cyrillic) == skeleton(latin) == skeleton("ALICE") == skeleton("Alice")
    # whole-script look-alikes too: all Cyrillic, they read as a Latin word
    assert skeleton("\u0440\u0430\u0443\u0440\u0430") == skeleton("paypa")
    # and digits for letters, "rn" for "m", full-width letters
    assert skeleton("B0B") == skeleton("bob") and skeleton("rnary") == skeleton("Mary")
    assert skeleton("\uff21lice") == skeleton("Alice")
    assert skeleton("Alice") != skeleton("Alicia")


def test_mixed_script_look_alikes_are_refused() -> None:
    for name in ("\u0430lice", "\u0410lice", "Bob\u0430", "\u0395lena x"):  # Cyrillic, Greek
        assert refusal(name).reason == "BAD_NAME"
    assert refusal("1\u0968").reason == "BAD_NAME"  # an ASCII and a Devanagari digit


def test_single_script_and_latin_with_an_unconfusable_script_are_names() -> None:
    for name in (
        "Alice",
        "Zoë",
        "\u0395\u03bb\u03ad\u03bd\u03b7",
        "日本語 abc",
        "Мария",
        "Dimitri 2",
    ):
        assert new_display_name(name) == name


def test_a_trailing_or_leading_joiner_is_refused_and_compared_away() -> None:
    for name in ("alice" + ZWJ, ZWJ + "alice", "alice" + ZWNJ, "\u064a" + ZWNJ):
        assert refusal(name).reason == "BAD_NAME"
    assert skeleton("alice" + ZWJ) == skeleton("alice")  # an old name with one: one look


def test_a_joiner_in_latin_or_cyrillic_text_is_refused() -> None:
    for name in ("al" + ZWJ + "ice", "al" + ZWNJ + "ice", "\u041c\u0430" + ZWJ + "\u0448\u0430"):
        assert refusal(name).reason == "BAD_NAME"


def test_a_joiner_a_script_needs_is_accepted() -> None:
    # Hindi: KA, VIRAMA, ZWJ, SSA (the half form of ka), and with ZWNJ (an explicit virama)
    hindi = "\u0915\u094d" + ZWJ + "\u0937\u093e"
    assert new_display_name(hindi) == hindi
    assert new_display_name("\u0915\u094d" + ZWNJ + "\u0937") == "\u0915\u094d" + ZWNJ + "\u0937"
    # Persian: "mi" + ZWNJ + "khaham" (the non-joiner between two joining letters)
    persian = "\u0645\u06cc" + ZWNJ + "\u062e\u0648\u0627\u0647\u0645"
    assert new_display_name(persian) == persian
    # but ZWJ between Arabic letters (no virama) is not one a script needs
    assert refusal("\u0645\u06cc" + ZWJ + "\u062e\u0648").reason == "BAD_NAME"


@pytest.mark.parametrize(
    "name",
    [
        "Bot 1 (easy)",
        "bot 1 (easy)",
        "BOT 2 (HARD)",
        "Bot 12 (normal)",
        "Bot  7  ( Normal )",
        "Bot1(easy)",
        "bot1",
        "Bot 3",
        "Bot 4 (expert)",
        "B0t 1 (easy)",  # a zero for the o
        "Bot l (easy)",  # an l for the 1
        "Bot \u0661 (easy)",  # an Arabic-Indic one
        "\u0412\u041e\u0422 1",  # all Cyrillic capitals (VE, O, TE)
        "\uff22ot 1",  # full-width B
    ],
)
def test_the_ai_labels_are_reserved(name: str) -> None:
    assert is_ai_label(name)
    assert refusal(name).reason == "NAME_RESERVED"


@pytest.mark.parametrize("name", ["Bot", "Botlover", "Robot 1", "Bob 1", "Abbot 2", "Botan 1"])
def test_names_near_the_label_are_names(name: str) -> None:
    assert not is_ai_label(name)
    assert new_display_name(name) == name


def test_the_usual_limits_still_apply() -> None:
    assert refusal("  ").reason == "BAD_NAME"
    assert refusal("x" * 33).reason == "BAD_NAME"
    assert refusal("al\u202eice").reason == "BAD_NAME"  # a bidi override
