"""Vectorised CFR+ for two-player zero-sum games with a small public tree.

Why this shape: the abstractions we solve (Kuhn poker, heads-up Draw by card
buckets, Hold'em preflop by hand class) have few public betting sequences and
at most a few hundred private states per player, so each public node carries
one reach vector per player over private states and every terminal is a
matrix-vector product with numpy. One iteration walks the public tree once
per player (alternating updates, as CFR+ prescribes), with regret matching+
and linearly weighted averaging.

A player's private state ``x`` is mapped at each decision node to an
information-set index by ``signal`` (in Draw the first round sees only the
dealt bucket, the second the dealt and final buckets), so one private-state
space serves every round. Decision nodes that share a ``key`` share their
regret tables (their signal sets must be disjoint, e.g. the same betting
line after different public draw counts of the player itself).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

Vec = NDArray[np.float64]


@dataclass
class Terminal:
    """A leaf: ``payoff`` is player 0's payoff matrix, chance weights included."""

    payoff: Vec


@dataclass
class Reveal:
    """Public chance (a draw count seen by both): each child keeps the states its masks allow."""

    children: list[tuple[Vec, Vec, Node]]


@dataclass
class Decision:
    """``player`` picks one of ``actions``; ``signal[x]`` is the information set of state ``x``."""

    player: int
    key: str
    actions: tuple[str, ...]
    children: list[Node]
    signal: NDArray[np.int64]
    sets: int


Node = Terminal | Reveal | Decision


@dataclass
class _Table:
    regret: Vec
    average: Vec


@dataclass
class Solver:
    """CFR+ state for one game: regrets and average strategies per decision key."""

    root: Node
    sizes: tuple[int, int]
    tables: dict[str, _Table] = field(default_factory=dict)
    iterations: int = 0

    def __post_init__(self) -> None:
        for node in _decisions(self.root):
            table = self.tables.get(node.key)
            shape = (node.sets, len(node.actions))
            if table is None:
                self.tables[node.key] = _Table(np.zeros(shape), np.zeros(shape))
            elif table.regret.shape != shape:
                raise ValueError(f"decision key {node.key!r} reused with another shape")

    def run(self, iterations: int) -> None:
        """Run ``iterations`` CFR+ iterations (each updates both players in turn)."""
        for _ in range(iterations):
            self.iterations += 1
            for player in (0, 1):
                ones = (np.ones(self.sizes[0]), np.ones(self.sizes[1]))
                self._walk(self.root, ones, player)

    def average(self, key: str) -> Vec:
        """The average strategy of a decision key, one row per information set."""
        avg = self.tables[key].average
        total = avg.sum(axis=1, keepdims=True)
        n = avg.shape[1]
        return np.where(total > 0, avg / np.where(total > 0, total, 1.0), 1.0 / n)

    def value(self) -> float:
        """Player 0's expected payoff when both play their average strategies."""
        v0, _ = _evaluate(self.root, (np.ones(self.sizes[0]), np.ones(self.sizes[1])), self)
        return float(v0.sum())

    def exploitability(self) -> float:
        """Mean of both best responses' gains against the averages (0 at an equilibrium)."""
        ones = (np.ones(self.sizes[0]), np.ones(self.sizes[1]))
        br0 = float(_best_response(self.root, ones, 0, self)[0].sum())
        br1 = float(_best_response(self.root, ones, 1, self)[1].sum())
        return (br0 + br1) / 2.0

    def _current(self, node: Decision) -> Vec:
        regret = self.tables[node.key].regret
        positive = regret.sum(axis=1, keepdims=True)
        n = len(node.actions)
        return np.where(positive > 0, regret / np.where(positive > 0, positive, 1.0), 1.0 / n)

    def _walk(self, node: Node, reach: tuple[Vec, Vec], player: int) -> tuple[Vec, Vec]:
        if isinstance(node, Terminal):
            return node.payoff @ reach[1], -(node.payoff.T @ reach[0])
        if isinstance(node, Reveal):
            out0 = np.zeros(self.sizes[0])
            out1 = np.zeros(self.sizes[1])
            for m0, m1, child in node.children:
                v0, v1 = self._walk(child, (reach[0] * m0, reach[1] * m1), player)
                out0 += v0 * m0
                out1 += v1 * m1
            return out0, out1
        sigma = self._current(node)[node.signal]  # (states, actions)
        p = node.player
        values: list[tuple[Vec, Vec]] = []
        for a, child in enumerate(node.children):
            r = list(reach)
            r[p] = reach[p] * sigma[:, a]
            values.append(self._walk(child, (r[0], r[1]), player))
        mine = np.stack([v[p] for v in values], axis=1)
        other = sum(v[1 - p] for v in values)
        node_value = (mine * sigma).sum(axis=1)
        if p == player:
            table = self.tables[node.key]
            gain = _grouped(node, mine - node_value[:, None])
            table.regret = np.maximum(table.regret + gain, 0.0)
            table.average += self.iterations * _grouped(node, reach[p][:, None] * sigma)
        out = [np.zeros(0), np.zeros(0)]
        out[p] = node_value
        out[1 - p] = np.asarray(other)
        return out[0], out[1]


