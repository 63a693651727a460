"""Heads-up Five-Card Draw, fixed limit, as a card-bucket abstraction for CFR+.

The game as the ladder deals it (``felt_dev.ladder``): ante 25 each, bets of 50 before
the draw and 100 after it, one bet and three raises a round, the seat left of the
button first in both rounds (player 0 here, the button player 1). Each seat's cards
are abstracted to a private state: its dealt bucket (``floor.DRAW_DEALT``, which fixes
its textbook draw) before the draw, dealt and final bucket after it; the number of
cards each drew is public, so the second round is solved once per pair of draw
counts. Deals are sampled (seeded): the chance weight of every pair of states and the
showdown result between them are averaged over the real hands behind them.
"""

from __future__ import annotations

import random

import numpy as np

from felt.core.evaluator import evaluate
from felt.players.bots.drawhand import standard_keep
from felt.players.bots.floor import (
    DRAW_DEALT,
    DRAW_FINAL,
    DRAW_STATES,
    draw_dealt_bucket,
    draw_final_bucket,
)
from felt_dev.solve.betting import fold_leaf, limit_round
from felt_dev.solve.cfr import Node, Solver, Terminal, coarse, signals

ANTE = 25
SMALL_BET = 50
BIG_BET = 100
CAP = 4


def sample_deals(deals: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Chance weights and showdown results of state pairs over ``deals`` sampled deals.

    Returns ``(weights, wins)``: ``weights[x0, x1]`` the probability of the pair,
    ``wins[x0, x1]`` its probability times player 0's showdown result (+1, 0, -1).
    """
    rng = random.Random(seed)
    deck = list(range(52))
    x0s = np.zeros(deals, dtype=np.int64)
    x1s = np.zeros(deals, dtype=np.int64)
    results = np.zeros(deals)
    post = len(DRAW_FINAL)
    for i in range(deals):
        rng.shuffle(deck)
        hands = (deck[0:5], deck[5:10])
        nxt = 10
        states = []
        values = []
        for hand in hands:
            keep = list(standard_keep(hand))
            drawn = 5 - len(keep)
            final = keep + deck[nxt : nxt + drawn]
            nxt += drawn
            states.append(draw_dealt_bucket(hand) * post + draw_final_bucket(final))
            values.append(evaluate(final))
        x0s[i], x1s[i] = states
        results[i] = np.sign(values[0] - values[1])
    weights = np.zeros((DRAW_STATES, DRAW_STATES))
    wins = np.zeros((DRAW_STATES, DRAW_STATES))
    np.add.at(weights, (x0s, x1s), 1.0 / deals)
    np.add.at(wins, (x0s, x1s), results / deals)
    return weights, wins


def build(weights: np.ndarray, wins: np.ndarray) -> Solver:
    """The abstract game's tree: first round, the public draw counts, second round."""
    post = len(DRAW_FINAL)
    dealt = np.arange(DRAW_STATES) // post
    first_signal = coarse(dealt.tolist())
    ident = (signals(DRAW_STATES), DRAW_STATES)
    fold = fold_leaf(weights)

    def showdown(_: str, paid: tuple[int, int]) -> Node:
        return Terminal(paid[0] * wins)

    def second(line: str, paid: tuple[int, int]) -> Node:
        def key(actor: int, seq: str) -> str:
            return f"2:{line}:{seq}"

        return limit_round(key, 0, paid, BIG_BET, CAP, (ident, ident), fold, showdown)

    root = limit_round(
        lambda actor, seq: f"1:{seq}",
        0,
        (ANTE, ANTE),
        SMALL_BET,
        CAP,
        (first_signal, first_signal),
        fold,
        second,
    )
    return Solver(root, (DRAW_STATES, DRAW_STATES))


__all__ = ["DRAW_DEALT", "DRAW_STATES", "build", "sample_deals"]
