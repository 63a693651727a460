"""The Draw floor after the draw against a seat that calls more or bets less (issue #25).

Against an opponent whose record shows it folds to bets after the draw less often than
the floor itself (``fold_later``), the floor checks behind that opponent's check with no
pair where its own strategy mixes the check in (``floor_play._folds_too_few_later``);
against one that bets after the draw less often than the floor (``bet_later``), it folds
its calls with at most a pair where its strategy mixes the fold in
(``floor_play._bets_less_later``). Everything else it plays as before.
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
from felt.players.bots.floor import FINAL_TWO_PAIR, draw_final_bucket, load
from felt.players.bots.hard import HardBot
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
        if checked and draw_final_bucket(sit.hole) < floor_play.FINAL_PAIR:
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
