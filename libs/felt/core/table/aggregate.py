"""The table: players, chips and hands back to back, as a pure decide/apply pair.

A table's event stream is table events (seating, sitting out, chips, the
action clock, deck commitments) interleaved with the events of each hand;
:func:`fold` folds both into a :class:`TableState`, one ``apply_event`` at a
time. It is the one fold of a table's events: the table service's rebuild
(from a snapshot on), ``execute_table``, replays, the golden streams and the
tests all go through it; skimming the hands that are over is the same fold
with a cheaper projection (``skim=True``). ``decide_table`` turns
a table command into events, wrapping the hand's own ``decide`` for actions,
so the service has one entry point and one atomic batch per request.

Why one module of this size: it is one aggregate, its state, commands,
``decide`` and ``apply`` sharing private helpers (who is dealt in, the
passive action, the end of a hand), and mypyc compiles it as one unit on
the hot path of every request (native calls inside a module are cheapest).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from felt.core.cards import shuffled_deck
from felt.core.record import Record
from felt.core.rules.commands import (
    Act,
    ActionKind,
    Discard,
    Forfeit,
    IllegalAction,
    ShowCards,
    StartHand,
)
from felt.core.rules.config import (
    HandSetup,
    SeatSetup,
    Variant,
    public_hand_id,
    public_id_from,
)
from felt.core.rules.engine import apply as apply_hand
from felt.core.rules.engine import execute
from felt.core.rules.events import (
    BetPlaced,
    CardsDrawn,
    HandEnded,
    HandStarted,
    PlayerCalled,
    PlayerChecked,
    PlayerFolded,
)
from felt.core.rules.events import Event as HandEvent
from felt.core.rules.legal import legal_actions
from felt.core.rules.state import HandState
from felt.core.rules.variants import UnknownVariant, rules_for
from felt.core.table.commitment import commit_deck
from felt.core.table.events import (
    AI_LEVELS,
    ActionTimedOut,
    AnyEvent,
    ChipsAdded,
    DeckCommitted,
    PlayerLeft,
    PlayerSatIn,
    PlayerSatOut,
    PlayerSeated,
    PlayerWaitingForBigBlind,
    SeatTokenReissued,
    TableClosed,
    TableConfig,
    TableCreated,
    TableSnapshotTaken,
    is_hand_event,
)
from felt.core.table.player import Player
from felt.core.table.positions import Positions, dealing_order, next_positions, next_seat

SEAT_ACTIONS = (PlayerFolded, PlayerChecked, PlayerCalled, BetPlaced, CardsDrawn)
# Hand events whose effect outlives the hand (``skim_event`` leaves the state as it is for
# every other hand event).
LASTING_HAND_EVENTS: tuple[type, ...] = (HandStarted, HandEnded, *SEAT_ACTIONS)


@dataclass(frozen=True, slots=True, init=False)
class TableState(Record):
    """The fold of a table's events. ``hand_events`` are the current (or last) hand's."""

    config: TableConfig
    players: tuple[Player, ...] = ()
    hand: HandState | None = None
    hand_events: tuple[HandEvent, ...] = ()
    hands_played: int = 0
    positions: Positions | None = None
    commitment: DeckCommitted | None = None
    closed: bool = False
    timing_out: int | None = None

    def __init__(
        self,
        config: TableConfig,
        players: tuple[Player, ...] = (),
        hand: HandState | None = None,
        hand_events: tuple[HandEvent, ...] = (),
        hands_played: int = 0,
        positions: Positions | None = None,
        commitment: DeckCommitted | None = None,
        closed: bool = False,
        timing_out: int | None = None,
    ) -> None:
        object.__setattr__(self, "config", config)
        object.__setattr__(self, "players", players)
        object.__setattr__(self, "hand", hand)
        object.__setattr__(self, "hand_events", hand_events)
        object.__setattr__(self, "hands_played", hands_played)
        object.__setattr__(self, "positions", positions)
        object.__setattr__(self, "commitment", commitment)
        object.__setattr__(self, "closed", closed)
        object.__setattr__(self, "timing_out", timing_out)

    def player(self, seat: int) -> Player | None:
        for p in self.players:
            if p.seat == seat:
                return p
        return None

    @property
    def hand_running(self) -> bool:
        return self.hand is not None and not self.hand.ended

    def active_seats(self) -> list[int]:
        """Seats that will be dealt into the next hand.

        A seat waiting for the big blind is one of them only when the big blind
        would reach it: the dead-button rule moves the big blind to the first seat
        dealt in after the last one, so it is that seat among all who could play.
        Dealt in then, it is the big blind whoever else waits (they sit after it).
        With no last big blind (a fresh start) there is none to wait for: all play.
        """
        least = self.min_stack
        ready = [
            p.seat for p in self.players if not p.sitting_out and not p.leaving and p.stack >= least
        ]
        last = self.positions
        waiting = [p.seat for p in self.players if p.waiting_for_big_blind and p.seat in ready]
        if not waiting or last is None or last.big_blind is None:
            return ready
        big = next_seat(last.big_blind, ready, self.config.seat_count)
        return [s for s in ready if s == big or s not in waiting]

    @property
    def min_stack(self) -> int:
        """Chips a seat needs to be dealt in: without all-in, a capped fixed-limit hand."""
        c = self.config
        if not c.allow_all_in and rules_for(c.variant).fixed_limit:
            return c.ante + c.raise_cap * (c.small_bet + c.big_bet)
        return 1

    def dealt_in(self, seat: int) -> bool:
        """Whether ``seat`` holds a place (folded or not) in the running hand."""
        hand = self.hand
        return hand is not None and not hand.ended and hand.index_of(seat) is not None

    def can_start_hand(self) -> bool:
        return not self.closed and not self.hand_running and len(self.active_seats()) >= 2

    def hand_viewer(self, seat: int | None) -> int | None:
        """Who the viewer at ``seat`` is in the last hand: that seat, or a spectator (None).

        A seat's cards belong to the player who was dealt them: once that player
        has gone, the seat's next occupant sees (and can show) nothing of them,
        even while the last hand is still the table's.
        """
        hand = self.hand
        if seat is None or hand is None:
            return seat
        for dealt in hand.setup.seats:
            if dealt.seat == seat:
                player = self.player(seat)
                if player is None or player.player_id != dealt.player_id:
                    return None
        return seat


# ---------------------------------------------------------------------------
# commands


@dataclass(frozen=True, slots=True)
class CreateTable(Record):
    config: TableConfig


@dataclass(frozen=True, slots=True)
class SeatPlayer(Record):
    """Seat a player; with ``wait_for_big_blind`` dealt in only when the big blind reaches it."""

    seat: int
    player_id: str
    name: str
    stack: int
    token_hash: str
    ai_level: str = ""
    wait_for_big_blind: bool = False


@dataclass(frozen=True, slots=True)
class ReissueSeatToken(Record):
    """Give ``seat``'s occupant, who must be ``player_id``, the token hashing to ``token_hash``."""

    seat: int
    player_id: str
    token_hash: str


