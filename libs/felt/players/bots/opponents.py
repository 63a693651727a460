"""An opponent model from public information: each seat's playing style, as counts.

A table's public events (what every spectator sees: actions, draw counts,
boards, cards shown at showdown) are folded hand by hand into per-seat
:class:`SeatStats`: how often a seat enters pots (VPIP), raises in the first
round (PFR), bets after it, folds to a bet, reaches showdown, and what it
showed after betting or after a given draw. Counts rather than ratios, so a
reader can shrink a rate to a prior while it has seen few hands
(:meth:`SeatStats.rate`).

Why only public events: a bot may use the public history of the hand and the
table (RULES.md), never a hidden card. :class:`ModelBuilder` reads no hidden
card by construction: it looks at hole cards only through ``CardsShown``
(public) and at draws only through how many cards were drawn; folding the
spectator-redacted stream or the full stream gives the same model (tested).

The builder is an incremental fold (``observe`` one event at a time), so the
table service keeps one per table and only folds new events, and the ladder
keeps one per table across hands. A hand's counts are added when it ends, so
the model describes completed hands only. A seat whose player changes
(``PlayerSeated``/``PlayerLeft``) starts again from nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from felt.core.cards import Card
from felt.core.evaluator import HandCategory, category_of, evaluate
from felt.core.rules.events import (
    BetPlaced,
    BlindPosted,
    CardsDrawn,
    CardsShown,
    HandEnded,
    HandStarted,
    PlayerCalled,
    PlayerChecked,
    PlayerFolded,
    StreetStarted,
)
from felt.core.table.events import PlayerLeft, PlayerSeated
from felt.core.table.stats import EMPTY, SeatStats, TableStats, stats_of

__all__ = ["EMPTY", "ModelBuilder", "SeatStats", "TableStats", "build_stats", "stats_of"]


# Counts that are at most one per hand (set, not added, when seen again).
_FLAGS = frozenset(
    (
        "vpip",
        "pfr",
        "saw_later",
        "pat",
        "open_chances",
        "opened",
        "late_open_chances",
        "late_opened",
    )
)


@dataclass(slots=True)
class _Hand:
    """Scratch state of the hand being folded (public facts only)."""

    seats: tuple[int, ...]
    first: bool = True  # in the first betting round
    current: int = 0  # highest round bet
    raised: bool = False  # a bet/raise was made this round (beyond blinds)
    entered: bool = False  # someone called or raised in the first round
    bets: dict[int, int] = field(default_factory=dict)  # round bets per seat
    folded: set[int] = field(default_factory=set)
    board: list[Card] = field(default_factory=list)
    draws: dict[int, int] = field(default_factory=dict)
    later_bettor: set[int] = field(default_factory=set)
    shown: dict[int, tuple[Card, ...]] = field(default_factory=dict)
    counts: dict[int, dict[str, int]] = field(default_factory=dict)

    def add(self, seat: int, name: str, value: int = 1) -> None:
        c = self.counts.setdefault(seat, {})
        c[name] = value if name in _FLAGS else c.get(name, 0) + value


class ModelBuilder:
    """Folds a table's public event stream into per-seat :class:`SeatStats`.

    Feed it every event of the table in order (``observe``); read ``stats``
    whenever a decision needs it. Hidden cards are never read, so the redacted
    stream and the full stream give the same result.
    """

    def __init__(self) -> None:
        self._stats: dict[int, SeatStats] = {}
        self._hand: _Hand | None = None

    @property
    def stats(self) -> dict[int, SeatStats]:
        """The per-seat stats of completed hands (a copy: the builder keeps folding)."""
        return dict(self._stats)

    def observe_all(self, events: Iterable[object]) -> ModelBuilder:
        for e in events:
            self.observe(e)
        return self

    def observe(self, event: object) -> None:
        """Fold one event (hand or table event; anything else is ignored)."""
        if isinstance(event, PlayerSeated | PlayerLeft):
            self._stats.pop(event.seat, None)
            return
        if isinstance(event, HandStarted):
            seats = tuple(s.seat for s in event.setup.seats)
            self._hand = _Hand(seats)
            for s in seats:
                self._hand.add(s, "hands")
            return
        h = self._hand
        if h is None:
            return
        if isinstance(event, BlindPosted):
            h.bets[event.seat] = h.bets.get(event.seat, 0) + event.amount
            h.current = max(h.current, h.bets[event.seat])
        elif isinstance(event, StreetStarted):
            if h.first:
                for s in h.seats:
                    if s not in h.folded:
                        h.add(s, "saw_later")
            h.first, h.current, h.raised, h.bets = False, 0, False, {}
            h.board.extend(event.cards)
        elif isinstance(event, PlayerFolded | PlayerChecked | PlayerCalled | BetPlaced):
            self._action(h, event)
        elif isinstance(event, CardsDrawn):
            h.draws[event.seat] = len(event.drawn)
            if not event.drawn:
                h.add(event.seat, "pat")
        elif isinstance(event, CardsShown):
            h.shown[event.seat] = event.cards
        elif isinstance(event, HandEnded):
            self._end(h)
            self._hand = None

    def _action(self, h: _Hand, e: PlayerFolded | PlayerChecked | PlayerCalled | BetPlaced) -> None:
        seat = e.seat
        facing = h.bets.get(seat, 0) < h.current
        if h.first:
            if not h.entered:
                # First in: every seat before it folded (or, in Draw, checked).
                late = len(h.seats) - len(h.folded) - 1 <= 2
                h.add(seat, "open_chances")
                if late:
                    h.add(seat, "late_open_chances")
                if isinstance(e, BetPlaced):
                    h.add(seat, "opened")
                    if late:
                        h.add(seat, "late_opened")
            if isinstance(e, PlayerCalled | BetPlaced):
                h.entered = True
            if facing and h.raised:
                h.add(seat, "first_faced")
                if isinstance(e, PlayerFolded):
                    h.add(seat, "first_folded")
                elif isinstance(e, BetPlaced):
                    h.add(seat, "reraised")
            if isinstance(e, PlayerCalled | BetPlaced):
                h.add(seat, "vpip")
            if isinstance(e, BetPlaced):
                h.add(seat, "pfr")
        else:
            if facing:
                h.add(seat, "faced")
                heads_up = len(h.seats) - len(h.folded) == 2
                if heads_up:
                    h.add(seat, "hu_faced")
                if isinstance(e, PlayerFolded):
                    h.add(seat, "folded")
                    if heads_up:
                        h.add(seat, "hu_folded")
            if isinstance(e, BetPlaced):
                h.add(seat, "bets")
                h.later_bettor.add(seat)
            elif isinstance(e, PlayerCalled):
                h.add(seat, "calls")
            elif isinstance(e, PlayerChecked):
                h.add(seat, "checks")
        if isinstance(e, PlayerFolded):
            h.folded.add(seat)
        elif isinstance(e, PlayerCalled):
            h.bets[seat] = h.bets.get(seat, 0) + e.amount
        elif isinstance(e, BetPlaced):
            h.bets[seat] = e.to
            h.current = max(h.current, e.to)
            h.raised = True

    def _end(self, h: _Hand) -> None:
        live = [s for s in h.seats if s not in h.folded]
        if len(live) >= 2:
            for s in live:
                h.add(s, "showdowns")
        for seat, cards in h.shown.items():
            if seat not in live or len(live) < 2 or len(cards) + len(h.board) < 5:
                continue
            h.add(seat, "shown")
            category = category_of(evaluate([*cards, *h.board]))
            if seat in h.later_bettor:
                h.add(seat, "shown_bettor")
                if category <= HandCategory.PAIR:
                    h.add(seat, "shown_bettor_weak")
            drew = h.draws.get(seat)
            if drew == 0 or drew in (2, 3):
                h.add(seat, "shown_drawn")
                floor = HandCategory.STRAIGHT if drew == 0 else HandCategory.PAIR
                if category < floor:
                    h.add(seat, "shown_drawn_odd")
        for seat, c in h.counts.items():
            self._stats[seat] = self._stats.get(seat, EMPTY) + replace(EMPTY, **c)


def build_stats(events: Iterable[object]) -> dict[int, SeatStats]:
    """The per-seat stats of a whole stream (a fresh fold)."""
    return ModelBuilder().observe_all(events).stats
