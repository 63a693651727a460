"""The Draw floor hands over to hard's own play against what the opponent shows (issue #25).

Heads-up in Draw hard plays the solved floor until the record shows a leak at 95%. Folds
were the only leaks read, so a random player (folding about as often as the floor) and a
calling station (its first 30 bets faced took most of a ladder table) were met with the
floor's folds and calls for most of each table: the full ladder showed hard winning less
than easy against both. Two leaks in what the opponent *shows* now count as well: shown
bets after the draw weak far more often than the floor's own (``_shows_weak_bets``) and
shown hands that mostly do not fit the draw (``_shows_odd_draws``).
"""

from __future__ import annotations

import random
from dataclasses import replace

from felt.core.rules.config import Variant
from felt.core.table.stats import SeatStats
from felt.players.bots import floor_play
from felt.players.bots.base import situation
from felt.players.bots.floor import Table, load
from tests.unit.bots.test_hard_fields import Recorder
from tests.unit.bots.test_hard_reads import play_heads_up

# A short record folding about as often as the floor (half): the fold leaks stay quiet.
QUIET = SeatStats(hands=60, first_faced=20, first_folded=10, faced=20, folded=11)
# Fifteen shown bets after the draw, all weak (the random player shows over 90%).
BLUFFER = replace(QUIET, shown=20, shown_bettor=15, shown_bettor_weak=15)
# Twenty shown hands, every one standing pat or drawing to nothing it fits (the station).
PAT_ANYTHING = replace(QUIET, shown=20, shown_drawn=20, shown_drawn_odd=20)


def draw_floor() -> Table:
    floor = load("draw")
    assert floor is not None
    return floor


def test_quiet_records_leave_the_floor_on() -> None:
    floor = draw_floor()
    assert not floor_play._draw_leaks(floor, QUIET)
    assert not floor_play._draw_leaks(floor, SeatStats())


def test_shown_bets_weak_far_more_than_the_floors_are_a_leak() -> None:
    floor = draw_floor()
    ref = floor.reference("weak_bet_later")
    assert ref is not None and 0.2 < ref < 0.5
    assert floor_play._draw_leaks(floor, BLUFFER)
    # Fewer than LEAK_SHOWN shown bets: not read, however weak.
    few = replace(BLUFFER, shown_bettor=floor_play.LEAK_SHOWN - 1)
    assert not floor_play._draw_leaks(floor, replace(few, shown_bettor_weak=few.shown_bettor))
    # As weak as the floor's own bets: no leak, on any sample.
    honest = replace(BLUFFER, shown_bettor=200, shown_bettor_weak=int(ref * 200))
    assert not floor_play._draw_leaks(floor, honest)
    # Weaker, but not beyond the tolerance at 95%: no leak either.
    near = replace(BLUFFER, shown_bettor=30, shown_bettor_weak=int((ref + 0.15) * 30))
    assert not floor_play._draw_leaks(floor, near)


def test_shown_hands_that_mostly_do_not_fit_the_draw_are_a_leak() -> None:
    floor = draw_floor()
    assert floor_play._draw_leaks(floor, PAT_ANYTHING)
    few = replace(PAT_ANYTHING, shown_drawn=floor_play.LEAK_SHOWN - 1)
    assert not floor_play._draw_leaks(floor, replace(few, shown_drawn_odd=few.shown_drawn))
    # A bluff now and then (a quarter of its shown draws) is not the rule.
    assert not floor_play._draw_leaks(floor, replace(PAT_ANYTHING, shown_drawn_odd=5))
    # Hostile counts (more odd than shown) are capped, not a crash.
    assert floor_play._draw_leaks(floor, replace(PAT_ANYTHING, shown_drawn_odd=99))


def test_against_such_a_record_hard_plays_its_own_game() -> None:
    """Every heads-up Draw decision the floor would take, it leaves to hard's own play
    against a seat showing either leak, and takes against the quiet record."""
    recorder = Recorder(lambda view, legal: True)
    play_heads_up(Variant.DRAW5, recorder, "loose_passive", 40, 7)
    assert len(recorder.points) > 50
    rng = random.Random(3)
    played = 0
    for view, history, legal in recorder.points:
        sit = situation(view, history, legal)
        if any(a.all_in for a in sit.actions):
            continue
        seat = sit.opponents[0].seat
        quiet = floor_play.floor_decision(sit, history, legal, rng, {seat: QUIET})
        if quiet is None:
            continue
        played += 1
        for leaky in (BLUFFER, PAT_ANYTHING):
            assert floor_play.floor_decision(sit, history, legal, rng, {seat: leaky}) is None
    assert played > 50


def test_a_player_who_almost_never_folds_is_read_after_fifteen_bets() -> None:
    """1 fold in 23 first-round bets is a leak at 95% (the floor folds half): the gate
    needs 15 decisions, not the 30 that left the floor playing half a ladder table
    against `loose_passive`. Near the floor's rate a short record still reads nothing."""
    floor = draw_floor()
    caller = SeatStats(hands=60, first_faced=23, first_folded=1, faced=10, folded=5)
    assert floor_play._draw_leaks(floor, caller)
    assert not floor_play._draw_leaks(floor, replace(caller, first_faced=14, first_folded=0))
    assert not floor_play._draw_leaks(floor, replace(caller, first_folded=9))
    # Folds after the draw: the same 15 (in pots down to two players, as dealt heads-up).
    never_folds = SeatStats(hands=60, faced=15, hu_faced=15)
    assert floor_play._draw_leaks(floor, never_folds)
    assert not floor_play._draw_leaks(floor, replace(never_folds, faced=14, hu_faced=14))
    # Hold'em's gates keep their 30.
    holdem = load("holdem")
    assert holdem is not None
    assert not floor_play._holdem_leaks(
        holdem, SeatStats(hands=60, first_faced=20, first_folded=20)
    )
