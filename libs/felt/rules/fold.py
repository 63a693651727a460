"""Folding events into a hand, in place, on a private working copy.

``apply`` must return a new immutable state for every event, but copying a
whole hand per event made replay slow. So events are folded into a mutable
working copy (:class:`WorkingHand`) whose seats are copied on first write,
and the copy is frozen into a :class:`HandState` once, when a caller needs
a snapshot. Only the engine holds working copies; nothing else mutates state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from felt.rules.config import HandSetup, SeatSetup, Variant
from felt.rules.events import (
    AntePosted,
    BetPlaced,
    BlindPosted,
    CardsDrawn,
    CardsMucked,
    CardsShown,
    Event,
    HandEnded,
    HandStarted,
    HoleCardsDealt,
    PlayerCalled,
    PlayerChecked,
    PlayerFolded,
    PotAwarded,
    Street,
    StreetStarted,
    UncalledBetReturned,
)
from felt.rules.state import HandQueries, HandState, SeatQueries, SeatState

# Enum members as module constants: reading ``Street.DRAW`` goes through the
# enum metaclass and costs several times a global lookup, on every event.
PREFLOP, FIRST_BET, DRAW = Street.PREFLOP, Street.FIRST_BET, Street.DRAW
SHOWDOWN, COMPLETE = Street.SHOWDOWN, Street.COMPLETE
NLHE = Variant.NLHE


class WorkingSeat(SeatQueries):
    """A seat being changed; frozen back into a :class:`SeatState`."""

    __slots__ = (
        "acted",
        "ante",
        "bet",
        "committed",
        "drawn",
        "folded",
        "hole",
        "matched",
        "mucked",
        "player_id",
        "seat",
        "shown",
        "stack",
    )

    def __init__(self, s: SeatQueries) -> None:
        self.seat = s.seat
        self.player_id = s.player_id
        self.stack = s.stack
        self.bet = s.bet
        self.committed = s.committed
        self.ante = s.ante
        self.hole = s.hole
        self.folded = s.folded
        self.acted = s.acted
        self.matched = s.matched
        self.drawn = s.drawn
        self.shown = s.shown
        self.mucked = s.mucked

    def freeze(self) -> SeatState:
        return SeatState(
            self.seat,
            self.player_id,
            self.stack,
            self.bet,
            self.committed,
            self.ante,
            self.hole,
            self.folded,
            self.acted,
            self.matched,
            self.drawn,
            self.shown,
            self.mucked,
        )


class WorkingHand(HandQueries):
    """A hand being changed in place. Seats are frozen ``SeatState`` until first written."""

    __slots__ = (
        "_index",
        "actor",
        "aggressor",
        "awarded",
        "board",
        "current_bet",
        "deck_pos",
        "ended",
        "full_level",
        "last_raise",
        "raises",
        "seats",
        "setup",
        "street",
    )
    seats: list[SeatQueries]

    def __init__(self, s: HandQueries) -> None:
        self.setup = s.setup
        self.street = s.street
        self.seats = list(s.seats)
        self.actor = s.actor
        self.current_bet = s.current_bet
        self.last_raise = s.last_raise
        self.full_level = s.full_level
        self.raises = s.raises
        self.aggressor = s.aggressor
        self.board = s.board
        self.deck_pos = s.deck_pos
        self.awarded = s.awarded
        self.ended = s.ended
        self._index = {x.seat: i for i, x in enumerate(self.seats)}

    def index_of(self, seat: int) -> int | None:
        return self._index.get(seat)

    def write(self, index: int) -> WorkingSeat:
        """The seat at ``index``, made writable (copied from its snapshot once)."""
        seat = self.seats[index]
        if type(seat) is not WorkingSeat:
            seat = WorkingSeat(seat)
            self.seats[index] = seat
        return seat

    def write_seat(self, number: int) -> tuple[int, WorkingSeat]:
        """Index and writable seat of table seat ``number`` (events name dealt-in seats)."""
        try:
            index = self._index[number]
        except KeyError:
            raise AssertionError(f"event for seat {number}, which is not dealt in") from None
        seat = self.seats[index]
        if type(seat) is not WorkingSeat:
            seat = WorkingSeat(seat)
            self.seats[index] = seat
        return index, seat

    def freeze(self) -> HandState:
        seats = tuple(s.freeze() if type(s) is WorkingSeat else s for s in self.seats)
        return HandState(
            self.setup,
            self.street,
            seats,  # type: ignore[arg-type]
            self.actor,
            self.current_bet,
            self.last_raise,
            self.full_level,
            self.raises,
            self.aggressor,
            self.board,
            self.deck_pos,
            self.awarded,
            self.ended,
        )


def _fresh_seat(s: SeatSetup) -> WorkingSeat:
    """A writable seat as dealt in, before forced bets (no snapshot to copy from)."""
    x = WorkingSeat.__new__(WorkingSeat)
    x.seat = s.seat
    x.player_id = s.player_id
    x.stack = s.stack
    x.bet = x.committed = x.ante = x.matched = 0
    x.hole = ()
    x.folded = x.acted = x.shown = x.mucked = False
    x.drawn = None
    return x


def start(setup: HandSetup) -> WorkingHand:
    """The working copy of a hand that has just started.

    Built field by field rather than from a ``HandState`` snapshot: every
    hand starts here, and constructing frozen snapshots only to copy them
    was most of the cost of starting one.
    """
    hand = WorkingHand.__new__(WorkingHand)
    hand.setup = setup
    hand.street = PREFLOP if setup.variant == NLHE else FIRST_BET
    # Every seat is written by the forced bets and the deal: start them writable.
    hand.seats = [_fresh_seat(s) for s in setup.seats]
    hand.actor = hand.aggressor = None
    # The full big blind is the amount to call even when its poster is all-in for less.
    hand.current_bet = max([s.blind for s in setup.seats])
    hand.last_raise = setup.min_bet
    hand.full_level = hand.raises = hand.deck_pos = hand.awarded = 0
    hand.board = ()
    hand.ended = False
    hand._index = {s.seat: i for i, s in enumerate(setup.seats)}
    return hand


def fold_into(hand: WorkingHand | None, event: Event) -> WorkingHand:
    """Fold ``event`` into ``hand`` in place (a ``HandStarted`` makes a new one)."""
    handler = FOLD_HANDLERS.get(type(event))
    if handler is not None and hand is not None:
        handler(hand, event)
        return hand
    if isinstance(event, HandStarted):
        return start(event.setup)
    if handler is None:  # pragma: no cover - the Event union is closed
        raise TypeError(f"unknown event {event!r}")
    raise AssertionError("a hand starts with HandStarted")


def next_actor(hand: HandQueries, after: int) -> int | None:
    """The next seat clockwise after ``after`` that owes a decision this round.

    A seat owes one when it is in the hand with chips behind and has not
    acted since the betting opened to it or faces a bet; but not when it has
    matched the bet and nobody else in the hand has chips (nothing to decide).
    """
    seats = hand.seats
    n = len(seats)
    current = hand.current_bet
    in_hand = 0
    with_chips = 0
    for x in seats:
        if not x.folded:
            in_hand += 1
            if x.stack > 0:
                with_chips += 1
    if in_hand < 2:
        return None
    for k in range(1, n + 1):
        i = (after + k) % n
        x = seats[i]
        if x.folded or x.stack == 0:
            continue
        if x.bet < current:
            return i
        # Matched: it still owes its option if not acted and another can bet.
        if not x.acted and with_chips > 1:
            return i
    return None


def next_drawer(hand: HandQueries, after: int) -> int | None:
    n = len(hand.seats)
    for k in range(1, n + 1):
        x = hand.seats[(after + k) % n]
        if not x.folded and x.drawn is None:
            return (after + k) % n
    return None


def first_preflop_actor(hand: HandQueries) -> int | None:
    """Left of the largest blind (big blind or straddle); left of the button without blinds."""
    blinds = [s.blind for s in hand.setup.seats]
    top = max(blinds)
    if top == 0:
        return next_actor(hand, len(hand.seats) - 1)
    last = max(i for i, b in enumerate(blinds) if b == top)
    return next_actor(hand, last)


def _ante(h: WorkingHand, e: AntePosted) -> None:
    _, x = h.write_seat(e.seat)
    x.stack -= e.amount
    x.committed += e.amount
    x.ante += e.amount


def _blind(h: WorkingHand, e: BlindPosted) -> None:
    _, x = h.write_seat(e.seat)
    x.stack -= e.amount
    x.bet += e.amount
    x.committed += e.amount


def _advance_deck(h: WorkingHand, positions: tuple[int, ...]) -> None:
    """Past the last deck position dealt (positions are dealt in increasing order)."""
    if positions and positions[-1] >= h.deck_pos:
        h.deck_pos = positions[-1] + 1


def _hole(h: WorkingHand, e: HoleCardsDealt) -> None:
    index, x = h.write_seat(e.seat)
    cards = e.cards
    x.hole = cards if None not in cards else tuple(c for c in cards if c is not None)  # type: ignore[assignment]
    positions = e.deck_positions  # _advance_deck, inlined: this runs for every seat dealt in
    if positions and positions[-1] >= h.deck_pos:
        h.deck_pos = positions[-1] + 1
    # Cards go out in dealing order: the last seat's completes the deal.
    if index == len(h.seats) - 1:
        h.actor = first_preflop_actor(h)


def _acted(h: WorkingHand, index: int, x: WorkingSeat) -> None:
    x.acted = True
    x.matched = h.current_bet
    h.actor = next_actor(h, index)


def _fold(h: WorkingHand, e: PlayerFolded) -> None:
    index, x = h.write_seat(e.seat)
    x.folded = True
    _acted(h, index, x)


def _check(h: WorkingHand, e: PlayerChecked) -> None:
    index, x = h.write_seat(e.seat)
    _acted(h, index, x)


def _call(h: WorkingHand, e: PlayerCalled) -> None:
    index, x = h.write_seat(e.seat)
    x.stack -= e.amount
    x.bet += e.amount
    x.committed += e.amount
    _acted(h, index, x)


def _bet(h: WorkingHand, e: BetPlaced) -> None:
    index = h.index_of(e.seat)
    assert index is not None
    if e.full:
        h.last_raise = max(e.to - h.current_bet, h.last_raise)
        h.full_level = e.to
        h.raises += 1
        # A full bet or raise reopens the betting to everyone else.
        for i, o in enumerate(h.seats):
            if o.acted:
                h.write(i).acted = False
    h.current_bet = max(h.current_bet, e.to)
    h.aggressor = index
    x = h.write(index)
    x.stack -= e.amount
    x.bet = e.to
    x.committed += e.amount
    x.acted = True
    x.matched = e.to
    h.actor = next_actor(h, index)


def _drawn(h: WorkingHand, e: CardsDrawn) -> None:
    index, x = h.write_seat(e.seat)
    discarded = set(e.discarded)
    kept = tuple(c for c in x.hole if c not in discarded)
    x.hole = kept + tuple(c for c in e.drawn if c is not None)
    x.drawn = len(e.drawn)
    _advance_deck(h, e.deck_positions)
    h.actor = next_drawer(h, index)


def _street(h: WorkingHand, e: StreetStarted) -> None:
    for i, x in enumerate(h.seats):
        if x.bet or x.acted or x.matched:
            w = h.write(i)
            w.bet = 0
            w.acted = False
            w.matched = 0
    h.street = e.street
    h.current_bet = 0
    h.last_raise = h.setup.min_bet
    h.full_level = 0
    h.raises = 0
    if e.street != SHOWDOWN:
        h.aggressor = None
    h.board = h.board + e.cards
    _advance_deck(h, e.deck_positions)
    h.actor = None
    last = len(h.seats) - 1
    if e.street == DRAW:
        h.actor = next_drawer(h, last)
    elif e.street != SHOWDOWN:
        h.actor = next_actor(h, last)


def _returned(h: WorkingHand, e: UncalledBetReturned) -> None:
    _, x = h.write_seat(e.seat)
    x.stack += e.amount
    x.bet -= e.amount
    x.committed -= e.amount


def _shown(h: WorkingHand, e: CardsShown) -> None:
    h.write_seat(e.seat)[1].shown = True


def _mucked(h: WorkingHand, e: CardsMucked) -> None:
    h.write_seat(e.seat)[1].mucked = True


def _awarded(h: WorkingHand, e: PotAwarded) -> None:
    for seat, chips in e.shares:
        h.write_seat(seat)[1].stack += chips
    h.awarded += e.amount


def _ended(h: WorkingHand, e: HandEnded) -> None:
    h.ended = True
    h.street = COMPLETE
    h.actor = None


# The in-place fold of each event type into a running hand (``HandStarted`` starts one).
FOLD_HANDLERS: dict[type, Callable[[WorkingHand, Any], None]] = {
    AntePosted: _ante,
    BlindPosted: _blind,
    HoleCardsDealt: _hole,
    PlayerFolded: _fold,
    PlayerChecked: _check,
    PlayerCalled: _call,
    BetPlaced: _bet,
    CardsDrawn: _drawn,
    StreetStarted: _street,
    UncalledBetReturned: _returned,
    CardsShown: _shown,
    CardsMucked: _mucked,
    PotAwarded: _awarded,
    HandEnded: _ended,
}
