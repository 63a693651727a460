"""Heads-up no-limit Hold'em preflop, 100 big blinds, by starting-hand class, for CFR+.

The button (small blind, player 0) folds, opens to 2.5 big blinds or moves all-in; the
big blind folds, calls, 3-bets to 9 or moves all-in; the opener folds, calls or moves
all-in over a 3-bet; an all-in is folded or called. Chips are in half big blinds.
Pots that see a flop are paid by equity realised: the button (in position after the
flop) keeps its equity, the big blind realises ``OOP_REALISATION`` of its own
(``OOP_3BET`` in 3-bet pots, whose low stack-to-pot ratio leaves less to outplay), the
two shares renormalised to the pot. All-ins are paid by plain equity. Equities come
from sampled boards per pair of classes (seeded); chance weights count the combos of
each pair of classes that share no card.
"""

from __future__ import annotations

import itertools
import random

import numpy as np

from felt.core.evaluator import evaluate_many
from felt.players.bots.floor import holdem_class
from felt.players.equity import starting_hand_order
from felt_dev.solve.cfr import Decision, Node, Solver, Terminal, signals

CLASSES = len(starting_hand_order())
SB, BB, OPEN, THREE_BET, STACK = 1, 2, 5, 18, 200
OOP_REALISATION = 0.85
OOP_3BET = 0.92


def combos() -> tuple[list[tuple[int, int]], np.ndarray]:
    """Every two-card combo and its class index."""
    pairs = list(itertools.combinations(range(52), 2))
    return pairs, np.asarray([holdem_class(p) for p in pairs], dtype=np.int64)


def chance_weights() -> np.ndarray:
    """Probability of each pair of classes (no shared card), summing to 1."""
    pairs, cls = combos()
    mask = np.zeros((len(pairs), 52), dtype=np.float64)
    for i, (a, b) in enumerate(pairs):
        mask[i, a] = mask[i, b] = 1.0
    free = (mask @ mask.T) == 0
    onehot = np.zeros((len(pairs), CLASSES))
    onehot[np.arange(len(pairs)), cls] = 1.0
    counts = onehot.T @ free.astype(np.float64) @ onehot
    out: np.ndarray = counts / counts.sum()
    return out


def equities(samples: int, seed: int) -> np.ndarray:
    """``eq[i, j]``: class ``i``'s all-in equity against class ``j`` (ties count half)."""
    rng = random.Random(seed)
    pairs, cls = combos()
    by_class: list[list[tuple[int, int]]] = [[] for _ in range(CLASSES)]
    for p, c in zip(pairs, cls.tolist(), strict=True):
        by_class[c].append(p)
    eq = np.full((CLASSES, CLASSES), 0.5)
    for i in range(CLASSES):
        for j in range(i, CLASSES):
            mine: list[list[int]] = []
            theirs: list[list[int]] = []
            while len(mine) < samples:
                a = rng.choice(by_class[i])
                b = rng.choice(by_class[j])
                if len({*a, *b}) < 4:
                    continue
                used = {*a, *b}
                board: list[int] = []
                while len(board) < 5:
                    card = rng.randrange(52)
                    if card not in used:
                        used.add(card)
                        board.append(card)
                mine.append([*a, *board])
                theirs.append([*b, *board])
            va = np.asarray(evaluate_many(mine), dtype=np.int64)
            vb = np.asarray(evaluate_many(theirs), dtype=np.int64)
            e = float(((va > vb) + 0.5 * (va == vb)).mean())
            eq[i, j] = e
            eq[j, i] = 1.0 - e
    return eq


def _realised(eq: np.ndarray, oop: float) -> np.ndarray:
    """The button's share of a flop pot: its equity against the big blind's discounted one."""
    ip = eq
    other = (1.0 - eq) * oop
    return ip / np.maximum(ip + other, 1e-12)


def build(weights: np.ndarray, eq: np.ndarray) -> Solver:
    """The preflop tree; every payoff is the button's, in half big blinds."""
    allin = weights * (2.0 * eq - 1.0)
    flop_open = weights * (2.0 * _realised(eq, OOP_REALISATION) - 1.0)
    flop_3bet = weights * (2.0 * _realised(eq, OOP_3BET) - 1.0)
    ident = (signals(CLASSES), CLASSES)

    def fold(loser: int, paid: tuple[int, int]) -> Node:
        return Terminal((-1.0 if loser == 0 else 1.0) * paid[loser] * weights)

    def decision(player: int, line: str, actions: str, children: list[Node]) -> Decision:
        return Decision(player, f"p:{line}", tuple(actions), children, ident[0], ident[1])

    shove_called = Terminal(STACK * allin)
    root = decision(
        0,
        "",
        "fra",
        [
            fold(0, (SB, BB)),
            decision(
                1,
                "r",
                "fcra",
                [
                    fold(1, (OPEN, BB)),
                    Terminal(OPEN * flop_open),
                    decision(
                        0,
                        "rr",
                        "fca",
                        [
                            fold(0, (OPEN, THREE_BET)),
                            Terminal(THREE_BET * flop_3bet),
                            decision(1, "rra", "fc", [fold(1, (STACK, THREE_BET)), shove_called]),
                        ],
                    ),
                    decision(0, "ra", "fc", [fold(0, (OPEN, STACK)), shove_called]),
                ],
            ),
            decision(1, "a", "fc", [fold(1, (STACK, BB)), shove_called]),
        ],
    )
    return Solver(root, (CLASSES, CLASSES))
