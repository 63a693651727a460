"""The Draw floor after the draw against a seat that calls more or bets less (issue #25).

Against an opponent whose record shows it folds to bets after the draw less often than
the floor itself (``fold_later``), the floor checks behind that opponent's check with no
pair where its own strategy mixes the check in (``floor_play._folds_too_few_later``);
against one that bets after the draw less often than the floor (``bet_later``), it folds
its calls with at most a pair where its strategy mixes the fold in
(``floor_play._bets_less_later``); against one that opens far more hands than the floor
(``open``, at 95%), it raises that seat's lead before the draw in position with every hand
without a pair (``floor_play._opens_wide``). Everything else it plays as before.
"""

from __future__ import annotations

import random
from dataclasses import replace

from felt.core.rules.commands import Act, ActionKind
from felt.core.rules.config import Variant
from felt.core.rules.events import Event, Street
from felt.core.rules.legal import LegalActions
from felt.core.rules.views import HandView
from felt.core.table.stats import SeatStats
from felt.players.bots import floor_play
from felt.players.bots.base import situation
from felt.players.bots.floor import (
    DEALT_PAIR,
    FINAL_PAIR,
    FINAL_TWO_PAIR,
    draw_dealt_bucket,
    draw_final_bucket,
    load,
)
from felt.players.bots.hard import HardBot
from felt_dev.solve_cli import _draw_stat
from tests.unit.bots.test_draw_bets_after_the_draw import _spots as facing_spots
from tests.unit.bots.test_hard_fields import Recorder
from tests.unit.bots.test_hard_reads import play_heads_up

# Fewer than 30 bets faced, so the 95% leak test (``_draw_leaks``) never leaves the floor:
# a seat that folded 6 of 20 bets after the draw, one that folded 14 of 20, one too new
# to read.
CALLER = SeatStats(hands=100, faced=20, folded=6, hu_faced=20, hu_folded=6)
FOLDER = replace(CALLER, folded=14, hu_folded=14)
UNREAD = replace(CALLER, faced=9, folded=0, hu_faced=9, hu_folded=0)


def test_calls_too_much_needs_a_sample_and_a_fold_rate_under_the_floors() -> None:
    floor = load("draw")
    assert floor is not None
    ref = floor.reference("fold_later")
    assert ref is not None and 0.3 < ref < 0.8
    for stats in (CALLER, FOLDER, UNREAD):
        assert not floor_play._draw_leaks(floor, stats)  # the floor plays all three
    assert floor_play._folds_too_few_later(floor, CALLER)
    assert not floor_play._folds_too_few_later(floor, FOLDER)
    assert not floor_play._folds_too_few_later(floor, UNREAD)
    just_under = int(ref * 20)  # a fold rate just under the floor's
    at = replace(CALLER, hu_folded=just_under)
    assert floor_play._folds_too_few_later(floor, at)
    assert not floor_play._folds_too_few_later(floor, replace(at, hu_folded=just_under + 1))


def test_mixed_means_in_the_floors_support() -> None:
    assert floor_play._mixed("kb", (0.3, 0.7), "k")
    assert not floor_play._mixed("kb", (0.0, 1.0), "k")
    assert not floor_play._mixed("fc", (0.5, 0.5), "k")


def checked_to_after_the_draw(view: HandView, legal: LegalActions) -> bool:
    return view.street == Street.SECOND_BET and legal.can_check


def _spots() -> list[tuple[HandView, tuple[Event, ...], LegalActions]]:
    recorder = Recorder(checked_to_after_the_draw)
    play_heads_up(Variant.DRAW5, recorder, "loose_passive", 400, 29)
    return recorder.points


def _bets(d: object) -> bool:
    return isinstance(d, Act) and d.kind in (ActionKind.BET, ActionKind.RAISE)


def test_no_pair_checks_behind_a_callers_check_and_nothing_else_changes() -> None:
    spots = _spots()
    behind = leading = 0
    bluffs = {"caller": 0, "folder": 0}
    for i, (view, history, legal) in enumerate(spots):
        sit = situation(view, history, legal)
        against = {
            name: HardBot().decide(view, history, legal, random.Random(i), {1: stats})
            for name, stats in (("caller", CALLER), ("folder", FOLDER))
        }
        checked = any(a.kind == "check" for a in sit.on(Street.SECOND_BET))
        if checked and draw_final_bucket(sit.hole) < FINAL_PAIR:
            behind += 1
            for name, d in against.items():
                bluffs[name] += _bets(d)
            # The read only turns bets into checks, never the other way.
            assert not _bets(against["caller"]) or _bets(against["folder"])
        else:
            # A pair or better, or first to act: the read changes nothing (same random stream).
            leading += not checked
            assert against["caller"] == against["folder"]
    assert behind >= 30 and leading >= 30
    # The floor does bluff behind a check against a seat that folds as it does, and mostly
    # checks those hands against one that calls.
    assert bluffs["folder"] >= 10
    assert bluffs["caller"] <= bluffs["folder"] // 4


# Records with no bets faced and no shown bets (only the bet-rate read can apply): a seat
# that bet 4 of 40 spots after the draw where it could check, one that bet 12 of 40, and one
# with too few such spots.
RARE_BETTOR = SeatStats(hands=100, bets=4, checks=36)
FLOOR_BETTOR = replace(RARE_BETTOR, bets=12, checks=28)
FEW_SPOTS = replace(RARE_BETTOR, bets=1, checks=18)


