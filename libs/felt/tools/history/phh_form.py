"""A Hold'em hand history as PHH, as one reader may see it, through the existing exporter.

The events are redacted first (``felt.tools.history.viewer``), then written by
``felt.tools.phh.export.export_phh``: a card the reader did not see is ``??`` in
the file, which PokerKit reads as an unknown card.
"""

from __future__ import annotations

from collections.abc import Sequence

from felt.core.rules.config import public_hand_id
from felt.core.rules.events import Event, HandStarted
from felt.core.table.events import AnyEvent, is_hand_event
from felt.tools.history.viewer import Viewer, visible_events
from felt.tools.phh.export import ExportError, export_phh

__all__ = ["ExportError", "render_phh"]


def render_phh(events: Sequence[AnyEvent], viewer: Viewer, *, hand_id: str = "") -> str:
    """PHH text of one Hold'em hand as ``viewer`` may see it; :class:`ExportError` for Draw.

    ``_felt_public_id`` names the hand by its public id (``hand_id``, by default the
    setup's), ``_felt_view`` the reader.
    """
    raw = next((e for e in events if isinstance(e, HandStarted)), None)
    public_id = hand_id or (public_hand_id(raw.setup) if raw is not None else "")
    seen = visible_events(events, viewer)
    hand: list[Event] = [e for e in seen if is_hand_event(e)]
    start = next((i for i, e in enumerate(hand) if isinstance(e, HandStarted)), None)
    if start is None:
        raise ExportError("a hand's events start with HandStarted")
    fields: dict[str, str] = {"_felt_view": str(viewer.role)}
    if public_id:
        fields["_felt_public_id"] = public_id
    return export_phh(hand[start:], viewer=viewer.seat, fields=fields)
