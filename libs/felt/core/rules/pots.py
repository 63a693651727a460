"""Side pots cut from contributions, and even splits with odd chips placed by the rules."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from felt.core.rules.state import SeatQueries


@dataclass(frozen=True, slots=True)
class Pot:
    """``amount`` chips that the seats at ``eligible`` indices (dealing order) can win."""

    amount: int
    eligible: tuple[int, ...]


def side_pots(
    seats: Sequence[SeatQueries],
    antes_due: Sequence[int] | None = None,
    collected_only: bool = False,
) -> list[Pot]:
    """Main pot first, then side pots, by eligible contribution.

    With ``collected_only``, the chips still in front of the seats (this
    round's bets) are left out: the pots as they stand in the middle, which
    is what a player sees before the round's bets are gathered in.

    Antes are dead money and go to the main pot, which every seat still in
    the hand can win (as PokerKit with ``ante_trimming_status = false``: with
    a big-blind ante, trimming would hand the ante back to a losing big
    blind). The exception is a seat that could not pay its whole ante
    (``antes_due`` gives what each seat owed): it can win only the matched
    part of the antes, as much as it paid from each seat, and nothing else.

    Above the antes, each level of live contribution reached by a seat still
    in the hand closes a pot that every seat in the hand who put in at least
    that much can win; folded seats' chips count toward the pots but make
    them eligible for none. Adjacent pots with the same eligible seats are
    one pot.
    """
    due = antes_due if antes_due is not None else [s.ante for s in seats]
    antes = [s.ante for s in seats]
    live = [s.committed - s.ante - (s.bet if collected_only else 0) for s in seats]
    short = {i for i, s in enumerate(seats) if not s.folded and s.ante < due[i]}
    pots: list[Pot] = []

    def add(amount: int, eligible: tuple[int, ...]) -> None:
        if pots and pots[-1].eligible == eligible:
            pots[-1] = Pot(pots[-1].amount + amount, eligible)
        elif amount:
            pots.append(Pot(amount, eligible))

    previous = 0
    for cap in sorted({antes[i] for i in short}):
        amount = sum(min(a, cap) - min(a, previous) for a in antes)
        add(amount, tuple(i for i, s in enumerate(seats) if not s.folded and antes[i] >= cap))
        previous = cap
    carried = sum(a - min(a, previous) for a in antes)
    levels = sorted({live[i] for i, s in enumerate(seats) if not s.folded and i not in short})
    previous = 0
    for level in levels:
        amount = carried + sum(min(c, level) - min(c, previous) for c in live)
        carried = 0
        add(
            amount,
            tuple(
                i
                for i, s in enumerate(seats)
                if not s.folded and i not in short and live[i] >= level
            ),
        )
        previous = level
    leftover = carried + sum(max(0, c - previous) for c in live)
    if leftover and pots:
        pots[-1] = Pot(pots[-1].amount + leftover, pots[-1].eligible)
    return pots


def split(amount: int, winners: Sequence[int]) -> list[tuple[int, int]]:
    """Split ``amount`` evenly among ``winners`` (indices in dealing order).

    Odd chips go one at a time to the winners in clockwise order starting
    left of the button, which is dealing order, so no winner receives more
    than one odd chip from one pot (Robert's Rules of Poker, "Ties").
    """
    ordered = sorted(winners)
    share, odd = divmod(amount, len(ordered))
    return [(w, share + (1 if k < odd else 0)) for k, w in enumerate(ordered)]
