"""The offline solver (``felt_dev.solve``) and the floor tables hard loads (``floor``)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from felt.core.cards import cards
from felt.players.bots.floor import (
    DRAW_DEALT,
    DRAW_STATES,
    DRAWN_BY_BUCKET,
    deviates,
    draw_dealt_bucket,
    draw_final_bucket,
    holdem_class,
    load,
    parse_table,
    pick,
    wilson,
)
from felt_dev.solve import draw
from felt_dev.solve.export import frequencies, table_json
from felt_dev.solve.kuhn import KUHN_VALUE, kuhn


def test_cfr_plus_converges_on_kuhn_poker_to_its_value() -> None:
    solver = kuhn()
    solver.run(400)
    assert solver.value() == pytest.approx(KUHN_VALUE, abs=1e-3)
    assert solver.exploitability() < 2e-3
    # The known equilibrium: the second player always calls with the king and never with the jack.
    facing_bet = solver.average("b")  # actions (fold, call) by card
    assert facing_bet[2, 1] > 0.99 and facing_bet[0, 1] < 0.01
    # The first player bets the king three times as often as it bluffs the jack.
    first = solver.average("")
    assert first[2, 1] == pytest.approx(3 * first[0, 1], abs=0.02)


def test_exploitability_falls_as_cfr_runs() -> None:
    solver = kuhn()
    solver.run(5)
    early = solver.exploitability()
    solver.run(200)
    assert solver.exploitability() < early / 5


def test_a_table_written_by_the_solver_reads_back() -> None:
    solver = kuhn()
    solver.run(300)
    table = parse_table(table_json(solver, {"reference": {"fold_first": 0.5}}))
    actions, probs = table.strategy("b", 0) or ("", ())
    assert actions == "fc" and sum(probs) == pytest.approx(1.0)
    assert probs[0] > 0.98  # the jack folds to a bet
    assert table.strategy("zz", 0) is None
    assert table.reference("fold_first") == 0.5
    with pytest.raises(IndexError):
        table.nodes["b"].strategy(3)
    with pytest.raises(ValueError):
        parse_table('{"nodes": {"b": {"actions": "fc", "p": "AAAA"}}}')


def test_reference_frequencies_weigh_each_spot_by_how_often_it_is_reached() -> None:
    solver = kuhn()
    solver.run(400)

    def stat(key: str, action: str, facing: bool) -> str | None:
        return "fold" if facing and action == "f" else None

    freq = frequencies(solver, np.full((3, 3), 1.0 / 6.0) * (1 - np.eye(3)), stat)
    # Facing a bet at equilibrium: the jack folds, the king calls, the queen mixes.
    assert set(freq) == {"fold"}
    assert 0.3 < freq["fold"] < 0.7


def test_a_small_draw_solve_runs_and_its_buckets_cover_every_deal() -> None:
    weights, wins = draw.sample_deals(400, seed=1)
    assert weights.shape == (DRAW_STATES, DRAW_STATES)
    assert weights.sum() == pytest.approx(1.0)
    assert np.all(np.abs(wins) <= weights + 1e-12)
    solver = draw.build(weights, wins)
    solver.run(3)
    assert "1:" in solver.tables and "2:kk:" in solver.tables
    assert solver.exploitability() > 0


def test_draw_buckets_follow_the_textbook_draw() -> None:
    assert len(DRAW_DEALT) == len(DRAWN_BY_BUCKET)
    assert draw_dealt_bucket(cards("As Ad 7c 4h 2s")) == 6  # pair of aces, draws three
    assert draw_dealt_bucket(cards("9s 9d 4c 4h Ks")) == 7  # nines up: low two pair
    assert draw_dealt_bucket(cards("2h 7h 9h Kh As")) == 2  # four-flush draws one
    assert draw_dealt_bucket(cards("5c 6d 7h 8s 9s")) == 10  # pat straight
    assert draw_dealt_bucket(cards("Kc 9d 7h 4s 2s")) == 1
    assert draw_final_bucket(cards("Ac Jd 7h 4s 2s")) == 1
    assert draw_final_bucket(cards("Qc Qd 7h 4s 2s")) == 4


def test_holdem_classes_index_the_starting_hand_order() -> None:
    assert holdem_class(cards("As Ah")) == 0
    assert holdem_class(cards("Ah As")) == 0
    assert holdem_class(cards("3c 2d")) == 168


def test_the_shipped_tables_load_once_and_give_a_distribution() -> None:
    for name, line in (("draw", "1:"), ("holdem", "p:")):
        table = load(name)
        assert table is not None and load(name) is table  # parsed once, cached
        got = table.strategy(line, 0)
        assert got is not None
        actions, probs = got
        assert sum(probs) == pytest.approx(1.0)
        assert pick(actions, probs, random.Random(1)) in actions
    holdem = load("holdem")
    assert holdem is not None
    # The button opens aces and folds little of its range heads-up.
    actions, probs = holdem.strategy("p:", 0) or ("", ())
    assert probs[actions.index("f")] < 0.01
    assert 0.5 < (holdem.reference("open") or 0) <= 1.0
    assert load("nothing-shipped") is None


def test_evidence_needs_enough_hands_and_a_95_percent_interval() -> None:
    low, high = wilson(50, 100)
    assert low < 0.5 < high
    assert wilson(0, 0) == (0.0, 1.0)
    assert deviates(25, 29, 0.4, 0.1) == 0  # too few to say
    assert deviates(80, 100, 0.4, 0.1) == 1  # folds too much
    assert deviates(5, 100, 0.4, 0.1) == -1  # calls too much
    assert deviates(45, 100, 0.4, 0.1) == 0
