"""Verifiable deals: a Merkle commitment to the whole deck order, opened card by card.

Before the first card of a hand the server publishes the root of a Merkle
tree whose leaf ``i`` is ``SHA-256("felt-card-v1" | i | card | salt_i)``. The
per-position salts derive from the hand's secret seed, so publishing the root
reveals nothing about the cards, while each card a seat receives (and each
board or shown card, publicly) comes with its salt and the sibling hashes up
to the root. After the hand a player checks that every card they saw was
fixed before the first action; unshown cards stay hidden because their salts
are never published.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass

from felt.core.cards import Card

LEAF_TAG = b"felt-card-v1"
NODE_TAG = b"felt-node-v1"


@dataclass(frozen=True, slots=True)
class CardOpening:
    """Everything needed to check that ``card`` sat at ``position`` of a committed deck.

    ``proof`` lists sibling hashes from the leaf up; each is paired with
    whether the sibling is on the right.
    """

    position: int
    card: Card
    salt: str
    proof: tuple[tuple[str, bool], ...]


def salt_for(seed: bytes, position: int) -> bytes:
    """The secret salt of one deck position (HMAC of the hand's seed)."""
    return hmac.digest(seed, b"salt" + position.to_bytes(2, "big"), "sha256")


def _salts(seed: bytes, count: int) -> list[bytes]:
    """``salt_for`` of positions ``0..count-1`` for a whole deck.

    The HMAC is keyed once per seed and copied for each position (``hmac``'s
    own ``copy``), instead of keying a new HMAC every time.
    """
    keyed = hmac.new(seed, digestmod="sha256")
    salts = []
    for position in range(count):
        h = keyed.copy()
        h.update(b"salt" + position.to_bytes(2, "big"))
        salts.append(h.digest())
    return salts


def leaf_hash(position: int, card: Card, salt: bytes) -> bytes:
    return hashlib.sha256(LEAF_TAG + bytes((position, card)) + salt).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(NODE_TAG + left + right).digest()


def _levels(leaves: list[bytes]) -> list[list[bytes]]:
    """All tree levels, leaves first; an odd node out is promoted unchanged."""
    levels = [leaves]
    while len(levels[-1]) > 1:
        current = levels[-1]
        nxt = [  # _node, inlined
            hashlib.sha256(NODE_TAG + current[i] + current[i + 1]).digest()
            for i in range(0, len(current) - 1, 2)
        ]
        if len(current) % 2:
            nxt.append(current[-1])
        levels.append(nxt)
    return levels


@dataclass(frozen=True, slots=True)
class DeckTree:
    """The Merkle tree of one hand's deck, built once and opened as often as needed.

    Building it costs a hundred-odd hashes, and a hand needs it many times:
    its commitment, then openings for every viewer (hole cards, each street,
    the showdown). :func:`deck_tree` builds each hand's tree once for all of them.
    """

    deck: tuple[Card, ...]
    salts: tuple[bytes, ...]
    levels: tuple[tuple[bytes, ...], ...]

    @classmethod
    def build(cls, seed: bytes, deck: Sequence[Card]) -> DeckTree:
        salts = _salts(seed, len(deck))
        leaves = [
            hashlib.sha256(LEAF_TAG + bytes((i, c)) + salt).digest()  # leaf_hash, inlined
            for i, (c, salt) in enumerate(zip(deck, salts, strict=True))
        ]
        return cls(tuple(deck), tuple(salts), tuple(map(tuple, _levels(leaves))))

    @property
    def root(self) -> str:
        """The commitment: the root's hash, in hex."""
        return self.levels[-1][0].hex()

    def open(self, positions: Sequence[int]) -> list[CardOpening]:
        """Openings for the cards at ``positions`` (for one seat, or public ones)."""
        openings = []
        for position in positions:
            proof: list[tuple[str, bool]] = []
            index = position
            for level in self.levels[:-1]:
                sibling = index ^ 1
                if sibling < len(level):
                    proof.append((level[sibling].hex(), sibling > index))
                index //= 2
            salt = self.salts[position].hex()
            openings.append(CardOpening(position, self.deck[position], salt, tuple(proof)))
        return openings


@functools.lru_cache(maxsize=256)
def deck_tree(seed: bytes, deck: tuple[Card, ...]) -> DeckTree:
    """The tree of a hand's deck, built once for its commitment and every viewer's openings.

    The last few hundred hands' trees are kept (a few KB each), enough for
    every table a server runs to have its current hand's.
    """
    return DeckTree.build(seed, deck)


def commit_deck(seed: bytes, deck: Sequence[Card]) -> tuple[str, int]:
    """The hex Merkle root committing to ``deck`` (and how many leaves it has)."""
    return deck_tree(seed, tuple(deck)).root, len(deck)


def open_cards(seed: bytes, deck: Sequence[Card], positions: Sequence[int]) -> list[CardOpening]:
    """Openings for the cards at ``positions`` (for one seat, or public ones)."""
    return deck_tree(seed, tuple(deck)).open(positions)


def proof_shape(position: int, leaf_count: int) -> tuple[bool, ...]:
    """Whether each sibling on the way up from leaf ``position`` of a ``leaf_count``-leaf
    tree is on the right (:meth:`DeckTree.open`'s ``proof`` without the hashes).

    A position has exactly one path: checked against it, an opening is bound to the leaf
    slot of its position. Unchecked, a server could commit to a tree with several leaves
    per position (or more leaves than the deck) and open whichever card suits it after
    the players have acted, each proof hashing up to the root it published.
    """
    shape: list[bool] = []
    index, width = position, leaf_count
    while width > 1:
        sibling = index ^ 1
        if sibling < width:
            shape.append(sibling > index)
        index //= 2
        width = (width + 1) // 2
    return tuple(shape)


def verify_opening(root: str, opening: CardOpening, leaf_count: int | None = None) -> bool:
    """True when ``opening`` proves its card sat at its position under ``root`` (and, given
    the tree's ``leaf_count``, by the one path its position has: ``proof_shape``)."""
    if leaf_count is not None and not (
        0 <= opening.position < leaf_count
        and tuple(right for _, right in opening.proof) == proof_shape(opening.position, leaf_count)
    ):
        return False
    try:
        node = leaf_hash(opening.position, opening.card, bytes.fromhex(opening.salt))
        for sibling_hex, sibling_right in opening.proof:
            sibling = bytes.fromhex(sibling_hex)
            node = _node(node, sibling) if sibling_right else _node(sibling, node)
    except ValueError:
        return False
    return hmac.compare_digest(node.hex(), root)
