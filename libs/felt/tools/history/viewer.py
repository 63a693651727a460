"""Who reads a hand history, and the events as that reader may see them.

Three readers: a seat (its own cards, the public cards, what was shown), a
spectator (only what was public) and the operator (every card, for audits and
disputes). The first two go through the one redaction path,
``felt.core.table.redaction.redact_event`` (which hands hand events to
``felt.core.rules.views.redact``); the operator's events go through it too, for the
secrets no reader needs (the deck, the deal seed, token hashes): each seat's
private event (its hole cards, its draw) is redacted for the operator as for
the seat that owns it, so the operator sees every card and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from felt.core.rules.events import CardsDrawn, HoleCardsDealt
from felt.core.table.events import AnyEvent
from felt.core.table.redaction import redact_event

__all__ = ["OPERATOR", "SPECTATOR", "Role", "Viewer", "seat_for", "visible_event", "visible_events"]


class Role(StrEnum):
    SEAT = "seat"
    SPECTATOR = "spectator"
    OPERATOR = "operator"


@dataclass(frozen=True, slots=True)
class Viewer:
    """A reader of a hand: ``Viewer.of_seat(3)``, :data:`SPECTATOR` or :data:`OPERATOR`."""

    role: Role
    seat: int | None = None

    def __post_init__(self) -> None:
        if (self.role == Role.SEAT) != (self.seat is not None):
            raise ValueError("a seat viewer names its seat, and only a seat viewer does")

    @classmethod
    def of_seat(cls, seat: int) -> Viewer:
        return cls(Role.SEAT, seat)

    def __str__(self) -> str:
        return f"seat {self.seat}" if self.role == Role.SEAT else str(self.role)


SPECTATOR = Viewer(Role.SPECTATOR)
OPERATOR = Viewer(Role.OPERATOR)


def seat_for(event: AnyEvent, viewer: Viewer) -> int | None:
    """The seat to redact ``event`` for: the viewer's, or for the operator the card owner's."""
    if viewer.role == Role.OPERATOR:
        return event.seat if isinstance(event, HoleCardsDealt | CardsDrawn) else None
    return viewer.seat


def visible_event(event: AnyEvent, viewer: Viewer) -> AnyEvent:
    """``event`` as ``viewer`` may see it."""
    return redact_event(event, seat_for(event, viewer))


def visible_events(events: Iterable[AnyEvent], viewer: Viewer) -> list[AnyEvent]:
    """A hand's events as ``viewer`` may see them (what every rendering starts from)."""
    return [visible_event(e, viewer) for e in events]