@dataclass(frozen=True, slots=True)
class LeaveSeat(Record):
    """Free ``seat``. With ``busted_hand`` (positive) a conditional leave: only a seat with no
    chips, out of the hand in play and busted since exactly that hand
    (``Player.busted_hand``) is freed; anything else is refused ``NOT_BUSTED``, so a stale
    decision (chips added since, or lost again in a later hand) changes nothing."""

    seat: int
    busted_hand: int = 0


@dataclass(frozen=True, slots=True)
class SitOut(Record):
    seat: int


@dataclass(frozen=True, slots=True)
class SitIn(Record):
    """Be dealt in again: from the next hand, or (``wait_for_big_blind``) at the big blind."""

    seat: int
    wait_for_big_blind: bool = False


@dataclass(frozen=True, slots=True)
class AddChips(Record):
    seat: int
    amount: int


@dataclass(frozen=True, slots=True, init=False)
class StartNextHand(Record):
    """Deal the next hand from the deck that ``seed`` (32 secure random bytes) fixes.

    ``public_id`` (16 more secure random bytes) becomes the hand's unguessable
    public id. Without them (tests, tools) the hand is named by the rule old
    hands follow, derived from its secret deck (``public_hand_id``); the table
    service always draws them, so a public id never depends on the seed alone.
    """

    seed: bytes
    public_id: bytes = b""

    def __init__(self, seed: bytes, public_id: bytes = b"") -> None:
        object.__setattr__(self, "seed", seed)
        object.__setattr__(self, "public_id", public_id)


