"""Hard's heads-up Hold'em postflop floor (``felt.players.bots.postflop``).

The floor's promises are frequencies over ranges, so the tests measure them over the
ranges the shipped preflop table implies: the bluffs' share of each betting range is the
pot odds the bet offers, a bet is defended at the minimum-defence frequency, the raises
balance their own size, and everything is deterministic.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from felt.core.cards import cards
from felt.core.rules.commands import Act, ActionKind, StartHand
from felt.core.rules.config import Variant
from felt.core.rules.engine import execute
from felt.core.rules.events import Event, Street
from felt.core.rules.legal import LegalActions, legal_actions
from felt.core.rules.views import HandView, redact_all, view_for
from felt.core.table.stats import SeatStats
from felt.players.bots import postflop as pf
from felt.players.bots.base import situation
from felt.players.bots.floor import holdem_class, load
from felt.players.bots.floor_play import floor_decision
from felt.players.bots.hard import HardBot
from felt.players.bots.holdem import class_name
from felt_dev.ladder import deck_for, hand_setup, master_key

BOARDS = ("AhKd7c", "9s8s2d", "QcQd4h", "Ts9h8c5d", "Ks7d2c2h9s", "6h5h4c")


def _mass(weights: tuple[float, ...], chosen: set[int] | list[int]) -> float:
    return sum(weights[c] for c in chosen)


def test_the_preflop_table_gives_each_combo_its_floor_weight() -> None:
    table = load("holdem")
    assert table is not None
    ranges = pf.preflop_ranges(table, "rc")
    assert ranges is not None
    blind, button = ranges
    opens = table.nodes["p:"]
    calls = table.nodes["p:r"]
    for combo, wb, wbb in zip(pf.combos(), button, blind, strict=True):
        k = holdem_class(combo)
        assert wb == pytest.approx(opens.strategy(k)[opens.actions.index("r")])
        assert wbb == pytest.approx(calls.strategy(k)[calls.actions.index("c")])
    # The button opens most hands; aces are 3-bet, not called, by the big blind.
    assert sum(button) / len(button) > 0.6
    aces = pf.combo_index(cards("AsAh"))
    assert blind[aces] < 0.5
    assert pf.preflop_ranges(table, "c") is None  # a limp is outside the abstraction
    three_bet = pf.preflop_ranges(table, "rrc")
    assert three_bet is not None and sum(three_bet[0]) < sum(blind) / 3


def test_the_two_ranges_share_the_pot() -> None:
    """Each combo's equity against the other range: the two ranges' means sum to one."""
    for board, st in zip(BOARDS, _states(), strict=True):
        means = []
        for p in (pf.OOP, pf.IP):
            w, s = st.ranges[p], st.strength[p]
            means.append(sum(a * b for a, b in zip(w, s, strict=True)) / sum(w))
        assert means[0] + means[1] == pytest.approx(1.0, abs=0.02)
        # Combos touching the board are out of both ranges.
        dead = set(cards(board))
        assert all(
            st.ranges[0][i] == 0 for i, (a, b) in enumerate(pf.combos()) if a in dead or b in dead
        )


def _states() -> list[pf.StreetState]:
    out = []
    for board in BOARDS:
        past: tuple[tuple[pf.Move, ...], ...] = ()
        if len(board) >= 8:
            past += ((pf.Move(0, "k"), pf.Move(1, "b", 0.5), pf.Move(0, "c")),)
        if len(board) >= 10:
            past += ((pf.Move(0, "k"), pf.Move(1, "k")),)
        st = pf.street_start("rc", tuple(cards(board)), past)
        assert st is not None
        out.append(st)
    return out


@pytest.mark.parametrize("size", [0.5, 0.75, 1.0])
def test_bluffs_are_the_share_of_each_betting_range_its_pot_odds_make_indifferent(
    size: float,
) -> None:
    """Bet ``b`` pots: bluffs are ``b / (1 + 2b)`` of the bets, the caller's break-even."""
    checked = 0
    for st in _states():
        for p in (pf.OOP, pf.IP):
            w = st.ranges[p]
            total = sum(w)
            threshold, _ = pf.bet_plan(st, w, p, size)
            bets = {
                c for c in range(len(w)) if w[c] and pf.decide(st, w, p, c, None, 0, size) == "b"
            }
            value = _mass(w, [c for c in bets if st.strength[p][c] >= threshold])
            bluffs = _mass(w, [c for c in bets if st.strength[p][c] < threshold])
            if value < 0.05 * total:
                continue
            if value * (1 + size / (1 + size)) >= total:
                # Too strong a range to balance: it bets everything (a range bet).
                assert value + bluffs == pytest.approx(total)
                continue
            checked += 1
            assert bluffs / (value + bluffs) == pytest.approx(pf.bluff_share(size), abs=0.005)
            # Value bets beat half of a minimum-defence range; bluffs are the bottom.
            assert threshold == pytest.approx(1 - 0.5 / (1 + size))
            worst_value = min(st.strength[p][c] for c in bets if st.strength[p][c] >= threshold)
            checks = [st.strength[p][c] for c in range(len(w)) if w[c] and c not in bets]
            assert all(s < worst_value for s in checks)
    assert checked >= 5


