"""How the hard bot reads who will contest a pot and who pays a value bet.

Two reads of the table's public record (``felt.players.bots.opponents``):

- facing a big bet at a loose table, the seats still to act continue only as
  often as their record says they do not fold, so aces call a random
  player's shove instead of fearing five callers; at a tight table the same
  holds before the flop for a seat out of the blinds, so the button plays
  ace-king against an open instead of fearing both blinds;
- after the draw, a value bet is paid only by the hands that call: against
  players who fold their busted hands and call with a pair, hard bets fewer
  marginal hands than against calling stations, and never one it would not
  bet against the stations.
"""

from __future__ import annotations

import random
from dataclasses import replace

from felt.core.evaluator import HandCategory, category_of, evaluate
from felt.core.rules.commands import Act, ActionKind, StartHand
from felt.core.rules.config import HandSetup, SeatSetup, Variant
from felt.core.rules.engine import execute
from felt.core.rules.events import Event, Street
from felt.core.rules.legal import LegalActions, legal_actions
from felt.core.rules.state import HandState
from felt.core.rules.views import HandView, redact_all, view_for
from felt.core.table.stats import SeatStats
from felt.players.bots import get_bot
from felt.players.bots.base import Bot, situation
from felt.players.bots.hard import HardBot, HardTuning, TableRead, _contested
from felt.players.bots.holdem import draws
from felt.players.bots.opponents import ModelBuilder
from felt_dev.ladder import deck_for, hand_id_for, hand_setup, master_key, play_hand
from tests.unit.bots.test_hard_fields import Recorder
from tests.unit.bots.test_hard_traps import play

# Enters most pots, bets a fair share, folds half the time to a bet (the random bot's record).
LOOSE_FOLDER = SeatStats(
    hands=60, vpip=40, pfr=15, first_faced=40, first_folded=20, faced=40, folded=20,
    bets=30, calls=30, checks=30,
)  # fmt: skip
TIGHT = SeatStats(hands=60, vpip=12, pfr=10, first_faced=30, first_folded=25, faced=40, folded=25)
# Draw: calls almost every bet (a calling station) / folds some bets, rarely bets itself.
STATION = SeatStats(hands=60, vpip=60, faced=80, folded=0, calls=120, checks=40)
PAIR_CALLER = SeatStats(hands=60, vpip=40, faced=80, folded=12, calls=100, checks=40, bets=8)


def holding(
    state: HandState, history: list[Event], legal: LegalActions, hole: tuple[int, int]
) -> tuple[HandView, list[Event], LegalActions]:
    """The acting seat's view with ``hole`` as its cards, its redacted history and legal moves."""
    view = view_for(state, legal.seat)
    seats = tuple(replace(s, cards=hole) if s.seat == legal.seat else s for s in view.seats)
    return replace(view, seats=seats), redact_all(history, legal.seat), legal


def shove_spot() -> tuple[HandView, list[Event], LegalActions]:
    """6-max Hold'em: under the gun shoves; the next seat (hero) faces it holding aces."""
    setup = hand_setup(Variant.NLHE, "h-s", deck_for(Variant.NLHE, master_key(5), 0, 6), 0, 6)
    state, history = execute(None, StartHand(setup))
    history = list(history)
    legal = legal_actions(state)
    assert legal is not None and legal.max_raise_to is not None
    state, events = execute(state, Act(legal.seat, ActionKind.RAISE, legal.max_raise_to))
    history.extend(events)
    legal = legal_actions(state)
    assert legal is not None
    aces = (51, 50)  # A♠ A♥ (rank * 4 + suit); the deck's other copies do not matter here
    return holding(state, history, legal, aces)


def table_of(stats: SeatStats, hero: int, seats: int = 6) -> dict[int, SeatStats]:
    return {s: stats for s in range(seats) if s != hero}


