"""Button and blinds from hand to hand: the dead-button rule (TDA, RULES.md).

The big blind always moves to the next seat dealt in, so nobody posts it
twice in a row or skips it when players leave or bust; the small blind is
the seat that had the big blind (dead if that player is gone). The button
goes to the seat that had the small blind (a dead button when empty), but it
always sits before the small blind: when that seat is now the big blind or
lies between the small and the big blind (players joined or left), the
button goes to the nearest seat dealt in before the small blind instead.
Heads-up, the button posts the small blind; the big blind still moves
forward, so nobody gets it twice in a row when play becomes heads-up. A
table's first hand, and the first after it had fewer than two players dealt
in (``previous`` is None then), starts fresh from the lowest seat. A game
without blinds (its definition in ``felt.core.rules.variants`` says so) only
moves the button, one seat dealt in at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from felt.core.record import Record
from felt.core.rules.config import Variant
from felt.core.rules.variants import rules_for


@dataclass(frozen=True, slots=True, init=False)
class Positions(Record):
    """Seat numbers of the button, small blind and big blind for one hand.

    ``small_blind`` names a position even when no one posts there (a dead
    small blind); a game without blinds (Draw) has ``None`` for both.
    """

    button: int
    small_blind: int | None = None
    big_blind: int | None = None

    def __init__(
        self, button: int, small_blind: int | None = None, big_blind: int | None = None
    ) -> None:
        object.__setattr__(self, "button", button)
        object.__setattr__(self, "small_blind", small_blind)
        object.__setattr__(self, "big_blind", big_blind)


def next_seat(seat: int, active: Sequence[int], seat_count: int) -> int:
    """The first active seat clockwise strictly after ``seat``."""
    return min(active, key=lambda s: (s - seat - 1) % seat_count)


def previous_seat(seat: int, active: Sequence[int], seat_count: int) -> int:
    """The first active seat counter-clockwise strictly before ``seat``."""
    return min(active, key=lambda s: (seat - s - 1) % seat_count)


def next_positions(
    variant: Variant,
    active: Sequence[int],
    seat_count: int,
    previous: Positions | None,
) -> Positions:
    """Where the button and blinds go for the next hand, given who is dealt in."""
    if len(active) < 2:
        raise ValueError("a hand needs at least two players")
    ordered = sorted(active)
    if not rules_for(variant).blinds:
        button = ordered[0] if previous is None else next_seat(previous.button, ordered, seat_count)
        return Positions(button)
    if previous is None or previous.big_blind is None:
        if len(ordered) == 2:
            return Positions(ordered[0], ordered[0], ordered[1])
        small = next_seat(ordered[0], ordered, seat_count)
        return Positions(ordered[0], small, next_seat(small, ordered, seat_count))
    big = next_seat(previous.big_blind, ordered, seat_count)
    if len(ordered) == 2:
        button = next(s for s in ordered if s != big)
        return Positions(button, button, big)
    small = previous.big_blind
    button = previous.small_blind if previous.small_blind is not None else previous.button
    if not 0 < (button - big) % seat_count < (small - big) % seat_count:
        # On the big blind or past it: the nearest seat dealt in before the small blind.
        button = previous_seat(small, ordered, seat_count)
    return Positions(button, small, big)


def dealing_order(button: int, active: Sequence[int], seat_count: int) -> list[int]:
    """Active seats clockwise from the first seat left of the button (button last)."""
    return sorted(active, key=lambda s: (s - button - 1) % seat_count)
