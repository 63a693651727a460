"""What every bot shares: the decision signature, the public reading of a hand, and
helpers that turn an intention ("bet about half the pot") into a legal command.

A bot sees exactly what its seat may see (``HandView`` from ``views.view_for``
and the history redacted by ``views.redact_all``) plus the legal actions the
server offers, and nothing else: no state, no deck, no other seat's hidden
cards. Every helper here returns a command built from the offered
``LegalActions``, so a bot cannot produce an illegal move by construction.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from felt.core.cards import Card
from felt.core.rules.commands import Act, ActionKind, Discard
from felt.core.rules.config import Variant
from felt.core.rules.events import (
    BetPlaced,
    BlindPosted,
    CardsDrawn,
    Event,
    PlayerCalled,
    PlayerChecked,
    PlayerFolded,
    Street,
    StreetStarted,
)
from felt.core.rules.legal import LegalActions
from felt.core.rules.variants import rules_for
from felt.core.rules.views import HandView, SeatView
from felt.players.bots.opponents import TableStats

Decision = Act | Discard


class Bot(Protocol):
    """A poker AI: a pure function of its seat's view, the redacted history and the legal moves.

    ``rng`` is supplied by the caller so a decision is reproducible from a seed;
    a bot keeps no state between calls (the same inputs give the same output).
    ``table`` is the table's opponent model (per-seat :class:`SeatStats` built
    from public events of earlier hands, ``felt.players.bots.opponents``), or None
    when nothing is known; the caller keeps it, so a bot stays stateless.
    """

    name: str

    def decide(
        self,
        view: HandView,
        history: Sequence[Event],
        legal: LegalActions,
        rng: random.Random,
        table: TableStats | None = None,
    ) -> Decision:
        """Choose one of the legal actions in ``legal``."""
        ...


# --------------------------------------------------------------------------- public history


@dataclass(frozen=True, slots=True)
class PublicAction:
    """One betting action anyone at the table saw. ``kind`` is fold/check/call/bet.

    ``bet`` covers both bets and raises (``BetPlaced``); ``to`` is the round total
    a bet raised to, ``amount`` the chips added.
    """

    street: Street
    seat: int
    kind: str
    to: int = 0
    amount: int = 0
    all_in: bool = False


@dataclass(frozen=True, slots=True)
class Situation:
    """The decision-relevant facts of a view plus its public history, computed once.

    ``order`` lists live seats (not folded) in post-flop acting order (clockwise
    from the left of the button), so the last of them has position.
    ``draws`` maps a seat to how many cards it drew (Draw, once it drew).
    ``dealt`` is how many seats were dealt in (2: the hand was heads-up from
    the start, not just down to two players). ``blinds`` are the seats that posted a
    blind this hand, read from the public events rather than from seat order: at a
    live table a dead small blind, or a newcomer posting between the button and the
    blinds, moves who the first two dealt are.
    """

    seat: int
    variant: Variant
    street: Street
    hole: tuple[Card, ...]
    board: tuple[Card, ...]
    pot: int
    to_call: int
    stack: int
    bet: int
    opponents: tuple[SeatView, ...]
    order: tuple[int, ...]
    unit: int
    actions: tuple[PublicAction, ...]
    draws: dict[int, int] = field(default_factory=dict)
    dealt: int = 0
    blinds: frozenset[int] = frozenset()

    @property
    def in_position(self) -> bool:
        """Acts last after the first round (the strongest seat to play from)."""
        return bool(self.order) and self.order[-1] == self.seat

    @property
    def opponent_count(self) -> int:
        return len(self.opponents)

    @property
    def effective_stack(self) -> int:
        """Chips behind that can still change hands: ours capped by the biggest opponent's."""
        if not self.opponents:
            return self.stack
        theirs = max(o.stack + o.bet - self.bet for o in self.opponents)
        return max(0, min(self.stack, theirs))

    @property
    def spr(self) -> float:
        """Stack-to-pot ratio: low SPR means a good hand should simply get all-in."""
        return self.effective_stack / max(self.pot, 1)

    @property
    def pot_odds(self) -> float:
        """Share of the final pot a call costs: the equity a call needs to break even."""
        if self.to_call <= 0:
            return 0.0
        return self.to_call / (self.pot + self.to_call)

    def on(self, street: Street) -> tuple[PublicAction, ...]:
        return tuple(a for a in self.actions if a.street == street)

    def bets_on(self, street: Street, seat: int | None = None) -> int:
        """How many bets/raises were made on ``street`` (by ``seat`` if given)."""
        return sum(
            1
            for a in self.actions
            if a.street == street and a.kind == "bet" and seat in (None, a.seat)
        )

    def last_aggressor(self, street: Street) -> int | None:
        seats = [a.seat for a in self.actions if a.street == street and a.kind == "bet"]
        return seats[-1] if seats else None

    def seat_view(self, seat: int) -> SeatView:
        for o in self.opponents:
            if o.seat == seat:
                return o
        raise KeyError(seat)


