"""Hard's heads-up postflop minimum defence (``HardBot._defends``).

Facing a bet of ``b`` pots after the flop in a hand dealt heads-up, hard continues with
every hand above the ``b / (1 + b)`` percentile of its own range (``_floor_range``), unless
the bettor's record shows at 95% that its bets are value (``TableRead.value_heavy``). The
tests play real spots through ``HardBot.decide`` and compare with the same bot whose
defence is switched off, which is the equity-only rule hard played before.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import pytest

from felt.core.rules.commands import Act, ActionKind, StartHand
from felt.core.rules.config import Variant
from felt.core.rules.engine import execute
from felt.core.rules.events import Event
from felt.core.rules.legal import LegalActions, legal_actions
from felt.core.rules.views import HandView, redact_all, view_for
from felt.core.table.stats import SeatStats
from felt.players.bots import postflop as pf
from felt.players.bots.base import Situation, situation
from felt.players.bots.hard import (
    HardBot,
    TableRead,
    _defence_percentile,
    _floor_range,
    _value_heavy,
)
from felt_dev.ladder import deck_for, hand_setup, master_key

Spot = tuple[HandView, list[Event], LegalActions]

# Shown after betting 40 times, two of them one pair or less: its bets are value.
HONEST = SeatStats(
    hands=200, vpip=120, pfr=80, faced=60, folded=24, bets=60, calls=50, checks=70,
    showdowns=60, shown=50, shown_bettor=40, shown_bettor_weak=2,
)  # fmt: skip
# Bets under a fifth of its later actions: a passive player, whose bets leave out bluffs.
PASSIVE = SeatStats(
    hands=200, vpip=120, pfr=40, faced=60, folded=24, bets=20, calls=90, checks=90,
    showdowns=50, shown=40, shown_bettor=8, shown_bettor_weak=1,
)  # fmt: skip
# Enters four pots in five, bets often and shows one pair or less after a third of its bets.
BLUFFER = replace(HONEST, vpip=160, bets=100, calls=40, checks=40, shown_bettor_weak=14)
# Enters a quarter of its pots; no showdowns yet, bets as often as the bluffer.
TIGHT = replace(BLUFFER, vpip=50, shown_bettor=0, shown_bettor_weak=0)


def flop_bet(fraction: float | None) -> Spot:
    """Heads-up: the button opens to 2.5 big blinds, the big blind (seat 1, hard) calls and
    checks the flop, the button bets ``fraction`` of the pot (None: all-in)."""
    setup = hand_setup(Variant.NLHE, "h-def", deck_for(Variant.NLHE, master_key(9), 0), 0)
    state, events = execute(None, StartHand(setup))
    history = list(events)
    for kind, to in ((ActionKind.RAISE, 250), (ActionKind.CALL, 0), (ActionKind.CHECK, 0)):
        legal = legal_actions(state)
        assert legal is not None
        state, events = execute(state, Act(legal.seat, kind, to))
        history.extend(events)
    legal = legal_actions(state)
    assert legal is not None and legal.seat == 0 and legal.max_raise_to is not None
    pot = sum(s.committed for s in state.seats)
    to = legal.max_raise_to if fraction is None else int(fraction * pot)
    state, events = execute(state, Act(0, ActionKind.BET, to))
    history.extend(events)
    legal = legal_actions(state)
    assert legal is not None and legal.seat == 1
    return view_for(state, 1), redact_all(history, 1), legal


def holding(spot: Spot, hole: tuple[int, int]) -> Spot:
    view, history, legal = spot
    seats = tuple(replace(s, cards=hole) if s.seat == 1 else s for s in view.seats)
    return replace(view, seats=seats), history, legal


@contextmanager
def no_defence() -> Iterator[None]:
    """Hard as it played before the defence: its equity rule alone."""
    mp = pytest.MonkeyPatch()
    mp.setattr(HardBot, "_defends", lambda self, sit, read: False)
    try:
        yield
    finally:
        mp.undo()


def decide(spot: Spot, table: dict[int, SeatStats] | None = None) -> ActionKind:
    view, history, legal = spot
    move = HardBot().decide(view, history, legal, random.Random(7), table)
    assert isinstance(move, Act)
    return move.kind


def threshold(sit: Situation) -> float:
    size = sit.to_call / (sit.pot - sit.to_call)
    return size / (1 + size)


def range_hands(spot: Spot) -> list[tuple[tuple[int, int], float, float]]:
    """Hard's range here: (hole, weight, percentile) of every combo it holds with weight."""
    found = _floor_range(situation(*spot))
    assert found is not None
    st, weights, me = found
    return [
        (combo, w, pf.percentile(st, weights, me, i))
        for i, (combo, w) in enumerate(zip(pf.combos(), weights, strict=True))
        if w > 0
    ]


def test_hard_calls_a_pot_bet_with_a_mid_hand_it_used_to_fold() -> None:
    spot = flop_bet(1.0)
    cut = threshold(situation(*spot))
    hands = range_hands(spot)
    mid = [h for h in hands if cut + 0.05 < h[2] < 0.8]
    folded_before = []
    with no_defence():
        for combo, _, pct in mid[::5]:
            if decide(holding(spot, combo)) == ActionKind.FOLD:
                folded_before.append((combo, pct))
    # The equity rule alone folds a good part of the hands minimum defence continues with.
    assert len(folded_before) >= 5
    honest_folds = 0
    for combo, _ in folded_before:
        assert decide(holding(spot, combo)) == ActionKind.CALL
        # Against a record of honest bets it plays its equity rule, as before the defence.
        against_honest = decide(holding(spot, combo), {0: HONEST})
        with no_defence():
            assert against_honest == decide(holding(spot, combo), {0: HONEST})
        honest_folds += against_honest == ActionKind.FOLD
    assert honest_folds >= len(folded_before) // 2


