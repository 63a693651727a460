"""Hard's read of a big bet as a balanced bettor's (``HardBot._pays_against_bluffs``).

Heads-up after the flop, facing a bet that its equity rule and minimum defence fold, hard
reads the bet again with the weak part of the bettor's range weighted up to the bluffs'
share of a balanced bet of that size (``postflop.bluff_share``) and calls when its equity
against that range pays the price, unless the bettor's record shows honest bets at 95%.
The tests play real spots through ``HardBot.decide`` (the spots of
``test_hard_defence``) and compare with the same bot whose balanced read is off.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from felt.core.rules.commands import ActionKind
from felt.core.table.stats import SeatStats
from felt.players.bots import postflop as pf
from felt.players.bots.base import situation
from felt.players.bots.hard import HardBot, TableRead, _rest_weight
from felt.players.equity import holdem_equity
from tests.unit.bots.test_hard_defence import (
    HONEST,
    Spot,
    decide,
    flop_bet,
    holding,
    range_hands,
)


@contextmanager
def no_balanced_read() -> Iterator[None]:
    """Hard as it played before the balanced read (equity rule and minimum defence)."""
    mp = pytest.MonkeyPatch()
    mp.setattr(HardBot, "_pays_against_bluffs", lambda self, sit, read, implied: False)
    try:
        yield
    finally:
        mp.undo()


def continuing(
    spot: Spot, table: dict[int, SeatStats] | None = None
) -> tuple[float, list[tuple[int, int]]]:
    """Share of hard's range (by weight, every third combo) that does not fold, and the
    hands that continue only because of the balanced read."""
    kept = total = 0.0
    added = []
    for combo, w, _ in range_hands(spot)[::3]:
        total += w
        now = decide(holding(spot, combo), table)
        if now != ActionKind.FOLD:
            kept += w
            with no_balanced_read():
                if decide(holding(spot, combo), table) == ActionKind.FOLD:
                    added.append(combo)
    return kept / total, added


@pytest.mark.parametrize("share", [0.1, 0.25, 1 / 3, 0.45, 0.485])
@pytest.mark.parametrize("keep", [0.45, 0.6])
def test_the_rest_weight_makes_the_weak_hands_the_bluffs_share(keep: float, share: float) -> None:
    r = _rest_weight(keep, share)
    got = r * (1 - keep) / (keep + r * (1 - keep))
    # At most the whole range unnarrowed (weight 1): then the weak hands are all there are.
    assert got == pytest.approx(min(share, 1 - keep), abs=0.01)
    if r < 1:
        assert _rest_weight(keep, share + 0.05) > r  # bigger bets, more bluffs


def test_hard_calls_a_flop_shove_wider_than_minimum_defence() -> None:
    spot = flop_bet(None)
    sit = situation(*spot)
    size = sit.to_call / (sit.pot - sit.to_call)
    share, added = continuing(spot)
    with no_balanced_read():
        before, _ = continuing(spot)
    # Minimum defence alone continues with about 1 / (1 + b) of the range (6% here).
    assert before < 1 / (1 + size) + 0.03
    assert share > before + 0.05
    assert len(added) >= 10
    # Each added call pays the price against the range a balanced shover holds.
    hard = HardBot()
    read = TableRead.of(None, sit, hard.bluff_frequency)
    for combo in added[:10]:
        s = situation(*holding(spot, combo))
        balanced = hard._balanced_range(s, 0, read.style(0), pf.bluff_share(size))
        assert balanced is not None
        eq = holdem_equity(s.hole, s.board, (), [balanced], samples=4000, seed=5).equity
        assert eq >= s.pot_odds + hard.tuning.call_margin - 0.03
        # Against hard's usual read of the same bet, the call does not pay.
        usual = hard._range(s, 0, True, read.style(0))
        eq_usual = holdem_equity(s.hole, s.board, (), [usual], samples=4000, seed=5).equity
        assert eq_usual < eq


def test_not_against_a_record_of_honest_bets() -> None:
    spot = flop_bet(None)
    _, added = continuing(spot, {0: HONEST})
    assert added == []


def test_a_bigger_bet_is_read_with_more_bluffs() -> None:
    """The same hand has more equity against the balanced read of a shove than of a half-pot
    bet; below half the pot the usual read already holds the bluffs' share."""
    hard = HardBot()
    spots = {f: flop_bet(f) for f in (0.5, 1.0, None)}
    combo = next(c for c, _, pct in range_hands(spots[None]) if 0.5 < pct < 0.6)
    equities = []
    for f in (0.5, 1.0, None):
        s = situation(*holding(spots[f], combo))
        size = s.to_call / (s.pot - s.to_call)
        read = TableRead.of(None, s, hard.bluff_frequency)
        balanced = hard._balanced_range(s, 0, read.style(0), pf.bluff_share(size))
        assert balanced is not None
        equities.append(holdem_equity(s.hole, s.board, (), [balanced], 4000, 5).equity)
    assert equities[0] < equities[1] < equities[2]
    s = situation(*holding(spots[0.5], combo))
    read = TableRead.of(None, s, hard.bluff_frequency)
    assert hard._balanced_range(s, 0, read.style(0), 0.15) is None
