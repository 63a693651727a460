"""Deck commitments: the fast whole-deck salts are the per-position HMACs, and proofs verify."""

from __future__ import annotations

import hashlib
import hmac

from felt.cards import shuffled_deck
from felt.table.commitment import (
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
