"""The rules core: ``decide(state, command) -> events`` and ``apply(state, event) -> state``.

``decide`` validates a command against the state and returns every event it
causes, including the automatic ones that follow (dealing the next street,
an all-in run-out, showdown, pot awards, the end of the hand), so one command
is one atomic batch of events. ``apply`` folds one event into the state and
is the only way state changes. Neither does I/O, reads a clock or draws
random numbers: the deck arrives in the ``StartHand`` command.

Nothing here names a variant: the hand's definition (``felt.core.rules.variants``;
``WorkingHand.game``) says how many hole cards are dealt, which streets
follow which, what each deals, whether a round is a draw, the betting
structure, the seats and forced bets allowed, and how hands are ranked.

Why one module of this size: ``decide`` is one state machine (start, act,
discard, show, and the automatic events that follow each); its steps call one
another and mypyc compiles them as one unit on the hot path.
"""

from __future__ import annotations

from collections.abc import Iterable

from felt.core.cards import DECK_SIZE, cards_str
from felt.core.evaluator import describe
from felt.core.rules.commands import (
    Act,
    ActionKind,
    Command,
    Discard,
    Forfeit,
    IllegalAction,
    ShowCards,
    StartHand,
)
from felt.core.rules.config import HandSetup
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
from felt.core.rules.fold import FOLD_HANDLERS, WorkingHand, WorkingSeat, fold_into, working_copy
from felt.core.rules.legal import (
    LegalActions,
    bet_size,
    legal_actions,
    may_raise,
    raise_threshold,
)
from felt.core.rules.pots import side_pots, split
from felt.core.rules.state import HandQueries, HandState
from felt.core.rules.variants import Round, UnknownVariant, hand_value, rules_for

FULL_DECK = frozenset(range(DECK_SIZE))
# Enum members as module constants (an enum attribute read costs several
# global lookups, and these are read on every command).
SHOWDOWN = Street.SHOWDOWN
FOLD, CHECK, CALL = ActionKind.FOLD, ActionKind.CHECK, ActionKind.CALL
BET, RAISE, ALL_IN = ActionKind.BET, ActionKind.RAISE, ActionKind.ALL_IN


# ---------------------------------------------------------------------------
# decide


def decide(state: HandState | None, command: Command) -> list[Event]:
    """The events ``command`` causes; raises :class:`IllegalAction` (changing nothing)."""
    return execute(state, command)[1]


def execute(state: HandState | None, command: Command) -> tuple[HandState, list[Event]]:
    """``decide`` that also returns the state after its events (saves re-folding them)."""
    batch = _Batch(None if state is None else working_copy(state))
    _run(batch, command)
    assert batch.work is not None
    return batch.work.freeze(), batch.events


def _run(batch: _Batch, command: Command) -> None:
    state = batch.work
    if isinstance(command, Act):  # by far the most common command: tested first
        _act(batch, _running(state), command)
    elif isinstance(command, StartHand):
        _start(batch, command.setup)
    elif isinstance(command, Discard):
        _discard(batch, _running(state), command)
    elif isinstance(command, ShowCards):
        _show(batch, state, command)
    elif isinstance(command, Forfeit):
        _forfeit(batch, _running(state), command)
    else:  # pragma: no cover - the Command union is closed
        raise IllegalAction("BAD_COMMAND", f"unknown command {command!r}")


class _Batch:
    """Events emitted by one command, folded as they go so later rules see them.

    Every check that can refuse a command runs before its first event, so a
    refused command leaves the working copy untouched.
    """

    __slots__ = ("events", "work")

    def __init__(self, work: WorkingHand | None) -> None:
        self.work = work
        self.events: list[Event] = []

    @property
    def s(self) -> WorkingHand:
        assert self.work is not None
        return self.work

    def emit(self, event: Event) -> None:
        self.events.append(event)
        work = self.work
        fold = FOLD_HANDLERS.get(type(event))
        if fold is not None and work is not None:
            fold(work, event)  # the common case, without fold_into's dispatch
        else:
            self.work = fold_into(work, event)


def _running(state: WorkingHand | None) -> WorkingHand:
    if state is None or state.ended:
        raise IllegalAction("HAND_NOT_RUNNING", "no hand is in progress")
    return state


def _seat_index(state: WorkingHand, seat: int) -> int:
    index = state.index_of(seat)
    if index is None:
        raise IllegalAction("UNKNOWN_SEAT", f"seat {seat} is not dealt into this hand")
    return index


