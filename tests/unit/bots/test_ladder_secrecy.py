"""The ladder's decks are unpredictable from what a bot sees, and the run is reproducible."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

import pytest

from felt.core.cards import deck_from_rng
from felt.core.rules.config import Variant
from felt.core.rules.events import Event
from felt.core.rules.legal import LegalActions
from felt.core.rules.views import HandView
from felt.players.bots import get_bot
from felt.players.bots.opponents import TableStats
from felt_dev.ladder import Chunk, deck_for, master_key, play_chunk

SEEN: list[tuple[HandView, list[Event], TableStats | None]] = []


class Spy:
    """Plays like the hard bot and records every input a bot gets."""

    name = "spy"

    def __init__(self) -> None:
        self.inner = get_bot("hard")

    def decide(
        self,
        view: HandView,
        history: Sequence[Event],
        legal: LegalActions,
        rng: random.Random,
        table: TableStats | None = None,
    ) -> object:
        SEEN.append((view, list(history), table))
        return self.inner.decide(view, history, legal, rng, table)


def test_a_bot_sees_nothing_that_predicts_the_deck(monkeypatch: pytest.MonkeyPatch) -> None:
    import felt_dev.ladder as ladder

    SEEN.clear()

    def factory(name: str) -> Any:
        return Spy() if name == "spy" else get_bot(name)

    monkeypatch.setattr(ladder, "get_bot", factory)
    play_chunk(Chunk(Variant.DRAW5, "spy", "maniac", 1, 0, 12, 2))
    assert SEEN
    ids = {view.hand_id for view, _, _ in SEEN}
    assert len(ids) == 24  # 12 deals x 2 rotations, each hand its own id
    for hand_id in ids:
        assert re.fullmatch(r"h-[0-9a-f]{24}", hand_id)
    key = master_key(1)
    for deal in range(12):
        deck = deck_for(Variant.DRAW5, key, deal)
        # Neither the old public scheme nor the hand id rebuilds the deck.
        assert deck != deck_from_rng(random.Random(f"felt-ladder:1:{Variant.DRAW5.value}:{deal}"))
        assert all(deck != deck_from_rng(random.Random(h)) for h in ids)
    for view, history, _ in SEEN:
        text = repr(view) + repr(history)
        assert "deck" not in text or "deck=()" in text  # HandStarted is redacted
        me = view.seat(next(s.seat for s in view.seats if any(c is not None for c in s.cards)))
        # Only the bot's own and shown cards are visible.
        hidden = [s for s in view.seats if s.seat != me.seat and not s.shown]
        assert all(c is None for s in hidden for c in s.cards)


def test_decks_depend_on_the_secret_seed_and_replay_exactly() -> None:
    a = [deck_for(Variant.NLHE, master_key(1), d) for d in range(5)]
    assert a == [deck_for(Variant.NLHE, master_key(1), d) for d in range(5)]
    assert a != [deck_for(Variant.NLHE, master_key(2), d) for d in range(5)]
    chunk = Chunk(Variant.NLHE, "hard", "random", 4, 0, 6, 2)
    assert play_chunk(chunk) == play_chunk(chunk)