@dataclass(frozen=True, slots=True, init=False)
class PlayHand(Record):
    """A move in the running hand: a seat's Act, Discard or ShowCards (after it), or a Forfeit.

    ``Forfeit`` is never a client's: the table plays it for a seat whose player left.
    """

    command: Act | Discard | ShowCards | Forfeit

    def __init__(self, command: Act | Discard | ShowCards | Forfeit) -> None:
        object.__setattr__(self, "command", command)


@dataclass(frozen=True, slots=True)
class TimeOut(Record):
    """The action clock of ``seat`` ran out: check if possible, else fold (or stand pat)."""

    seat: int


@dataclass(frozen=True, slots=True)
class CloseTable(Record):
    reason: str = ""


TableCommand = (
    CreateTable
    | SeatPlayer
    | LeaveSeat
    | ReissueSeatToken
    | SitOut
    | SitIn
    | AddChips
    | StartNextHand
    | PlayHand
    | TimeOut
    | CloseTable
)


def _refuse(code: str, message: str) -> IllegalAction:
    return IllegalAction(code, message)


def _validate_config(config: TableConfig) -> None:
    try:
        game = rules_for(config.variant)
    except UnknownVariant as e:
        raise _refuse("BAD_CONFIG", str(e)) from None
    low, high = game.min_seats, game.max_seats
    if not low <= config.seat_count <= high:
        raise _refuse("BAD_CONFIG", f"{config.variant} tables have {low} to {high} seats")
    if game.blinds and not 0 < config.small_blind <= config.big_blind:
        raise _refuse("BAD_CONFIG", "blinds must be positive with small <= big")
    if game.fixed_limit and (config.small_bet <= 0 or config.big_bet <= 0 or config.raise_cap < 1):
        raise _refuse(
            "BAD_CONFIG", f"{game.name} needs positive small and big bets and a raise cap >= 1"
        )
    if game.fixed_limit and config.big_bet < config.small_bet:
        # RULES.md, fixed limit: the small bet in the first round, the big bet in the second
        # (default twice the small one); a second round betting less than the first is no
        # fixed-limit game (and breaks the bots' and clients' sizing).
        raise _refuse("BAD_CONFIG", f"{game.name}'s big_bet must be at least its small_bet")
    if game.ante_required and config.ante <= 0:
        # RULES.md, Five-Card Draw setup: "Every player posts the same virtual ante."
        raise _refuse("BAD_CONFIG", f"{game.name} needs a positive ante: every player posts it")
    if min(config.ante, config.action_timeout_ms, config.max_timeouts, config.hand_limit) < 0:
        raise _refuse(
            "BAD_CONFIG", "ante, action clock, time-out limit and hand limit cannot be negative"
        )


def _seated(state: TableState, seat: int) -> Player:
    player = state.player(seat)
    if player is None:
        raise _refuse("SEAT_EMPTY", f"nobody sits at seat {seat}")
    return player


def decide_table(state: TableState | None, command: TableCommand) -> list[AnyEvent]:
    """The events ``command`` causes; raises :class:`IllegalAction` and changes nothing."""
    return _decide(state, command)[0]


def execute_table(
    state: TableState | None, command: TableCommand
) -> tuple[TableState, list[AnyEvent]]:
    """``decide_table`` that also returns the state after the events.

    The same as folding the events with ``apply_event``, but the hand's own
    state comes straight from the rules (which built it while deciding), so
    hand events are not folded twice.
    """
    events, hand = _decide(state, command)
    if hand is None:
        return fold(state, events), events
    # The hand's events skimmed (what outlives the hand), the hand itself as the rules built it.
    new = fold(state, events, skim=True)
    played = tuple(e for e in events if is_hand_event(e))
    return replace(new, hand=hand, hand_events=(*new.hand_events, *played)), events


