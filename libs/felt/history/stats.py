"""How one hand went for one seat, and a player's statistics over many hands.

The usual measures of a player's style, for both games: VPIP (chips put in
the pot voluntarily in the first betting round: a call, bet or raise, not a
blind or an ante), PFR (a bet or raise in the first betting round; Hold'em's
pre-flop raise), went to showdown, won at showdown (a share of a pot awarded
at the showdown). Only betting facts are read, never cards, so these need no
redaction: any reader who may see the hand sees the same numbers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from felt.rules.events import (
    BetPlaced,
    CardsMucked,
    CardsShown,
    HandEnded,
    HandStarted,
    PlayerCalled,
    PotAwarded,
    Street,
    StreetStarted,
)
from felt.table.events import AnyEvent

__all__ = ["PlayerStats", "SeatSummary", "summarise", "totals"]


@dataclass(frozen=True, slots=True)
class SeatSummary:
    """One seat's hand: chips won or lost, and the four style measures."""

    seat: int
    net: int
    voluntarily_put_in: bool
    raised_first_round: bool
    went_to_showdown: bool
    won_at_showdown: bool


@dataclass(frozen=True, slots=True)
class PlayerStats:
    hands_played: int = 0
    net_chips: int = 0
    voluntarily_put_in: int = 0
    raised_first_round: int = 0
    went_to_showdown: int = 0
    won_at_showdown: int = 0


def summarise(events: Iterable[AnyEvent], seat: int) -> SeatSummary:
    """How the hand of ``events`` went for ``seat`` (dealt in; 0 net until it ended)."""
    start = 0
    end: int | None = None
    first_round = True
    at_showdown = False
    vpip = pfr = showed = won = False
    for e in events:
        if isinstance(e, HandStarted):
            start = next((s.stack for s in e.setup.seats if s.seat == seat), 0)
        elif isinstance(e, StreetStarted):
            first_round = False
            at_showdown = at_showdown or e.street == Street.SHOWDOWN
        elif isinstance(e, PlayerCalled) and e.seat == seat and first_round:
            vpip = True
        elif isinstance(e, BetPlaced) and e.seat == seat and first_round:
            vpip = pfr = True
        elif isinstance(e, CardsShown | CardsMucked) and e.seat == seat and at_showdown:
            if not (isinstance(e, CardsShown) and e.voluntary):
                showed = True
        elif isinstance(e, PotAwarded) and at_showdown:
            won = won or any(s == seat and chips > 0 for s, chips in e.shares)
        elif isinstance(e, HandEnded):
            end = dict(e.stacks).get(seat, start)
    return SeatSummary(
        seat,
        (end - start) if end is not None else 0,
        vpip,
        pfr,
        showed,
        showed and won,
    )


def totals(summaries: Iterable[SeatSummary]) -> PlayerStats:
    """A player's statistics over the hands ``summaries`` describe."""
    n = net = vpip = pfr = sd = won = 0
    for s in summaries:
        n += 1
        net += s.net
        vpip += s.voluntarily_put_in
        pfr += s.raised_first_round
        sd += s.went_to_showdown
        won += s.won_at_showdown
    return PlayerStats(n, net, vpip, pfr, sd, won)