@pytest.mark.parametrize("size", [0.33, 0.5, 0.75, 1.2])
def test_a_bet_is_defended_at_the_minimum_defence_frequency(size: float) -> None:
    for st in _states():
        for p in (pf.OOP, pf.IP):
            w = st.ranges[p]
            total = sum(w)
            letters = [pf.decide(st, w, p, c, size, 1, 0.5) for c in range(len(w))]
            go_on = _mass(w, [c for c in range(len(w)) if letters[c] in "cr"]) / total
            assert go_on == pytest.approx(1 / (1 + size) + _bluff_raises(size), abs=0.04)
            cut = pf.defence(size, False, True).call
            raised = [c for c in range(len(w)) if letters[c] == "r"]
            value_raises = _mass(w, [c for c in raised if pf.percentile(st, w, p, c) >= cut])
            bluff_raises = _mass(w, [c for c in raised if pf.percentile(st, w, p, c) < cut])
            # Check-raises (and raises) balance the raise's own size.
            share = pf.RAISE_SIZE / (1 + pf.RAISE_SIZE)
            assert bluff_raises / value_raises == pytest.approx(share, abs=0.04)


def _bluff_raises(size: float) -> float:
    """The bluff-raises come from hands below the calling cut-off: extra continuing share."""
    return pf.RAISE_SHARE * pf.RAISE_SIZE / (1 + pf.RAISE_SIZE) / (1 + size)


def test_a_raise_is_defended_without_bluffs_and_past_the_cap_only_called() -> None:
    st = _states()[0]
    w = st.ranges[pf.IP]
    letters = [pf.decide(st, w, pf.IP, c, 1.0, 2, 0.5) for c in range(len(w))]
    raised = [c for c in range(len(w)) if w[c] and letters[c] == "r"]
    assert raised and all(pf.percentile(st, w, pf.IP, c) > 0.8 for c in raised)
    capped = {pf.decide(st, w, pf.IP, c, 1.0, 3, 0.5) for c in raised}
    assert capped == {"c"}


def test_an_action_narrows_its_player_range_to_what_the_rules_give_it() -> None:
    board = tuple(cards("AhKd7c"))
    st = pf.street_start("rc", board, ())
    assert st is not None
    checked, _ = pf.narrow(st, board, (pf.Move(0, "k"),))
    bet, _ = pf.narrow(st, board, (pf.Move(0, "b", 0.5),))
    w = st.ranges[0]
    # Each combo's weight goes to the check or the bet, the other keeps a trembling share.
    for c in range(len(w)):
        if w[c]:
            assert {round(checked[c] / w[c], 6), round(bet[c] / w[c], 6)} == {1.0, pf.TREMBLE}
    assert sum(bet) < sum(checked)
    # Calling a bet leaves the middle: the top raised, the bottom folded.
    _, called = pf.narrow(st, board, (pf.Move(0, "k"), pf.Move(1, "b", 0.5), pf.Move(0, "c")))
    assert sum(called) < sum(st.ranges[1])


def test_public_lines_read_sizes_in_pots() -> None:
    from felt.players.bots.base import PublicAction as A

    pre = [A(Street.PREFLOP, 0, "bet", 250, 200), A(Street.PREFLOP, 1, "call", 0, 150)]
    flop = [
        A(Street.FLOP, 1, "check"),
        A(Street.FLOP, 0, "bet", 250, 250),  # half the 500 pot
        A(Street.FLOP, 1, "bet", 1000, 1000),  # raise: 750 more into 1000
        A(Street.FLOP, 0, "call", 0, 750),
    ]
    line = pf.read_line([*pre, *flop, A(Street.TURN, 1, "check")], ip_seat=0, street=Street.TURN)
    assert line is not None
    assert line.pre == "rc" and line.pot == 2500
    moves = line.streets[0]
    assert [m.kind for m in moves] == ["k", "b", "r", "c"]
    assert [m.player for m in moves] == [pf.OOP, pf.IP, pf.OOP, pf.IP]
    assert moves[1].size == pytest.approx(0.5)
    assert moves[2].size == pytest.approx(750 / 1000)
    assert line.streets[1] == (pf.Move(pf.OOP, "k"),)
    limp = [A(Street.PREFLOP, 0, "call", 0, 50), A(Street.PREFLOP, 1, "check")]
    assert pf.read_line(limp, 0, Street.FLOP) is None


def flop_spot(hole: tuple[int, int]) -> tuple[HandView, list[Event], LegalActions]:
    """Heads-up: the button opens to 2.5 big blinds, the big blind calls and checks the flop."""
    setup = hand_setup(Variant.NLHE, "h-pf", deck_for(Variant.NLHE, master_key(11), 0), 0)
    state, history = execute(None, StartHand(setup))
    history = list(history)
    for seat, act in ((0, Act(0, ActionKind.RAISE, 250)), (1, Act(1, ActionKind.CALL))):
        legal = legal_actions(state)
        assert legal is not None and legal.seat == seat
        state, events = execute(state, act)
        history.extend(events)
    legal = legal_actions(state)
    assert legal is not None and legal.seat == 1
    state, events = execute(state, Act(1, ActionKind.CHECK))
    history.extend(events)
    legal = legal_actions(state)
    assert legal is not None and legal.seat == 0
    view = view_for(state, 0)
    seats = tuple(replace(s, cards=hole) if s.seat == 0 else s for s in view.seats)
    return replace(view, seats=seats), redact_all(history, 0), legal


