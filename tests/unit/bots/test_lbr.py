"""Local best response (``felt_dev.lbr``): it plays legal hands, reads no hidden card, and
wins against a bot that never folds."""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import replace
from itertools import combinations

import pytest

from felt.core.cards import cards, rank_of
from felt.core.evaluator import evaluate
from felt.core.rules.commands import Act, ActionKind, StartHand
from felt.core.rules.config import Variant
from felt.core.rules.engine import execute
from felt.core.rules.events import Event, HoleCardsDealt
from felt.core.rules.legal import LegalActions, legal_actions
from felt.core.rules.state import HandState
from felt.core.rules.views import HandView, redact_all, view_for
from felt.players.bots.base import bet_to, check_or_call
from felt_dev.ladder import Z95, deck_for, hand_setup, master_key
from felt_dev.lbr import (
    SPOTS,
    BetRecord,
    Estimate,
    HandRecord,
    LocalBestResponse,
    Particle,
    _cmp,
    _hypothetical,
    _stratified,
    board_luck,
    breakdown,
    fold_rates,
    paired,
    paired_breakdown,
    play,
)


def test_the_bot_is_asked_with_the_particle_s_cards_never_its_own() -> None:
    deck = deck_for(Variant.NLHE, master_key(1), 0)
    state, events = execute(None, StartHand(hand_setup(Variant.NLHE, "h", deck, 0)))
    real = tuple(c for c in view_for(state, 1).seat(1).cards if c is not None)
    guess = Particle(tuple(c for c in range(52) if c not in deck[:4])[:2])
    view, history = _hypothetical(view_for(state, 1), redact_all(events, 1), 1, guess)
    assert view.seat(1).cards == guess.dealt
    dealt = [e for e in history if isinstance(e, HoleCardsDealt) and e.seat == 1]
    assert dealt and all(e.cards == guess.dealt for e in dealt)
    assert not set(real) & set(guess.dealt)


def test_lbr_beats_a_calling_station_and_reports_an_interval() -> None:
    est = play(Variant.NLHE, "calling_station", 30, seed=5, particles=8, rollouts=6)
    assert est.hands == 60
    assert est.mean - est.half_width > 0  # value bets into a player who never folds
    est = play(Variant.DRAW5, "easy", 4, seed=5, particles=8, rollouts=4)
    assert est.hands == 8 and est.half_width >= 0


def test_paired_difference_is_the_mean_of_the_deal_by_deal_differences() -> None:
    a = Estimate("easy", Variant.NLHE, 8, 0.0, 0.0, (100.0, 300.0, -50.0, 250.0))
    b = Estimate("hard", Variant.NLHE, 8, 0.0, 0.0, (90.0, 280.0, -80.0, 230.0))
    diff = paired(a, b)
    assert diff.bot == "easy-hard" and diff.hands == 8
    assert diff.per_deal == (10.0, 20.0, 30.0, 20.0)
    assert diff.mean == pytest.approx(20.0)
    # The deals' shared luck cancels: the paired interval is far narrower than either's.
    sd = statistics.stdev(diff.per_deal)
    assert diff.half_width == pytest.approx(Z95 * sd / 2)
    with pytest.raises(ValueError):
        paired(a, Estimate("hard", Variant.NLHE, 6, 0.0, 0.0, (1.0, 2.0, 3.0)))


def test_board_luck_has_mean_zero_over_the_cards_to_come() -> None:
    mine, theirs = cards("AhKh"), cards("QsQd")
    rng = random.Random(3)
    flop = cards("2h7hQc")
    unseen = [c for c in range(52) if c not in {*mine, *theirs, *flop}]
    # Every turn and river after a flop bet into a pot of 600 and a turn pot of 1800.
    total = 0.0
    runs = 0
    for turn, river in combinations(unseen, 2):
        for board in ((*flop, turn, river), (*flop, river, turn)):
            total += board_luck(mine, theirs, board, {3: 600, 4: 1800}, rng)
            runs += 1
    assert abs(total / runs) < 1e-9
    # A pot all-in on the flop: the result less the luck is the pot times the flop equity.
    board = (*flop, *cards("3c4d"))
    won = 600 if evaluate([*mine, *board]) > evaluate([*theirs, *board]) else 0
    luck = board_luck(mine, theirs, board, {3: 600, 4: 600}, rng)
    flop_equity = sum(
        _cmp(evaluate([*mine, *flop, t, r]), evaluate([*theirs, *flop, t, r]))
        for t, r in combinations(unseen, 2)
    ) / len(list(combinations(unseen, 2)))
    assert won - luck == pytest.approx(600 * flop_equity)


class _FoldsToSmallBets:
    """Folds to a raise of at most one big blind more, calls anything bigger."""

    name = "folds_small"

    def decide(
        self,
        view: HandView,
        history: Sequence[Event],
        legal: LegalActions,
        rng: random.Random,
        table: object = None,
    ) -> Act:
        if legal.call_amount is not None and legal.call_amount <= 100:
            return Act(legal.seat, ActionKind.FOLD)
        return check_or_call(legal)


