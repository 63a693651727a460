"""Hard's multiway Draw equity plays every opponent's whole model mixture (issue #25).

Multiway, hard used to play each opponent's likeliest model component alone. A
re-raiser read as half two pair, half a pair (the tie went to the first) became two pair
or better for certain, and against 4x ``lag`` 5-handed hard folded two pair before the
draw getting seven to one. ``_joint_components`` combines the opponents' mixtures and
``HardBot._mixture_equity`` samples the heaviest joint components by weight.
"""

from __future__ import annotations

import pytest

from felt.core.cards import cards
from felt.core.evaluator import HandCategory
from felt.players.bots.hard import HardBot, HardTuning, _joint_components
from felt.players.equity import DrawOpponent, draw_equity

H = HandCategory

# The models hard reads in a first round bet, re-raised and called (5-handed, no record):
# the re-raiser half two pair drawing one, half a pair drawing three; the caller mostly a
# pair drawing three, the rest a draw.
RERAISER = [(0.5, DrawOpponent(1, H.TWO_PAIR)), (0.5, DrawOpponent(3, H.PAIR))]
CALLER = [(0.65, DrawOpponent(3, H.PAIR)), (0.35, DrawOpponent(1))]
TWO_SMALL_PAIRS = tuple(cards("5h 5d 3c 3s Qh"))
KEEP = TWO_SMALL_PAIRS[:4]


def test_joint_components_are_the_products_of_the_mixtures() -> None:
    joint = _joint_components([RERAISER, CALLER], 12)
    assert len(joint) == 4
    assert sum(w for w, _ in joint) == pytest.approx(1.0)
    for w, (a, b) in joint:
        wa = next(x for x, m in RERAISER if m == a)
        wb = next(x for x, m in CALLER if m == b)
        assert w == pytest.approx(wa * wb)
    # Heaviest first.
    assert [w for w, _ in joint] == sorted((w for w, _ in joint), reverse=True)


def test_joint_components_keep_the_heaviest_and_renormalise() -> None:
    joint = _joint_components([RERAISER, CALLER], 2)
    assert len(joint) == 2
    assert sum(w for w, _ in joint) == pytest.approx(1.0)
    # Both kept components hold the caller's likelier pair; the re-raiser's two are level.
    assert all(combo[1] == DrawOpponent(3, H.PAIR) for _, combo in joint)
    assert {combo[0] for _, combo in joint} == {m for _, m in RERAISER}
    # Zero-weight components never enter.
    zero = [(1.0, DrawOpponent(3)), (0.0, DrawOpponent(0, H.STRAIGHT))]
    assert all(DrawOpponent(0, H.STRAIGHT) not in c for _, c in _joint_components([zero, zero], 12))


def test_multiway_equity_is_the_mixtures_weighted_equity() -> None:
    exact = sum(
        w * draw_equity(TWO_SMALL_PAIRS, KEEP, (), combo, 20_000, 3).equity
        for w, combo in _joint_components([RERAISER, CALLER], 12)
    )
    bot = HardBot()
    estimates = [
        bot._mixture_equity(TWO_SMALL_PAIRS, KEEP, (), [RERAISER, CALLER], seed)
        for seed in range(6)
    ]
    assert sum(estimates) / len(estimates) == pytest.approx(exact, abs=0.03)
    # The likeliest-component read put the re-raiser on two pair or better for certain.
    likeliest = [DrawOpponent(1, H.TWO_PAIR), DrawOpponent(3, H.PAIR)]
    old = draw_equity(TWO_SMALL_PAIRS, KEEP, (), likeliest, 20_000, 3).equity
    assert exact > old + 0.15


def test_two_pair_continues_against_a_reraise_and_a_caller() -> None:
    # The spot hard used to fold: a bet, a re-raise, a call; half a bet to call into
    # 3.75 bets (a price of 12%).
    bot = HardBot()
    keep, equity = bot._best_keep(TWO_SMALL_PAIRS, (), [RERAISER, CALLER], 11)
    assert set(keep) == set(KEEP)
    price = 50 / (375 + 50)
    assert equity >= price + HardTuning().draw_call_first
    # A hand with nothing still folds there.
    nothing = tuple(cards("Kh 9d 7c 4s 2h"))
    _, weak = bot._best_keep(nothing, (), [RERAISER, CALLER], 11)
    assert weak < price + HardTuning().draw_call_first
