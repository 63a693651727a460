"""Monte Carlo equity against eval7, against independent simulations, and exact cases.

Both sides of each comparison are samples, so tolerances come from the sample
counts: 5 standard errors of the difference (a flake rate near 1e-6).
"""

from __future__ import annotations

import itertools
import math
import random
import warnings
from collections.abc import Callable, Sequence

import pytest
from phevaluator import _pheval  # type: ignore[import-untyped]

from felt.core.cards import Card, card, card_str, cards
from felt.core.evaluator import HandCategory
from felt.players.equity import (
    DrawOpponent,
    Range,
    RangeError,
    draw_equity,
    holdem_equity,
    starting_hand_order,
    top_percent,
)

with warnings.catch_warnings():  # eval7 uses pyparsing APIs that now warn
    warnings.simplefilter("ignore", DeprecationWarning)
    import eval7  # type: ignore[import-untyped]

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:eval7")

ANY_TWO = "22+,A2+,K2+,Q2+,J2+,T2+,92+,82+,72+,62+,52+,42+,32"


def _tolerance(p: float, n1: int, n2: int) -> float:
    var = max(p * (1 - p), 0.01)
    return 5 * math.sqrt(var / n1 + var / n2)


def _eval7_equity(hero: str, villain: str, board: str = "", samples: int = 100_000) -> float:
    hand = [eval7.Card(c) for c in (hero[:2], hero[2:])]
    board_cards = [eval7.Card(board[i : i + 2]) for i in range(0, len(board), 2)]
    result: float = eval7.py_hand_vs_range_monte_carlo(
        hand, eval7.HandRange(villain), board_cards, samples
    )
    return result


@pytest.mark.parametrize(
    ("hero", "villain", "board", "expected"),
    [
        ("AsAh", "KK", "", 0.82),
        ("AhKh", "QQ", "", 0.46),
        ("AsAh", ANY_TWO, "", 0.85),
        ("7h6h", "AA", "", 0.23),
        ("AhKh", ANY_TWO, "QhJh2c", None),
        ("Td9d", "AK", "8d7c2s", None),
        ("QsQd", "AK,JJ+", "Ac7d2h9s", None),
    ],
)
def test_heads_up_matches_eval7(
    hero: str, villain: str, board: str, expected: float | None
) -> None:
    n = 100_000
    ours = holdem_equity(hero, board=board, opponents=[villain], samples=n, seed=7)
    theirs = _eval7_equity(hero, villain, board, n)
    assert ours.equity == pytest.approx(ours.win + ours.tie)
    assert abs(ours.equity - theirs) < _tolerance(theirs, n, n)
    if expected is not None:
        assert ours.equity == pytest.approx(expected, abs=0.01)


def test_weighted_range_is_the_weighted_mix() -> None:
    # One opponent: P(combo) is proportional to its weight, so the equity is the
    # weighted mean of the equities against each part (hero blocks neither part).
    n = 100_000
    ours = holdem_equity("AsAh", opponents=["KK, 25%(QQ)"], samples=n, seed=3).equity
    vs_kk, vs_qq = _eval7_equity("AsAh", "KK", samples=n), _eval7_equity("AsAh", "QQ", samples=n)
    expected = (6 * vs_kk + 0.25 * 6 * vs_qq) / (6 + 1.5)
    assert abs(ours - expected) < _tolerance(expected, n, n)


def _python_multiway(hero: Sequence[Card], opponents: int, samples: int, seed: int) -> float:
    """An independent simulation: Python's RNG and phevaluator (lower = better)."""
    rng = random.Random(seed)
    rest = [c for c in range(52) if c not in hero]
    total = 0.0
    for _ in range(samples):
        dealt = rng.sample(rest, 5 + 2 * opponents)
        board = dealt[:5]
        mine = _pheval.evaluate_7cards(*hero, *board)
        theirs = [
            _pheval.evaluate_7cards(*dealt[5 + 2 * i : 7 + 2 * i], *board) for i in range(opponents)
        ]
        best = min(theirs)
        if mine < best:
            total += 1
        elif mine == best:
            total += 1 / (1 + theirs.count(best))
    return total / samples


@pytest.mark.parametrize(("hero", "opponents"), [("AsAh", 3), ("7c2d", 2), ("JhTh", 5)])
def test_multiway_matches_an_independent_simulation(hero: str, opponents: int) -> None:
    n_ours, n_theirs = 200_000, 20_000
    ours = holdem_equity(hero, opponents=opponents, samples=n_ours, seed=11).equity
    theirs = _python_multiway(cards(hero), opponents, n_theirs, seed=5)
    assert abs(ours - theirs) < _tolerance(theirs, n_ours, n_theirs)


