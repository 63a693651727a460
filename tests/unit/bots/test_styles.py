"""The opponent styles of issue #25 (``felt_styles``): real players for both games, legal,
blind to hidden cards, deterministic, split in two halves, each beating the baselines."""

from __future__ import annotations

import inspect
import json
import random
from dataclasses import replace
from pathlib import Path

import pytest

import felt_styles
from felt.core.cards import cards
from felt.core.rules.commands import Act, ActionKind, StartHand
from felt.core.rules.config import Variant
from felt.core.rules.engine import execute
from felt.core.rules.events import Event
from felt.core.rules.legal import LegalActions, legal_actions
from felt.core.rules.views import HandView, redact_all, view_for
from felt.core.table.stats import SeatStats
from felt.players.bots import get_bot, register
from felt.players.equity import holdem_equity
from felt_dev.ladder import Chunk, deck_for, hand_setup, master_key, play_chunk, summarize
from felt_dev.ladder_cli import main
from felt_styles import DEVELOPMENT, DEVELOPMENT_MORE, HELD_OUT, STYLES, get_style
from felt_styles.prober import Prober, _tiered
from tests.unit.bots.test_bots import assert_legal, assert_no_hidden_cards, decision_points
from tests.unit.bots.test_tag import first_decision

register(felt_styles.BOTS)

# Duplicate-dealt hands per style, baseline and game: enough for a clear win at 95% on
# a fixed seed (the longer run with fresh seeds is in docs/ai.md), small enough for CI.
# The random player's Hold'em shoves swing a few hundred hands by hundreds of big blinds.
HANDS = 300
HANDS_AGAINST_RANDOM_SHOVES = 2000
# Every style: the two halves, plus the later development styles (reader, prober).
ALL = (*STYLES, *DEVELOPMENT_MORE)


def test_eight_styles_split_into_two_disjoint_halves() -> None:
    assert len(STYLES) >= 8
    assert set(DEVELOPMENT).isdisjoint(HELD_OUT)
    assert set(DEVELOPMENT) | set(HELD_OUT) | set(DEVELOPMENT_MORE) == set(felt_styles.BOTS)
    assert abs(len(DEVELOPMENT) - len(HELD_OUT)) <= 1
    assert felt_styles.GROUPS["held_out"] == HELD_OUT
    assert felt_styles.GROUPS["development"] == DEVELOPMENT


def test_the_later_development_styles_are_a_group_of_their_own() -> None:
    """reader and prober are development styles, in neither documented half."""
    assert felt_styles.GROUPS["development_more"] == ("reader", "prober") == DEVELOPMENT_MORE
    assert set(DEVELOPMENT_MORE).isdisjoint(STYLES)
    assert felt_styles.GROUPS["styles"] == STYLES == (*DEVELOPMENT, *HELD_OUT)


@pytest.mark.parametrize("name", ALL)
def test_each_style_is_named_and_documented(name: str) -> None:
    style = get_style(name)
    assert style.name == name and get_bot(name).name == name
    doc = inspect.getdoc(type(style)) or ""
    assert len(doc) > 200, f"{name} needs a docstring describing its style and parameters"
    with pytest.raises(ValueError, match="unknown style"):
        get_style("godlike")


@pytest.mark.parametrize("variant", list(Variant))
def test_styles_play_only_legal_moves_and_see_no_hidden_cards(variant: Variant) -> None:
    styles = [get_style(n) for n in ALL]
    rng = random.Random(3)
    points = 0
    for state, view, history, legal in decision_points(variant, 40, seed=25):
        assert_no_hidden_cards(state, view, history)
        for style in styles:
            assert_legal(state, legal, style.decide(view, history, legal, rng), style)
        points += 1
    assert points > 150


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("variant", list(Variant))
def test_same_rng_same_decision(name: str, variant: Variant) -> None:
    style = get_style(name)
    for i, (_, view, history, legal) in enumerate(decision_points(variant, 8, seed=11)):
        first = style.decide(view, history, legal, random.Random(i))
        again = get_style(name).decide(view, history, legal, random.Random(i))
        assert first == again


@pytest.mark.parametrize("baseline", ["random", "calling_station"])
@pytest.mark.parametrize("name", ALL)
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