def test_only_the_expected_callers_contest_a_shove_at_a_loose_table() -> None:
    view, history, legal = shove_spot()
    sit = situation(view, history, legal)
    loose = TableRead.of(table_of(LOOSE_FOLDER, legal.seat), sit, 0.1)
    assert loose.loose
    contested = _contested(sit, loose, in_blind=False)
    # The shover is in; of the four still to act, folding half the time, about two call.
    assert sit.opponent_count == 5
    assert contested.opponent_count == 3
    assert _contested(sit, loose, in_blind=True) == contested
    shover = next(a.seat for a in sit.actions if a.kind == "bet")
    assert shover in {o.seat for o in contested.opponents}
    # A tight field folds 70% here: before the flop, out of the blinds, one of the four
    # behind is expected to go on. An unknown field is not thinned.
    tight = TableRead.of(table_of(TIGHT, legal.seat), sit, 0.1)
    assert _contested(sit, tight, in_blind=False).opponent_count == 2
    assert _contested(sit, TableRead.of(None, sit, 0.1), in_blind=False) == sit
    # From a blind (calls out of position) a tight field's callers hold strong hands,
    # which their count would not capture: every seat still counts.
    assert _contested(sit, tight, in_blind=True) == sit


def test_aces_call_a_shove_at_a_loose_table_that_folds_half_the_time() -> None:
    view, history, legal = shove_spot()
    stats = table_of(LOOSE_FOLDER, legal.seat)
    d = HardBot(samples=1500).decide(view, history, legal, random.Random(2), stats)
    assert getattr(d, "kind", None) in (ActionKind.CALL, ActionKind.RAISE)


def six_max_open_spot(hole: tuple[int, int]) -> tuple[HandView, list[Event], LegalActions]:
    """6-max Hold'em: under the gun opens to three big blinds, the next two fold, and the
    button (hero) holds ``hole`` with both blinds still to act."""
    setup = hand_setup(Variant.NLHE, "h-o", deck_for(Variant.NLHE, master_key(5), 0, 6), 0, 6)
    state, events = execute(None, StartHand(setup))
    history = list(events)
    state = play(
        state, history, [(ActionKind.RAISE, 300), (ActionKind.FOLD, 0), (ActionKind.FOLD, 0)]
    )
    legal = legal_actions(state)
    assert legal is not None and legal.seat == setup.button
    return holding(state, history, legal, hole)


def test_the_button_plays_strong_hands_against_a_tight_open() -> None:
    """Tight blinds behind mostly fold: hard prices a call against the opener alone.

    Counting both blinds as random hands that call made every open a three-way pot, and
    hard folded ace-king and tens on the button to a tight player's open in every one of
    these twelve seeds (stop 42). Ace-king sits near the line, so it is asked of most
    seeds, not all: Monte Carlo noise moves it.
    """

    def moves(hole: tuple[int, int]) -> list[ActionKind | None]:
        view, history, legal = six_max_open_spot(hole)
        stats = table_of(TIGHT, legal.seat)
        bot = HardBot(samples=1500)
        return [
            getattr(bot.decide(view, history, legal, random.Random(i), stats), "kind", None)
            for i in range(12)
        ]

    going_on = {ActionKind.CALL, ActionKind.RAISE}
    assert sum(m in going_on for m in moves((51, 46))) >= 7  # A♠ K♥
    assert all(m in going_on for m in moves((35, 34)))  # T♠ T♥
    assert all(m == ActionKind.RAISE for m in moves((51, 50)))  # A♠ A♥


def test_blinds_are_read_from_the_posts_not_the_seat_order() -> None:
    """A newcomer dealt in between the button and the blinds posts nothing: it is not a blind.

    At a live table the first two seats dealt are not always the blinds (a newcomer
    posting nothing, a dead small blind), so ``Situation.blinds`` comes from the
    ``BlindPosted`` events, and hard thins a tight field behind the newcomer's call of an
    open as for any seat out of the blinds, and not behind the small blind's.
    """
    key = master_key(5)
    seats = (
        SeatSetup(1, 10_000, "p1"),  # the newcomer: dealt first, no blind
        SeatSetup(2, 10_000, "p2", blind=50),
        SeatSetup(3, 10_000, "p3", blind=100),
        SeatSetup(4, 10_000, "p4"),
        SeatSetup(5, 10_000, "p5"),
        SeatSetup(0, 10_000, "p0"),
    )
    setup = HandSetup("h-n", Variant.NLHE, 0, seats, deck_for(Variant.NLHE, key, 0, 6), min_bet=100)
    state, events = execute(None, StartHand(setup))
    history = list(events)
    state = play(
        state, history, [(ActionKind.RAISE, 300), (ActionKind.FOLD, 0), (ActionKind.FOLD, 0)]
    )
    read = {s: TIGHT for s in range(6)}
    for seat in (1, 2):
        legal = legal_actions(state)
        assert legal is not None and legal.seat == seat
        sit = situation(view_for(state, seat), redact_all(history, seat), legal)
        assert sit.blinds == frozenset({2, 3})
        tight = TableRead.of(read, sit, 0.1)
        thinned = _contested(sit, tight, in_blind=sit.seat in sit.blinds)
        assert (thinned.opponent_count < sit.opponent_count) == (seat == 1)
        state, events = execute(state, Act(seat, ActionKind.FOLD))
        history.extend(events)


