"""Deck commitments: the fast whole-deck salts are the per-position HMACs, and proofs verify."""

from __future__ import annotations

import hashlib
import hmac

from felt.cards import shuffled_deck
from felt.table.commitment import (
    DeckTree,
    _salts,
    commit_deck,
    leaf_hash,
    open_cards,
    salt_for,
    verify_opening,
)


def test_whole_deck_salts_are_the_per_position_hmacs() -> None:
    # Keys shorter than, equal to and longer than SHA-256's 64-byte block.
    for length in (0, 1, 32, 63, 64, 65, 100):
        seed = hashlib.sha256(bytes([length])).digest() * 4
        seed = seed[:length]
        expected = [hmac.digest(seed, b"salt" + i.to_bytes(2, "big"), "sha256") for i in range(60)]
        assert _salts(seed, 60) == expected
        assert [salt_for(seed, i) for i in range(60)] == expected


def _reference_root(seed: bytes, deck: tuple[int, ...]) -> str:
    """The commitment as the module docstring defines it, computed the slow, plain way."""
    level = [leaf_hash(i, c, salt_for(seed, i)) for i, c in enumerate(deck)]
    while len(level) > 1:
        pairs = [
            hashlib.sha256(b"felt-node-v1" + level[i] + level[i + 1]).digest()
            for i in range(0, len(level) - 1, 2)
        ]
        level = pairs + ([level[-1]] if len(level) % 2 else [])
    return level[0].hex()


def test_commitments_and_openings() -> None:
    for n in range(20):
        seed = hashlib.sha256(b"seed" + bytes([n])).digest()
        deck = shuffled_deck(seed)
        root, leaves = commit_deck(seed, deck)
        assert (root, leaves) == (_reference_root(seed, deck), 52)
        for opening in open_cards(seed, deck, [0, 1, 25, 51]):
            assert verify_opening(root, opening)


def test_a_kept_tree_opens_as_a_fresh_one() -> None:
    """``DeckTree`` (kept per hand by ProofTracker) gives the openings ``open_cards`` gives."""
    seed = hashlib.sha256(b"kept").digest()
    deck = shuffled_deck(seed)
    tree = DeckTree.build(seed, deck)
    assert tree.root == commit_deck(seed, deck)[0]
    for positions in ([0], [1, 2], list(range(52)), [51, 0]):
        assert tree.open(positions) == open_cards(seed, deck, positions)
    assert [o.salt for o in tree.open([7])] == [salt_for(seed, 7).hex()]


def test_the_proof_tracker_keeps_one_tree_per_hand() -> None:
    from felt.rules.config import HandSetup, SeatSetup, Variant
    from felt.rules.events import HandStarted, HoleCardsDealt, Street, StreetStarted
    from felt.table.deals import ProofTracker
    from felt.table.events import DeckCommitted

    tracker = ProofTracker(viewer=0)
    for hand in range(2):
        seed = hashlib.sha256(b"hand" + bytes([hand])).digest()
        deck = shuffled_deck(seed)
        root = commit_deck(seed, deck)[0]
        setup = HandSetup(f"h{hand}", Variant.NLHE, 1, (SeatSetup(0, 100), SeatSetup(1, 100)), deck)
        assert tracker.openings(DeckCommitted(f"h{hand}", root, 52, seed)) == []
        assert tracker.openings(HandStarted(setup)) == []
        assert tracker.tree is None  # built at the first opening
        mine = tracker.openings(HoleCardsDealt(0, deck[0:1] + deck[2:3], (0, 2)))
        tree = tracker.tree
        assert tree is not None and tree.root == root
        assert [o.card for o in mine] == [deck[0], deck[2]]
        assert tracker.openings(HoleCardsDealt(1, deck[1:2] + deck[3:4], (1, 3))) == []
        flop = tracker.openings(StreetStarted(Street.FLOP, deck[4:7], (4, 5, 6)))
        assert tracker.tree is tree  # the same tree, not rebuilt
        assert all(verify_opening(root, o) for o in mine + flop)