def _decide(
    state: TableState | None, command: TableCommand
) -> tuple[list[AnyEvent], HandState | None]:
    """The events, and the hand's state after them when the command played the hand."""
    if isinstance(command, CreateTable):
        if state is not None:
            raise _refuse("TABLE_EXISTS", "the table already exists")
        _validate_config(command.config)
        return [TableCreated(command.config)], None
    if state is None:
        raise _refuse("NO_TABLE", "the table does not exist")
    if isinstance(command, LeaveSeat):  # allowed at a closed table too: players take their chips
        if command.busted_hand:
            return _leave_busted(state, command.seat, command.busted_hand), None
        return _leave(state, command.seat), None
    if isinstance(command, ReissueSeatToken):
        player = _seated(state, command.seat)
        if player.player_id != command.player_id:
            raise _refuse(
                "NOT_OCCUPANT", f"seat {command.seat} is not player {command.player_id}'s"
            )
        # At a closed table too: its players still watch as their seats and leave.
        return [SeatTokenReissued(command.seat, command.player_id, command.token_hash)], None
    if state.closed:
        raise _refuse("TABLE_CLOSED", "the table is closed")
    if isinstance(command, SeatPlayer):
        return _seat_player(state, command), None
    if isinstance(command, SitOut):
        player = _seated(state, command.seat)
        if player.sitting_out:
            raise _refuse("ALREADY_SITTING_OUT", f"seat {command.seat} is already sitting out")
        return [PlayerSatOut(command.seat, "requested")], None
    if isinstance(command, SitIn):
        player = _seated(state, command.seat)
        if not player.sitting_out or player.leaving:
            raise _refuse("NOT_SITTING_OUT", f"seat {command.seat} is not sitting out")
        return [
            PlayerSatIn(command.seat),
            *_wait(state, command.seat, command.wait_for_big_blind),
        ], None
    if isinstance(command, AddChips):
        _seated(state, command.seat)
        if command.amount <= 0:
            raise _refuse("BAD_AMOUNT", "the amount of chips to add must be positive")
        if state.dealt_in(command.seat):
            # Even folded: the hand's end sets the seat's stack from the hand's own count.
            raise _refuse("HAND_RUNNING", "chips can be added between hands only")
        return [ChipsAdded(command.seat, command.amount)], None
    if isinstance(command, StartNextHand):
        return _start_hand(state, command.seed, command.public_id)
    if isinstance(command, PlayHand):
        return _play(state, command.command)
    if isinstance(command, TimeOut):
        return _time_out(state, command.seat)
    if isinstance(command, CloseTable):
        if state.hand_running:
            raise _refuse("HAND_RUNNING", "the table closes after the running hand")
        return [TableClosed(command.reason)], None
    raise _refuse("BAD_COMMAND", f"unknown command {command!r}")  # pragma: no cover


def _in_hand(state: TableState, seat: int) -> bool:
    hand = state.hand
    if hand is None:
        return False
    x = hand.seat_state(seat)
    return x is not None and not x.folded


def _seat_player(state: TableState, c: SeatPlayer) -> list[AnyEvent]:
    if not 0 <= c.seat < state.config.seat_count:
        raise _refuse("BAD_SEAT", f"seats are numbered 0 to {state.config.seat_count - 1}")
    if state.player(c.seat) is not None:
        raise _refuse("SEAT_TAKEN", f"seat {c.seat} is taken")
    if state.dealt_in(c.seat):
        # Its last occupant left mid-hand; the hand still counts chips for this seat.
        raise _refuse("SEAT_TAKEN", f"seat {c.seat} is free from the next hand")
    if any(p.player_id == c.player_id for p in state.players):
        raise _refuse("ALREADY_SEATED", f"player {c.player_id} already has a seat at this table")
    if c.stack <= 0:
        raise _refuse("BAD_AMOUNT", "a player sits down with a positive stack")
    if c.ai_level and c.ai_level not in AI_LEVELS:
        raise _refuse("BAD_AI_LEVEL", f"AI level must be {', '.join(AI_LEVELS)}")
    seated = PlayerSeated(c.seat, c.player_id, c.name, c.stack, c.token_hash, c.ai_level)
    return [seated, *_wait(state, c.seat, c.wait_for_big_blind)]


def _wait(state: TableState, seat: int, wait_for_big_blind: bool) -> list[AnyEvent]:
    """The event that makes ``seat`` wait for the big blind, if asked (RULES.md: NLHE only)."""
    if not wait_for_big_blind:
        return []
    if not rules_for(state.config.variant).blinds:
        raise _refuse("NO_BIG_BLIND", f"{state.config.variant} has no big blind to wait for")
    return [PlayerWaitingForBigBlind(seat)]


def _leave(state: TableState, seat: int) -> list[AnyEvent]:
    player = _seated(state, seat)
    if state.hand_running and _in_hand(state, seat):
        if player.leaving:
            raise _refuse("ALREADY_LEAVING", f"seat {seat} leaves when this hand ends")
        # Still holding cards: the seat is played passively (check/fold) and
        # vacated when the hand ends, so no chip in the pot goes missing.
        return [PlayerSatOut(seat, "leaving")]
    stack = player.stack
    hand = state.hand
    if hand is not None and state.hand_running:
        x = hand.seat_state(seat)
        if x is not None:
            stack = x.stack
    return [PlayerLeft(seat, stack)]