def facing_an_open(
    variant: Variant, seats: int, hole_text: str, before: int
) -> tuple[HandView, list[Event], LegalActions, int]:
    """The last seat's decision after ``before`` seats pass and the next opens (the others
    fold): (its view holding ``hole_text``, its history, its legal moves, the opener)."""
    deck = deck_for(variant, master_key(4), 0, seats)
    state, events = execute(None, StartHand(hand_setup(variant, "h-read", deck, 0, seats)))
    history = list(events)

    def step(kind: ActionKind, amount: int = 0) -> LegalActions:
        nonlocal state
        legal = legal_actions(state)
        assert legal is not None
        if kind == ActionKind.FOLD and legal.can_check:
            kind = ActionKind.CHECK
        state, new = execute(state, Act(legal.seat, kind, amount))
        history.extend(new)
        after = legal_actions(state)
        assert after is not None
        return after

    legal = legal_actions(state)
    assert legal is not None
    for _ in range(before):
        legal = step(ActionKind.FOLD)
    opener = legal.seat
    assert legal.min_raise_to is not None
    size = legal.min_raise_to + (legal.min_raise_to // 4 if variant == Variant.NLHE else 0)
    legal = step(ActionKind.BET if legal.bet else ActionKind.RAISE, size)
    while sum(1 for s in state.seats if not s.folded) > 2:
        legal = step(ActionKind.FOLD)
    view = view_for(state, legal.seat)
    hole = cards(hole_text)
    seats_ = tuple(replace(s, cards=hole) if s.seat == legal.seat else s for s in view.seats)
    return replace(view, seats=seats_), redact_all(history, legal.seat), legal, opener


def opener_record(seat: int, rate: float) -> dict[int, SeatStats]:
    """A seat seen to raise ``rate`` of the hands it was first in with (late and early)."""
    return {
        seat: SeatStats(
            hands=200,
            vpip=int(220 * rate),
            pfr=int(180 * rate),
            open_chances=100,
            opened=int(100 * rate),
            late_open_chances=100,
            late_opened=int(100 * rate),
        )
    }


def reader_against_openers(
    spot: tuple[HandView, list[Event], LegalActions, int],
) -> list[ActionKind]:
    """The reader's action in ``spot`` against an opener seen to open 15% and then 70%."""
    view, history, legal, opener = spot
    reader = get_style("reader")
    kinds = []
    for rate in (0.15, 0.70):
        decision = reader.decide(
            view, history, legal, random.Random(1), opener_record(opener, rate)
        )
        assert isinstance(decision, Act)
        kinds.append(decision.kind)
    return kinds


@pytest.mark.parametrize(
    ("hole", "tight", "wide"),
    [
        ("Kc9d", ActionKind.FOLD, ActionKind.RAISE),  # folded to 15%, 3-bet against 70%
        ("KcQd", ActionKind.CALL, ActionKind.RAISE),
        ("AsAh", ActionKind.RAISE, ActionKind.RAISE),
        ("7c2d", ActionKind.FOLD, ActionKind.FOLD),
    ],
)
def test_the_reader_defends_its_blind_by_the_openers_record(
    hole: str, tight: ActionKind, wide: ActionKind
) -> None:
    """The big blind facing the button's open: an open raise is as wide as the opener's
    observed opening rate, so a 70% opener is 3-bet and defended against far more."""
    assert reader_against_openers(facing_an_open(Variant.NLHE, 6, hole, 3)) == [tight, wide]


def test_the_reader_calls_a_wide_draw_opener_with_less() -> None:
    spot = facing_an_open(Variant.DRAW5, 5, "5s5d9cKh2c", 2)
    assert reader_against_openers(spot) == [ActionKind.FOLD, ActionKind.CALL]


@pytest.mark.parametrize("variant", list(Variant))
def test_the_prober_steals_from_players_who_fold(variant: Variant) -> None:
    """First in, it opens hands it folds against players who defend (the record of how
    the players behind fold to first-round raises)."""
    seats, hole = (6, "QcTd") if variant == Variant.NLHE else (2, "AhKd8c5s2d")
    view, legal = first_decision(variant, seats, hole)
    folders = {s: SeatStats(hands=200, first_faced=100, first_folded=95) for s in range(6)}
    callers = {s: SeatStats(hands=200, first_faced=100, first_folded=5) for s in range(6)}
    prober = get_style("prober")
    steal = prober.decide(view, [], legal, random.Random(1), folders)
    stay = prober.decide(view, [], legal, random.Random(1), callers)
    assert isinstance(steal, Act) and isinstance(stay, Act)
    assert steal.kind in (ActionKind.RAISE, ActionKind.BET)
    assert stay.kind in (ActionKind.FOLD, ActionKind.CHECK)


def test_the_prober_prices_a_bet_by_the_fold_rate() -> None:
    """On the river in position (a check is a showdown): it bluffs players who fold too
    much, value-bets thin against players who call, and checks both against an ordinary
    record."""

    def bets(eq: float, folds: float) -> bool:
        return max(Prober.bet_value(eq, folds, s, 1.0) for s in (0.33, 0.66, 1.0)) > eq + 0.02

    assert bets(0.15, 0.8) and not bets(0.15, 0.4) and not bets(0.15, 0.1)  # the bluff
    assert bets(0.6, 0.05) and not bets(0.6, 0.4)  # the thin value bet
    assert bets(0.85, 0.4) and bets(0.85, 0.05)


def test_the_prober_calls_lighter_against_weak_bettors() -> None:
    """A bettor's range puts its shown bets' weak share on its weakest holdings: middle
    pair is worth far more against a player whose bets were mostly weak."""
    hole, board = cards("9c8d"), cards("Ks9h4d2c7s")
    bluffer = _tiered(None, board, hole, 0.7)
    honest = _tiered(None, board, hole, 0.1)
    eq = [
        holdem_equity(hole, board, opponents=[r], samples=3000, seed=3).equity
        for r in (bluffer, honest)
    ]
    assert eq[0] > eq[1] + 0.25
    # Its calls also loosen against players who bet whenever they can.
    view, legal = first_decision(Variant.NLHE, 2, "AsAh")
    spot = felt_styles.reading.read(view, [], legal, random.Random(1), None)
    spot.table = {0: SeatStats(bets=90, checks=10)}
    aggressive = Prober.call_margin(spot, 0)
    spot.table = {0: SeatStats(bets=5, checks=95)}
    assert aggressive < Prober.call_margin(spot, 0)


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
