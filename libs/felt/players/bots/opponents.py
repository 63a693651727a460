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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace

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


@dataclass(frozen=True, slots=True)
class SeatStats:
    """One seat's public record at a table (counts over completed hands).

    First round = preflop (Hold'em) or before the draw (Draw); "later" means
    every betting round after it.

    - ``hands``: hands dealt in; ``vpip``: hands it called or bet in the
      first round (blinds and antes are not voluntary); ``pfr``: hands it bet
      or raised in the first round.
    - ``first_faced``/``first_folded``: hands it faced a raise (a bet above the
      blinds) in the first round / folded to it: how much it gives up to steals.
    - ``bets``/``calls``/``checks``: later-round actions (bets count raises),
      for aggression; ``faced``/``folded``: later-round decisions facing a bet
      / folds among them; ``hu_faced``/``hu_folded``: of those, the ones in a
      pot down to two players (dealt heads-up or left so): a steal's odds, which
      the all-pot rate overstates at a full table (folding to a bet into
      several players is a different decision from folding heads-up).
    - ``open_chances``/``opened``: hands it was first in (every seat before it
      in the first round folded) / raised then; ``late_open_chances``/
      ``late_opened``: of those, with at most two seats left to act behind it
      (the button and the small blind at a full table, the button heads-up).
      An open raise's range is this rate where it was made (a button opening
      half its hands does not hold the tight range its overall PFR suggests).
    - ``saw_later``: hands it reached the second betting round; ``showdowns``:
      hands it was still in at the end against someone else.
    - ``shown``: showdowns where its cards were shown; ``shown_bettor``: of
      those, hands it had bet in a later round; ``shown_bettor_weak``: of
      those, the shown hand was at most one pair (a bluff or a thin bet).
    - Draw only: ``pat``: hands it stood pat; ``shown_drawn``: shown hands
      after standing pat or drawing two or three; ``shown_drawn_odd``: of
      those, the shown hand did not fit the draw (pat with less than a
      straight, or two or three drawn to less than a pair).
    """

    hands: int = 0
    vpip: int = 0
    pfr: int = 0
    first_faced: int = 0
    first_folded: int = 0
    bets: int = 0
    calls: int = 0
    checks: int = 0
    faced: int = 0
    folded: int = 0
    hu_faced: int = 0
    hu_folded: int = 0
    open_chances: int = 0
    opened: int = 0
    late_open_chances: int = 0
    late_opened: int = 0
    saw_later: int = 0
    showdowns: int = 0
    shown: int = 0
    shown_bettor: int = 0
    shown_bettor_weak: int = 0
    pat: int = 0
    shown_drawn: int = 0
    shown_drawn_odd: int = 0

    def __add__(self, other: SeatStats) -> SeatStats:
        return SeatStats(
            *(getattr(self, f.name) + getattr(other, f.name) for f in fields(SeatStats))
        )

    @staticmethod
    def rate(hits: int, tries: int, prior: float, weight: float) -> float:
        """``hits / tries`` shrunk toward ``prior`` as if ``weight`` prior trials were seen.

        With no data this is the prior; with many hands it is the observed rate.
        """
        return (hits + prior * weight) / (tries + weight)

    # Rates with the priors of an ordinary, reasonable player (the hard bot's defaults).
    def vpip_rate(self, prior: float = 0.4, weight: float = 10) -> float:
        return self.rate(self.vpip, self.hands, prior, weight)

    def pfr_rate(self, prior: float = 0.2, weight: float = 10) -> float:
        return self.rate(self.pfr, self.hands, prior, weight)

    def steal_fold_rate(self, prior: float = 0.5, weight: float = 8) -> float:
        """How often it folds to a first-round raise."""
        return self.rate(self.first_folded, self.first_faced, prior, weight)

    def aggression(self, prior: float = 0.3, weight: float = 15) -> float:
        """Share of its later-round actions (other than folds) that are bets or raises."""
        return self.rate(self.bets, self.bets + self.calls + self.checks, prior, weight)

    def fold_rate(self, prior: float = 0.4, weight: float = 10) -> float:
        """How often it folds to a later-round bet."""
        return self.rate(self.folded, self.faced, prior, weight)

    def hu_fold_rate(self, prior: float = 0.4, weight: float = 10) -> float:
        """How often it folds to a later-round bet in a pot down to two players."""
        return self.rate(self.hu_folded, self.hu_faced, prior, weight)

    def open_rate(self, late: bool, prior: float, weight: float = 10) -> float:
        """How often it raises when first in, from late (``late``) or earlier seats."""
        if late:
            hits, tries = self.late_opened, self.late_open_chances
        else:
            hits = max(0, self.opened - self.late_opened)
            tries = max(hits, self.open_chances - self.late_open_chances)
        return self.rate(min(hits, tries), tries, prior, weight)

    def pat_rate(self, prior: float = 0.05, weight: float = 5) -> float:
        """How often it stands pat when it reaches the draw (capped at every such hand: a
        request's counts are hostile until checked, and a rate above 1 would turn the draw
        model's weights negative)."""
        return self.rate(min(self.pat, self.saw_later), self.saw_later, prior, weight)

    def bluff_rate(self, prior: float = 0.3, weight: float = 5) -> float:
        """Share of its shown later-round bets that were at most one pair."""
        return self.rate(self.shown_bettor_weak, self.shown_bettor, prior, weight)

    def odd_draw_rate(self, prior: float = 0.1, weight: float = 5) -> float:
        """Draw: share of its shown hands that did not fit how many cards it drew."""
        return self.rate(self.shown_drawn_odd, self.shown_drawn, prior, weight)


# Per-seat statistics of one table; a missing seat means nothing seen yet.
TableStats = Mapping[int, SeatStats]
EMPTY = SeatStats()


def stats_of(table: TableStats | None, seat: int) -> SeatStats:
    """A seat's stats, or empty ones (all rates at their priors)."""
    if table is None:
        return EMPTY
    return table.get(seat, EMPTY)


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