@pytest.mark.parametrize("fraction", [0.5, 1.0, None])
def test_hard_continues_with_at_least_the_minimum_defence_share(fraction: float | None) -> None:
    """Every hand above the ``b / (1 + b)`` percentile continues: at least ``1 / (1 + b)``."""
    spot = flop_bet(fraction)
    sit = situation(*spot)
    cut = threshold(sit)
    hands = range_hands(spot)
    total = sum(w for _, w, _ in hands)
    above = [h for h in hands if h[2] > cut]
    # Up to half a combo's weight at the cut (a hand counts from the middle of its weight).
    defended = 1 / (1 + sit.to_call / (sit.pot - sit.to_call))
    assert sum(w for _, w, _ in above) / total >= defended - 0.005
    for combo, _, _ in random.Random(3).sample(above, min(40, len(above))):
        assert decide(holding(spot, combo)) != ActionKind.FOLD


@pytest.mark.parametrize("fraction", [0.5, 1.0, None])
def test_hard_never_defends_with_the_bottom_of_its_range(fraction: float | None) -> None:
    """Hands at or below the ``b / (1 + b)`` percentile are left to the equity rule."""
    spot = flop_bet(fraction)
    cut = threshold(situation(*spot))
    hard = HardBot()
    read = TableRead.of(None, situation(*spot), hard.bluff_frequency)
    for combo, _, pct in range_hands(spot)[::3]:
        sit = situation(*holding(spot, combo))
        assert _defence_percentile(sit) == pytest.approx(pct)
        assert hard._defends(sit, read) == (pct > cut)
        if pct <= cut:
            # Below the cut only the equity rule continues (a draw's price), as before.
            kind = decide(holding(spot, combo))
            with no_defence():
                assert kind == decide(holding(spot, combo))


def test_the_value_heavy_read_needs_evidence_at_95_percent() -> None:
    assert _value_heavy(HONEST)
    assert _value_heavy(PASSIVE)
    assert _value_heavy(TIGHT)
    assert not _value_heavy(BLUFFER)
    # Entering 60% of its pots is tighter than the range the defence assumes (the floor
    # enters about 75%): the reference tight-aggressive bot does, and its bets were paid off.
    assert _value_heavy(replace(BLUFFER, vpip=120))
    assert not _value_heavy(SeatStats())
    # A few honest showdowns, a few passive or tight hands are not evidence yet: hard defends.
    few = SeatStats(
        hands=12, vpip=2, bets=2, calls=5, checks=5, shown_bettor=4, shown_bettor_weak=0
    )
    assert not _value_heavy(few)
    sit = situation(*flop_bet(1.0))
    assert TableRead.of({0: HONEST}, sit, 0.1).value_heavy
    assert not TableRead.of({0: few}, sit, 0.1).value_heavy
    assert not TableRead.of(None, sit, 0.1).value_heavy


def test_the_honest_read_is_made_when_asked() -> None:
    """``value_heavy`` is read from the heads-up record when a decision asks for it (only
    ``_defends`` does), not built with every read; no record is kept at a full table."""
    sit = situation(*flop_bet(1.0))
    read = TableRead.of({0: HONEST}, sit, 0.1)
    assert read.heads_up_record is HONEST and read.value_heavy
    assert TableRead.of(None, sit, 0.1).heads_up_record == SeatStats()
    full = replace(sit, order=(0, 1, 2))
    assert TableRead.of({0: HONEST}, full, 0.1).heads_up_record is None
    assert not TableRead.of({0: HONEST}, full, 0.1).value_heavy


def test_no_defence_in_hands_dealt_to_a_full_table() -> None:
    spot = flop_bet(1.0)
    cut = threshold(situation(*spot))
    combo = next(c for c, _, pct in range_hands(spot) if pct > cut + 0.1)
    sit = situation(*holding(spot, combo))
    read = TableRead.of(None, sit, 0.1)
    assert HardBot()._defends(sit, read)
    assert not HardBot()._defends(replace(sit, dealt=6), read)


def test_a_limped_pot_has_a_range_too() -> None:
    """A line the preflop floor does not know (a limp) starts the flop from every combo."""
    setup = hand_setup(Variant.NLHE, "h-limp", deck_for(Variant.NLHE, master_key(9), 1), 0)
    state, events = execute(None, StartHand(setup))
    history = list(events)
    for kind in (ActionKind.CALL, ActionKind.CHECK, ActionKind.CHECK):
        legal = legal_actions(state)
        assert legal is not None
        state, events = execute(state, Act(legal.seat, kind, 0))
        history.extend(events)
    legal = legal_actions(state)
    assert legal is not None and legal.seat == 0
    state, events = execute(state, Act(0, ActionKind.BET, 200))
    history.extend(events)
    legal = legal_actions(state)
    assert legal is not None
    sit = situation(view_for(state, 1), redact_all(history, 1), legal)
    found = _floor_range(sit)
    assert found is not None
    _, weights, _ = found
    assert sum(1 for w in weights if w > 0) > 1000  # every combo off the board
    pct = _defence_percentile(sit)
    assert pct is not None and 0.0 <= pct <= 1.0