def first_street(variant: Variant) -> Street:
    return rules_for(variant).first_street


def public_actions(
    variant: Variant, history: Sequence[Event]
) -> tuple[list[PublicAction], dict[int, int], frozenset[int]]:
    """Betting actions, draw counts and the seats that posted a blind, from a redacted
    history (public facts only)."""
    street = first_street(variant)
    out: list[PublicAction] = []
    draws: dict[int, int] = {}
    blinds: set[int] = set()
    for e in history:
        if isinstance(e, BlindPosted):
            blinds.add(e.seat)
        elif isinstance(e, StreetStarted):
            street = e.street
        elif isinstance(e, BetPlaced):
            out.append(PublicAction(street, e.seat, "bet", e.to, e.amount, e.all_in))
        elif isinstance(e, PlayerCalled):
            out.append(PublicAction(street, e.seat, "call", 0, e.amount, e.all_in))
        elif isinstance(e, PlayerChecked):
            out.append(PublicAction(street, e.seat, "check"))
        elif isinstance(e, PlayerFolded):
            out.append(PublicAction(street, e.seat, "fold"))
        elif isinstance(e, CardsDrawn):
            draws[e.seat] = len(e.drawn)
    return out, draws, frozenset(blinds)


def situation(view: HandView, history: Sequence[Event], legal: LegalActions) -> Situation:
    """Read a view and its history into a :class:`Situation` for ``legal.seat``."""
    seat = legal.seat
    me = view.seat(seat)
    hole = tuple(c for c in me.cards if c is not None)
    live = [s for s in view.seats if not s.folded]
    opponents = tuple(s for s in live if s.seat != seat)
    actions, draws, blinds = public_actions(view.variant, history)
    game = rules_for(view.variant)
    if not game.fixed_limit:
        unit = max(view.min_bet, 1)
    else:
        current = game.round_of(view.street)
        big = current is not None and current.big_bet
        unit = max(view.big_bet if big else view.small_bet, 1)
    return Situation(
        seat=seat,
        variant=view.variant,
        street=view.street,
        hole=hole,
        board=view.board,
        pot=view.pot,
        to_call=legal.call_amount or 0,
        stack=me.stack,
        bet=me.bet,
        opponents=opponents,
        order=tuple(s.seat for s in live),
        unit=unit,
        actions=tuple(actions),
        draws=draws,
        dealt=len(view.seats),
        blinds=blinds,
    )


# --------------------------------------------------------------------------- legal commands


def check_or_fold(legal: LegalActions) -> Act:
    """Give up cheaply: check when free, otherwise fold."""
    if legal.can_check:
        return Act(legal.seat, ActionKind.CHECK)
    if legal.can_fold:
        return Act(legal.seat, ActionKind.FOLD)
    return check_or_call(legal)  # pragma: no cover - a betting seat can always do one


def check_or_call(legal: LegalActions) -> Act:
    """Continue without raising: call what is owed (all-in if short), or check."""
    if legal.call_amount is not None:
        return Act(legal.seat, ActionKind.CALL)
    if legal.can_check:
        return Act(legal.seat, ActionKind.CHECK)
    return Act(legal.seat, ActionKind.FOLD)  # pragma: no cover


def bet_to(legal: LegalActions, to: float) -> Act:
    """Bet or raise to about ``to`` chips (round total), clamped to the legal range.

    Falls back to calling/checking when raising is not allowed (raise cap,
    betting not reopened, opponents all-in), which keeps intentions legal.
    """
    if legal.min_raise_to is None or legal.max_raise_to is None:
        return check_or_call(legal)
    amount = round(to)
    amount = max(legal.min_raise_to, min(legal.max_raise_to, amount))
    kind = ActionKind.BET if legal.bet else ActionKind.RAISE
    return Act(legal.seat, kind, amount)


def all_in(legal: LegalActions) -> Act:
    """Put every chip in: the largest legal raise, or a call if raising is closed."""
    if legal.max_raise_to is not None:
        return bet_to(legal, legal.max_raise_to)
    return check_or_call(legal)


def pot_bet_to(sit: Situation, legal: LegalActions, fraction: float) -> Act:
    """Bet/raise sized as ``fraction`` of the pot after calling (the usual pot-relative sizing).

    A raise is sized as players size it: call first, then add ``fraction`` of
    the pot that results.
    """
    current = sit.bet + sit.to_call
    pot_after_call = sit.pot + sit.to_call
    return bet_to(legal, current + fraction * pot_after_call)


def discard(legal: LegalActions, hand: Sequence[Card], keep: Sequence[Card]) -> Discard:
    """Discard the cards of ``hand`` not in ``keep``, never more than allowed."""
    limit = legal.max_discard if legal.max_discard is not None else 0
    kept = set(keep)
    throw = [c for c in hand if c not in kept]
    if len(throw) > limit:
        # The rules cap the discard: throw the lowest-ranked extras, keep the highest.
        throw = sorted(throw, key=lambda c: c >> 2)[:limit]
    return Discard(legal.seat, tuple(throw))