def play_heads_up(variant: Variant, hero: Bot, opponent: str, deals: int, seed: int) -> None:
    """Ladder hands between ``hero`` (seat 0) and a fresh ``opponent``, the button alternating."""
    key = master_key(seed)
    bots: dict[int, Bot] = {0: hero, 1: get_bot(opponent)}
    model = ModelBuilder()
    for deal in range(deals):
        rngs = {s: random.Random(deal * 10 + s) for s in range(2)}
        deck = deck_for(variant, key, deal)
        play_hand(
            hand_setup(variant, hand_id_for(key, str(deal)), deck, deal % 2), bots, rngs, model
        )


def after_the_draw_checked_to(view: HandView, legal: LegalActions) -> bool:
    return view.street == Street.SECOND_BET and legal.can_check


def test_after_the_draw_value_bets_only_what_the_callers_pay() -> None:
    recorder = Recorder(after_the_draw_checked_to)
    play_heads_up(Variant.DRAW5, recorder, "loose_passive", 160, 17)
    assert len(recorder.points) >= 40
    bets: dict[str, set[int]] = {"station": set(), "pair_caller": set()}
    for i, (view, history, legal) in enumerate(recorder.points):
        for label, stats in (("station", STATION), ("pair_caller", PAIR_CALLER)):
            read = TableRead.of({1: stats}, situation(view, history, legal), 0.0)
            assert read.stations  # both fold rarely: only who calls with what differs
            d = HardBot(bluff_frequency=0.0).decide(
                view, history, legal, random.Random(i), {1: stats}
            )
            if getattr(d, "kind", None) in (ActionKind.BET, ActionKind.RAISE):
                bets[label].add(i)
    assert bets["pair_caller"] <= bets["station"]
    assert len(bets["pair_caller"]) < len(bets["station"])


# Heads-up Hold'em: folds most of its checks to a bet / never folds.
FOLDER = SeatStats(
    hands=60, vpip=30, pfr=15, first_faced=30, first_folded=12, faced=60, folded=40,
    bets=10, calls=20, checks=40,
)  # fmt: skip
NEVER_FOLDS = SeatStats(hands=60, vpip=60, faced=80, folded=0, calls=120, checks=40)


def test_heads_up_steals_from_folders_only_and_only_when_bluffing_is_allowed() -> None:
    recorder = Recorder()
    play_heads_up(Variant.NLHE, recorder, "normal", 80, 23)
    assert len(recorder.points) >= 30

    def air_bets(bot: HardBot, stats: SeatStats, river_only: bool = False) -> int:
        """Bets with no pair and no strong draw (on the river: nothing left to come)."""
        count = 0
        for i, (view, history, legal) in enumerate(recorder.points):
            sit = situation(view, history, legal)
            if river_only and sit.street != Street.RIVER:
                continue
            made = category_of(evaluate([*sit.hole, *sit.board])) > HandCategory.HIGH_CARD
            if made or draws(sit.hole, sit.board).strong:
                continue
            d = bot.decide(view, history, legal, random.Random(i), {1: stats})
            count += getattr(d, "kind", None) in (ActionKind.BET, ActionKind.RAISE)
        return count

    # A high card can still be a thin value bet against a range that checked everything,
    # so what counts is the difference: configured not to bluff, it steals nothing.
    steals = air_bets(HardBot(), FOLDER)
    assert steals >= air_bets(HardBot(bluff_frequency=0.0), FOLDER) + 5
    assert steals >= air_bets(HardBot(), NEVER_FOLDS) + 5
    # On the river air is a bluff, and a player who never folds is never bluffed.
    assert air_bets(HardBot(), NEVER_FOLDS, river_only=True) == 0


# Folds two bets in three over all pots, but in pots down to two players only one in five:
# its folds were to bets into several players (the full-table normal bot's pattern).
MULTIWAY_FOLDER = replace(FOLDER, hu_faced=30, hu_folded=6)


class AlwaysTakes(random.Random):
    """An RNG whose every draw is 0: a spot that qualifies for a steal is always taken."""

    def random(self) -> float:
        return 0.0


