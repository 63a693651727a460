"""A hand history: one hand, street by street, as one reader may see it.

:func:`build_history` reads a hand's stored events (its ``DeckCommitted``,
``HandStarted`` ... ``HandEnded``, and any voluntary show after it), first
redacts them for the viewer (``felt.tools.history.viewer``) and then builds the
history from the redacted events alone: nothing here can show a card the
redaction hid, since it never holds one. The text and JSON forms
(``felt.tools.history.text``, ``felt.tools.history.json_form``) only format this.

Hand names at showdown are computed from the shown cards (and the board) by
the variant's own ranking, so a hand shown but beaten gets its name too; the
winning hand of each pot is the one the rules recorded (``PotAwarded.hand``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from felt.core.cards import Card
from felt.core.evaluator import describe
from felt.core.rules.config import Variant, public_hand_id
from felt.core.rules.events import (
    AntePosted,
    BetPlaced,
    BlindPosted,
    CardsDrawn,
    CardsMucked,
    CardsShown,
    HandEnded,
    HandStarted,
    HoleCardsDealt,
    MaybeCard,
    PlayerCalled,
    PlayerChecked,
    PlayerFolded,
    PotAwarded,
    Street,
    StreetStarted,
    UncalledBetReturned,
)
from felt.core.rules.variants import hand_value, rules_for
from felt.core.table.events import ActionTimedOut, AnyEvent, DeckCommitted
from felt.tools.history.viewer import Viewer, visible_events

__all__ = [
    "Action",
    "HandHistory",
    "HistoryError",
    "SeatLine",
    "SeatResult",
    "Shown",
    "StreetLog",
    "build_history",
]


class HistoryError(ValueError):
    """The events are not one hand (no ``HandStarted``, or another hand's events)."""


@dataclass(frozen=True, slots=True)
class SeatLine:
    """A seat dealt in: who, the chips it started with, and its cards as the viewer saw them.

    ``cards`` are the seat's cards at the end of the hand (after a draw);
    ``None`` for each card the viewer did not see. ``dealt`` are the cards
    first dealt. ``blind`` is the blind the seat owed (0: none).
    """

    seat: int
    player_id: str
    name: str
    stack: int
    dealt: tuple[MaybeCard, ...]
    cards: tuple[MaybeCard, ...]
    button: bool
    blind: int = 0


@dataclass(frozen=True, slots=True)
class Action:
    """One thing a seat did (or had done for it) in a round.

    ``kind``: ``posts_ante``, ``posts_blind``, ``folds``, ``checks``,
    ``calls``, ``bets``, ``raises``, ``draws`` (``drew`` cards; 0 is standing
    pat), ``returned`` (an uncalled bet given back), ``timed_out``.
    ``amount`` is what the seat put in (or got back); ``to`` the total it
    bet this round, for bets and raises.
    """

    seat: int
    kind: str
    amount: int = 0
    to: int = 0
    all_in: bool = False
    drew: int = 0
    discarded: tuple[MaybeCard, ...] = ()
    drawn: tuple[MaybeCard, ...] = ()


@dataclass(slots=True)
class StreetLog:
    """One round: its name, the board cards it dealt, the pot when it began, and its actions."""

    street: Street
    cards: tuple[Card, ...] = ()
    board: tuple[Card, ...] = ()
    pot: int = 0
    actions: list[Action] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Shown:
    """A hand shown (``cards``, its ``hand`` name) or mucked unseen (``mucked``)."""

    seat: int
    cards: tuple[Card, ...] = ()
    hand: str = ""
    mucked: bool = False
    voluntary: bool = False


@dataclass(frozen=True, slots=True)
class SeatResult:
    seat: int
    start: int
    end: int

    @property
    def net(self) -> int:
        return self.end - self.start


@dataclass(slots=True)
class HandHistory:
    """A hand as one reader may see it (see the module docstring)."""

    hand_id: str
    table_hand: str
    table_id: str
    variant: Variant
    viewer: Viewer
    button: int
    min_bet: int
    small_bet: int
    big_bet: int
    ante: int
    small_blind: int
    big_blind: int
    seats: list[SeatLine]
    streets: list[StreetLog]
    showdown: list[Shown]
    pots: list[PotAwarded]  # as the rules awarded them: 0 the main pot, then side pots
    results: list[SeatResult]
    shown_after: list[Shown]
    started_at: datetime | None = None
    commitment: str = ""
    ended: bool = False

    def seat(self, number: int) -> SeatLine:
        for line in self.seats:
            if line.seat == number:
                return line
        raise KeyError(number)

    def name(self, seat: int) -> str:
        """How the text names a seat: its player's name, else its player id, else ``Seat N``."""
        for line in self.seats:
            if line.seat == seat and (line.name or line.player_id):
                return line.name or line.player_id
        return f"Seat {seat}"


def _with_name(shown: Shown, variant: Variant, board: tuple[Card, ...]) -> Shown:
    """``shown`` with its hand's name, when its cards and the board make a hand."""
    if shown.mucked or not 5 <= len(shown.cards) + len(board) <= 7:
        return shown
    value = hand_value(rules_for(variant).ranking, shown.cards, board)
    return replace(shown, hand=describe(value))


def build_history(
    events: Sequence[AnyEvent],
    viewer: Viewer,
    *,
    table_id: str = "",
    hand_id: str = "",
    names: Mapping[int, str] | None = None,
    started_at: datetime | None = None,
) -> HandHistory:
    """``events`` (one hand's stored events, unredacted or not) as ``viewer`` may see them.

    ``hand_id`` is the hand's public id (by default the setup's, ``public_hand_id``;
    ``table_hand`` keeps the table's own ``<table>:<n>``); ``names``
    gives seats' display names (the hand's events hold player ids only).
    """
    raw = next((e for e in events if isinstance(e, HandStarted)), None)
    if raw is None:
        raise HistoryError("a hand's events include its HandStarted")
    public_id = hand_id or public_hand_id(raw.setup)
    seen = visible_events(events, viewer)
    start = next(e for e in seen if isinstance(e, HandStarted))
    setup = start.setup
    names = names or {}
    hole: dict[int, list[MaybeCard]] = {s.seat: [] for s in setup.seats}
    dealt: dict[int, tuple[MaybeCard, ...]] = {}
    streets: list[StreetLog] = []
    showdown: list[Shown] = []
    after: list[Shown] = []
    pots: list[PotAwarded] = []
    final: dict[int, int] = {}
    board: list[Card] = []
    pot = 0
    commitment = ""
    ended = False
    first = rules_for(setup.variant).rounds[0].street

    def current() -> StreetLog:
        if not streets:
            streets.append(StreetLog(first))
        return streets[-1]

    for e in seen:
        if isinstance(e, DeckCommitted):
            commitment = e.root
        elif isinstance(e, AntePosted):
            pot += e.amount
            current().actions.append(Action(e.seat, "posts_ante", e.amount, all_in=e.all_in))
        elif isinstance(e, BlindPosted):
            pot += e.amount
            current().actions.append(Action(e.seat, "posts_blind", e.amount, all_in=e.all_in))
        elif isinstance(e, HoleCardsDealt):
            dealt[e.seat] = e.cards
            hole[e.seat] = list(e.cards)
        elif isinstance(e, PlayerFolded):
            current().actions.append(Action(e.seat, "folds"))
        elif isinstance(e, PlayerChecked):
            current().actions.append(Action(e.seat, "checks"))
        elif isinstance(e, PlayerCalled):
            pot += e.amount
            current().actions.append(Action(e.seat, "calls", e.amount, all_in=e.all_in))
        elif isinstance(e, BetPlaced):
            kind = "raises" if _raised(current()) else "bets"
            pot += e.amount
            current().actions.append(Action(e.seat, kind, e.amount, e.to, e.all_in))
        elif isinstance(e, CardsDrawn):
            _draw(hole, e)
            current().actions.append(
                Action(e.seat, "draws", drew=len(e.drawn), discarded=e.discarded, drawn=e.drawn)
            )
        elif isinstance(e, StreetStarted):
            if e.street == Street.SHOWDOWN or (streets and streets[-1].street == e.street):
                continue
            board.extend(e.cards)
            streets.append(StreetLog(e.street, e.cards, tuple(board), pot))
        elif isinstance(e, UncalledBetReturned):
            pot -= e.amount
            current().actions.append(Action(e.seat, "returned", e.amount))
        elif isinstance(e, ActionTimedOut):
            current().actions.append(Action(e.seat, "timed_out"))
        elif isinstance(e, CardsShown):
            hole[e.seat] = list(e.cards)
            shown = Shown(e.seat, e.cards, voluntary=e.voluntary)
            (after if ended or e.voluntary else showdown).append(shown)
        elif isinstance(e, CardsMucked):
            showdown.append(Shown(e.seat, mucked=True))
        elif isinstance(e, PotAwarded):
            pots.append(e)
        elif isinstance(e, HandEnded):
            final = dict(e.stacks)
            ended = True
    # Named once the board is complete: an all-in's cards are shown before the board is dealt.
    showdown = [_with_name(s, setup.variant, tuple(board)) for s in showdown]
    after = [_with_name(s, setup.variant, tuple(board)) for s in after]
    seats = [
        SeatLine(
            seat=s.seat,
            player_id=s.player_id,
            name=names.get(s.seat, ""),
            stack=s.stack,
            dealt=dealt.get(s.seat, ()),
            cards=tuple(hole[s.seat]),
            button=s.seat == setup.button,
            blind=s.blind,
        )
        for s in setup.seats
    ]
    blinds = sorted({s.blind for s in setup.seats if s.blind})
    return HandHistory(
        hand_id=public_id or setup.hand_id,
        table_hand=setup.hand_id,
        table_id=table_id,
        variant=setup.variant,
        viewer=viewer,
        button=setup.button,
        min_bet=setup.min_bet,
        small_bet=setup.small_bet,
        big_bet=setup.big_bet,
        ante=max((s.ante for s in setup.seats), default=0),
        small_blind=blinds[0] if len(blinds) > 1 else 0,
        big_blind=blinds[-1] if blinds else 0,
        seats=seats,
        streets=streets,
        showdown=showdown,
        pots=pots,
        results=[SeatResult(s.seat, s.stack, final[s.seat]) for s in setup.seats if final],
        shown_after=after,
        started_at=started_at,
        commitment=commitment,
        ended=ended,
    )


def _raised(street: StreetLog) -> bool:
    """Whether a bet (or a blind) was made in this round already, so the next one raises."""
    return any(a.kind in ("bets", "raises", "posts_blind") for a in street.actions)


def _draw(hole: dict[int, list[MaybeCard]], e: CardsDrawn) -> None:
    """The seat's cards after the draw: discards out (where they were known), new cards in."""
    cards = hole[e.seat]
    for card in e.discarded:
        if card is not None and card in cards:
            cards.remove(card)
    known = [c for c in cards if c is not None]
    hidden = len(cards) - len(known) - sum(1 for c in e.discarded if c is None)
    hole[e.seat] = [*known, *([None] * max(hidden, 0)), *e.drawn]