def _free_hole(view: HandView, want: str) -> tuple[int, int]:
    """Two hole cards of class ``want`` that are not on the board."""
    for a in range(52):
        for b in range(a):
            if a in view.board or b in view.board:
                continue
            if class_name(a, b) == want:
                return (a, b)
    raise AssertionError(want)


def test_hard_plays_the_postflop_floor_heads_up_until_the_record_shows_a_leak() -> None:
    view, history, legal = flop_spot((0, 1))
    bets = 0
    for name in ("AA", "KK", "72o", "32o", "T9s", "Q5o"):
        hole = _free_hole(view, name)
        v = replace(
            view, seats=tuple(replace(s, cards=hole) if s.seat == 0 else s for s in view.seats)
        )
        sit = situation(v, history, legal)
        move = floor_decision(sit, history, legal, random.Random(1), None)
        assert isinstance(move, Act), name
        again = floor_decision(sit, history, legal, random.Random(99), None)
        assert again == move  # deterministic: the postflop floor reads no RNG
        assert move == HardBot(postflop_floor=True).decide(
            v, history, legal, random.Random(5), None
        )
        # Off by default: hard's own postflop play decides.
        assert HardBot().floor and not HardBot().postflop_floor
        if move.kind == ActionKind.BET:
            bets += 1
            assert move.amount == round(pf.SIZES[Street.FLOP] * sit.pot)
    assert bets >= 1
    sit = situation(view, history, legal)
    # A player who folds to nearly every later bet is a leak at 95%: hard's exploits decide.
    folder = SeatStats(hands=200, faced=100, folded=90)
    assert floor_decision(sit, history, legal, random.Random(1), {1: folder}) is None
    # One who folds about as often as the floor does is not.
    fair = SeatStats(hands=200, faced=100, folded=round(100 * pf.FOLD_REFERENCE))
    assert floor_decision(sit, history, legal, random.Random(1), {1: fair}) is not None
    # Off: the preflop floor only.
    assert floor_decision(sit, history, legal, random.Random(1), None, postflop=False) is None


def test_strengths_are_deterministic() -> None:
    board = tuple(cards("Ts9h8c"))
    table = load("holdem")
    assert table is not None
    ranges = pf.preflop_ranges(table, "rc")
    assert ranges is not None
    assert pf.strengths(board, ranges) == pf.strengths(board, ranges)


class _Blind:
    """Hard that never sees the opponent model: the floor plays every spot it knows."""

    name = "hard"

    def __init__(self) -> None:
        self.bot = HardBot(postflop_floor=True)

    def decide(
        self,
        view: HandView,
        history: list[Event],
        legal: LegalActions,
        rng: random.Random,
        table: object = None,
    ) -> Act:
        move = self.bot.decide(view, history, legal, rng, None)
        assert isinstance(move, Act)
        return move


def test_the_floor_plays_the_frequencies_its_leak_gate_compares_against() -> None:
    """Against itself, the floor folds to later bets and bets as often as its references say."""
    from felt.players.bots.opponents import ModelBuilder
    from felt_dev.ladder import hand_id_for, play_hand

    key = master_key(77)
    bots = {0: _Blind(), 1: _Blind()}
    model = ModelBuilder()
    for deal in range(200):
        rngs = {s: random.Random(deal * 10 + s) for s in range(2)}
        deck = deck_for(Variant.NLHE, key, deal)
        setup = hand_setup(Variant.NLHE, hand_id_for(key, str(deal)), deck, deal % 2)
        play_hand(setup, bots, rngs, model)  # type: ignore[arg-type]
    total = model.stats[0] + model.stats[1]
    assert total.faced > 100
    assert total.folded / total.faced == pytest.approx(pf.FOLD_REFERENCE, abs=0.08)
    acts = total.bets + total.calls + total.checks
    assert total.bets / acts == pytest.approx(pf.AGGRESSION_REFERENCE, abs=0.05)


def test_only_a_passive_record_hands_the_postflop_spots_back_to_the_exploits() -> None:
    view, history, legal = flop_spot((0, 1))
    sit = situation(view, history, legal)
    fair_folds = round(100 * pf.FOLD_REFERENCE)
    passive = SeatStats(hands=200, faced=100, folded=fair_folds, bets=10, calls=90, checks=100)
    steady = SeatStats(hands=200, faced=100, folded=fair_folds, bets=70, calls=30, checks=30)
    assert floor_decision(sit, history, legal, random.Random(1), {1: passive}) is None
    assert floor_decision(sit, history, legal, random.Random(1), {1: steady}) is not None