def _validate_setup(setup: HandSetup) -> None:
    def bad(message: str) -> IllegalAction:
        return IllegalAction("BAD_SETUP", message)

    try:
        game = rules_for(setup.variant)
    except UnknownVariant as e:
        raise bad(str(e)) from None
    low, high = game.min_seats, game.max_seats
    if not low <= len(setup.seats) <= high:
        raise bad(f"{setup.variant} is played by {low} to {high} seats, not {len(setup.seats)}")
    numbers = [s.seat for s in setup.seats]
    if len(set(numbers)) != len(numbers):
        raise bad("a seat is listed twice")
    if len(setup.deck) != DECK_SIZE or set(setup.deck) != FULL_DECK:
        raise bad("the deck must hold each of the 52 cards exactly once")
    for s in setup.seats:
        if s.stack <= 0:
            raise bad(f"seat {s.seat} has no chips and cannot be dealt in")
        if s.ante < 0 or s.blind < 0:
            raise bad(f"seat {s.seat} has a negative forced bet")
    if not game.fixed_limit:
        if setup.min_bet <= 0:
            raise bad("the big blind (minimum bet) must be positive")
    else:
        if setup.small_bet <= 0 or setup.big_bet <= 0:
            raise bad(f"{game.name} needs positive small and big bets")
        if setup.raise_cap < 1:
            raise bad("the raise cap must allow at least the bet")
    if not game.blinds and any(s.blind for s in setup.seats):
        raise bad(f"{game.name} has antes, not blinds")
    if game.fixed_limit and not setup.allow_all_in:
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
    if batch.work is not None and not batch.work.ended:
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
    # One card at a time round the table: seat i gets positions i, i + n, ...
    n = len(setup.seats)
    deck = setup.deck
    end = rules_for(setup.variant).hole_cards * n
    for i, s in enumerate(setup.seats):
        batch.emit(HoleCardsDealt(s.seat, deck[i:end:n], tuple(range(i, end, n))))
    _settle(batch)


def _betting_turn(state: WorkingHand, seat: int) -> int:
    """The index of ``seat``, which must be to act in a betting round."""
    index = _seat_index(state, seat)
    current = state.round
    if current is not None and current.max_discard:
        raise IllegalAction(
            "WRONG_PHASE", f"it is the draw: discard 0 to {current.max_discard} cards instead"
        )
    if state.actor != index:
        turn = state.actor_seat
        raise IllegalAction(
            "NOT_YOUR_TURN",
            f"it is not seat {seat}'s turn"
            + (f"; seat {turn} is to act" if turn is not None else ""),
        )
    return index


def _forfeit(batch: _Batch, state: WorkingHand, command: Forfeit) -> None:
    _betting_turn(state, command.seat)
    batch.emit(PlayerFolded(command.seat))
    _settle(batch)


def _act(batch: _Batch, state: WorkingHand, command: Act) -> None:
    index = _betting_turn(state, command.seat)
    seat = state.seats[index]
    kind = command.kind
    # Fold, check and call (most actions) need only the amount to call.
    to_call = state.current_bet - seat.bet
    if kind == FOLD:
        if to_call <= 0:
            raise IllegalAction("CANNOT_FOLD", "there is no bet to you: check instead of folding")
        batch.emit(PlayerFolded(seat.seat))
        return _settle(batch)
    if kind == CHECK:
        if to_call > 0:
            raise IllegalAction(
                "CANNOT_CHECK", f"you cannot check: {min(to_call, seat.stack)} to call"
            )
        batch.emit(PlayerChecked(seat.seat))
        return _settle(batch)
    if kind == CALL:
        if to_call <= 0:
            raise IllegalAction("NOTHING_TO_CALL", "there is no bet to call: check instead")
        amount = min(to_call, seat.stack)
        batch.emit(PlayerCalled(seat.seat, amount, amount == seat.stack))
        return _settle(batch)
    legal = legal_actions(state)
    assert legal is not None
    if kind == ALL_IN:
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
        if kind == BET and not legal.bet:
            raise IllegalAction("RAISE_NOT_ALLOWED", "there is already a bet: raise instead")
        if kind == RAISE and legal.bet:
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


def _why_no_raise(state: WorkingHand, seat: WorkingSeat, legal: LegalActions) -> str:
    if seat.stack <= (legal.call_amount or 0):
        return "you do not have the chips to raise: call (all-in) or fold"
    if state.game.fixed_limit and state.raises >= state.setup.raise_cap:
        return f"the betting is capped at {state.setup.raise_cap} bets and raises this round"
    if not may_raise(state, seat, state.game):
        return (
            "the betting was not reopened to you (the bet grew by less than a full raise "
            "since you acted): call or fold"
        )
    return "nobody else can put in more than the current bet (all-in): call or fold"


def _raise_to(batch: _Batch, state: WorkingHand, index: int, to: int) -> None:
    seat = state.seats[index]
    added = to - seat.bet
    game = state.game
    if game.fixed_limit:
        full = 2 * (to - state.full_level) >= bet_size(state, game)
    else:
        full = to - state.current_bet >= raise_threshold(state, game)
    batch.emit(BetPlaced(seat.seat, to, added, added == seat.stack, full))