def test_no_steal_in_a_pot_a_full_table_left_heads_up_unless_it_folds_heads_up() -> None:
    recorder = Recorder()
    key = master_key(29)
    bots: dict[int, Bot] = {0: recorder, **{s: get_bot("normal") for s in range(1, 6)}}
    model = ModelBuilder()
    for deal in range(120):
        rngs = {s: random.Random(deal * 10 + s) for s in range(6)}
        setup = hand_setup(
            Variant.NLHE, hand_id_for(key, str(deal)), deck_for(Variant.NLHE, key, deal, 6),
            deal % 6, 6,
        )  # fmt: skip
        play_hand(setup, bots, rngs, model)
    spots = [situation(*point) for point in recorder.points]
    left_heads_up = [s for s in spots if s.opponent_count == 1 and s.dealt == 6]
    assert len(left_heads_up) >= 10
    bot = HardBot()
    for sit in left_heads_up:
        villain = sit.opponents[0].seat
        # The all-pot fold rate says "steal"; the heads-up one says no.
        read = TableRead.of({villain: MULTIWAY_FOLDER}, sit, 0.1)
        assert min(read.fold, read.check_fold[1]) > 1 / 3 + bot.tuning.steal_margin
        assert not bot._steals(sit, read, AlwaysTakes())
        # Folding as much heads-up, it is robbed.
        folds_heads_up = replace(MULTIWAY_FOLDER, hu_folded=24)
        assert bot._steals(sit, TableRead.of({villain: folds_heads_up}, sit, 0.1), AlwaysTakes())

    # Dealt heads-up, every pot is heads-up: the same record (even from an older request,
    # without the heads-up counts) is a folder to steal from.
    recorder = Recorder()
    play_heads_up(Variant.NLHE, recorder, "normal", 40, 23)
    dealt_heads_up = [situation(*point) for point in recorder.points]
    assert dealt_heads_up and all(s.dealt == 2 for s in dealt_heads_up)
    for sit in dealt_heads_up:
        read = TableRead.of({1: MULTIWAY_FOLDER}, sit, 0.1)
        assert bot._steals(sit, read, AlwaysTakes())
        assert bot._steals(sit, TableRead.of({1: FOLDER}, sit, 0.1), AlwaysTakes())


def open_spot(hole: tuple[int, int]) -> tuple[HandView, list[Event], LegalActions]:
    """Heads-up Hold'em: the button raises to 2.5 big blinds first in; the big blind: ``hole``."""
    setup = hand_setup(Variant.NLHE, "h-o", deck_for(Variant.NLHE, master_key(9), 0), 0)
    state, history = execute(None, StartHand(setup))
    history = list(history)
    legal = legal_actions(state)
    assert legal is not None and legal.seat == 0
    state, events = execute(state, Act(0, ActionKind.RAISE, 250))
    history.extend(events)
    legal = legal_actions(state)
    assert legal is not None and legal.seat == 1
    view = view_for(state, 1)
    seats = tuple(replace(s, cards=hole) if s.seat == 1 else s for s in view.seats)
    return replace(view, seats=seats), redact_all(history, 1), legal


def test_an_open_raise_is_read_as_wide_as_the_seat_opens_from_there() -> None:
    """The big blind defends a weak hand against a button that opens most hands, not a tight one.

    Both opponents raise first in on a fifth of all their hands (the same PFR),
    but one raises 60% of its buttons and the other 20%: only the first one's
    open is a wide range, and J5 offsuit has the price to call it.
    """
    wide = SeatStats(
        hands=200, vpip=80, pfr=40, open_chances=100, opened=60, late_open_chances=100,
        late_opened=60, first_faced=60, first_folded=30,
    )  # fmt: skip
    tight = replace(wide, opened=20, late_opened=20)
    hole = (9 * 4 + 0, 3 * 4 + 1)  # J♣ 5♦
    view, history, legal = open_spot(hole)
    sit = situation(view, history, legal)
    hard = HardBot()
    ranges = {}
    for name, stats in (("wide", wide), ("tight", tight)):
        style = TableRead.of({0: stats}, sit, 0.1).style(0)
        assert style.opens[1] is not None
        ranges[name] = len(hard._range(sit, 0, True, style).combos)
    assert ranges["wide"] > 2 * ranges["tight"]
    kinds = {}
    for name, stats in (("wide", wide), ("tight", tight)):
        d = hard.decide(view, history, legal, random.Random(3), {0: stats})
        assert isinstance(d, Act)
        kinds[name] = d.kind
    assert kinds["wide"] in (ActionKind.CALL, ActionKind.RAISE)
    assert kinds["tight"] == ActionKind.FOLD
    # Too few chances seen: the PFR read stays.
    few = replace(wide, open_chances=3, late_open_chances=3, opened=2, late_opened=2)
    assert TableRead.of({0: few}, sit, 0.1).style(0).opens == (None, None)


