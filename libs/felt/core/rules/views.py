"""Redacted views: what one seat (or a spectator) may see of a hand.

Every consumer outside the core (watchers, AI seats, replays for a player)
goes through these two functions, so redaction is decided in one place:
a seat sees its own cards, the public cards and what was shown; never
another seat's hidden cards, its discards, or the deck. Mucked and unshown
cards stay hidden forever.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from felt.core.cards import Card
from felt.core.record import Record
from felt.core.rules.config import Variant, public_hand_id
from felt.core.rules.events import (
    CardsDrawn,
    CardsShown,
    Event,
    HandStarted,
    HoleCardsDealt,
    MaybeCard,
    Street,
)
from felt.core.rules.legal import LegalActions, legal_actions
from felt.core.rules.pots import side_pots
from felt.core.rules.state import HandQueries

SPECTATOR = None


def redact(event: Event, viewer: int | None) -> Event:
    """``event`` as seat ``viewer`` may see it (``None``: a spectator).

    Hidden cards become ``None`` so a client still learns how many cards
    were dealt or drawn; the deck is removed from ``HandStarted``.
    """
    if isinstance(event, HandStarted):
        return HandStarted(replace(event.setup, deck=()))
    if isinstance(event, HoleCardsDealt) and event.seat != viewer:
        return replace(event, cards=(None,) * len(event.cards))
    if isinstance(event, CardsDrawn) and event.seat != viewer:
        return replace(
            event,
            discarded=(None,) * len(event.discarded),
            drawn=(None,) * len(event.drawn),
        )
    return event


def redact_all(events: Iterable[Event], viewer: int | None) -> list[Event]:
    """A hand's history as ``viewer`` may see it."""
    return [redact(e, viewer) for e in events]


def revealed_cards(events: Iterable[Event]) -> dict[int, tuple[Card, ...]]:
    """Cards each seat showed (at showdown, all-in, or voluntarily)."""
    return {e.seat: e.cards for e in events if isinstance(e, CardsShown)}


@dataclass(frozen=True, slots=True, init=False)
class SeatView(Record):
    """One seat as the viewer sees it. ``cards`` holds ``None`` for hidden cards."""

    seat: int
    player_id: str
    stack: int
    bet: int
    committed: int
    folded: bool
    all_in: bool
    cards: tuple[MaybeCard, ...]
    shown: bool
    mucked: bool
    drawn: int | None

    def __init__(
        self,
        seat: int,
        player_id: str,
        stack: int,
        bet: int,
        committed: int,
        folded: bool,
        all_in: bool,
        cards: tuple[MaybeCard, ...],
        shown: bool,
        mucked: bool,
        drawn: int | None,
    ) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "player_id", player_id)
        object.__setattr__(self, "stack", stack)
        object.__setattr__(self, "bet", bet)
        object.__setattr__(self, "committed", committed)
        object.__setattr__(self, "folded", folded)
        object.__setattr__(self, "all_in", all_in)
        object.__setattr__(self, "cards", cards)
        object.__setattr__(self, "shown", shown)
        object.__setattr__(self, "mucked", mucked)
        object.__setattr__(self, "drawn", drawn)


@dataclass(frozen=True, slots=True, init=False)
class PotView(Record):
    amount: int
    eligible: tuple[int, ...]

    def __init__(self, amount: int, eligible: tuple[int, ...]) -> None:
        object.__setattr__(self, "amount", amount)
        object.__setattr__(self, "eligible", eligible)


@dataclass(frozen=True, slots=True, init=False)
class HandView(Record):
    """A redacted snapshot of a hand for ``viewer`` (a seat number, or None)."""

    hand_id: str
    variant: Variant
    viewer: int | None
    street: Street
    button: int
    seats: tuple[SeatView, ...]
    board: tuple[Card, ...]
    pot: int
    pots: tuple[PotView, ...]
    current_bet: int
    min_bet: int
    small_bet: int
    big_bet: int
    raise_cap: int
    raises: int
    actor: int | None
    legal: LegalActions | None
    ended: bool
    public_id: str = ""

    def __init__(
        self,
        hand_id: str,
        variant: Variant,
        viewer: int | None,
        street: Street,
        button: int,
        seats: tuple[SeatView, ...],
        board: tuple[Card, ...],
        pot: int,
        pots: tuple[PotView, ...],
        current_bet: int,
        min_bet: int,
        small_bet: int,
        big_bet: int,
        raise_cap: int,
        raises: int,
        actor: int | None,
        legal: LegalActions | None,
        ended: bool,
        public_id: str = "",
    ) -> None:
        object.__setattr__(self, "hand_id", hand_id)
        object.__setattr__(self, "variant", variant)
        object.__setattr__(self, "viewer", viewer)
        object.__setattr__(self, "street", street)
        object.__setattr__(self, "button", button)
        object.__setattr__(self, "seats", seats)
        object.__setattr__(self, "board", board)
        object.__setattr__(self, "pot", pot)
        object.__setattr__(self, "pots", pots)
        object.__setattr__(self, "current_bet", current_bet)
        object.__setattr__(self, "min_bet", min_bet)
        object.__setattr__(self, "small_bet", small_bet)
        object.__setattr__(self, "big_bet", big_bet)
        object.__setattr__(self, "raise_cap", raise_cap)
        object.__setattr__(self, "raises", raises)
        object.__setattr__(self, "actor", actor)
        object.__setattr__(self, "legal", legal)
        object.__setattr__(self, "ended", ended)
        object.__setattr__(self, "public_id", public_id)

    def seat(self, number: int) -> SeatView:
        for s in self.seats:
            if s.seat == number:
                return s
        raise KeyError(number)


def view_for(state: HandQueries, viewer: int | None) -> HandView:
    """The hand as ``viewer`` sees it; legal actions only when it is the viewer's turn."""
    seats = []
    for x in state.seats:
        visible = x.seat == viewer or x.shown
        seats.append(
            SeatView(
                seat=x.seat,
                player_id=x.player_id,
                stack=x.stack,
                bet=x.bet,
                committed=x.committed,
                folded=x.folded,
                all_in=x.all_in,
                cards=tuple(x.hole) if visible else (None,) * len(x.hole),
                shown=x.shown,
                mucked=x.mucked,
                drawn=x.drawn,
            )
        )
    pots = (
        ()
        if state.ended
        else tuple(
            PotView(p.amount, tuple(state.seats[i].seat for i in p.eligible))
            for p in side_pots(state.seats, [x.ante for x in state.setup.seats], True)
        )
    )
    legal = legal_actions(state) if viewer is not None and state.actor_seat == viewer else None
    setup = state.setup
    return HandView(
        hand_id=setup.hand_id,
        variant=setup.variant,
        viewer=viewer,
        street=state.street,
        button=setup.button,
        seats=tuple(seats),
        board=state.board,
        pot=state.pot,
        pots=pots,
        current_bet=state.current_bet,
        min_bet=setup.min_bet,
        small_bet=setup.small_bet,
        big_bet=setup.big_bet,
        raise_cap=setup.raise_cap,
        raises=state.raises,
        actor=state.actor_seat,
        legal=legal,
        ended=state.ended,
        public_id=public_hand_id(setup),
    )