def test_bets_less_needs_a_sample_and_a_bet_rate_under_the_floors() -> None:
    floor = load("draw")
    assert floor is not None
    ref = floor.reference("bet_later")
    assert ref is not None and 0.1 < ref < 0.5
    assert floor_play._bets_less_later(floor, RARE_BETTOR)
    assert not floor_play._bets_less_later(floor, FLOOR_BETTOR)
    assert not floor_play._bets_less_later(floor, FEW_SPOTS)
    under = int(ref * 40)  # a bet rate just under the floor's
    at = replace(RARE_BETTOR, bets=under, checks=40 - under)
    assert floor_play._bets_less_later(floor, at)
    assert not floor_play._bets_less_later(floor, replace(at, bets=under + 1, checks=39 - under))


def test_one_pair_calls_fold_against_a_seat_that_bets_less_than_the_floor() -> None:
    spots = facing_spots()
    assert len(spots) >= 40
    calls = {"rare": 0, "floor": 0}
    strong = strong_same = 0
    for i, (view, history, legal) in enumerate(spots):
        sit = situation(view, history, legal)
        against = {
            name: HardBot().decide(view, history, legal, random.Random(i), {1: stats})
            for name, stats in (("rare", RARE_BETTOR), ("floor", FLOOR_BETTOR))
        }
        if draw_final_bucket(sit.hole) < FINAL_TWO_PAIR:
            for name, d in against.items():
                calls[name] += _calls(d)
            # The read only turns calls into folds, never the other way.
            assert not _calls(against["rare"]) or _calls(against["floor"])
            assert _folds(against["rare"]) or against["rare"] == against["floor"]
        else:
            # Two pair or better: the read changes nothing (same random stream).
            strong += 1
            strong_same += against["rare"] == against["floor"]
    assert strong_same == strong
    # The floor calls with a pair against a seat betting as often as it does, and mostly
    # folds those hands against one that bets less.
    assert calls["floor"] >= 5
    assert calls["rare"] <= calls["floor"] // 4


def _calls(d: object) -> bool:
    return isinstance(d, Act) and d.kind == ActionKind.CALL


def _folds(d: object) -> bool:
    return isinstance(d, Act) and d.kind == ActionKind.FOLD


# Records with nothing but first-in spots: a seat that opened 60 of 80, one that opened 24
# of 80 (about the floor's rate), one with too few spots (the 95% test needs 30).
WIDE_OPENER = SeatStats(hands=80, open_chances=80, opened=60)
FLOOR_OPENER = replace(WIDE_OPENER, opened=24)
NEW_OPENER = replace(WIDE_OPENER, hands=20, open_chances=20, opened=20)


def test_the_solve_records_the_floors_open_rate() -> None:
    floor = load("draw")
    assert floor is not None
    ref = floor.reference("open")
    assert ref is not None and 0.15 < ref < 0.5
    assert _draw_stat("1:", "b", False) == "open"
    assert _draw_stat("1:k", "b", False) == "open"
    assert _draw_stat("1:k", "k", False) is None
    assert _draw_stat("1:b", "r", True) is None
    assert _draw_stat("2:kc:", "b", False) == "bet_later"


def test_opens_wide_is_read_at_95_percent_above_the_floors_rate() -> None:
    floor = load("draw")
    assert floor is not None
    assert floor_play._opens_wide(floor, WIDE_OPENER)
    assert not floor_play._opens_wide(floor, FLOOR_OPENER)
    assert not floor_play._opens_wide(floor, NEW_OPENER)
    assert not floor_play._opens_wide(floor, replace(WIDE_OPENER, opened=2))  # only too wide


def facing_a_bet_before_the_draw(view: HandView, legal: LegalActions) -> bool:
    return view.street == Street.FIRST_BET and not legal.can_check


def test_no_pair_raises_the_lead_of_a_seat_that_opens_far_too_wide() -> None:
    recorder = Recorder(facing_a_bet_before_the_draw)
    play_heads_up(Variant.DRAW5, recorder, "maniac", 300, 43)
    raised = {"wide": 0, "floor": 0}
    lead = other = 0
    for i, (view, history, legal) in enumerate(recorder.points):
        sit = situation(view, history, legal)
        against = {
            name: HardBot().decide(view, history, legal, random.Random(i), {1: stats})
            for name, stats in (("wide", WIDE_OPENER), ("floor", FLOOR_OPENER))
        }
        led = [a.kind for a in sit.on(Street.FIRST_BET)] == ["bet"]
        if led and draw_dealt_bucket(sit.hole) < DEALT_PAIR:
            lead += 1
            for name, d in against.items():
                raised[name] += _bets(d)
            assert _bets(against["wide"])  # every hand without a pair raises the lead
        else:
            # A pair or better, a bet behind hard's own check, a re-raise: unchanged.
            other += 1
            assert against["wide"] == against["floor"]
    assert lead >= 30 and other >= 30
    # Against an opener at the floor's own rate the floor folds or calls most of them.
    assert raised["floor"] <= lead // 4