class _RaisesPairs:
    """Raises with a pocket pair, calls or checks with anything else."""

    name = "raises_pairs"

    def decide(
        self,
        view: HandView,
        history: Sequence[Event],
        legal: LegalActions,
        rng: random.Random,
        table: object = None,
    ) -> Act:
        hole = [c for c in view.seat(legal.seat).cards if c is not None]
        if rank_of(hole[0]) == rank_of(hole[1]) and legal.min_raise_to is not None:
            return bet_to(legal, legal.min_raise_to)
        return check_or_call(legal)


def _first_to_act(fits: Callable[[list[int]], bool]) -> tuple[HandState, list[Event], int]:
    """The first deal (seeded) where the first to act pre-flop holds ranks that ``fits``."""
    for deal in range(200):
        deck = deck_for(Variant.NLHE, master_key(7), deal)
        state, events = execute(None, StartHand(hand_setup(Variant.NLHE, "h", deck, 0)))
        legal = legal_actions(state)
        assert legal is not None
        hole = view_for(state, legal.seat).seat(legal.seat).cards
        if fits(sorted(rank_of(c) for c in hole if c is not None)):
            return state, list(events), legal.seat
    raise AssertionError("no such hand dealt")


def _hole(state: HandState, seat: int) -> tuple[int, ...]:
    return tuple(c for c in view_for(state, seat).seat(seat).cards if c is not None)


def test_a_half_pot_raise_is_legal_and_chosen_when_it_is_the_best() -> None:
    # A weak unpaired hand first to act, against a bot that folds to a small raise only.
    state, history, me = _first_to_act(lambda r: r[1] < 7 and r[0] != r[1])
    legal = legal_actions(state)
    assert legal is not None and legal.min_raise_to is not None and legal.max_raise_to is not None
    lbr = LocalBestResponse(_FoldsToSmallBets(), 12, 8, random.Random(1), sizes=(0.5, 1.0))
    lbr.start(_hole(state, me), 2)
    move = lbr.decide(state, history, me, 1 - me)
    # Raising to two big blinds wins the blinds every time; the pot-sized raise gets called.
    assert isinstance(move, Act) and move.kind == ActionKind.RAISE and move.amount == 200
    assert legal.min_raise_to <= move.amount <= legal.max_raise_to
    after, _ = execute(state, move)  # the engine accepts it
    assert after.pot == 300
    only_pot = LocalBestResponse(_FoldsToSmallBets(), 12, 8, random.Random(1), sizes=(1.0,))
    only_pot.start(_hole(state, me), 2)
    other = only_pot.decide(state, history, me, 1 - me)
    assert isinstance(other, Act) and other.amount != 200


def test_the_stratified_belief_covers_every_starting_hand_class_once() -> None:
    mine = cards("AsKs")
    belief = _stratified([c for c in range(52) if c not in mine], random.Random(2))
    assert len(belief) == 169
    assert sum(p.weight for p in belief) == 50 * 49 / 2  # every deal counted once
    assert all(not set(p.dealt) & set(mine) for p in belief)


def _pair_share(lbr: LocalBestResponse) -> float:
    pairs = sum(p.weight for p in lbr.belief if rank_of(p.dealt[0]) == rank_of(p.dealt[1]))
    return pairs / sum(p.weight for p in lbr.belief)


def test_a_worn_belief_is_drawn_afresh_from_hands_that_fit_the_bot_s_actions() -> None:
    # The bot, first to act, holds a pair and raises; LBR's belief had one pair in twelve.
    state, history, bot_seat = _first_to_act(lambda r: r[0] == r[1])
    me = 1 - bot_seat
    bot = _RaisesPairs()
    lbr = LocalBestResponse(bot, 12, 8, random.Random(4), refill=80)
    lbr.start(_hole(state, me), 2)
    known = set(_hole(state, me)) | set(_hole(state, bot_seat))
    free = [c for c in range(52) if c not in known]
    unpaired = [(a, b) for a, b in combinations(free, 2) if rank_of(a) != rank_of(b)]
    pair = next((a, b) for a, b in combinations(free, 2) if rank_of(a) == rank_of(b))
    lbr.belief = [Particle(h) for h in unpaired[:11]] + [Particle(pair)]
    legal = legal_actions(state)
    assert legal is not None
    move = bot.decide(
        view_for(state, bot_seat), redact_all(history, bot_seat), legal, random.Random()
    )
    assert move.kind == ActionKind.RAISE
    lbr.observe(state, history, bot_seat, move)
    after, _ = execute(state, move)
    # Worn down to one likely hand: refilled with fresh deals weighted by the raise.
    lbr.replenish(view_for(after, me), me, bot_seat)
    assert 0 < len(lbr.belief) <= 12 and all(p.weight > 0 for p in lbr.belief)
    assert len({p.dealt for p in lbr.belief} - {pair}) >= 2
    assert _pair_share(lbr) > 0.6
    assert all(not set(p.dealt) & set(_hole(state, me)) for p in lbr.belief)


