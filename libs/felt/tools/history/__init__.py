"""Hand histories: one hand rendered street by street for a seat, a spectator or the operator.

``build_history`` (``model``) turns a hand's stored events into a
:class:`HandHistory` after redacting them for the reader (``viewer``, the one
redaction path); ``render_text``, ``render_json`` and ``render_phh`` format
it for people, for programs (schema ``felt.hand-history/1``) and, for
Hold'em, as PHH that PokerKit loads. Pure: no I/O.
"""

from __future__ import annotations

from felt.tools.history.json_form import SCHEMA, history_to_dict, render_json
from felt.tools.history.model import HandHistory, HistoryError, build_history
from felt.tools.history.phh_form import render_phh
from felt.tools.history.text import render_text
from felt.tools.history.viewer import OPERATOR, SPECTATOR, Role, Viewer, visible_events

__all__ = [
    "OPERATOR",
    "SCHEMA",
    "SPECTATOR",
    "HandHistory",
    "HistoryError",
    "Role",
    "Viewer",
    "build_history",
    "history_to_dict",
    "render_json",
    "render_phh",
    "render_text",
    "visible_events",
]
