"""Kuhn poker (three cards, ante 1, one bet of 1): the solver's check, value -1/18."""

from __future__ import annotations

import numpy as np

from felt_dev.solve.betting import fold_leaf, limit_round
from felt_dev.solve.cfr import Node, Solver, Terminal, signals

KUHN_VALUE = -1.0 / 18.0


def kuhn() -> Solver:
    """A solver for Kuhn poker; player 0 acts first, cards 0 < 1 < 2."""
    weights = np.full((3, 3), 1.0 / 6.0)
    np.fill_diagonal(weights, 0.0)
    wins = np.sign(np.subtract.outer(np.arange(3), np.arange(3))).astype(float) * weights
    ident = (signals(3), 3)

    def showdown(line: str, paid: tuple[int, int]) -> Node:
        return Terminal(paid[0] * wins)

    root = limit_round(
        lambda actor, line: line, 0, (1, 1), 1, 1, (ident, ident), fold_leaf(weights), showdown
    )
    return Solver(root, (3, 3))
