"""One seat's public record at a table, as counts: the opponent model's value type.

The players' opponent model (``felt.players.bots.opponents``) builds these from
public events and the bots read rates from them; the wire
(``felt.wire.seat_stats``) carries them in each decision request. The value
lives here, below both, so that neither imports the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

__all__ = ["EMPTY", "SeatStats", "TableStats", "stats_of"]


@dataclass(frozen=True, slots=True)
class SeatStats:
    """One seat's public record at a table (counts over completed hands).

    First round = preflop (Hold'em) or before the draw (Draw); "later" means
    every betting round after it.

    - ``hands``: hands dealt in; ``vpip``: hands it called or bet in the
      first round (blinds and antes are not voluntary); ``pfr``: hands it bet
      or raised in the first round.
    - ``first_faced``/``first_folded``/``reraised``: first-round decisions facing a
      raise (a bet above the blinds) / folds / re-raises among them: how much it
      gives up to steals, and how often it takes the pot back from a raiser.
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
    reraised: int = 0

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

    def reraise_rate(self, prior: float = 0.07, weight: float = 10) -> float:
        """How often it re-raises a first-round raise it faces (``reraised`` over
        ``first_faced``, capped at 1: a request's counts are hostile until checked).

        What a raise first in risks from the players behind: a player who re-raises one
        raise in ten takes the pot from a wide opener far more often than one who
        re-raises one in fifty, though both fold to most raises. Raises over limps are
        not re-raises and do not count (nobody raised before them).
        """
        return self.rate(min(self.reraised, self.first_faced), self.first_faced, prior, weight)

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
