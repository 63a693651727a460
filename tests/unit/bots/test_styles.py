"""The opponent styles of issue #25 (``felt_styles``): real players for both games, legal,
blind to hidden cards, deterministic, split in two halves, each beating the baselines."""

from __future__ import annotations

import inspect
import json
import random
from pathlib import Path

import pytest

import felt_styles
from felt.core.rules.commands import Act, ActionKind
from felt.core.rules.config import Variant
from felt.core.rules.legal import LegalActions
from felt.core.rules.views import HandView
from felt.core.table.stats import SeatStats
from felt.players.bots import get_bot, register
from felt_dev.ladder import Chunk, play_chunk, summarize
from felt_dev.ladder_cli import main
from felt_styles import DEVELOPMENT, HELD_OUT, STYLES, get_style
from tests.unit.bots.test_bots import assert_legal, assert_no_hidden_cards, decision_points
from tests.unit.bots.test_tag import first_decision

register(felt_styles.BOTS)

# Duplicate-dealt hands per style, baseline and game: enough for a clear win at 95% on
# a fixed seed (the longer run with fresh seeds is in docs/ai.md), small enough for CI.
# The random player's Hold'em shoves swing a few hundred hands by hundreds of big blinds.
HANDS = 300
HANDS_AGAINST_RANDOM_SHOVES = 2000


def test_eight_styles_split_into_two_disjoint_halves() -> None:
    assert len(STYLES) >= 8
    assert set(DEVELOPMENT).isdisjoint(HELD_OUT)
    assert set(DEVELOPMENT) | set(HELD_OUT) == set(felt_styles.BOTS)
    assert abs(len(DEVELOPMENT) - len(HELD_OUT)) <= 1
    assert felt_styles.GROUPS["held_out"] == HELD_OUT


@pytest.mark.parametrize("name", STYLES)
def test_each_style_is_named_and_documented(name: str) -> None:
    style = get_style(name)
    assert style.name == name and get_bot(name).name == name
    doc = inspect.getdoc(type(style)) or ""
    assert len(doc) > 200, f"{name} needs a docstring describing its style and parameters"
    with pytest.raises(ValueError, match="unknown style"):
        get_style("godlike")


@pytest.mark.parametrize("variant", list(Variant))
def test_styles_play_only_legal_moves_and_see_no_hidden_cards(variant: Variant) -> None:
    styles = [get_style(n) for n in STYLES]
    rng = random.Random(3)
    points = 0
    for state, view, history, legal in decision_points(variant, 40, seed=25):
        assert_no_hidden_cards(state, view, history)
        for style in styles:
            assert_legal(state, legal, style.decide(view, history, legal, rng), style)
        points += 1
    assert points > 150


@pytest.mark.parametrize("name", STYLES)
@pytest.mark.parametrize("variant", list(Variant))
def test_same_rng_same_decision(name: str, variant: Variant) -> None:
    style = get_style(name)
    for i, (_, view, history, legal) in enumerate(decision_points(variant, 8, seed=11)):
        first = style.decide(view, history, legal, random.Random(i))
        again = get_style(name).decide(view, history, legal, random.Random(i))
        assert first == again


@pytest.mark.parametrize("baseline", ["random", "calling_station"])
@pytest.mark.parametrize("name", STYLES)
@pytest.mark.parametrize("variant", list(Variant))
def test_each_style_beats_the_baselines(variant: Variant, name: str, baseline: str) -> None:
    shoves = variant == Variant.NLHE and baseline == "random"
    hands = HANDS_AGAINST_RANDOM_SHOVES if shoves else HANDS
    _, deals = play_chunk(Chunk(variant, name, baseline, 2525, 0, hands // 2, 2))
    result = summarize(variant, name, baseline, deals)
    assert result.ci_low > 0, f"{result.pairing}: {result.per100:+.1f} [{result.ci_low:+.1f}, ...]"


# --------------------------------------------------------------------------- single decisions


def kind(name: str, view: HandView, legal: LegalActions, seed: int = 1) -> ActionKind:
    decision = get_style(name).decide(view, [], legal, random.Random(seed))
    assert isinstance(decision, Act)
    return decision.kind


def test_the_nit_folds_what_the_maniac_raises() -> None:
    view, legal = first_decision(Variant.NLHE, 6, "Kc9d")
    assert kind("nit", view, legal) == ActionKind.FOLD
    assert kind("maniac_plus", view, legal) == ActionKind.RAISE
    aces = first_decision(Variant.NLHE, 6, "AsAh")
    assert all(kind(n, *aces) == ActionKind.RAISE for n in ("nit", "tight_aggressive", "lag"))


def test_draw_styles_differ_on_a_small_pair() -> None:
    view, legal = first_decision(Variant.DRAW5, 5, "5s5d9cKh2c")
    assert kind("nit", view, legal) == ActionKind.CHECK  # jacks or better to open
    assert kind("lag", view, legal) == ActionKind.BET  # any pair


def test_the_adapter_steals_more_from_players_who_fold() -> None:
    """Its opening range follows the public record of how the others fold to raises."""
    view, legal = first_decision(Variant.NLHE, 6, "QcTd")
    folders = {s: SeatStats(hands=200, first_faced=100, first_folded=95) for s in range(6)}
    callers = {s: SeatStats(hands=200, first_faced=100, first_folded=5) for s in range(6)}
    adapter = get_style("adapter")
    steal = adapter.decide(view, [], legal, random.Random(1), folders)
    stay = adapter.decide(view, [], legal, random.Random(1), callers)
    assert isinstance(steal, Act) and isinstance(stay, Act)
    assert steal.kind == ActionKind.RAISE and stay.kind == ActionKind.FOLD


# --------------------------------------------------------------------------- the ladder


def test_the_ladder_pits_the_levels_against_a_group_of_styles(tmp_path: Path) -> None:
    args = ["--bots", "felt_styles", "--opponents", "held_out,nit", "--levels", "easy"]
    small = ["--hands", "4", "--variant", "draw", "--tables", "heads-up", "--seed", "9"]
    assert main([*args, *small, "--no-progress", "--out", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "ladder.json").read_text())["results"]
    assert [(r["first"], r["second"]) for r in rows] == [
        ("easy", name) for name in (*HELD_OUT, "nit")
    ]


def test_the_ladder_refuses_what_it_cannot_play() -> None:
    small = ["--hands", "2", "--no-progress"]
    with pytest.raises(SystemExit, match="cannot import"):
        main(["--bots", "no_such_module_here", "--opponents", "nit", *small])
    with pytest.raises(SystemExit, match="unknown bot 'godlike'"):
        main(["--bots", "felt_styles", "--opponents", "godlike", *small])
    with pytest.raises(SystemExit, match="give one"):
        main(["--bots", "felt_styles", "--opponents", "nit", "--pairings", "hard:nit", *small])


def test_a_registered_name_cannot_change_its_bot() -> None:
    register(felt_styles.BOTS)  # the same factories again: harmless
    with pytest.raises(ValueError, match="already taken"):
        register({"nit": felt_styles.Maniac})
    with pytest.raises(ValueError, match="bad bot name"):
        register({"a:b": felt_styles.Nit})
    assert get_bot("nit").name == "nit"
