"""Folding events into a hand, in place, on a private working copy.

``apply`` must return a new immutable state for every event, but copying a
whole hand per event made replay slow. So events are folded into a mutable
working copy (:class:`WorkingHand`, its seats :class:`WorkingSeat`), which is
frozen into a :class:`HandState` once, when a caller needs a snapshot. Only
the engine holds working copies; nothing else mutates state. This module is
compiled with mypyc (see setup.py): the working copies are native classes.

Why one module of this size: the working copies and the fold of every hand
event into them belong together (only this module mutates them), and it is
compiled as one native unit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from felt.core.cards import Card
from felt.core.rules.config import HandSetup, Variant
from felt.core.rules.events import (
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
from felt.core.rules.state import HandQueries, HandState, SeatQueries, SeatState
from felt.core.rules.variants import LEFT_OF_BLINDS, Round, VariantRules, rules_for

# Enum members as module constants: reading ``Street.DRAW`` goes through the
# enum metaclass and costs several times a global lookup, on every event.
SHOWDOWN, COMPLETE = Street.SHOWDOWN, Street.COMPLETE


class WorkingSeat:
    """A seat being changed (a :class:`SeatQueries`); frozen back into a :class:`SeatState`.

    Not a subclass of the protocol: the working copies are compiled (mypyc) to
    native classes with fixed attribute slots, which is most of the replay speed.
    """

    seat: int
    player_id: str
    stack: int
    bet: int
    committed: int
    ante: int
    hole: tuple[Card, ...]
    folded: bool
    acted: bool
    matched: int
    drawn: int | None
    shown: bool
    mucked: bool

    def __init__(
        self,
        seat: int,
        player_id: str,
        stack: int,
        bet: int = 0,
        committed: int = 0,
        ante: int = 0,
        hole: tuple[Card, ...] = (),
        folded: bool = False,
        acted: bool = False,
        matched: int = 0,
        drawn: int | None = None,
        shown: bool = False,
        mucked: bool = False,
    ) -> None:
        self.seat = seat
        self.player_id = player_id
        self.stack = stack
        self.bet = bet
        self.committed = committed
        self.ante = ante
        self.hole = hole
        self.folded = folded
        self.acted = acted
        self.matched = matched
        self.drawn = drawn
        self.shown = shown
        self.mucked = mucked

    @property
    def all_in(self) -> bool:
        """Still in the hand with no chips behind (as :class:`SeatQueries`)."""
        return self.stack == 0 and not self.folded

    @property
    def in_hand(self) -> bool:
        return not self.folded

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


def _working_seat(s: SeatQueries) -> WorkingSeat:
    return WorkingSeat(
        s.seat,
        s.player_id,
        s.stack,
        s.bet,
        s.committed,
        s.ante,
        s.hole,
        s.folded,
        s.acted,
        s.matched,
        s.drawn,
        s.shown,
        s.mucked,
    )


class WorkingHand:
    """A hand being changed in place (a :class:`HandQueries`), frozen on request.

    Every seat is a :class:`WorkingSeat` from the start (copying six or nine
    seats once is cheaper than checking on every write whether one was copied).
    ``game`` is the variant's definition, looked up once per copy, and
    ``round`` the current street's (None at the showdown): read per command.
    """

    setup: HandSetup
    game: VariantRules
    round: Round | None
    street: Street
    seats: list[WorkingSeat]
    actor: int | None
    current_bet: int
    last_raise: int
    full_level: int
    raises: int
    aggressor: int | None
    board: tuple[Card, ...]
    deck_pos: int
    awarded: int
    ended: bool
    _index: dict[int, int]

    def __init__(
        self,
        setup: HandSetup,
        street: Street,
        seats: list[WorkingSeat],
        actor: int | None = None,
        current_bet: int = 0,
        last_raise: int = 0,
        full_level: int = 0,
        raises: int = 0,
        aggressor: int | None = None,
        board: tuple[Card, ...] = (),
        deck_pos: int = 0,
        awarded: int = 0,
        ended: bool = False,
    ) -> None:
        self.setup = setup
        self.game = rules_for(setup.variant)
        self.round = self.game.round_of(street)
        self.street = street
        self.seats = seats
        self.actor = actor
        self.current_bet = current_bet
        self.last_raise = last_raise
        self.full_level = full_level
        self.raises = raises
        self.aggressor = aggressor
        self.board = board
        self.deck_pos = deck_pos
        self.awarded = awarded
        self.ended = ended
        self._index = {x.seat: i for i, x in enumerate(seats)}

    # The queries of HandQueries (the protocol's own bodies serve its subclasses).

    @property
    def variant(self) -> Variant:
        return self.setup.variant

    @property
    def pot(self) -> int:
        """Chips in the middle (all rounds, current bets included) not yet awarded."""
        return sum([s.committed for s in self.seats]) - self.awarded

    @property
    def actor_seat(self) -> int | None:
        return None if self.actor is None else self.seats[self.actor].seat

    def index_of(self, seat: int) -> int | None:
        return self._index.get(seat)

    def seat_state(self, seat: int) -> WorkingSeat | None:
        i = self._index.get(seat)
        return None if i is None else self.seats[i]

    def write_seat(self, number: int) -> tuple[int, WorkingSeat]:
        """Index and seat of table seat ``number`` (events name dealt-in seats)."""
        index = self._index.get(number)
        if index is None:
            raise AssertionError(f"event for seat {number}, which is not dealt in")
        return index, self.seats[index]

    def freeze(self) -> HandState:
        return HandState(
            self.setup,
            self.street,
            tuple([s.freeze() for s in self.seats]),
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


def working_copy(s: HandQueries) -> WorkingHand:
    """A working copy of a hand snapshot (or of another working copy)."""
    return WorkingHand(
        s.setup,
        s.street,
        [_working_seat(x) for x in s.seats],
        s.actor,
        s.current_bet,
        s.last_raise,
        s.full_level,
        s.raises,
        s.aggressor,
        s.board,
        s.deck_pos,
        s.awarded,
        s.ended,
    )


def start(setup: HandSetup) -> WorkingHand:
    """The working copy of a hand that has just started (no snapshot to copy from)."""
    return WorkingHand(
        setup,
        rules_for(setup.variant).first_street,
        [WorkingSeat(s.seat, s.player_id, s.stack) for s in setup.seats],
        # The full big blind is the amount to call even when its poster is all-in for less.
        current_bet=max([s.blind for s in setup.seats]),
        last_raise=setup.min_bet,
    )


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


def next_actor(hand: WorkingHand, after: int) -> int | None:
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


def next_drawer(hand: WorkingHand, after: int) -> int | None:
    n = len(hand.seats)
    for k in range(1, n + 1):
        x = hand.seats[(after + k) % n]
        if not x.folded and x.drawn is None:
            return (after + k) % n
    return None


def first_actor_after_blinds(hand: WorkingHand) -> int | None:
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
        if h.game.rounds[0].first_to_act == LEFT_OF_BLINDS:
            h.actor = first_actor_after_blinds(h)
        else:
            h.actor = next_actor(h, index)


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
    index, x = h.write_seat(e.seat)
    if e.full:
        h.last_raise = max(e.to - h.current_bet, h.last_raise)
        h.full_level = e.to
        h.raises += 1
    # ``acted`` is not reset: whether the betting reopens to a seat is judged
    # from what it faces since it last acted (``matched``; legal.may_raise).
    h.current_bet = max(h.current_bet, e.to)
    h.aggressor = index
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
    for x in h.seats:
        x.bet = 0
        x.acted = False
        x.matched = 0
    h.street = e.street
    h.round = h.game.round_of(e.street)
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
    played = h.round
    if played is None:  # the showdown: nobody acts
        return
    if played.first_to_act == LEFT_OF_BLINDS:
        h.actor = first_actor_after_blinds(h)
    elif played.max_discard:
        h.actor = next_drawer(h, last)
    else:
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
    h.round = None
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