def test_exact_cases() -> None:
    river = "AhKh2c7d9s"
    assert holdem_equity("QhJh", board=river, opponents=["3c3d"]).equity == 0.0
    assert holdem_equity("3c3d", board=river, opponents=["QhJh"]).equity == 1.0
    # Royal flush on board: everybody ties, hero gets a third of the pot.
    three_way = holdem_equity("2c3d", board="AhKhQhJhTh", opponents=2, samples=1000)
    assert (three_way.win, three_way.samples) == (0.0, 1000)
    assert three_way.tie == three_way.equity == pytest.approx(1 / 3)
    # The nut flush draw's outs on the turn, counted exactly: 9 hearts of 44.
    turn = holdem_equity("AhKh", board="Qh7h2c3s", opponents=["JsJd"], samples=200_000, seed=1)
    assert turn.equity == pytest.approx(9 / 44 + 6 / 44, abs=0.01)  # hearts, aces and kings


def test_determinism_by_seed() -> None:
    first = holdem_equity("AsKd", opponents=["TT+, AQs+", None], samples=5000, seed=42)
    assert holdem_equity("AsKd", opponents=["TT+, AQs+", None], samples=5000, seed=42) == first
    assert holdem_equity("AsKd", opponents=["TT+, AQs+", None], samples=5000, seed=43) != first
    assert holdem_equity("AsKd", samples=5000, seed=2**64 + 5) == holdem_equity(
        "AsKd", samples=5000, seed=5
    )


