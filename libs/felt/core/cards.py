"""Cards as small integers, and decks shuffled from an injected random source.

A card is an ``int`` in ``0..51``: ``rank * 4 + suit`` with ranks ``0..12`` for
2..A and suits ``0..3`` for clubs, diamonds, hearts, spades. This is the
encoding of the PH evaluator family, so native evaluators and test oracles can
take Felt's cards without translation. Text form is rank then suit: ``"Ah"``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

RANKS = "23456789TJQKA"
SUITS = "cdhs"
DECK_SIZE = 52

Card = int


class CardError(ValueError):
    """Raised for text that does not name a card."""


def card(text: str) -> Card:
    """Parse one card such as ``"Ah"`` or ``"tc"`` (rank case-insensitive)."""
    if len(text) != 2:
        raise CardError(f"{text!r} is not a card: expected rank then suit, like 'Ah'")
    rank = RANKS.find(text[0].upper())
    suit = SUITS.find(text[1].lower())
    if rank < 0 or suit < 0:
        raise CardError(f"{text!r} is not a card: ranks are {RANKS}, suits are {SUITS}")
    return rank * 4 + suit


def cards(text: str) -> tuple[Card, ...]:
    """Parse concatenated or space-separated cards: ``"AhKd"`` or ``"Ah Kd"``."""
    compact = "".join(text.split())
    if len(compact) % 2:
        raise CardError(f"{text!r} is not a list of cards")
    return tuple(card(compact[i : i + 2]) for i in range(0, len(compact), 2))


def card_str(c: Card) -> str:
    """Text form of a card: ``card_str(51) == "As"``."""
    if not 0 <= c < DECK_SIZE:
        raise CardError(f"{c} is not a card number (0..51)")
    return RANKS[c >> 2] + SUITS[c & 3]


def cards_str(cs: Iterable[Card]) -> str:
    """Text form of several cards, concatenated: ``"AhKd"``."""
    return "".join(card_str(c) for c in cs)


def rank_of(c: Card) -> int:
    """Rank index 0..12 (2..A)."""
    return c >> 2


def suit_of(c: Card) -> int:
    """Suit index 0..3 (c, d, h, s)."""
    return c & 3


def full_deck() -> tuple[Card, ...]:
    """The 52 cards in a fixed order."""
    return tuple(range(DECK_SIZE))


def shuffled_deck(seed: bytes) -> tuple[Card, ...]:
    """The deck order determined by ``seed``.

    The seed (32 secure random bytes in production) is expanded with SHA-256
    into a Fisher-Yates shuffle, so the order is uniformly distributed and the
    same seed always yields the same deck, which is what replay needs.
    """
    deck = list(range(DECK_SIZE))
    stream = _ByteStream(seed)
    for i in range(DECK_SIZE - 1, 0, -1):
        j = stream.below(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


class Shuffler(Protocol):
    """What :func:`deck_from_rng` needs of its source: a ``random.Random``, injected."""

    def shuffle(self, x: list[Any], /) -> None: ...


def deck_from_rng(rng: Shuffler) -> tuple[Card, ...]:
    """A deck shuffled by an injected ``random.Random`` (tests, simulations)."""
    deck = list(range(DECK_SIZE))
    rng.shuffle(deck)
    return tuple(deck)


def validate_deck(deck: Sequence[Card]) -> None:
    """Raise ``CardError`` unless ``deck`` holds each of the 52 cards once."""
    if len(deck) != DECK_SIZE or set(deck) != set(range(DECK_SIZE)):
        raise CardError("a deck must hold each of the 52 cards exactly once")


class _ByteStream:
    """Unbiased integers from a SHA-256 counter-mode stream over a seed."""

    def __init__(self, seed: bytes) -> None:
        self._seed = seed
        self._counter = 0
        self._buffer = b""

    def _take(self, n: int) -> bytes:
        while len(self._buffer) < n:
            block = hashlib.sha256(self._seed + self._counter.to_bytes(8, "big")).digest()
            self._buffer += block
            self._counter += 1
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out

    def below(self, bound: int) -> int:
        """Uniform integer in ``[0, bound)`` by rejection sampling on 32-bit words."""
        limit = (1 << 32) - ((1 << 32) % bound)
        while True:
            value = int.from_bytes(self._take(4), "big")
            if value < limit:
                return value % bound
