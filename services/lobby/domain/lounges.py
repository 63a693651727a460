"""The lounges' rules, without storage: an owner's cap, and the lifecycle's moves.

``Lounges.create`` in both adapters counts the owner's lounges in :data:`OWNED` states
(under the owner's lock, after looking for a retry) and asks :func:`check_room`; every
``mark_*`` moves a lounge only from the one state :data:`MOVES_FROM` names (a slower
driver of the same lounge gets it as it is), PostgreSQL as a conditional ``UPDATE`` on
that state, the fakes by :func:`moved`.
"""

from __future__ import annotations

from dataclasses import replace

from services.lobby.ports.lounges import Lounge, LoungeState, TooManyLounges

OWNED = (LoungeState.CREATING, LoungeState.OPEN)
"""The states of a lounge that count against its owner's cap (a closing one does not)."""

MOVES_FROM: dict[LoungeState, LoungeState] = {
    LoungeState.OPEN: LoungeState.CREATING,  # its table made
    LoungeState.FAILED: LoungeState.CREATING,  # its table refused for good
    LoungeState.CLOSING: LoungeState.OPEN,  # closed by its owner or its limit
    LoungeState.CLOSED: LoungeState.CLOSING,  # every seat's chips home
}
"""The one state each state is reached from: the lifecycle never goes back."""

EMPTIED = (LoungeState.FAILED, LoungeState.CLOSED)
"""The states in which a lounge holds no seats (their chips went home)."""


def check_room(owned: int, most: int | None) -> None:
    """:class:`TooManyLounges` when an owner with ``owned`` lounges (in :data:`OWNED`
    states) may not create one more; no cap when ``most`` is None."""
    if most is not None and owned >= most:
        raise TooManyLounges(most)


def moved(lounge: Lounge, to: LoungeState, failure: str | None = None) -> Lounge | None:
    """``lounge`` in state ``to`` (its seats gone in an :data:`EMPTIED` one; ``failure``
    kept when it FAILED), or None when it is not in the state ``to`` is reached from:
    then nothing changes."""
    if lounge.state is not MOVES_FROM[to]:
        return None
    seats = () if to in EMPTIED else lounge.seats
    return replace(lounge, state=to, seats=seats, failure=failure or lounge.failure)
