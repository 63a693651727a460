"""How hard reads bets in Five-Card Draw against aggressive styles (issue #25).

- The Draw floor folds its calls with at most one pair after the draw against a bettor
  whose shown bets after the draw are weak less often than the floor's own
  (``weak_bet_later``, computed by the solve and shipped with the table);
- a raise after the draw is read as stronger than a bet, even from a player whose bets
  mean little;
- an open before the draw is read from the opener's own open rate: a loose opener holds
  hands with nothing, and hard's equity against it is higher; not before the seat had
  ``DRAW_OPEN_SAMPLE`` chances to open.
"""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest

from felt.core.cards import cards
from felt.core.evaluator import HandCategory
from felt.core.rules.commands import Act, ActionKind
from felt.core.rules.config import Variant
from felt.core.rules.events import Event, Street
from felt.core.rules.legal import LegalActions
from felt.core.rules.views import HandView
from felt.core.table.stats import SeatStats
from felt.players.bots import floor_play
from felt.players.bots.base import PublicAction, Situation, situation
from felt.players.bots.floor import FINAL_TWO_PAIR, draw_final_bucket, load
from felt.players.bots.hard import (
    DRAW_OPEN_SAMPLE,
    RAISED_BLUFFS,
    RAISED_CREDIBLE,
    HardBot,
    Style,
    _draw_open_rate,
)
from felt.players.equity import DrawOpponent
from felt_dev.solve import draw
from felt_dev.solve.export import share_in
from felt_dev.solve.kuhn import kuhn
from felt_dev.solve_cli import _draw_bet_later, _draw_references
from tests.unit.bots.test_hard_fields import Recorder
from tests.unit.bots.test_hard_reads import play_heads_up

H = HandCategory

# Records the floor plays against (no fold rate measured yet, so ``_draw_leaks`` is off):
# one whose shown bets after the draw were nearly all two pair or better, one as weak as
# the floor's own bets, one with too few shown bets to read.
STRONG_BETTOR = SeatStats(hands=120, showdowns=30, shown=30, shown_bettor=20, shown_bettor_weak=1)
WEAK_BETTOR = replace(STRONG_BETTOR, shown_bettor_weak=10)
UNREAD = replace(STRONG_BETTOR, shown_bettor=4, shown_bettor_weak=0)


def test_the_solve_records_the_floors_weak_bets_after_the_draw() -> None:
    table = load("draw")
    assert table is not None
    shipped = table.reference("weak_bet_later")
    assert shipped is not None and 0.2 < shipped < 0.5
    weights, wins = draw.sample_deals(400, seed=1)
    solver = draw.build(weights, wins)
    solver.run(3)
    refs = _draw_references(solver, weights)
    assert {"fold_first", "fold_later", "bet_later", "weak_bet_later"} <= set(refs)
    assert 0.0 < refs["weak_bet_later"] < 1.0
    # Every bet is in the set of all states, none in the empty one.
    every = np.ones(draw.DRAW_STATES, dtype=bool)
    assert share_in(solver, weights, _draw_bet_later, every) == pytest.approx(1.0)
    assert share_in(solver, weights, _draw_bet_later, ~every) == 0.0


def test_share_in_weighs_actions_by_reach() -> None:
    solver = kuhn()
    solver.run(400)
    chance = np.full((3, 3), 1.0 / 6.0) * (1 - np.eye(3))

    def bets(key: str, action: str) -> bool:
        return action == "b"

    jack = np.array([True, False, False])
    king = np.array([False, False, True])
    # At equilibrium the king bets (or check-raises) its value more than the jack bluffs.
    bluffs, value = share_in(solver, chance, bets, jack), share_in(solver, chance, bets, king)
    assert bluffs is not None and value is not None
    assert 0.0 < bluffs < value
    assert share_in(solver, chance, lambda key, action: False, jack) is None


def test_rarely_weak_needs_a_sample_and_a_rate_under_the_floors() -> None:
    floor = load("draw")
    assert floor is not None
    ref = floor.reference("weak_bet_later") or 0.0
    assert floor_play._bets_too_few_weak(floor, STRONG_BETTOR)
    assert not floor_play._bets_too_few_weak(floor, WEAK_BETTOR)
    assert not floor_play._bets_too_few_weak(floor, UNREAD)
    just_under = int(ref * 20)  # weak share just under the floor's
    assert floor_play._bets_too_few_weak(
        floor, replace(STRONG_BETTOR, shown_bettor_weak=just_under)
    )
    assert not floor_play._bets_too_few_weak(
        floor, replace(STRONG_BETTOR, shown_bettor_weak=just_under + 1)
    )