def _discard(batch: _Batch, state: WorkingHand, command: Discard) -> None:
    index = _seat_index(state, command.seat)
    current = state.round
    if current is None or not current.max_discard:
        raise IllegalAction("WRONG_PHASE", "cards can only be discarded during the draw")
    most = current.max_discard
    if state.actor != index:
        raise IllegalAction(
            "NOT_YOUR_TURN",
            f"it is not seat {command.seat}'s turn to draw; seat {state.actor_seat} draws now",
        )
    seat = state.seats[index]
    chosen = command.cards
    if len(chosen) > most:
        raise IllegalAction(
            "BAD_DISCARD", f"you may discard at most {most} cards, not {len(chosen)}"
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


def _show(batch: _Batch, state: WorkingHand | None, command: ShowCards) -> None:
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
    """Emit the automatic events until a seat must act or the hand is over.

    When a round is over: the uncalled part of a bet goes back, a lone seat
    left takes the pot, else the variant's next round starts. A draw always
    starts (an all-in seat still draws); a betting round that deals nothing
    is skipped when fewer than two seats could bet in it; one that deals
    board cards is dealt anyway, the hands tabled first when nobody can bet
    any more (the all-in run-out). After the last round: the showdown.
    """
    while True:
        s = batch.work
        assert s is not None
        if s.ended or s.actor is not None:
            return
        in_hand = [i for i, x in enumerate(s.seats) if not x.folded]
        _return_uncalled(batch)
        if len(in_hand) == 1:
            _award_uncontested(batch, in_hand[0])
            return
        able = sum(1 for i in in_hand if s.seats[i].stack > 0)
        nxt: Round | None = s.game.after(s.street)
        while nxt is not None and able < 2 and not nxt.max_discard and not nxt.board_cards:
            nxt = s.game.after(nxt.street)
        if nxt is None:
            _showdown(batch)
            return
        if nxt.max_discard:
            batch.emit(StreetStarted(nxt.street))
            continue
        if able <= 1:
            for i in _showdown_order(s):
                if not s.seats[i].shown:
                    seat = batch.s.seats[i]
                    batch.emit(CardsShown(seat.seat, seat.hole))
        count = nxt.board_cards
        positions = tuple(range(batch.s.deck_pos, batch.s.deck_pos + count))
        board = tuple(s.setup.deck[p] for p in positions)
        batch.emit(StreetStarted(nxt.street, board, positions))


def _return_uncalled(batch: _Batch) -> None:
    """Give back the part of the biggest bet that nobody matched."""
    top_bet = second = 0
    top_seat = -1
    for x in batch.s.seats:
        if x.bet > top_bet:
            top_bet, second, top_seat = x.bet, top_bet, x.seat
        elif x.bet > second:
            second = x.bet
    if top_bet > second:
        batch.emit(UncalledBetReturned(top_seat, top_bet - second))


def _award_uncontested(batch: _Batch, index: int) -> None:
    s = batch.s
    winner = s.seats[index].seat
    if s.pot:
        batch.emit(PotAwarded(0, s.pot, (winner,), ((winner, s.pot),)))
    _end(batch)


def _end(batch: _Batch) -> None:
    batch.emit(HandEnded(tuple((x.seat, x.stack) for x in batch.s.seats)))


def _showdown_order(s: WorkingHand) -> list[int]:
    """Last aggressor of the final round first, else first left of the button; then clockwise."""
    n = len(s.seats)
    start = s.aggressor if s.aggressor is not None and not s.seats[s.aggressor].folded else 0
    return [(start + k) % n for k in range(n) if not s.seats[(start + k) % n].folded]


def _hand_value(s: WorkingHand, index: int) -> int:
    return hand_value(s.game.ranking, s.seats[index].hole, s.board)


def _showdown(batch: _Batch) -> None:
    s = batch.s
    order = _showdown_order(s)
    batch.emit(StreetStarted(SHOWDOWN))
    s = batch.s
    pots = side_pots(s.seats, [x.ante for x in s.setup.seats])
    values = {i: _hand_value(s, i) for i in order}
    # Draw: "the remaining players show"; Hold'em: all hands are tabled once a
    # player is all-in (TDA), else a hand that cannot win may be mucked.
    face_up = s.game.all_show or any(s.seats[i].stack == 0 for i in order)
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
    return fold_into(None if state is None else working_copy(state), event).freeze()


def replay(events: Iterable[Event], state: HandState | None = None) -> HandState:
    """Rebuild a hand from its events alone."""
    work = None if state is None else working_copy(state)
    for event in events:
        work = fold_into(work, event)
    if work is None:
        raise ValueError("no events to replay")
    return work.freeze()


class HandMachine(_Batch):
    """A hand played command by command on one working copy, frozen only on request.

    The same rules as :func:`execute`, without a snapshot per command: for
    replaying many hands fast (``felt phh verify``). It is its own batch (a
    new events list per command, the same working copy throughout). ``state``
    is read-only for callers; a refused command raises :class:`IllegalAction`
    and leaves it unchanged (every check runs before the first event).
    """

    __slots__ = ()

    def __init__(self, state: HandState | None = None) -> None:
        super().__init__(None if state is None else working_copy(state))

    @property
    def state(self) -> HandQueries | None:
        return self.work

    def execute(self, command: Command) -> list[Event]:
        self.events = []
        _run(self, command)
        return self.events

    def snapshot(self) -> HandState:
        if self.work is None:
            raise ValueError("no hand has started")
        return self.work.freeze()


__all__ = [
    "HandMachine",
    "apply",
    "decide",
    "execute",
    "legal_actions",
    "replay",
]
