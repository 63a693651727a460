"""Any stored event as one viewer may see it: the one redaction path for hand and table events.

Hand events go through the hand's own redaction (``felt.core.rules.views.redact``:
others' hole cards and the deck hidden); table events lose their secrets (a deck
commitment's seed, the seats' token hashes). Pure, so that the table service,
the history and the clients all redact alike (docs/architecture.md, "Redaction").
"""

from __future__ import annotations

from dataclasses import replace

from felt.core.rules.views import redact
from felt.core.table.events import (
    AnyEvent,
    DeckCommitted,
    PlayerSeated,
    SeatTokenReissued,
    TableSnapshotTaken,
    is_hand_event,
)

__all__ = ["redact_event"]


def redact_event(event: AnyEvent, viewer: int | None) -> AnyEvent:
    """Any stored event as ``viewer`` may see it: secrets and others' cards removed."""
    if isinstance(event, DeckCommitted):
        return replace(event, seed=b"")
    if isinstance(event, PlayerSeated | SeatTokenReissued):
        return replace(event, token_hash="")
    if isinstance(event, TableSnapshotTaken):
        # It holds no card by construction: its only secrets are the seats' token hashes.
        # Watchers get it redacted like any event, so their sequences have no gap.
        players = tuple(replace(p, token_hash="") for p in event.players)
        return replace(event, players=players)
    if is_hand_event(event):
        return redact(event, viewer)
    return event