def test_a_steal_prices_out_the_pairs_that_call_half_the_pot() -> None:
    """A heads-up steal bets more than half the pot: a player calling by pot odds takes a
    half-pot bet's 25% price with a weak pair and folds it above 30% (the normal bot's rule)."""
    recorder = Recorder()
    play_heads_up(Variant.NLHE, recorder, "normal", 80, 23)
    bot = HardBot(tuning=replace(HardTuning(), value_ip=1.01, value_oop=1.01))
    sizes: dict[bool, set[float]] = {False: set(), True: set()}
    for i, (view, history, legal) in enumerate(recorder.points):
        sit = situation(view, history, legal)
        read = TableRead.of({1: FOLDER}, sit, 0.1)
        if sit.opponent_count != 1 or not bot._steals(sit, read, AlwaysTakes()):
            continue
        d = bot.decide(view, history, legal, AlwaysTakes(i), {1: FOLDER})
        assert isinstance(d, Act) and d.kind in (ActionKind.BET, ActionKind.RAISE)
        bet = d.amount - sit.bet
        if bet >= sit.stack or d.amount == legal.min_raise_to:
            continue  # clamped to the legal range: no pot fraction to check
        river = sit.street == Street.RIVER
        sizes[river].add(round(bet / sit.pot, 2))
        # The price the steal offers a caller is above what a weak pair calls.
        assert bet / (sit.pot + 2 * bet) > 0.29
    assert sizes[False] and sizes[True]
    assert all(abs(s - 0.8) <= 0.02 for s in sizes[False])
    assert all(abs(s - 0.75) <= 0.02 for s in sizes[True])


# 6-max records with the same folds to a first-round raise (80%), one re-raising 12% of the
# raises it faces (18 of 150; the `prober` shows 9-13%), one never.
FOLDS_AND_RERAISES = SeatStats(
    hands=200, vpip=50, pfr=43, reraised=18, opened=25, open_chances=60, first_faced=150,
    first_folded=120, faced=60, folded=25, bets=30, calls=30, checks=30,
)  # fmt: skip
FOLDS_ONLY = replace(FOLDS_AND_RERAISES, pfr=25, reraised=0)


def first_in_opens(table: dict[int, SeatStats]) -> int:
    """How many of the 1,326 starting hands hard raises first in under the gun at 6-max."""
    setup = hand_setup(Variant.NLHE, "h-o", deck_for(Variant.NLHE, master_key(7), 0, 6), 0, 6)
    state, history = execute(None, StartHand(setup))
    legal = legal_actions(state)
    assert legal is not None and legal.seat == 3
    view = view_for(state, legal.seat)
    redacted = redact_all(list(history), legal.seat)
    bot = HardBot()
    opens = 0
    for a in range(52):
        for b in range(a):
            seats = tuple(
                replace(s, cards=(a, b)) if s.seat == legal.seat else s for s in view.seats
            )
            d = bot.decide(replace(view, seats=seats), redacted, legal, random.Random(0), table)
            opens += getattr(d, "kind", None) in (ActionKind.BET, ActionKind.RAISE)
    return opens


def test_a_field_that_re_raises_widens_no_opens_however_often_it_folds() -> None:
    utg = 3  # the button is seat 0, the blinds 1 and 2
    reraisers = first_in_opens(table_of(FOLDS_AND_RERAISES, utg))
    folders = first_in_opens(table_of(FOLDS_ONLY, utg))
    unknown = first_in_opens({})
    # Folding 80% alone widens the opens by about 30 points; re-raises above a value
    # re-raiser's 7% count six folds each, which leaves at most a few points of it.
    assert folders >= unknown + 0.25 * 1326
    assert unknown <= reraisers <= unknown + 0.06 * 1326
    assert FOLDS_AND_RERAISES.reraise_rate() > 0.1 > 0.07 > FOLDS_ONLY.reraise_rate()
