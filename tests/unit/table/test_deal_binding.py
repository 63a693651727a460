"""A server that cheats the deck commitment is caught by ``felt.core.table.deals.verify_hand``.

The commitment proves the cards were fixed before play only if each deck position can
open as one card: these servers publish a root and then choose a card once the players
have acted, either from a tree with two leaves per position (each proof still hashes up
to the root) or by opening whichever undealt position holds the card they want.
"""

from __future__ import annotations

import hashlib

from felt.core.cards import shuffled_deck
from felt.core.rules.events import HoleCardsDealt, Street, StreetStarted
from felt.core.table.commitment import (
    CardOpening,
    DeckTree,
    _levels,
    commit_deck,
    leaf_hash,
    open_cards,
    proof_shape,
    salt_for,
    verify_opening,
)
from felt.core.table.deals import verify_hand
from felt.core.table.events import AnyEvent, DeckCommitted

SEED = hashlib.sha256(b"binding").digest()
DECK = shuffled_deck(SEED)

Items = list[tuple[AnyEvent, list[CardOpening]]]


def honest_hand(flop: tuple[int, ...] = (4, 5, 6)) -> Items:
    """Seat 0's view of a heads-up deal and its flop, opened honestly at ``flop``."""
    root, leaves = commit_deck(SEED, DECK)
    hidden = None
    return [
        (DeckCommitted("h", root, leaves, b""), []),
        (HoleCardsDealt(0, (DECK[0], DECK[2]), (0, 2)), open_cards(SEED, DECK, [0, 2])),
        (HoleCardsDealt(1, (hidden, hidden), (1, 3)), []),
        (
            StreetStarted(Street.FLOP, tuple(DECK[p] for p in flop), flop),
            open_cards(SEED, DECK, list(flop)),
        ),
    ]


def test_an_honest_hand_verifies() -> None:
    check = verify_hand(honest_hand())
    assert check.ok, check.problems
    assert check.verified == 5


def test_the_proof_shape_is_the_trees() -> None:
    for leaves in (1, 2, 3, 5, 13, 32, 33, 52):
        tree = DeckTree.build(SEED, DECK[:leaves])
        for position in range(leaves):
            (opening,) = tree.open([position])
            assert tuple(r for _, r in opening.proof) == proof_shape(position, leaves)


def test_a_tree_with_two_leaves_per_position_is_caught() -> None:
    """Leaves 2p and 2p+1 both claim position p (with different cards): the server may
    open either. Unbound to the position's path, each opening verified."""
    other = tuple(DECK[(i + 7) % 52] for i in range(52))  # a second card for every position
    leaves = []
    for position in range(52):
        salt = salt_for(SEED, position)
        leaves += [
            leaf_hash(position, DECK[position], salt),
            leaf_hash(position, other[position], salt),
        ]
    levels = _levels(leaves)
    root = levels[-1][0].hex()

    def opening(position: int, pick: int) -> CardOpening:
        index = 2 * position + pick
        proof: list[tuple[str, bool]] = []
        for level in levels[:-1]:
            sibling = index ^ 1
            if sibling < len(level):
                proof.append((level[sibling].hex(), sibling > index))
            index //= 2
        card = (DECK, other)[pick][position]
        return CardOpening(position, card, salt_for(SEED, position).hex(), tuple(proof))

    chosen = opening(4, 1)  # the "other" card at position 4, picked after the betting
    assert verify_opening(root, chosen)  # what the check took as proof
    assert not verify_opening(root, chosen, 52)
    assert not verify_opening(root, chosen, 104)  # position 4 has one path: leaf 4's
    items: Items = [
        (DeckCommitted("h", root, 52, b""), []),
        (StreetStarted(Street.FLOP, (chosen.card,), (4,)), [chosen]),
    ]
    assert not verify_hand(items).ok


def test_a_board_card_opened_off_the_decks_top_is_caught() -> None:
    """Every proof is genuine, but the flop is opened at positions the server chose (it
    knows every card of the deck): the next positions after the hole cards are 4, 5, 6."""
    check = verify_hand(honest_hand(flop=(4, 5, 30)))
    assert not check.ok
    assert any("next ones are 4" in p for p in check.problems), check.problems


def test_a_second_commitment_after_the_deal_is_caught() -> None:
    items = honest_hand()
    root, leaves = commit_deck(hashlib.sha256(b"another").digest(), DECK)
    items.insert(3, (DeckCommitted("h", root, leaves, b""), []))
    assert not verify_hand(items).ok