def test_ranges_respect_known_cards() -> None:
    # Hero holds two aces: the only AA combo left is AdAc, so this is exact-ish.
    only = holdem_equity("AsAh", opponents=["AA"], samples=20_000, seed=1)
    specific = holdem_equity("AsAh", opponents=["AdAc"], samples=20_000, seed=1)
    assert only.equity == pytest.approx(specific.equity, abs=0.02)
    with pytest.raises(ValueError, match="no combo left"):
        holdem_equity("AsAh", board="AdAc2c", opponents=["AA"])
    with pytest.raises(ValueError, match="without sharing cards"):
        holdem_equity("AsAh", opponents=["AA", "AA"], samples=10)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: holdem_equity("AsAh", board="As2c3d"), "duplicate card As in hero and board"),
        (lambda: holdem_equity("AsAhKd"), "exactly 2 hole cards"),
        (lambda: holdem_equity("AsAh", board="2c3d4h5s6c7d"), "at most 5"),
        (lambda: holdem_equity("AsAh", dead="2c2c"), "duplicate card 2c in dead"),
        (lambda: holdem_equity("AsAh", samples=0), "samples"),
        (lambda: holdem_equity("AsAh", opponents=0), "at least one opponent"),
        (lambda: holdem_equity("AsAh", opponents=[]), "at least one opponent"),
        (lambda: holdem_equity("AsAh", opponents=30), "need"),
        (lambda: holdem_equity("AsAh", opponents=[Range()]), "empty"),
        (lambda: holdem_equity([0, 60]), "not a card"),
        (lambda: holdem_equity("AsAh", opponents=["AKx"]), "not a hand"),
    ],
)
def test_holdem_validation(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def _combo_names(r: Range) -> set[str]:
    return {"".join(sorted((card_str(a), card_str(b)))) for a, b in r}


def _eval7_combo_names(text: str) -> set[str]:
    return {"".join(sorted((str(a), str(b)))) for (a, b), _ in eval7.HandRange(text).hands}


@pytest.mark.parametrize(
    "text",
    [
        "AA,KK,AKs,AQo,T9s+",
        "22+",
        "ATs+, KJo+, 77-99",
        "A5s-A2s, JJ-88",
        "AK, QJs, AhKh, 8c7c",
        ANY_TWO,
    ],
)
def test_range_parsing_matches_eval7(text: str) -> None:
    assert _combo_names(Range.parse(text)) == _eval7_combo_names(text)


def test_range_notation_details() -> None:
    assert len(Range.parse("AA,KK,AKs,AQo,T9s+")) == 6 + 6 + 4 + 12 + 4
    assert len(Range.parse("any")) == 1326 == len(Range.any_two())
    weighted = Range.parse("AKs:0.5, 40%(QQ, JJ), 0.25(T9s), AhKh")
    assert weighted.weight((card("As"), card("Ks"))) == 0.5
    assert weighted.weight((card("Kh"), card("Ah"))) == 1.0  # later token wins, any order
    assert weighted.weight((card("Qs"), card("Qh"))) == pytest.approx(0.4)
    assert weighted.weight((card("Ts"), card("9s"))) == 0.25
    assert (card("Ah"), card("Kh")) in weighted and (card("Ah"), card("Kd")) not in weighted
    assert Range.parse("AK:0") == Range()
    assert len(Range.parse("AKs").without(cards("As"))) == 3
    for bad in ["", "AKs:-1", "0.5(AKs", "AAs", "KQs-JTs", "AKs-AQo", "AhAh", "0.5(0.5(AA))"]:
        with pytest.raises(RangeError):
            Range.parse(bad)


def test_top_percent() -> None:
    order = starting_hand_order()
    assert len(order) == len(set(order)) == 169
    assert order[0] == "AA" and order[-1] == "32o"
    assert _combo_names(Range.parse(",".join(order))) == _combo_names(Range.any_two())
    assert len(top_percent(100)) == 1326
    five, ten, twenty = top_percent(5), top_percent(10), top_percent(20)
    assert set(five) <= set(ten) <= set(twenty)
    assert 0.05 <= five.share < 0.06 and 0.10 <= ten.share < 0.11 and 0.20 <= twenty.share < 0.21
    assert (card("As"), card("Ah")) in top_percent(0.1)
    for bad in (0, -1, 101):
        with pytest.raises(ValueError):
            top_percent(bad)


# --------------------------------------------------------------------------- draw


def _python_draw(
    hero_keep: Sequence[Card], known: Sequence[Card], kept_pair: bool, samples: int, seed: int
) -> float:
    """Independent draw simulation vs one opponent who drew 3, holding a pair if kept_pair."""
    rng = random.Random(seed)
    unseen = [c for c in range(52) if c not in known]
    pairs = [(a, b) for a, b in itertools.combinations(unseen, 2) if a >> 2 == b >> 2]
    total = 0.0
    for _ in range(samples):
        kept = list(rng.choice(pairs)) if kept_pair else []
        fresh = [c for c in rng.sample(unseen, 12) if c not in kept]
        opp = kept + fresh[: 5 - len(kept)]
        mine = [*hero_keep, *fresh[5 : 5 + 5 - len(hero_keep)]]
        a, b = _pheval.evaluate_5cards(*mine), _pheval.evaluate_5cards(*opp)
        total += 1.0 if a < b else 0.5 if a == b else 0.0
    return total / samples


@pytest.mark.parametrize("kept_pair", [False, True])
def test_draw_matches_an_independent_simulation(kept_pair: bool) -> None:
    hero = cards("AsKdQh7c2d")
    keep = cards("AsKd")
    opponent = DrawOpponent(3, HandCategory.PAIR if kept_pair else HandCategory.HIGH_CARD)
    n_ours, n_theirs = 100_000, 20_000
    ours = draw_equity(hero, keep, opponent_draws=[opponent], samples=n_ours, seed=9).equity
    theirs = _python_draw(keep, hero, kept_pair, n_theirs, seed=1)
    assert abs(ours - theirs) < _tolerance(theirs, n_ours, n_theirs)


def test_draw_sanity() -> None:
    sf = "9h8h7h6h5h"
    assert draw_equity(sf, sf, opponent_draws=[3]).equity == pytest.approx(1.0, abs=1e-3)
    # A pat wheel against kept trips: the trips win only by filling up (about 10%).
    wheel = draw_equity("Ah2c3d4s5h", "Ah2c3d4s5h", opponent_draws=[2], samples=50_000)
    assert 0.86 < wheel.equity < 0.93
    # Drawing 3 to a pair of aces beats drawing 3 to a pair of deuces.
    aces = draw_equity("AhAc9d6s3h", "AhAc", opponent_draws=[3, 3], samples=20_000)
    deuces = draw_equity("2h2c9d6s3h", "2h2c", opponent_draws=[3, 3], samples=20_000)
    assert aces.equity > deuces.equity + 0.05
    # A typical pat opponent (straight or better) beats hero's kept aces-up most times.
    assert draw_equity("AhAcKdKs3h", "AhAcKdKs", opponent_draws=[0]).equity < 0.2
    # Opponents' constraints are all honoured together.
    many = [DrawOpponent.typical(k) for k in (0, 1, 2, 3, 4)]
    assert 0 <= draw_equity("AhKcQdJs9h", "AhKcQdJs", opponent_draws=many).equity < 0.2


def test_draw_determinism_by_seed() -> None:
    args = ("AsKdQh7c2d", "AsKd")
    first = draw_equity(*args, opponent_draws=[3, 1, 0], samples=5000, seed=8)
    assert draw_equity(*args, opponent_draws=[3, 1, 0], samples=5000, seed=8) == first
    assert draw_equity(*args, opponent_draws=[3, 1, 0], samples=5000, seed=9) != first


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: draw_equity("AsKdQh7c", "AsKd"), "exactly 5 cards"),
        (lambda: draw_equity("AsKdQh7c2d", "AsJd"), "Jd is not"),
        (lambda: draw_equity("AsKdQh7c2d", "AsAs"), "duplicate card As in keep"),
        (
            lambda: draw_equity("AsKdQh7c2d", "AsKd", dead="2d"),
            "duplicate card 2d in hero and dead",
        ),
        (lambda: draw_equity("AsKdQh7c2d", "AsKd", opponent_draws=[6]), "0 to 5"),
        (lambda: draw_equity("AsKdQh7c2d", "AsKd", opponent_draws=[]), "at least one"),
        (lambda: draw_equity("AsKdQh7c2d", "AsKd", opponent_draws=[3] * 9), "need"),
        (lambda: DrawOpponent(4, HandCategory.PAIR), "cannot make pair"),
        (lambda: DrawOpponent(2, HandCategory.STRAIGHT), "cannot make straight"),
        (lambda: draw_equity("AsKdQh7c2d", "AsKd", samples=-5), "samples"),
    ],
)
def test_draw_validation(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()
