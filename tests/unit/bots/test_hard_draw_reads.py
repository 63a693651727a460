"""How the hard bot plays Five-Card Draw before the draw against what the record shows.

Four reads of the table's public record (``felt.players.bots.opponents``) and one
guard against Monte Carlo noise:

- a bet before the draw is paid only by the hands the seat plays: against a
  player who folds its unpaired hands to a bet, hard bets fewer marginal
  hands than against one who calls with anything, and never one it would not
  bet against the latter;
- in position, a check is read as weak (so thin bets pay) only from a player
  who bets its strong hands before the draw: one who never opens checks its
  strong hands too;
- five-handed against callers, no thin bet before the draw: a few points
  of equity over a fifth of the pot do not pay for the bet, unless the
  callers stand pat with what they were dealt (their hands are read exactly);
- the discard keeps the textbook draw (a pair draws three) unless another
  keep is clearly better, not merely luckier in a small simulation.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from felt.core.evaluator import HandCategory
from felt.core.rules.commands import Discard
from felt.core.rules.config import Variant
from felt.core.rules.events import Street
from felt.core.rules.legal import LegalActions
from felt.core.rules.views import HandView
from felt.core.table.stats import SeatStats
from felt.players.bots import get_bot, hard
from felt.players.bots.base import Bot, situation
from felt.players.bots.drawhand import analyse
from felt.players.bots.hard import HardBot, TableRead, _check_caps, _first_callers
from felt.players.bots.opponents import ModelBuilder
from felt_dev.ladder import deck_for, hand_id_for, hand_setup, master_key, play_hand
from tests.unit.bots.test_hard_fields import Recorder
from tests.unit.bots.test_hard_reads import play_heads_up

# Never bets before the draw (so its checks hide its strong hands); after the draw it
# calls with a pair. MADE_CALLER folds its unpaired hands to a bet before the draw,
# ANY_CALLER calls it with everything. OPENER bets a fair share of hands first.
ANY_CALLER = SeatStats(
    hands=80, vpip=60, pfr=0, first_faced=50, first_folded=0, faced=60, folded=20,
    calls=60, checks=40, bets=5,
)  # fmt: skip
MADE_CALLER = replace(ANY_CALLER, first_folded=28)
# Folds a fifth of its hands to a bet before the draw, rarely after it (loose-passive).
LOOSE_CALLER = replace(ANY_CALLER, first_folded=8, folded=5)
OPENER = replace(ANY_CALLER, pfr=24)
# A calling station that stands pat with anything (its shown hands do not fit its draws).
PAT_STATION = replace(
    ANY_CALLER, folded=0, saw_later=75, pat=70, shown_drawn=40, shown_drawn_odd=38
)


def first_round_checked_to(view: HandView, legal: LegalActions) -> bool:
    return view.street == Street.FIRST_BET and legal.can_check


def bets(d: object) -> bool:
    return getattr(d, "kind", None) is not None and d.kind.name in ("BET", "RAISE")  # type: ignore[attr-defined]


def test_first_callers_are_the_made_hands_of_a_folder_and_anything_of_a_caller() -> None:
    made = HandCategory.PAIR
    folder = _first_callers(0.6)
    assert all(m.kept_min >= made for _, m in folder)
    caller = _first_callers(0.0)
    assert sum(w for w, m in caller if m.kept_min < made) > 0.4
    assert abs(sum(w for w, _ in caller) - 1.0) < 1e-9


def test_before_the_draw_value_bets_only_what_the_callers_pay() -> None:
    recorder = Recorder(first_round_checked_to)
    play_heads_up(Variant.DRAW5, recorder, "loose_passive", 200, 31)
    assert len(recorder.points) >= 60
    placed: dict[str, set[int]] = {"any": set(), "made": set()}
    for i, (view, history, legal) in enumerate(recorder.points):
        for label, stats in (("any", ANY_CALLER), ("made", MADE_CALLER)):
            # The exploit layer: a made-hand caller's fold rates are close to the floor's
            # own, so the floor would play this spot (``floor_play``).
            d = HardBot(bluff_frequency=0.0, floor=False).decide(
                view, history, legal, random.Random(i), {1: stats}
            )
            if bets(d):
                placed[label].add(i)
    assert placed["made"] <= placed["any"]
    assert len(placed["made"]) < len(placed["any"])


def test_in_position_only_an_opener_s_check_is_weak() -> None:
    recorder = Recorder(first_round_checked_to)
    play_heads_up(Variant.DRAW5, recorder, "loose_passive", 240, 37)
    spots = [
        (i, point)
        for i, point in enumerate(recorder.points)
        if situation(*point).in_position
        and any(a.kind == "check" for a in situation(*point).on(Street.FIRST_BET))
    ]
    assert len(spots) >= 40
    placed: dict[str, set[int]] = {"opener": set(), "never": set()}
    for i, (view, history, legal) in spots:
        sit = situation(view, history, legal)
        assert _check_caps(sit, TableRead.of({1: OPENER}, sit, 0.0)) == 1.0
        assert _check_caps(sit, TableRead.of({1: ANY_CALLER}, sit, 0.0)) < 0.5
        assert _check_caps(sit, TableRead.of(None, sit, 0.0)) == 1.0  # unknown: as before
        for label, stats in (("opener", OPENER), ("never", ANY_CALLER)):
            d = HardBot(bluff_frequency=0.0).decide(
                view, history, legal, random.Random(i), {1: stats}
            )
            if bets(d):
                placed[label].add(i)
    assert placed["never"] <= placed["opener"]
    assert len(placed["never"]) + 5 <= len(placed["opener"])


def discarding(view: HandView, legal: LegalActions) -> bool:
    return legal.max_discard is not None


def test_a_lone_pair_draws_three_unless_another_keep_is_clearly_better(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    recorder = Recorder(discarding)
    play_heads_up(Variant.DRAW5, recorder, "loose_passive", 300, 41)
    pairs = []
    for i, (view, history, legal) in enumerate(recorder.points):
        info = analyse(situation(view, history, legal).hole)
        if info.category == HandCategory.PAIR and not info.flush_draw and not info.straight_draw:
            pairs.append((i, view, history, legal))
    assert len(pairs) >= 40

    def draws_three() -> int:
        count = 0
        for i, view, history, legal in pairs:
            d = HardBot().decide(view, history, legal, random.Random(i), {1: ANY_CALLER})
            assert isinstance(d, Discard) and len(d.cards) in (2, 3)
            count += len(d.cards) == 3
        return count

    guarded = draws_three()
    assert guarded >= 0.85 * len(pairs)
    # Without the guard, simulation noise alone keeps a kicker more often.
    monkeypatch.setattr(hard, "_KEEP_MARGIN", 0.0)
    assert draws_three() < guarded


def test_no_thin_first_round_bet_into_a_table_of_callers() -> None:
    """Five-handed against callers: a bet before the draw needs a real edge over a fifth.

    Against seats that fold rarely, a bet after the draw (or heads-up) may be
    anything better than a fair share; before the draw into four callers a
    few points of equity over a fifth do not pay for the bet.
    """
    recorder = Recorder(first_round_checked_to)
    key = master_key(43)
    bots: dict[int, Bot] = {0: recorder, **{s: get_bot("loose_passive") for s in range(1, 5)}}
    model = ModelBuilder()
    for deal in range(80):
        rngs = {s: random.Random(deal * 10 + s) for s in range(5)}
        deck = deck_for(Variant.DRAW5, key, deal, 5)
        setup = hand_setup(Variant.DRAW5, hand_id_for(key, str(deal)), deck, deal % 5, 5)
        play_hand(setup, bots, rngs, model)
    spots = 0
    bot = HardBot(bluff_frequency=0.0)
    for i, (view, history, legal) in enumerate(recorder.points):
        sit = situation(view, history, legal)
        if sit.opponent_count < 4:
            continue
        table = {o.seat: LOOSE_CALLER for o in sit.opponents}
        read = TableRead.of(table, sit, 0.0)
        assert read.stations
        spots += 1
        # A few points over a fair share (a fifth): a check, not a bet; a real edge bets.
        assert not bets(bot._draw_bet(sit, legal, 0.23, random.Random(i), read))
        assert bets(bot._draw_bet(sit, legal, 0.32, random.Random(i), read))
        # Seats that keep whatever they were dealt are read exactly: a fair share bets.
        pat = {o.seat: PAT_STATION for o in sit.opponents}
        read = TableRead.of(pat, sit, 0.0)
        assert read.stations and read.style(sit.opponents[0].seat).stands_pat >= 0.5
        assert bets(bot._draw_bet(sit, legal, 0.23, random.Random(i), read))
    assert spots >= 15
