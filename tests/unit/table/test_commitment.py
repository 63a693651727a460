"""Deck commitments: the fast whole-deck salts are the per-position HMACs, and proofs verify."""

from __future__ import annotations

import hashlib
import hmac

from felt.core.cards import shuffled_deck
from felt.core.table.commitment import (
    DeckTree,
    _salts,
    commit_deck,
    deck_tree,
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
    """``deck_tree`` (each hand's tree, built once) opens as a tree built afresh."""
    seed = hashlib.sha256(b"kept").digest()
    deck = shuffled_deck(seed)
    fresh = DeckTree.build(seed, deck)
    assert fresh.root == commit_deck(seed, deck)[0] == _reference_root(seed, deck)
    for positions in ([0], [1, 2], list(range(52)), [51, 0]):
        assert open_cards(seed, deck, positions) == fresh.open(positions)
    assert [o.salt for o in fresh.open([7])] == [salt_for(seed, 7).hex()]


def test_a_hand_builds_its_tree_once_for_all_viewers() -> None:
    from felt.core.rules.config import HandSetup, SeatSetup, Variant
    from felt.core.rules.events import HandStarted, HoleCardsDealt, Street, StreetStarted
    from felt.core.table.deals import ProofTracker
    from felt.core.table.events import AnyEvent, DeckCommitted

    trackers = [ProofTracker(viewer=0), ProofTracker(viewer=1), ProofTracker(viewer=None)]
    for hand in range(2):
        seed = hashlib.sha256(b"hand" + bytes([hand])).digest()
        deck = shuffled_deck(seed)
        built, reused = deck_tree.cache_info().misses, deck_tree.cache_info().hits
        root = commit_deck(seed, deck)[0]
        setup = HandSetup(f"h{hand}", Variant.NLHE, 1, (SeatSetup(0, 100), SeatSetup(1, 100)), deck)
        events: list[AnyEvent] = [
            DeckCommitted(f"h{hand}", root, 52, seed),
            HandStarted(setup),
            HoleCardsDealt(0, deck[0:1] + deck[2:3], (0, 2)),
            HoleCardsDealt(1, deck[1:2] + deck[3:4], (1, 3)),
            StreetStarted(Street.FLOP, deck[4:7], (4, 5, 6)),
        ]
        seen = [[o for e in events for o in t.openings(e)] for t in trackers]
        assert [[o.card for o in s] for s in seen] == [
            [deck[0], deck[2], *deck[4:7]],
            [deck[1], deck[3], *deck[4:7]],
            list(deck[4:7]),
        ]
        assert all(verify_opening(root, o) for s in seen for o in s)
        # One tree, built for the commitment; the five openings (two per seat, the
        # spectator's flop) all reuse it.
        assert deck_tree.cache_info().misses == built + 1
        assert deck_tree.cache_info().hits == reused + 5