def _grouped(node: Decision, rows: Vec) -> Vec:
    """Sum rows per information set (a matrix product: far faster than ``np.add.at``)."""
    if node.sets == len(node.signal):
        return rows
    onehot = np.zeros((node.sets, len(node.signal)))
    onehot[node.signal, np.arange(len(node.signal))] = 1.0
    return onehot @ rows


def _decisions(node: Node) -> list[Decision]:
    if isinstance(node, Terminal):
        return []
    if isinstance(node, Reveal):
        return [d for _, _, child in node.children for d in _decisions(child)]
    return [node, *(d for child in node.children for d in _decisions(child))]


def _evaluate(node: Node, reach: tuple[Vec, Vec], solver: Solver) -> tuple[Vec, Vec]:
    """Counterfactual values of both players under the average strategies."""
    if isinstance(node, Terminal):
        return node.payoff @ reach[1], -(node.payoff.T @ reach[0])
    if isinstance(node, Reveal):
        return _reveal(node, reach, solver, lambda c, r: _evaluate(c, r, solver))
    sigma = solver.average(node.key)[node.signal]
    p = node.player
    out0: Vec = np.zeros(solver.sizes[0])
    out1: Vec = np.zeros(solver.sizes[1])
    for a, child in enumerate(node.children):
        r = list(reach)
        r[p] = reach[p] * sigma[:, a]
        v0, v1 = _evaluate(child, (r[0], r[1]), solver)
        if p == 0:
            out0 = out0 + v0 * sigma[:, a]
            out1 = out1 + v1
        else:
            out0 = out0 + v0
            out1 = out1 + v1 * sigma[:, a]
    return out0, out1


def _best_response(node: Node, reach: tuple[Vec, Vec], br: int, solver: Solver) -> tuple[Vec, Vec]:
    """Values when player ``br`` best-responds (per information set) to the other's average."""
    if isinstance(node, Terminal):
        return node.payoff @ reach[1], -(node.payoff.T @ reach[0])
    if isinstance(node, Reveal):
        return _reveal(node, reach, solver, lambda c, r: _best_response(c, r, br, solver))
    p = node.player
    if p != br:
        sigma = solver.average(node.key)[node.signal]
        outs = [np.zeros(solver.sizes[0]), np.zeros(solver.sizes[1])]
        for a, child in enumerate(node.children):
            r = list(reach)
            r[p] = reach[p] * sigma[:, a]
            v = _best_response(child, (r[0], r[1]), br, solver)
            outs[p] = outs[p] + v[p] * sigma[:, a]
            outs[1 - p] = outs[1 - p] + v[1 - p]
        return outs[0], outs[1]
    values = [_best_response(child, reach, br, solver) for child in node.children]
    mine = np.stack([v[p] for v in values], axis=1)
    per_set = _grouped(node, mine)
    choice = per_set.argmax(axis=1)[node.signal]
    outs = [np.zeros(0), np.zeros(0)]
    outs[p] = mine[np.arange(len(choice)), choice]
    outs[1 - p] = np.zeros(solver.sizes[1 - p])
    return outs[0], outs[1]


def _reveal(node: Reveal, reach: tuple[Vec, Vec], solver: Solver, walk: object) -> tuple[Vec, Vec]:
    out0 = np.zeros(solver.sizes[0])
    out1 = np.zeros(solver.sizes[1])
    for m0, m1, child in node.children:
        v0, v1 = walk(child, (reach[0] * m0, reach[1] * m1))  # type: ignore[operator]
        out0 += v0 * m0
        out1 += v1 * m1
    return out0, out1


def signals(states: int) -> NDArray[np.int64]:
    """The identity signal: every private state is its own information set."""
    return np.arange(states, dtype=np.int64)


def coarse(mapping: Sequence[int]) -> tuple[NDArray[np.int64], int]:
    """A signal that lumps states together: ``mapping[x]`` is the set of state ``x``."""
    arr = np.asarray(mapping, dtype=np.int64)
    return arr, int(arr.max()) + 1
