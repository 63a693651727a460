"""Fixed-limit betting rounds as public trees for the CFR solver (``felt_dev.solve.cfr``).

One round heads-up: ``k`` check, ``b`` bet, ``r`` raise, ``c`` call, ``f`` fold,
at most ``cap`` bets and raises. The action strings are the keys the shipped
tables use, so the runtime (``felt.players.bots.floor``) reads a real hand's
public line the same way.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from felt_dev.solve.cfr import Decision, Node, Terminal

Leaf = Callable[[str, tuple[int, int]], Node]


Signal = tuple[NDArray[np.int64], int]


def limit_round(
    key: Callable[[int, str], str],
    first: int,
    contrib: tuple[int, int],
    bet: int,
    cap: int,
    signal: tuple[Signal, Signal],
    fold: Callable[[int, tuple[int, int]], Node],
    showdown: Leaf,
) -> Node:
    """The tree of one round: ``fold(loser, contrib)`` and ``showdown(line, contrib)`` make leaves.

    ``key(actor, line)`` names a decision's table; ``signal[p]`` is player ``p``'s
    (signal array, set count) in this round.
    """

    def node(seq: str, actor: int, paid: tuple[int, int], bets: int) -> Node:
        facing = paid[1 - actor] > paid[actor]
        actions = (("f", "c", "r") if bets < cap else ("f", "c")) if facing else ("k", "b")
        children: list[Node] = []
        for a in actions:
            line = seq + a
            if a == "f":
                children.append(fold(actor, paid))
            elif a == "c":
                level = paid[1 - actor]
                called = (level, level)
                children.append(showdown(line, called))
            elif a == "k":
                if actor == first:
                    children.append(node(line, 1 - actor, paid, bets))
                else:
                    children.append(showdown(line, paid))
            else:
                top = max(paid) + bet
                new = (top, paid[1]) if actor == 0 else (paid[0], top)
                children.append(node(line, 1 - actor, new, bets + 1))
        sig, sets = signal[actor]
        return Decision(actor, key(actor, seq), actions, children, sig, sets)

    return node("", first, contrib, 0)


def fold_leaf(weights: NDArray[np.float64]) -> Callable[[int, tuple[int, int]], Node]:
    """A fold: the folder loses what it put in; ``weights`` is the joint chance of the states."""

    def leaf(loser: int, paid: tuple[int, int]) -> Node:
        sign = -1.0 if loser == 0 else 1.0
        return Terminal(sign * paid[loser] * weights)

    return leaf
