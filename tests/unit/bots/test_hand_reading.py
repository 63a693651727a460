"""The hand-reading helpers the bots decide on: draws, discards, made hands, textures."""

from __future__ import annotations

import random

from felt.core.cards import cards
from felt.core.rules.events import Street
from felt.core.rules.legal import LegalActions
from felt.players.bots.base import discard
from felt.players.bots.drawhand import analyse, candidate_keeps, simple_keep, standard_keep
from felt.players.bots.holdem import Made, draws, made_hand, preflop_percentile, texture


def keep_of(hand: str, keeper: object) -> set[int]:
    assert callable(keeper)
    return set(keeper(cards(hand)))


def test_standard_discards() -> None:
    assert keep_of("AhAd7c4s2h", standard_keep) == set(cards("AhAd"))  # pair: draw 3
    assert keep_of("KhKd7c7s2h", standard_keep) == set(cards("KhKd7c7s"))  # two pair: draw 1
    assert keep_of("9h9d9c7s2h", standard_keep) == set(cards("9h9d9c"))  # trips: draw 2
    assert keep_of("AhJh7h4h2c", standard_keep) == set(cards("AhJh7h4h"))  # four-flush: draw 1
    assert keep_of("9h8d7c6sKh", standard_keep) == set(cards("9h8d7c6s"))  # open-ender: draw 1
    assert keep_of("9h8h7h6h5h", standard_keep) == set(cards("9h8h7h6h5h"))  # pat
    assert keep_of("Ts9d8c7s6h", standard_keep) == set(cards("Ts9d8c7s6h"))  # pat straight
    assert keep_of("AhKd8c5s2h", standard_keep) == set(cards("AhKd"))  # nothing: top two


def test_easy_keeps_made_hands_only() -> None:
    assert keep_of("AhJh7h4h2c", simple_keep) == set(cards("AhJh"))
    assert keep_of("4h4d7c9sKh", simple_keep) == set(cards("4h4d"))


def test_draw_analysis_and_candidates() -> None:
    info = analyse(cards("AhJh7h4h2c"))
    assert len(info.flush_draw) == 4 and not info.straight_draw
    assert not analyse(cards("AhKdQcJs2c")).straight_draw  # one-ended, not open
    keeps = candidate_keeps(cards("AhAd7h4h2h"))
    assert all(len(k) >= 2 for k in keeps)
    assert set(cards("AhAd")) in [set(k) for k in keeps]


def test_discard_respects_the_limit() -> None:
    legal = LegalActions(seat=3, street=Street.DRAW, max_discard=3)
    hand = cards("AhKd8c5s2h")
    d = discard(legal, hand, ())  # wants to throw five
    assert len(d.cards) == 3 and set(d.cards) == set(cards("8c5s2h"))


def test_holdem_reading() -> None:
    assert preflop_percentile(cards("AsAh")) < 0.01
    assert preflop_percentile(cards("7h2c")) > 0.95
    assert made_hand(cards("AhKd"), cards("Kc7s2d")) == Made.TOP_PAIR_GOOD
    assert made_hand(cards("QhQd"), cards("Jc7s2d")) == Made.OVERPAIR
    assert made_hand(cards("7h7d"), cards("7c8s2d")) == Made.TRIPS
    assert made_hand(cards("AhKd"), cards("7c7s2d")) == Made.NOTHING
    assert made_hand(cards("9h8d"), cards("7c6sTd")) == Made.STRAIGHT_PLUS
    assert draws(cards("AhKh"), cards("7h2h9c")).flush_draw
    assert draws(cards("9h8d"), cards("7c6s2d")).straight_outs == 8
    tex = texture(cards("9h8h7h"))
    assert tex.monotone and tex.connected and tex.wet
    assert texture(cards("Kc7d7s")).paired


def test_discard_is_of_own_cards() -> None:
    rng = random.Random(0)
    legal = LegalActions(seat=0, street=Street.DRAW, max_discard=3)
    for _ in range(200):
        hand = tuple(rng.sample(range(52), 5))
        d = discard(legal, hand, standard_keep(hand))
        assert set(d.cards) <= set(hand) and len(d.cards) <= 3