def _leave_busted(state: TableState, seat: int, busted_hand: int) -> list[AnyEvent]:
    """The conditional leave of a seat busted since ``busted_hand`` (RULES.md: after a grace
    a busted player leaves the table); refused, changing nothing, unless it still is."""
    player = _seated(state, seat)
    if busted_hand < 0:
        raise _refuse("BAD_AMOUNT", "busted_hand names a hand: it must be positive")
    if player.stack or state.dealt_in(seat) or player.busted_hand != busted_hand:
        raise _refuse(
            "NOT_BUSTED",
            f"seat {seat} is not busted since hand {busted_hand}: it has chips again, "
            "is in the hand in play, or busted again since",
        )
    return [PlayerLeft(seat, 0, True)]


def _start_hand(
    state: TableState, seed: bytes, public_id: bytes
) -> tuple[list[AnyEvent], HandState]:
    if state.hand_running:
        raise _refuse("HAND_RUNNING", "a hand is already running")
    if state.config.hand_limit and state.hands_played >= state.config.hand_limit:
        raise _refuse("HAND_LIMIT", "the table has played all its hands")
    active = state.active_seats()
    if len(active) < 2:
        raise _refuse("NOT_ENOUGH_PLAYERS", "a hand needs two players with chips")
    config = state.config
    positions = next_positions(config.variant, active, config.seat_count, state.positions)
    order = dealing_order(positions.button, active, config.seat_count)
    seats = []
    for seat in order:
        player = state.player(seat)
        assert player is not None
        blind = 0
        if positions.big_blind == seat:
            blind = config.big_blind
        elif positions.small_blind == seat:
            blind = config.small_blind
        seats.append(SeatSetup(seat, player.stack, player.player_id, ante=config.ante, blind=blind))
    deck = shuffled_deck(seed)
    hand_id = f"{config.table_id}:{state.hands_played + 1}"
    setup = HandSetup(
        hand_id=hand_id,
        variant=config.variant,
        button=positions.button,
        seats=tuple(seats),
        deck=deck,
        min_bet=config.big_blind,
        small_bet=config.small_bet,
        big_bet=config.big_bet,
        raise_cap=config.raise_cap,
        allow_all_in=config.allow_all_in,
    )
    named = public_id_from(public_id) if public_id else public_hand_id(setup)
    setup = replace(setup, public_id=named)
    root, leaves = commit_deck(seed, deck)
    committed = DeckCommitted(hand_id, root, leaves, seed)
    hand, hand_events = execute(None, StartHand(setup))
    return [committed, *hand_events, *_after_hand(state, hand_events)], hand


def _play(
    state: TableState, command: Act | Discard | ShowCards | Forfeit
) -> tuple[list[AnyEvent], HandState]:
    if state.hand is None:
        raise _refuse("HAND_NOT_RUNNING", "no hand has been dealt yet")
    if isinstance(command, ShowCards) and state.hand_viewer(command.seat) is None:
        raise _refuse(
            "NOT_YOUR_HAND", f"seat {command.seat}'s cards in the last hand were another player's"
        )
    hand, events = execute(state.hand, command)
    return [*events, *_after_hand(state, events)], hand


def _time_out(state: TableState, seat: int) -> tuple[list[AnyEvent], HandState]:
    hand = state.hand
    if hand is None or hand.ended or hand.actor_seat != seat:
        raise _refuse("NOT_YOUR_TURN", f"seat {seat} is not to act, so its clock cannot expire")
    events: list[AnyEvent] = [ActionTimedOut(seat)]
    after, hand_events = execute(hand, passive_action(hand))
    events.extend(hand_events)
    player = state.player(seat)
    if (
        player is not None
        and not player.ai_level  # an AI's clock runs out only while its workers are away:
        and not player.sitting_out  # sat out, nothing would sit it back in (it plays on)
        and state.config.max_timeouts
        and player.timeouts + 1 >= state.config.max_timeouts
    ):
        events.append(PlayerSatOut(seat, "timeouts"))
    events.extend(_after_hand(state, hand_events))
    return events, after


