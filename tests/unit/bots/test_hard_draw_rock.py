"""How the hard bot plays Five-Card Draw heads-up against a selective player (a rock).

A player who folds most hands to a bet before the draw continues only with
its best ones, and the public record says so (``felt.players.bots.opponents``):

- its first-round bets are as strong as its raise rate is low (two pair or
  better from a player who bets one hand in thirteen);
- after the draw, a seat that called a bet before it and drew three kept one
  of the few pairs it calls with: hard neither bluffs nor steals into it and
  bets for value only what beats those pairs;
- bluffs after the draw follow how often the seat folds after the draw, not
  its folds before it;
- a bet after the draw is as strong as the seat's shown bets were.
"""

from __future__ import annotations

import random
from dataclasses import replace

from felt.core.cards import cards
from felt.core.evaluator import HandCategory, category_of, evaluate
from felt.core.rules.commands import Act, ActionKind
from felt.core.rules.config import Variant
from felt.core.rules.events import Event, Street
from felt.core.rules.legal import LegalActions
from felt.core.rules.views import HandView
from felt.core.table.stats import SeatStats
from felt.players.bots.base import Situation, situation
from felt.players.bots.hard import (
    HardBot,
    Style,
    TableRead,
    _equity_against_pairs,
    _kept_pair_floor,
    _strong_bets,
)
from tests.unit.bots.test_hard_fields import Recorder
from tests.unit.bots.test_hard_reads import play_heads_up

# A rock's record: folds 84% of first-round bets, raises one hand in thirteen, calls down
# after the draw what it kept, never showed a bet weaker than two pair.
ROCK = SeatStats(
    hands=300, vpip=54, pfr=23, first_faced=286, first_folded=240, bets=19, calls=12,
    checks=22, faced=21, folded=3, hu_faced=21, hu_folded=3, saw_later=46, showdowns=31,
    shown=31, shown_bettor=6, shown_bettor_weak=0, shown_drawn=28,
)  # fmt: skip
# Calls most first-round bets (loose-passive).
CALLER = replace(ROCK, first_folded=15, pfr=0, vpip=250)


def test_a_low_raise_rate_means_first_round_bets_are_two_pair_or_better() -> None:
    rock = Style.of(ROCK, heads_up=True)
    loose = Style.of(replace(ROCK, pfr=150), heads_up=True)
    assert _strong_bets(rock, 0.25) >= 0.7
    assert _strong_bets(loose, 0.25) == 0.25
    assert _strong_bets(Style(), 0.5) == 0.5  # unknown: the textbook read


def test_bluffs_after_the_draw_follow_the_folds_after_the_draw() -> None:
    # Folds nearly every bet before the draw, never after it.
    record = replace(ROCK, faced=40, folded=0)
    sit_free = replace(ROCK, faced=40, folded=30)

    def read_of(stats: SeatStats) -> TableRead:
        return TableRead.of({1: stats}, _heads_up_situation(), 0.1)

    assert read_of(record).bluff > 0.1  # its overall fold rate is high
    assert read_of(record).later_bluff == 0.0
    assert read_of(sit_free).later_bluff > 0.1


def test_pairs_kept_by_a_selective_caller_beat_what_a_random_pair_would() -> None:
    queens = cards("Qh Qd 7c 4s 2h")
    aces_up = cards("Ah Ad 7c 7s 2h")
    assert _equity_against_pairs(queens, 9) < 0.4  # jacks or better, drawing three
    assert _equity_against_pairs(queens, 0) > 0.5  # any pair
    assert _equity_against_pairs(aces_up, 9) > 0.75
    assert _equity_against_pairs(cards("Kh Qd 7c 4s 2h"), 9) == 0.0


def after_the_draw_checked_to(view: HandView, legal: LegalActions) -> bool:
    return view.street == Street.SECOND_BET and legal.can_check


def _heads_up_situation() -> Situation:
    """A Draw heads-up situation before the draw (seat 0 to act), for table reads."""
    recorder = Recorder(lambda view, legal: view.street == Street.FIRST_BET)
    play_heads_up(Variant.DRAW5, recorder, "rock", 1, 3)
    view, history, legal = recorder.points[0]
    return situation(view, history, legal)


def _kept_pair_spots() -> list[tuple[int, HandView, tuple[Event, ...], LegalActions]]:
    """Heads-up Draw spots after the draw, checked to hard, where the kept-pair read applies
    to a rock's record (it called a bet before the draw and drew three)."""
    recorder = Recorder(after_the_draw_checked_to)
    play_heads_up(Variant.DRAW5, recorder, "rock", 400, 23)
    spots: list[tuple[int, HandView, tuple[Event, ...], LegalActions]] = []
    for i, (view, history, legal) in enumerate(recorder.points):
        sit = situation(view, history, legal)
        if _kept_pair_floor(sit, TableRead.of({1: ROCK}, sit, 0.1)) is not None:
            spots.append((i, view, history, legal))
    return spots


def test_after_the_draw_a_rock_that_called_is_neither_bluffed_nor_bet_thin() -> None:
    spots = _kept_pair_spots()
    assert len(spots) >= 10
    bets = strong = 0
    for i, view, history, legal in spots:
        sit = situation(view, history, legal)
        floor = _kept_pair_floor(sit, TableRead.of({1: ROCK}, sit, 0.1))
        assert floor is not None and floor >= 9  # jacks or better (ranks 2 = 0 .. A = 12)
        # It calls with most pairs: no narrow read.
        assert _kept_pair_floor(sit, TableRead.of({1: CALLER}, sit, 0.1)) is None
        d = HardBot().decide(view, history, legal, random.Random(i), {1: ROCK})
        equity = _equity_against_pairs(sit.hole, floor)
        if isinstance(d, Act) and d.kind == ActionKind.BET:
            bets += 1
            assert category_of(evaluate(sit.hole)) >= HandCategory.PAIR
            assert equity >= 0.5
        strong += equity >= 0.8
    # Not a bot that gave up betting: what beats those pairs is still bet for value.
    assert bets >= 1 and bets >= strong // 2, (bets, strong)


def test_the_kept_pair_read_is_for_hands_dealt_heads_up_only() -> None:
    _, view, history, legal = _kept_pair_spots()[0]
    sit = situation(view, history, legal)
    read = TableRead.of({1: ROCK}, sit, 0.1)
    assert _kept_pair_floor(sit, read) is not None
    assert _kept_pair_floor(replace(sit, dealt=5), read) is None
