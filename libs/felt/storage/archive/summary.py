"""Per-seat summary flags of a finished hand, computed from its events alone (pure).

A player's statistics are sums of these flags over the archive, so this is
the one place that decides what "voluntarily put in pot" or "went to
showdown" means; the archive only adds them up.

- The first betting round is everything before the first ``StreetStarted``
  (Hold'em's pre-flop, Draw's first bet); forced bets (blinds, antes) are
  not voluntary, so a big blind that only checks has no VPIP.
- VPIP: the seat called or bet/raised in the first round. PFR: it bet or
  raised there (an open bet in a game without blinds counts as a raise).
- Went to showdown: the hand ended with at least two seats not folded, and
  this seat was one of them (an all-in run-out counts; a win when everyone
  else folded does not). Won at showdown: it went to showdown and got chips
  from a pot.
"""

from __future__ import annotations

from collections.abc import Iterable

from felt.core.rules.events import (
    BetPlaced,
    Event,
    HandEnded,
    HandStarted,
    PlayerCalled,
    PlayerFolded,
    PotAwarded,
    StreetStarted,
)
from felt.storage.archive.values import SeatSummary


def seat_summaries(events: Iterable[Event]) -> tuple[SeatSummary, ...]:
    """The summary of every dealt-in seat, in dealing order, of one hand's events.

    ``events`` are the hand's events from ``HandStarted`` to ``HandEnded``
    (later ones change nothing here). Raises ``ValueError`` for a hand that
    has not ended.
    """
    starts: dict[int, tuple[str, int]] = {}
    order: list[int] = []
    first_round = True
    vpip: set[int] = set()
    pfr: set[int] = set()
    folded: set[int] = set()
    won: set[int] = set()
    ended: HandEnded | None = None
    for event in events:
        if isinstance(event, HandStarted):
            for s in event.setup.seats:
                starts[s.seat] = (s.player_id, s.stack)
                order.append(s.seat)
        elif isinstance(event, StreetStarted):
            first_round = False
        elif isinstance(event, PlayerCalled):
            if first_round:
                vpip.add(event.seat)
        elif isinstance(event, BetPlaced):
            if first_round:
                vpip.add(event.seat)
                pfr.add(event.seat)
        elif isinstance(event, PlayerFolded):
            folded.add(event.seat)
        elif isinstance(event, PotAwarded):
            won.update(seat for seat, chips in event.shares if chips > 0)
        elif isinstance(event, HandEnded):
            ended = event
            break
    if ended is None or not order:
        raise ValueError("a hand's summary needs its HandStarted and HandEnded")
    finals = dict(ended.stacks)
    showdown = len([s for s in order if s not in folded]) >= 2
    out = []
    for seat in order:
        player_id, start = starts[seat]
        end = finals.get(seat, start)
        at_showdown = showdown and seat not in folded
        out.append(
            SeatSummary(
                seat=seat,
                player_id=player_id,
                stack_start=start,
                stack_end=end,
                net=end - start,
                vpip=seat in vpip,
                pfr=seat in pfr,
                went_to_showdown=at_showdown,
                won_at_showdown=at_showdown and seat in won,
            )
        )
    return tuple(out)