def passive_action(hand: HandState, gone: bool = False) -> Act | Discard | Forfeit:
    """What a seat that does not act does: stand pat in the draw, check, or fold.

    A seat whose player has ``gone`` (left the table) folds at its turn even when it
    could check, as ``LeaveSeat`` promises: an absent player wins no pot.
    """
    seat = hand.actor_seat
    assert seat is not None
    legal = legal_actions(hand)
    assert legal is not None
    if legal.max_discard is not None:
        return Discard(seat, ())
    if gone:
        return Forfeit(seat)
    return Act(seat, ActionKind.CHECK if legal.can_check else ActionKind.FOLD)


def _after_hand(state: TableState, hand_events: list[HandEvent]) -> list[AnyEvent]:
    """Vacate the seats of players who left during the hand, and close a finished table."""
    if not hand_events or not isinstance(hand_events[-1], HandEnded):
        return []
    out: list[AnyEvent] = []
    final = dict(hand_events[-1].stacks)
    for p in state.players:
        if p.leaving:
            out.append(PlayerLeft(p.seat, final.get(p.seat, p.stack)))
    limit = state.config.hand_limit
    if limit and state.hands_played + 1 >= limit:
        out.append(TableClosed("hand limit reached"))
    return out


# ---------------------------------------------------------------------------
# apply


def fold(
    state: TableState | None, events: Iterable[AnyEvent | Skim], *, skim: bool = False
) -> TableState:
    """The one fold of a table's events: ``state`` (None: no table yet) after ``events``.

    Each event goes through ``apply_event``; with ``skim``, hand events go
    through ``skim_event`` instead, the cheaper projection for hands that are
    over (only what outlives a hand), and a deal or a seat's action may come
    as the :data:`Skim` a rebuild reads from its stored message instead of
    the event. A stream trimmed up to a snapshot folds from it
    (``state_from_snapshot``). Raises ``ValueError`` for an empty fold with no
    state to start from.
    """
    for event in events:
        if skim:
            state = skim_event(state, event)
        else:
            assert not isinstance(event, (SkimmedDeal, SkimmedAction)), "only a skim folds a Skim"
            state = apply_event(state, event)
    if state is None:
        raise ValueError("no events")
    return state


def apply_event(state: TableState | None, event: AnyEvent) -> TableState:
    """Fold one table or hand event into the table state."""
    if isinstance(event, TableCreated):
        return TableState(config=event.config)
    if state is None and isinstance(event, TableSnapshotTaken):
        return state_from_snapshot(event)  # a stream trimmed up to its snapshot
    assert state is not None, "a table's stream starts with TableCreated (or a snapshot)"
    if isinstance(event, PlayerSeated):
        player = Player(
            event.seat, event.player_id, event.name, event.stack, event.token_hash, event.ai_level
        )
        players = tuple(sorted((*state.players, player), key=lambda p: p.seat))
        return replace(state, players=players)
    if isinstance(event, SeatTokenReissued):
        return _update(state, event.seat, token_hash=event.token_hash)
    if isinstance(event, PlayerLeft):
        return _short_handed(
            replace(state, players=tuple(p for p in state.players if p.seat != event.seat))
        )
    if isinstance(event, PlayerSatOut):
        leaving = event.reason == "leaving"
        return _short_handed(
            _update(
                state,
                event.seat,
                sitting_out=True,
                leaving=leaving,
                timeouts=0,
                sit_out_reason=event.reason,
                waiting_for_big_blind=False,
            )
        )
    if isinstance(event, PlayerSatIn):
        return _update(state, event.seat, sitting_out=False, timeouts=0, sit_out_reason="")
    if isinstance(event, PlayerWaitingForBigBlind):
        return _update(state, event.seat, waiting_for_big_blind=True)
    if isinstance(event, ChipsAdded):
        p = state.player(event.seat)
        assert p is not None
        return _update(state, event.seat, stack=p.stack + event.amount, busted_hand=0)
    if isinstance(event, ActionTimedOut):
        p = state.player(event.seat)
        assert p is not None
        return replace(_update(state, event.seat, timeouts=p.timeouts + 1), timing_out=event.seat)
    if isinstance(event, DeckCommitted):
        return replace(state, commitment=event)
    if isinstance(event, TableClosed):
        return replace(state, closed=True)
    if isinstance(event, TableSnapshotTaken):
        return state  # a checkpoint of what the stream already says: nothing happened
    return _apply_hand_event(state, event)


