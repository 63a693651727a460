"""The pure rules core: commands in, events out, state as a fold of events.

No I/O, no clock, no randomness (the deck is injected). See ``engine`` for
``decide``/``apply``, ``legal`` for legal actions and ``views`` for redaction.
"""

from felt.core.rules.commands import (
    Act,
    ActionKind,
    Command,
    Discard,
    IllegalAction,
    ShowCards,
    StartHand,
)
from felt.core.rules.config import HandSetup, SeatSetup, Variant
from felt.core.rules.engine import apply, decide, execute, replay
from felt.core.rules.legal import LegalActions, legal_actions
from felt.core.rules.state import HandState, SeatState
from felt.core.rules.views import HandView, redact, view_for

__all__ = [
    "Act",
    "ActionKind",
    "Command",
    "Discard",
    "HandSetup",
    "HandState",
    "HandView",
    "IllegalAction",
    "LegalActions",
    "SeatSetup",
    "SeatState",
    "ShowCards",
    "StartHand",
    "Variant",
    "apply",
    "decide",
    "execute",
    "legal_actions",
    "redact",
    "replay",
    "view_for",
]
