"""The rules core: ``decide(state, command) -> events`` and ``apply(state, event) -> state``.

``decide`` validates a command against the state and returns every event it
causes, including the automatic ones that follow (dealing the next street,
an all-in run-out, showdown, pot awards, the end of the hand), so one command
is one atomic batch of events. ``apply`` folds one event into the state and
is the only way state changes. Neither does I/O, reads a clock or draws
random numbers: the deck arrives in the ``StartHand`` command.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from felt.cards import DECK_SIZE, cards_str
from felt.evaluator import describe, evaluate
from felt.rules.commands import (
    Act,
    ActionKind,
    Command,
    Discard,
    IllegalAction,
    ShowCards,
    StartHand,
)
from felt.rules.config import HandSetup, Variant
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
from felt.rules.legal import (
    MAX_DISCARD,
    LegalActions,
    bet_size,
    legal_actions,
    may_raise,
    needs_to_act,
    raise_threshold,
)
from felt.rules.pots import side_pots, split
from felt.rules.state import HandState, SeatState

SEAT_LIMITS = {Variant.NLHE: (2, 9), Variant.DRAW5: (2, 6)}
HOLE_CARDS = {Variant.NLHE: 2, Variant.DRAW5: 5}
NEXT_STREET = {
    Street.PREFLOP: Street.FLOP,
    Street.FLOP: Street.TURN,
    Street.TURN: Street.RIVER,
    Street.FIRST_BET: Street.DRAW,
}
BOARD_CARDS = {Street.FLOP: 3, Street.TURN: 1, Street.RIVER: 1}
LAST_BETTING_ROUND = {Street.RIVER, Street.SECOND_BET}


# ---------------------------------------------------------------------------
# decide


def decide(state: HandState | None, command: Command) -> list[Event]:
    """The events ``command`` causes; raises :class:`IllegalAction` (changing nothing)."""
    return execute(state, command)[1]


def execute(state: HandState | None, command: Command) -> tuple[HandState, list[Event]]:
    """``decide`` that also returns the state after its events (saves re-folding them)."""
    batch = _Batch(state)
    if isinstance(command, StartHand):
        _start(batch, command.setup)
    elif isinstance(command, Act):
        _act(batch, _running(state), command)
    elif isinstance(command, Discard):
        _discard(batch, _running(state), command)
    elif isinstance(command, ShowCards):
        _show(batch, state, command)
    else:  # pragma: no cover - the Command union is closed
        raise IllegalAction("BAD_COMMAND", f"unknown command {command!r}")
    if batch.state is None:  # pragma: no cover - every command emits at least one event
        raise IllegalAction("BAD_COMMAND", "command produced no events")
    return batch.state, batch.events


class _Batch:
    """Events emitted by one command, applied as they go so later rules see them."""

    def __init__(self, state: HandState | None) -> None:
        self.state = state
        self.events: list[Event] = []

    @property
    def s(self) -> HandState:
        assert self.state is not None
        return self.state

    def emit(self, event: Event) -> None:
        self.events.append(event)
        self.state = apply(self.state, event)


def _running(state: HandState | None) -> HandState:
    if state is None or state.ended:
        raise IllegalAction("HAND_NOT_RUNNING", "no hand is in progress")
    return state


def _seat_index(state: HandState, seat: int) -> int:
    index = state.index_of(seat)
    if index is None:
        raise IllegalAction("UNKNOWN_SEAT", f"seat {seat} is not dealt into this hand")
    return index


def _validate_setup(setup: HandSetup) -> None:
    def bad(message: str) -> IllegalAction:
        return IllegalAction("BAD_SETUP", message)

    low, high = SEAT_LIMITS[setup.variant]
    if not low <= len(setup.seats) <= high:
        raise bad(f"{setup.variant} is played by {low} to {high} seats, not {len(setup.seats)}")
    numbers = [s.seat for s in setup.seats]
    if len(set(numbers)) != len(numbers):
        raise bad("a seat is listed twice")
    if len(setup.deck) != DECK_SIZE or set(setup.deck) != set(range(DECK_SIZE)):
        raise bad("the deck must hold each of the 52 cards exactly once")
    for s in setup.seats:
        if s.stack <= 0:
            raise bad(f"seat {s.seat} has no chips and cannot be dealt in")
        if s.ante < 0 or s.blind < 0:
            raise bad(f"seat {s.seat} has a negative forced bet")
    if setup.variant == Variant.NLHE:
        if setup.min_bet <= 0:
            raise bad("the big blind (minimum bet) must be positive")
        return
    if setup.small_bet <= 0 or setup.big_bet <= 0:
        raise bad("Draw needs positive small and big bets")
    if setup.raise_cap < 1:
        raise bad("the raise cap must allow at least the bet")
    if any(s.blind for s in setup.seats):
        raise bad("Draw has antes, not blinds")
    if not setup.allow_all_in:
        most = max(s.ante for s in setup.seats) + setup.raise_cap * (
            setup.small_bet + setup.big_bet
        )
        short = [s.seat for s in setup.seats if s.stack < most]
        if short:
            raise bad(
                f"with all-in disabled every seat needs {most} chips to cover a capped hand; "
                f"seats {short} have less"
            )


def _start(batch: _Batch, setup: HandSetup) -> None:
    if batch.state is not None and not batch.state.ended:
        raise IllegalAction("HAND_RUNNING", "a hand is already in progress")
    _validate_setup(setup)
    batch.emit(HandStarted(setup))
    for s in setup.seats:
        if s.ante:
            paid = min(s.ante, s.stack)
            batch.emit(AntePosted(s.seat, paid, paid == s.stack))
    for i, s in enumerate(setup.seats):
        if s.blind:
            behind = batch.s.seats[i].stack
            paid = min(s.blind, behind)
            if paid:
                batch.emit(BlindPosted(s.seat, paid, paid == behind))
    n = len(setup.seats)
    per_seat = HOLE_CARDS[setup.variant]
    for i, s in enumerate(setup.seats):
        positions = tuple(r * n + i for r in range(per_seat))
        batch.emit(HoleCardsDealt(s.seat, tuple(setup.deck[p] for p in positions), positions))
    _settle(batch)


def _act(batch: _Batch, state: HandState, command: Act) -> None:
    index = _seat_index(state, command.seat)
    if state.street == Street.DRAW:
        raise IllegalAction("WRONG_PHASE", "it is the draw: discard 0 to 3 cards instead")
    if state.actor != index:
        turn = state.actor_seat
        raise IllegalAction(
            "NOT_YOUR_TURN",
            f"it is not seat {command.seat}'s turn"
            + (f"; seat {turn} is to act" if turn is not None else ""),
        )
    legal = legal_actions(state)
    assert legal is not None
    seat = state.seats[index]
    kind = command.kind
    if kind == ActionKind.FOLD:
        if not legal.can_fold:
            raise IllegalAction("CANNOT_FOLD", "there is no bet to you: check instead of folding")
        batch.emit(PlayerFolded(seat.seat))
    elif kind == ActionKind.CHECK:
        if not legal.can_check:
            raise IllegalAction("CANNOT_CHECK", f"you cannot check: {legal.call_amount} to call")
        batch.emit(PlayerChecked(seat.seat))
    elif kind == ActionKind.CALL:
        if legal.call_amount is None:
            raise IllegalAction("NOTHING_TO_CALL", "there is no bet to call: check instead")
        batch.emit(PlayerCalled(seat.seat, legal.call_amount, legal.call_is_all_in))
    elif kind == ActionKind.ALL_IN:
        if legal.call_is_all_in and legal.call_amount is not None:
            batch.emit(PlayerCalled(seat.seat, legal.call_amount, True))
        elif legal.all_in_to is not None and legal.min_raise_to is not None:
            _raise_to(batch, state, index, legal.all_in_to)
        else:
            raise IllegalAction("RAISE_NOT_ALLOWED", _why_no_raise(state, seat, legal))
    else:  # BET or RAISE
        if legal.min_raise_to is None or legal.max_raise_to is None:
            raise IllegalAction("RAISE_NOT_ALLOWED", _why_no_raise(state, seat, legal))
        word = "bet" if legal.bet else "raise"
        if kind == ActionKind.BET and not legal.bet:
            raise IllegalAction("RAISE_NOT_ALLOWED", "there is already a bet: raise instead")
        if kind == ActionKind.RAISE and legal.bet:
            raise IllegalAction("RAISE_NOT_ALLOWED", "there is no bet to raise: bet instead")
        amount = command.amount
        if amount > seat.bet + seat.stack:
            raise IllegalAction(
                "OVER_STACK",
                f"you cannot {word} to {amount}: you have {seat.bet + seat.stack} in all",
            )
        if amount < legal.min_raise_to:
            raise IllegalAction(
                "BELOW_MIN_RAISE", f"the minimum {word} is to {legal.min_raise_to}, not {amount}"
            )
        if amount > legal.max_raise_to:
            raise IllegalAction(
                "ABOVE_MAX_RAISE", f"the {word} is fixed at {legal.max_raise_to}, not {amount}"
            )
        _raise_to(batch, state, index, amount)
    _settle(batch)


def _why_no_raise(state: HandState, seat: SeatState, legal: LegalActions) -> str:
    if seat.stack <= (legal.call_amount or 0):
        return "you do not have the chips to raise: call (all-in) or fold"
    if state.variant == Variant.DRAW5 and state.raises >= state.setup.raise_cap:
        return f"the betting is capped at {state.setup.raise_cap} bets and raises this round"
    if not may_raise(state, seat):
        return (
            "the betting was not reopened to you (the all-in raise was less than a full "
            "raise): call or fold"
        )
    return "every other player is all-in: call or fold"


def _raise_to(batch: _Batch, state: HandState, index: int, to: int) -> None:
    seat = state.seats[index]
    added = to - seat.bet
    if state.variant == Variant.NLHE:
        full = to - state.current_bet >= raise_threshold(state)
    else:
        full = 2 * (to - state.full_level) >= bet_size(state)
    batch.emit(BetPlaced(seat.seat, to, added, added == seat.stack, full))


def _discard(batch: _Batch, state: HandState, command: Discard) -> None:
    index = _seat_index(state, command.seat)
    if state.street != Street.DRAW:
        raise IllegalAction("WRONG_PHASE", "cards can only be discarded during the draw")
    if state.actor != index:
        raise IllegalAction(
            "NOT_YOUR_TURN",
            f"it is not seat {command.seat}'s turn to draw; seat {state.actor_seat} draws now",
        )
    seat = state.seats[index]
    chosen = command.cards
    if len(chosen) > MAX_DISCARD:
        raise IllegalAction(
            "BAD_DISCARD", f"you may discard at most {MAX_DISCARD} cards, not {len(chosen)}"
        )
    if len(set(chosen)) != len(chosen):
        raise IllegalAction("BAD_DISCARD", "a card is listed twice")
    for c in chosen:
        if not isinstance(c, int) or not 0 <= c < DECK_SIZE:
            raise IllegalAction("BAD_DISCARD", f"{c!r} is not a card")
        if c not in seat.hole:
            raise IllegalAction("BAD_DISCARD", f"{cards_str([c])} is not in your hand")
    positions = tuple(range(state.deck_pos, state.deck_pos + len(chosen)))
    drawn = tuple(state.setup.deck[p] for p in positions)
    batch.emit(CardsDrawn(seat.seat, chosen, drawn, positions))
    _settle(batch)


def _show(batch: _Batch, state: HandState | None, command: ShowCards) -> None:
    if state is None or not state.ended:
        raise IllegalAction("HAND_RUNNING", "cards can be shown voluntarily once the hand is over")
    seat = state.seats[_seat_index(state, command.seat)]
    if seat.shown:
        raise IllegalAction("ALREADY_SHOWN", f"seat {seat.seat} has already shown its cards")
    if seat.mucked:
        raise IllegalAction(
            "ALREADY_MUCKED", f"seat {seat.seat} mucked its cards: they stay hidden"
        )
    batch.emit(CardsShown(seat.seat, tuple(seat.hole), voluntary=True))


def _settle(batch: _Batch) -> None:
    """Emit the automatic events until a seat must act or the hand is over."""
    while True:
        s = batch.s
        if s.ended or s.actor is not None:
            return
        in_hand = [i for i, x in enumerate(s.seats) if not x.folded]
        if s.street == Street.DRAW:
            able = [i for i in in_hand if s.seats[i].stack > 0]
            if len(able) >= 2:
                batch.emit(StreetStarted(Street.SECOND_BET))
                continue
            _showdown(batch)
            return
        _return_uncalled(batch)
        if len(in_hand) == 1:
            _award_uncontested(batch, in_hand[0])
            return
        if s.street in LAST_BETTING_ROUND:
            _showdown(batch)
            return
        nxt = NEXT_STREET[s.street]
        if nxt == Street.DRAW:
            batch.emit(StreetStarted(Street.DRAW))
            continue
        able = [i for i in in_hand if s.seats[i].stack > 0]
        if len(able) <= 1:
            for i in _showdown_order(s):
                if not s.seats[i].shown:
                    seat = batch.s.seats[i]
                    batch.emit(CardsShown(seat.seat, seat.hole))
        count = BOARD_CARDS[nxt]
        positions = tuple(range(batch.s.deck_pos, batch.s.deck_pos + count))
        board = tuple(s.setup.deck[p] for p in positions)
        batch.emit(StreetStarted(nxt, board, positions))


def _return_uncalled(batch: _Batch) -> None:
    s = batch.s
    top = max(range(len(s.seats)), key=lambda i: s.seats[i].bet)
    top_bet = s.seats[top].bet
    second = max((x.bet for i, x in enumerate(s.seats) if i != top), default=0)
    if top_bet > second:
        batch.emit(UncalledBetReturned(s.seats[top].seat, top_bet - second))


def _award_uncontested(batch: _Batch, index: int) -> None:
    s = batch.s
    winner = s.seats[index].seat
    if s.pot:
        batch.emit(PotAwarded(0, s.pot, (winner,), ((winner, s.pot),)))
    _end(batch)


def _end(batch: _Batch) -> None:
    batch.emit(HandEnded(tuple((x.seat, x.stack) for x in batch.s.seats)))


def _showdown_order(s: HandState) -> list[int]:
    """Last aggressor of the final round first, else first left of the button; then clockwise."""
    n = len(s.seats)
    start = s.aggressor if s.aggressor is not None and not s.seats[s.aggressor].folded else 0
    return [(start + k) % n for k in range(n) if not s.seats[(start + k) % n].folded]


def _hand_value(s: HandState, index: int) -> int:
    return evaluate(s.seats[index].hole + s.board)


def _showdown(batch: _Batch) -> None:
    s = batch.s
    order = _showdown_order(s)
    batch.emit(StreetStarted(Street.SHOWDOWN))
    s = batch.s
    pots = side_pots(s.seats, [x.ante for x in s.setup.seats])
    values = {i: _hand_value(s, i) for i in order}
    # Draw: "the remaining players show"; Hold'em: all hands are tabled once a
    # player is all-in (TDA), else a hand that cannot win may be mucked.
    face_up = s.variant == Variant.DRAW5 or any(s.seats[i].stack == 0 for i in order)
    best: dict[int, int] = {}
    for i in order:
        mine = [p for p, pot in enumerate(pots) if i in pot.eligible]
        could_win = any(p not in best or values[i] >= best[p] for p in mine)
        if s.seats[i].shown or face_up or could_win:
            if not s.seats[i].shown:
                batch.emit(CardsShown(s.seats[i].seat, s.seats[i].hole))
            for p in mine:
                best[p] = max(best.get(p, values[i]), values[i])
        else:
            batch.emit(CardsMucked(s.seats[i].seat))
    s = batch.s
    for p, pot in enumerate(pots):
        contenders = [i for i in pot.eligible if s.seats[i].shown]
        top = max(values[i] for i in contenders)
        winners = [i for i in contenders if values[i] == top]
        shares = tuple((s.seats[i].seat, chips) for i, chips in split(pot.amount, winners))
        eligible = tuple(s.seats[i].seat for i in pot.eligible)
        batch.emit(PotAwarded(p, pot.amount, eligible, shares, describe(top)))
    _end(batch)


# ---------------------------------------------------------------------------
# apply


def apply(state: HandState | None, event: Event) -> HandState:
    """Fold one event into the state. Events are trusted: they were decided already."""
    if isinstance(event, HandStarted):
        return _started(event.setup)
    assert state is not None, "a hand starts with HandStarted"
    handler = _APPLY.get(type(event))
    if handler is None:  # pragma: no cover - the Event union is closed
        raise TypeError(f"unknown event {event!r}")
    return handler(state, event)


def replay(events: Iterable[Event], state: HandState | None = None) -> HandState:
    """Rebuild a hand from its events alone."""
    for event in events:
        state = apply(state, event)
    if state is None:
        raise ValueError("no events to replay")
    return state


def _started(setup: HandSetup) -> HandState:
    seats = tuple(SeatState(seat=s.seat, player_id=s.player_id, stack=s.stack) for s in setup.seats)
    street = Street.PREFLOP if setup.variant == Variant.NLHE else Street.FIRST_BET
    # The full big blind is the amount to call even when its poster is all-in for less.
    to_call = max(s.blind for s in setup.seats)
    return HandState(
        setup=setup, street=street, seats=seats, last_raise=setup.min_bet, current_bet=to_call
    )


def _with_seat(state: HandState, seat: int, **changes: Any) -> tuple[HandState, int]:
    index = state.index_of(seat)
    assert index is not None, f"event for seat {seat}, which is not dealt in"
    seats = list(state.seats)
    seats[index] = replace(seats[index], **changes)
    return replace(state, seats=tuple(seats)), index


def _next_actor(state: HandState, after: int) -> int | None:
    """The next seat clockwise after ``after`` that owes a decision this round."""
    seats = state.seats
    n = len(seats)
    live = [x for x in seats if not x.folded]
    if len(live) < 2:
        return None
    for k in range(1, n + 1):
        i = (after + k) % n
        x = seats[i]
        if needs_to_act(state, x) and (
            x.bet < state.current_bet or any(o is not x and o.stack > 0 for o in live)
        ):
            return i
    return None


def _next_drawer(state: HandState, after: int) -> int | None:
    n = len(state.seats)
    for k in range(1, n + 1):
        i = (after + k) % n
        x = state.seats[i]
        if not x.folded and x.drawn is None:
            return i
    return None


def _ante(state: HandState, e: AntePosted) -> HandState:
    x = state.seat_state(e.seat)
    assert x is not None
    return _with_seat(
        state,
        e.seat,
        stack=x.stack - e.amount,
        committed=x.committed + e.amount,
        ante=x.ante + e.amount,
    )[0]


def _blind(state: HandState, e: BlindPosted) -> HandState:
    x = state.seat_state(e.seat)
    assert x is not None
    return _with_seat(
        state,
        e.seat,
        stack=x.stack - e.amount,
        bet=x.bet + e.amount,
        committed=x.committed + e.amount,
    )[0]


def _hole(state: HandState, e: HoleCardsDealt) -> HandState:
    cards = tuple(c for c in e.cards if c is not None)
    new, _ = _with_seat(state, e.seat, hole=cards)
    new = replace(new, deck_pos=max(new.deck_pos, max(e.deck_positions, default=-1) + 1))
    if all(x.hole for x in new.seats):
        new = replace(new, actor=_first_preflop_actor(new))
    return new


def _first_preflop_actor(state: HandState) -> int | None:
    """Left of the largest blind (big blind or straddle); left of the button without blinds."""
    blinds = [s.blind for s in state.setup.seats]
    top = max(blinds)
    if top == 0:
        return _next_actor(state, len(state.seats) - 1)
    last = max(i for i, b in enumerate(blinds) if b == top)
    return _next_actor(state, last)


def _acted(state: HandState, seat: int, **changes: Any) -> HandState:
    new, index = _with_seat(state, seat, acted=True, matched=state.current_bet, **changes)
    return replace(new, actor=_next_actor(new, index))


def _fold(state: HandState, e: PlayerFolded) -> HandState:
    return _acted(state, e.seat, folded=True)


def _check(state: HandState, e: PlayerChecked) -> HandState:
    return _acted(state, e.seat)


def _call(state: HandState, e: PlayerCalled) -> HandState:
    x = state.seat_state(e.seat)
    assert x is not None
    return _acted(
        state,
        e.seat,
        stack=x.stack - e.amount,
        bet=x.bet + e.amount,
        committed=x.committed + e.amount,
    )


def _bet(state: HandState, e: BetPlaced) -> HandState:
    index = state.index_of(e.seat)
    assert index is not None
    x = state.seats[index]
    changes: dict[str, Any] = {"current_bet": max(state.current_bet, e.to), "aggressor": index}
    seats = list(state.seats)
    if e.full:
        changes["last_raise"] = max(e.to - state.current_bet, state.last_raise)
        changes["full_level"] = e.to
        changes["raises"] = state.raises + 1
        seats = [replace(o, acted=False) if o.acted else o for o in seats]
    seats[index] = replace(
        x,
        stack=x.stack - e.amount,
        bet=e.to,
        committed=x.committed + e.amount,
        acted=True,
        matched=e.to,
    )
    new = replace(state, seats=tuple(seats), **changes)
    return replace(new, actor=_next_actor(new, index))


def _drawn(state: HandState, e: CardsDrawn) -> HandState:
    x = state.seat_state(e.seat)
    assert x is not None
    discarded = set(e.discarded)
    kept = tuple(c for c in x.hole if c not in discarded)
    drawn = tuple(c for c in e.drawn if c is not None)
    new, index = _with_seat(state, e.seat, hole=kept + drawn, drawn=len(e.drawn))
    new = replace(new, deck_pos=max(new.deck_pos, max(e.deck_positions, default=-1) + 1))
    return replace(new, actor=_next_drawer(new, index))


def _street(state: HandState, e: StreetStarted) -> HandState:
    seats = tuple(
        replace(x, bet=0, acted=False, matched=0) if (x.bet or x.acted or x.matched) else x
        for x in state.seats
    )
    new = replace(
        state,
        street=e.street,
        seats=seats,
        current_bet=0,
        last_raise=state.setup.min_bet,
        full_level=0,
        raises=0,
        aggressor=None if e.street != Street.SHOWDOWN else state.aggressor,
        board=state.board + e.cards,
        deck_pos=max(state.deck_pos, max(e.deck_positions, default=-1) + 1),
        actor=None,
    )
    n = len(seats)
    if e.street == Street.DRAW:
        return replace(new, actor=_next_drawer(new, n - 1))
    if e.street == Street.SHOWDOWN:
        return new
    return replace(new, actor=_next_actor(new, n - 1))


def _returned(state: HandState, e: UncalledBetReturned) -> HandState:
    x = state.seat_state(e.seat)
    assert x is not None
    return _with_seat(
        state,
        e.seat,
        stack=x.stack + e.amount,
        bet=x.bet - e.amount,
        committed=x.committed - e.amount,
    )[0]


def _shown(state: HandState, e: CardsShown) -> HandState:
    return _with_seat(state, e.seat, shown=True)[0]


def _mucked(state: HandState, e: CardsMucked) -> HandState:
    return _with_seat(state, e.seat, mucked=True)[0]


def _awarded(state: HandState, e: PotAwarded) -> HandState:
    seats = list(state.seats)
    for seat, chips in e.shares:
        index = state.index_of(seat)
        assert index is not None
        seats[index] = replace(seats[index], stack=seats[index].stack + chips)
    return replace(state, seats=tuple(seats), awarded=state.awarded + e.amount)


def _ended(state: HandState, e: HandEnded) -> HandState:
    return replace(state, ended=True, street=Street.COMPLETE, actor=None)


_APPLY: dict[type, Callable[[HandState, Any], HandState]] = {
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


def stacks(state: HandState) -> dict[int, int]:
    """Each dealt-in seat's stack (behind), by seat number."""
    return {x.seat: x.stack for x in state.seats}


def hand_value(state: HandState, seat: int) -> int:
    """Evaluator value of ``seat``'s current best hand (higher is better)."""
    return _hand_value(state, _seat_index(state, seat))


__all__ = [
    "apply",
    "decide",
    "execute",
    "hand_value",
    "legal_actions",
    "replay",
    "stacks",
]