def _update(
    state: TableState,
    seat: int,
    *,
    stack: int | None = None,
    sitting_out: bool | None = None,
    leaving: bool | None = None,
    timeouts: int | None = None,
    sit_out_reason: str | None = None,
    token_hash: str | None = None,
    waiting_for_big_blind: bool | None = None,
    busted_hand: int | None = None,
) -> TableState:
    """``state`` with the given fields of ``seat``'s player changed (None: unchanged).

    Typed parameters rather than ``**changes`` for ``replace``, so mypy checks
    every value (the compiled ``Player`` would refuse a wrong one only at run time).
    """

    def changed(p: Player) -> Player:
        return Player(
            p.seat,
            p.player_id,
            p.name,
            p.stack if stack is None else stack,
            p.token_hash if token_hash is None else token_hash,
            p.ai_level,
            p.sitting_out if sitting_out is None else sitting_out,
            p.leaving if leaving is None else leaving,
            p.timeouts if timeouts is None else timeouts,
            p.sit_out_reason if sit_out_reason is None else sit_out_reason,
            p.waiting_for_big_blind if waiting_for_big_blind is None else waiting_for_big_blind,
            p.busted_hand if busted_hand is None else busted_hand,
        )

    players = tuple(changed(p) if p.seat == seat else p for p in state.players)
    return replace(state, players=players)


def _apply_hand_event(state: TableState, event: HandEvent) -> TableState:
    if isinstance(event, HandStarted):
        return replace(
            _waits_over(state, (s.seat for s in event.setup.seats)),
            hand=apply_hand(None, event),
            hand_events=(event,),
            positions=_positions_of(state, event),
        )
    hand = apply_hand(state.hand, event)
    new = replace(state, hand=hand, hand_events=(*state.hand_events, event))
    return _lasting(state, new, event)


@dataclass(frozen=True, slots=True, init=False)
class SkimmedDeal(Record):
    """All a skim keeps of a ``HandStarted``: the variant and the seats dealt in, in order.

    A rebuild reads these two fields straight from the stored message
    (``felt.messages.events``, the skim column of ``EVENT_KINDS``) rather than
    decoding the whole setup (stacks, deck, ids) of a hand that is over; the
    button and blinds follow from them alone (``next_positions``).
    """

    variant: Variant
    seats: tuple[int, ...]

    def __init__(self, variant: Variant, seats: tuple[int, ...]) -> None:
        object.__setattr__(self, "variant", variant)
        object.__setattr__(self, "seats", seats)


@dataclass(frozen=True, slots=True, init=False)
class SkimmedAction(Record):
    """All a skim keeps of a seat's fold, check, call, bet or draw (``SEAT_ACTIONS``): the seat.

    Read from the stored message like :class:`SkimmedDeal`: the seat acted by
    itself, so its time-outs are no longer consecutive; amounts and cards are
    the hand's, and the hand's end says the stacks. Made per action, so its
    ``__init__`` is written out (``felt.core.record``).
    """

    seat: int

    def __init__(self, seat: int) -> None:
        object.__setattr__(self, "seat", seat)


Skim = SkimmedDeal | SkimmedAction
"""What a rebuild reads of a skimmed hand's event instead of decoding it (``skim_event``)."""


def skim_event(state: TableState | None, event: AnyEvent | Skim) -> TableState:
    """``apply_event`` for an event of a hand that is over, without rebuilding the hand.

    Only what outlives a hand is folded: the button and blinds, time-out
    counts, stacks and hands played. Folding a stream with ``skim_event`` up
    to its last ``HandStarted`` and with ``apply_event`` from there gives the
    same state as ``apply_event`` throughout (hands cannot overlap), only
    faster; between skimmed hands ``hand`` is None. Hand events other than
    ``LASTING_HAND_EVENTS`` change nothing here. A :data:`Skim` is skimmed as
    the event it was read from (a seat's action, the most frequent, first).
    """
    if isinstance(event, SkimmedAction):
        assert state is not None, "a table's stream starts with TableCreated"
        return _seat_acted(state, state, event.seat)
    if isinstance(event, SkimmedDeal):
        assert state is not None, "a table's stream starts with TableCreated"
        return _skim_deal(state, event.variant, event.seats)
    if not is_hand_event(event):
        return apply_event(state, event)
    assert state is not None, "a table's stream starts with TableCreated"
    if isinstance(event, HandStarted):
        setup = event.setup
        return _skim_deal(state, setup.variant, tuple(s.seat for s in setup.seats))
    return _lasting(state, state, event)