def facing_a_bet_after_the_draw(view: HandView, legal: LegalActions) -> bool:
    return view.street == Street.SECOND_BET and not legal.can_check


def _spots() -> list[tuple[HandView, tuple[Event, ...], LegalActions]]:
    recorder = Recorder(facing_a_bet_after_the_draw)
    play_heads_up(Variant.DRAW5, recorder, "maniac", 300, 41)
    return recorder.points


def _kind(d: object) -> ActionKind | None:
    return d.kind if isinstance(d, Act) else None


def test_the_floor_folds_one_pair_calls_to_a_bettor_whose_bets_are_rarely_weak() -> None:
    spots = _spots()
    assert len(spots) >= 40
    weak_calls = tightened = strong_same = strong = 0
    for i, (view, history, legal) in enumerate(spots):
        sit = situation(view, history, legal)
        against = {
            name: HardBot().decide(view, history, legal, random.Random(i), {1: stats})
            for name, stats in (("weak", WEAK_BETTOR), ("strong", STRONG_BETTOR))
        }
        if draw_final_bucket(sit.hole) < FINAL_TWO_PAIR:
            # At most a pair: never called against the bettor whose bets are rarely weak.
            assert _kind(against["strong"]) != ActionKind.CALL
            if _kind(against["weak"]) == ActionKind.CALL:
                weak_calls += 1
                tightened += _kind(against["strong"]) == ActionKind.FOLD
        else:
            # Two pair or better: the read changes nothing (same random stream).
            strong += 1
            strong_same += against["weak"] == against["strong"]
    # The floor does call with pairs against a bettor as weak as itself.
    assert weak_calls >= 5 and tightened == weak_calls
    assert strong_same == strong


def _after_the_draw(raised: bool) -> Situation:
    """Heads-up after the draw: hero (seat 0) bet, the opponent (seat 1) raised or bet into a
    check."""
    spots = _spots()
    view, history, legal = spots[0]
    sit = situation(view, history, legal)
    first = tuple(a for a in sit.actions if a.street != Street.SECOND_BET)
    if raised:
        second = (
            PublicAction(Street.SECOND_BET, 0, "bet", 100, 100),
            PublicAction(Street.SECOND_BET, 1, "bet", 200, 200),
        )
    else:
        second = (
            PublicAction(Street.SECOND_BET, 0, "check"),
            PublicAction(Street.SECOND_BET, 1, "bet", 100, 100),
        )
    return replace(sit, actions=first + second, draws={**sit.draws, 1: 3})


def _strong_weight(mix: list[tuple[float, DrawOpponent]]) -> float:
    return sum(w for w, m in mix if m.kept_min >= H.TWO_PAIR)


def test_a_raise_after_the_draw_is_read_as_stronger_than_a_bet() -> None:
    bot = HardBot()
    # A player whose bets mean little (it bets most of its actions), its shown bets mostly
    # honest yet (under RAISED_BLUFFS weak).
    wild = Style(known=True, aggression=0.85, bluffs=0.45)
    assert wild.credible < RAISED_CREDIBLE
    for style in (wild, Style(known=True)):
        bet = bot._draw_model(_after_the_draw(False), 1, style)
        raised = bot._draw_model(_after_the_draw(True), 1, style)
        assert sum(w for w, _ in raised) == pytest.approx(1.0)
        assert _strong_weight(raised) > _strong_weight(bet) + 0.1
    # Against the wild bettor's raise a pair of queens has less equity than against its bet.
    hole = tuple(cards("Qh Qd 7c 4s 2h"))
    equities = []
    for raised_ in (False, True):
        sit = replace(_after_the_draw(raised_), hole=hole)
        model = bot._draw_model(sit, 1, wild)
        equities.append(bot._mixture_equity(hole, hole, (), [model], 7))
    assert equities[1] < equities[0] - 0.1


