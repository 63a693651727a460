"""Turn a solved game into the compact table the runtime reads (``felt.players.bots.floor``).

Each decision key becomes ``{"actions": "fcr", "p": base64(uint8 per set and action)}``;
probabilities are quantised to 1/255 (the runtime renormalises a row). ``reference``
holds frequencies the floor itself plays, which hard compares an opponent's public record
against before it deviates.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import numpy as np

from felt_dev.solve.cfr import Decision, Node, Reveal, Solver, Terminal


def quantise(strategy: np.ndarray) -> bytes:
    """Rows of probabilities as bytes, each row summing to about 255."""
    return bytes(np.clip(np.rint(strategy * 255.0), 0, 255).astype(np.uint8).ravel().tolist())


def table_json(solver: Solver, meta: dict[str, object]) -> str:
    """The JSON text of a solved game's average strategy."""
    actions: dict[str, str] = {}
    for node in _nodes(solver.root):
        actions[node.key] = "".join(node.actions)
    nodes = {
        key: {"actions": acts, "p": base64.b64encode(quantise(solver.average(key))).decode()}
        for key, acts in sorted(actions.items())
    }
    return json.dumps({"meta": meta, "nodes": nodes}, separators=(",", ":"), sort_keys=True)


def _reached(
    solver: Solver, chance: np.ndarray
) -> Iterator[tuple[Decision, np.ndarray, np.ndarray]]:
    """Every decision of the tree with its acting player's reach weights and the averages.

    The weight of each private state is its own reach times the chance-weighted reach of
    the other player's states; the statistics below are sums over these.
    """

    def walk(
        node: Node, r0: np.ndarray, r1: np.ndarray
    ) -> Iterator[tuple[Decision, np.ndarray, np.ndarray]]:
        if isinstance(node, Terminal):
            return
        if isinstance(node, Reveal):
            for m0, m1, child in node.children:
                yield from walk(child, r0 * m0, r1 * m1)
            return
        sigma = solver.average(node.key)[node.signal]
        p = node.player
        yield node, (r0 * (chance @ r1) if p == 0 else r1 * (chance.T @ r0)), sigma
        for a, child in enumerate(node.children):
            if p == 0:
                yield from walk(child, r0 * sigma[:, a], r1)
            else:
                yield from walk(child, r0, r1 * sigma[:, a])

    return walk(solver.root, np.ones(solver.sizes[0]), np.ones(solver.sizes[1]))


def frequencies(solver: Solver, chance: np.ndarray, classify: object) -> dict[str, float]:
    """How often the averages fold, bet or call by spot, weighted by how often each is reached.

    ``classify(key, action, facing)`` names the statistic an action counts towards
    (or None); the result maps each name to its share of the decisions it was
    counted over.
    """
    hits: dict[str, float] = {}
    seen: dict[str, float] = {}
    for node, w, sigma in _reached(solver, chance):
        total = float(w.sum())
        facing = "f" in node.actions
        counted: set[str] = set()
        for a, name in enumerate(node.actions):
            stat = classify(node.key, name, facing)  # type: ignore[operator]
            if stat is None:
                continue
            hits[stat] = hits.get(stat, 0.0) + float((w * sigma[:, a]).sum())
            counted.add(stat)
        for stat in counted:  # each decision counts once towards each statistic it feeds
            seen[stat] = seen.get(stat, 0.0) + total
    return {k: round(hits.get(k, 0.0) / v, 4) for k, v in sorted(seen.items()) if v > 0}


def share_in(
    solver: Solver, chance: np.ndarray, counts: object, states: np.ndarray
) -> float | None:
    """Of the actions ``counts(key, action)`` selects, the reach-weighted share taken in ``states``.

    ``states`` is a boolean mask over the acting player's private states (both players
    share one state space here). E.g. in Draw, of the floor's bets and raises after the
    draw, the share made with at most one pair: what an opponent's shown bets are
    compared against (``felt.players.bots.floor_play``). None if nothing is selected.
    """
    mask = np.asarray(states, dtype=np.float64)
    hits = 0.0
    total = 0.0
    for node, w, sigma in _reached(solver, chance):
        for a, name in enumerate(node.actions):
            if counts(node.key, name):  # type: ignore[operator]
                taken = w * sigma[:, a]
                total += float(taken.sum())
                hits += float((taken * mask).sum())
    return round(hits / total, 4) if total > 0 else None


def _nodes(node: Node) -> list[Decision]:
    if isinstance(node, Terminal):
        return []
    if isinstance(node, Reveal):
        return [d for _, _, c in node.children for d in _nodes(c)]
    return [node, *(d for c in node.children for d in _nodes(c))]