def _waits_over(state: TableState, dealt: Iterable[int]) -> TableState:
    """The seats a deal deals in (``dealt``) no longer wait for the big blind (they post it
    now)."""
    seats = set(dealt)
    if not any(p.waiting_for_big_blind and p.seat in seats for p in state.players):
        return state
    players = tuple(
        replace(p, waiting_for_big_blind=False) if p.seat in seats else p for p in state.players
    )
    return replace(state, players=players)


def _skim_deal(state: TableState, variant: Variant, seats: tuple[int, ...]) -> TableState:
    positions = next_positions(variant, seats, state.config.seat_count, state.positions)
    return replace(_waits_over(state, seats), hand=None, hand_events=(), positions=positions)


def _positions_of(state: TableState, event: HandStarted) -> Positions:
    setup = event.setup
    seats = [s.seat for s in setup.seats]
    return next_positions(setup.variant, seats, state.config.seat_count, state.positions)


def _lasting(state: TableState, new: TableState, event: HandEvent) -> TableState:
    """What a hand event changes beyond the hand (``state`` before it, ``new`` after)."""
    if isinstance(event, SEAT_ACTIONS):
        return _seat_acted(state, new, event.seat)
    if isinstance(event, HandEnded):
        return _hand_ended(state, new, event.stacks)
    return new


def _seat_acted(state: TableState, new: TableState, seat: int) -> TableState:
    if state.timing_out == seat:
        return replace(new, timing_out=None)
    # The seat acted by itself: its time-outs are no longer consecutive.
    p = state.player(seat)
    if p is not None and p.timeouts:
        return _update(new, p.seat, timeouts=0)
    return new


def _hand_ended(
    state: TableState, new: TableState, stacks: tuple[tuple[int, int], ...]
) -> TableState:
    final = dict(stacks)
    number = state.hands_played + 1  # this hand's: its id is "<table_id>:<number>"
    players = tuple(
        replace(p, stack=final[p.seat], busted_hand=0 if final[p.seat] else number)
        if p.seat in final
        else p
        for p in new.players
    )
    return _short_handed(replace(new, players=players, hands_played=number))


def _short_handed(state: TableState) -> TableState:
    """Forget the button once fewer than two players would be dealt in.

    RULES.md: the first hand after the table had fewer than two players dealt
    in starts fresh (button on the lowest seat dealt in). Judged from the
    players alone (not the running hand), so that folding a batch with
    ``execute_table`` (whose hand is stale until the batch ends) and
    replaying it event by event agree.
    """
    if state.positions is not None and len(state.active_seats()) < 2:
        return replace(state, positions=None)
    return state


# ---------------------------------------------------------------------------
# snapshots


class SnapshotRefused(ValueError):
    """A snapshot was asked for while a hand runs: only a table between hands has one."""


def snapshot_of(state: TableState, seated_at: dict[int, int]) -> TableSnapshotTaken:
    """The snapshot of ``state`` between hands (``seated_at``: seat -> its PlayerSeated).

    Everything ``apply_event`` keeps that outlives a hand, and nothing of the
    last hand: no cards, deck or seed can be in it. Raises
    :class:`SnapshotRefused` while a hand runs (its cards would be needed).
    """
    if state.hand_running:
        raise SnapshotRefused("a table is snapshotted between hands only")
    return TableSnapshotTaken(
        state.config,
        state.players,
        state.hands_played,
        state.positions,
        state.timing_out,
        state.closed,
        tuple(sorted((p.seat, seated_at.get(p.seat, 0)) for p in state.players)),
    )


def state_from_snapshot(snapshot: TableSnapshotTaken) -> TableState:
    """The table a snapshot records, without a last hand (the deal after it brings one)."""
    return TableState(
        config=snapshot.config,
        players=snapshot.players,
        hands_played=snapshot.hands_played,
        positions=snapshot.positions,
        closed=snapshot.closed,
        timing_out=snapshot.timing_out,
    )


def replay_table(events: Iterable[AnyEvent]) -> TableState:
    """Rebuild a table from its whole stream (or from a snapshot and the events after it)."""
    return fold(None, events)