def test_a_raise_from_a_seat_showing_mostly_weak_bets_is_read_as_its_bet() -> None:
    """A seat whose shown bets held at most a pair most of the time (a maniac: 0.75) raises
    with whatever it holds: its raise after the draw reads as its bet. The read cost hard
    most of its win against four maniacs 5-handed (docs/ai.md)."""
    bot = HardBot()
    maniac = Style(known=True, aggression=0.9, bluffs=0.75)
    bet = bot._draw_model(_after_the_draw(False), 1, maniac)
    raised = bot._draw_model(_after_the_draw(True), 1, maniac)
    assert raised == bet
    # At the edge: just under RAISED_BLUFFS the raise reads stronger again.
    edge = replace(maniac, bluffs=RAISED_BLUFFS - 0.05)
    assert _strong_weight(bot._draw_model(_after_the_draw(True), 1, edge)) > _strong_weight(
        bot._draw_model(_after_the_draw(False), 1, edge)
    )


def _facing_an_open(opens: float | None) -> tuple[Situation, Style]:
    view, history, legal = _spots()[0]
    sit = situation(view, history, legal)
    actions = (PublicAction(Street.FIRST_BET, 1, "bet", 50, 50),)
    sit = replace(sit, street=Street.FIRST_BET, actions=actions, draws={})
    return sit, Style(known=True, pfr=0.3, opens=(None, opens), draw_opens=(None, opens))


def test_an_open_is_read_as_wide_as_the_seat_opens() -> None:
    bot = HardBot()
    sit, loose = _facing_an_open(0.8)
    assert _draw_open_rate(sit, 1, loose) == 0.8
    # A bet after the seat's own check is a check-raise, not an open.
    check_raise = replace(
        sit,
        actions=(
            PublicAction(Street.FIRST_BET, 1, "check"),
            PublicAction(Street.FIRST_BET, 0, "bet", 50, 50),
            PublicAction(Street.FIRST_BET, 1, "bet", 100, 100),
        ),
    )
    assert _draw_open_rate(check_raise, 1, loose) is None

    def nothing(mix: list[tuple[float, DrawOpponent]]) -> float:
        return sum(w for w, m in mix if m.kept_min < H.PAIR and m.draws == 3)

    loose_mix = bot._draw_model(sit, 1, loose)
    tight_sit, tight = _facing_an_open(0.3)
    tight_mix = bot._draw_model(tight_sit, 1, tight)
    unknown_sit, unknown = _facing_an_open(None)
    assert nothing(loose_mix) == pytest.approx(1.0 - 0.5 / 0.8, abs=0.02)
    assert nothing(tight_mix) == 0.0
    assert bot._draw_model(unknown_sit, 1, unknown) == tight_mix  # no record: the old read
    # A small pair has more equity against the loose opener before the draw.
    hole = tuple(cards("5h 5d Kc 9s 2h"))
    keep = tuple(cards("5h 5d"))
    eq_loose = bot._mixture_equity(hole, keep, (), [loose_mix], 5)
    eq_tight = bot._mixture_equity(hole, keep, (), [tight_mix], 5)
    assert eq_loose > eq_tight + 0.03


def test_the_open_read_needs_a_minimum_sample() -> None:
    """A short run of opens is not read as a loose opener; the same rate over enough chances is."""
    sit, _ = _facing_an_open(None)

    def opened_every_time(chances: int) -> Style:
        stats = SeatStats(
            hands=2 * chances, open_chances=chances, opened=chances,
            late_open_chances=chances, late_opened=chances,
        )  # fmt: skip
        return Style.of(stats, heads_up=True)

    short = opened_every_time(DRAW_OPEN_SAMPLE - 1)
    # Hold'em's open read takes the rate already; Draw's does not, and reads the open as before.
    assert short.opens[1] is not None and short.opens[1] > 0.5
    assert short.draw_opens == (None, None)
    assert _draw_open_rate(sit, 1, short) is None

    def nothing(style: Style) -> float:
        mix = HardBot()._draw_model(sit, 1, style)
        return sum(w for w, m in mix if m.kept_min < H.PAIR and m.draws == 3)

    assert nothing(short) == 0.0
    enough = opened_every_time(DRAW_OPEN_SAMPLE)
    rate = _draw_open_rate(sit, 1, enough)
    assert rate is not None and rate == enough.opens[1]
    assert rate > 0.5
    assert nothing(enough) > 0.0
