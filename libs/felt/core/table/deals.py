"""Which card proofs a viewer receives with each event, and how a player checks a hand.

The server side (:class:`ProofTracker`) follows the unredacted stream and,
for each event, opens exactly the cards that event shows the viewer: its own
hole and drawn cards, board cards, and cards shown at showdown. The player
side (:func:`verify_hand`) checks every received card against the hand's
commitment root.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from felt.core.cards import Card, card_str
from felt.core.rules.events import (
    CardsDrawn,
    CardsShown,
    HandStarted,
    HoleCardsDealt,
    StreetStarted,
)
from felt.core.table.commitment import CardOpening, open_cards, verify_opening
from felt.core.table.events import AnyEvent, DeckCommitted


@dataclass
class ProofTracker:
    """Follows one table's unredacted events to open cards for one viewer."""

    viewer: int | None
    seed: bytes = b""
    deck: tuple[Card, ...] = ()
    positions: dict[Card, int] = field(default_factory=dict)

    def openings(self, event: AnyEvent) -> list[CardOpening]:
        """Proofs for the cards ``event`` reveals to the viewer (call for every event, in order)."""
        if isinstance(event, DeckCommitted):
            self.seed, self.deck, self.positions = event.seed, (), {}
            return []
        if isinstance(event, HandStarted):
            self.deck = event.setup.deck
            return []
        if not self.seed or not self.deck:
            return []
        reveal: Sequence[int] = ()
        if isinstance(event, HoleCardsDealt):
            self._remember(event.cards, event.deck_positions)
            if event.seat == self.viewer:
                reveal = event.deck_positions
        elif isinstance(event, CardsDrawn):
            self._remember(event.drawn, event.deck_positions)
            if event.seat == self.viewer:
                reveal = event.deck_positions
        elif isinstance(event, StreetStarted):
            reveal = event.deck_positions
        elif isinstance(event, CardsShown) and event.seat != self.viewer:
            reveal = [self.positions[c] for c in event.cards if c in self.positions]
        return open_cards(self.seed, self.deck, reveal) if reveal else []

    def _remember(self, cards: Iterable[Card | None], positions: Iterable[int]) -> None:
        for c, p in zip(cards, positions, strict=True):
            if c is not None:
                self.positions[c] = p


@dataclass(frozen=True, slots=True)
class HandCheck:
    """The outcome of checking one hand's cards against its commitment."""

    root: str
    verified: int
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return bool(self.root) and not self.problems


def verify_hand(items: Iterable[tuple[AnyEvent, Sequence[CardOpening]]]) -> HandCheck:
    """Check every card a viewer saw in a hand against the commitment made before it.

    ``items`` are the hand's events as the viewer received them, each with its
    card proofs. Every visible card must come with a proof for its deck
    position that verifies under the root of the ``DeckCommitted`` that
    preceded the first card, by the one path its position has in a tree of
    the committed ``leaf_count`` (``proof_shape``), and no position may hold
    two different cards. A card dealt once play has begun (a board card, a
    draw) must take the next positions of the deck (``deck_positions``,
    hidden cards' too, say which are dealt), as the rules deal them: were the
    server free to pick which position to open, it could pick the card.
    """
    root = ""
    leaf_count = 0
    verified = 0
    problems: list[str] = []
    seen: dict[int, Card] = {}
    dealt: set[int] = set()
    for event, proofs in items:
        if isinstance(event, DeckCommitted):
            if root and dealt:
                problems.append("the deck was committed again after cards were dealt")
            root, leaf_count = event.root, event.leaf_count
            continue
        shown = _visible_cards(event)
        if shown and not root:
            problems.append("cards were dealt before any deck commitment")
            continue
        problems.extend(_dealing_problems(event, dealt))
        by_position = {p.position: p for p in proofs}
        for card, position in shown:
            proof = by_position.get(position) if position is not None else None
            if proof is None:
                proof = next((p for p in proofs if p.card == card), None)
            name = card_str(card)
            if proof is None and position is None and card in seen.values():
                # A seat showing cards the viewer already verified (its own, or cards
                # shown before): no new proof is sent, and none is needed.
                continue
            if proof is None:
                problems.append(f"{name}: no proof received")
                continue
            if proof.card != card or (position is not None and proof.position != position):
                problems.append(f"{name}: the proof is for another card or position")
                continue
            if not verify_opening(root, proof, leaf_count):
                problems.append(f"{name} at position {proof.position}: proof does not match root")
                continue
            if seen.setdefault(proof.position, card) != card:
                problems.append(f"position {proof.position} opened as two different cards")
                continue
            verified += 1
    return HandCheck(root, verified, tuple(problems))


def _dealing_problems(event: AnyEvent, dealt: set[int]) -> list[str]:
    """What is wrong with the deck positions ``event`` deals (``dealt``: those dealt before
    in the hand, updated): one dealt twice, or a card dealt in play off the deck's top."""
    if isinstance(event, HoleCardsDealt):
        positions, in_play = event.deck_positions, False
    elif isinstance(event, CardsDrawn | StreetStarted):
        positions, in_play = event.deck_positions, True
    else:
        return []
    problems = [f"position {p} was dealt twice" for p in positions if p in dealt]
    top = max(dealt) + 1 if dealt else 0
    if in_play and positions and tuple(positions) != tuple(range(top, top + len(positions))):
        problems.append(
            f"positions {list(positions)} were dealt where the deck's next ones are {top} on"
        )
    dealt.update(positions)
    return problems


def _visible_cards(event: AnyEvent) -> list[tuple[Card, int | None]]:
    if isinstance(event, HoleCardsDealt):
        return [
            (c, p) for c, p in zip(event.cards, event.deck_positions, strict=True) if c is not None
        ]
    if isinstance(event, CardsDrawn):
        return [
            (c, p) for c, p in zip(event.drawn, event.deck_positions, strict=True) if c is not None
        ]
    if isinstance(event, StreetStarted):
        return list(zip(event.cards, event.deck_positions, strict=True))
    if isinstance(event, CardsShown):
        return [(c, None) for c in event.cards]
    return []