def test_the_stratified_start_is_cut_to_size_after_the_bot_acts() -> None:
    state, history, bot_seat = _first_to_act(lambda r: r[0] == r[1])
    me = 1 - bot_seat
    bot = _RaisesPairs()
    lbr = LocalBestResponse(bot, 12, 8, random.Random(5), refill=40)
    lbr.start(_hole(state, me), 2)
    assert len(lbr.belief) == 169
    legal = legal_actions(state)
    assert legal is not None
    move = bot.decide(
        view_for(state, bot_seat), redact_all(history, bot_seat), legal, random.Random()
    )
    lbr.observe(state, history, bot_seat, move)
    after, _ = execute(state, move)
    lbr.replenish(view_for(after, me), me, bot_seat)
    assert len(lbr.belief) <= 12
    # 13 pair classes of 6 deals against 156 others at a fiftieth: pairs hold ~3/4 of it.
    assert _pair_share(lbr) > 0.5


def test_the_breakdown_shares_are_each_spot_s_winnings_over_all_hands() -> None:
    records = (
        HandRecord(0, True, "flop", "half-pot", "bot folds", 600.0, 500.0),
        HandRecord(0, False, "none", "check/call", "showdown", -200.0, -300.0),
        HandRecord(1, True, "flop", "half-pot", "bot folds", 400.0, 400.0),
        HandRecord(1, False, "river", "all-in", "showdown", 1000.0, 2000.0),
    )
    per_deal = (200.0, 700.0)  # each deal's two hands' net, halved
    est = Estimate("hard", Variant.NLHE, 4, 450.0, 0.0, per_deal, (100.0, 1200.0), records)
    spots = {b.label: b for b in breakdown(est, SPOTS["LBR's last bet"])}
    assert spots["flop half-pot"].hands == 2
    assert spots["flop half-pot"].mean == pytest.approx(250.0)  # (600 + 400) / 4 hands
    assert spots["flop half-pot"].chips == pytest.approx(225.0)
    assert spots["river all-in"].mean == pytest.approx(250.0)
    assert spots["check/call"].mean == pytest.approx(-50.0)
    # Deal by deal: the flop half-pot's share is 300 then 200.
    assert spots["flop half-pot"].half_width == pytest.approx(
        Z95 * statistics.stdev([300, 200]) / 2**0.5
    )
    ends = {b.label: b.mean for b in breakdown(est, SPOTS["end"])}
    assert ends == pytest.approx({"bot folds": 250.0, "showdown": 200.0})
    other = replace(est, records=(*records[:3], replace(records[3], net=0.0)))
    diff = paired_breakdown(est, other, SPOTS["LBR's last bet"])
    assert diff["river all-in"][0] == pytest.approx(250.0)
    assert diff["flop half-pot"] == pytest.approx((0.0, 0.0))
    bets = (
        BetRecord("flop", "half-pot", True, 0.5),
        BetRecord("flop", "half-pot", False, 0.7),
        BetRecord("river", "all-in", True, 1.0),
    )
    est = Estimate("hard", Variant.NLHE, 4, 450.0, 0.0, per_deal, (), records, bets)
    assert fold_rates(est) == {
        ("flop", "half-pot"): (2, 1, pytest.approx(0.6)),
        ("river", "all-in"): (1, 1, 1.0),
    }


def test_a_played_breakdown_adds_up_to_the_estimate_in_every_dimension() -> None:
    a = play(Variant.NLHE, "easy", 6, seed=7, particles=8, rollouts=4, refill=16)
    b = play(Variant.NLHE, "normal", 6, seed=7, particles=8, rollouts=4, refill=16)
    chips = sum(a.raw) / len(a.raw)
    for spot in SPOTS.values():
        buckets = breakdown(a, spot)
        assert sum(x.hands for x in buckets) == a.hands == len(a.records)
        assert sum(x.mean for x in buckets) == pytest.approx(a.mean)
        assert sum(x.chips for x in buckets) == pytest.approx(chips)
        shares = paired_breakdown(a, b, spot)
        assert sum(m for m, _ in shares.values()) == pytest.approx(paired(a, b).mean)
    # Each hand the bot folded after an LBR bet is that bet's recorded fold, and back.
    folded = sum(1 for x in a.bets if x.folded)
    assert folded == sum(1 for r in a.records if r.end == "bot folds" and r.street != "none")
    assert sum(n for n, _, _ in fold_rates(a).values()) == len(a.bets) > 0
    assert {r.action for r in a.records} <= {"check/call", "half-pot", "pot", "all-in"}
    assert sum(r.button for r in a.records) == a.hands // 2
    assert all(r.facing <= r.bot_raises for r in a.records)
