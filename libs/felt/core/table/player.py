"""A seated player as the table's state holds it (``TableState.players``).

Its own module because two others need it: the aggregate folds events into
players, and the snapshot event (``felt.core.table.events.TableSnapshotTaken``)
carries them, so that ``felt.core.table.events`` need not import the aggregate.
"""

from __future__ import annotations

from dataclasses import dataclass

from felt.core.record import Record


@dataclass(frozen=True, slots=True, init=False)
class Player(Record):
    seat: int
    player_id: str
    name: str
    stack: int
    token_hash: str
    ai_level: str = ""
    sitting_out: bool = False
    leaving: bool = False
    timeouts: int = 0
    # Why the seat sits out ("requested", "timeouts", "leaving"); empty while sitting in.
    sit_out_reason: str = ""
    # Waiting for the big blind: not dealt in until the big blind would reach the seat.
    waiting_for_big_blind: bool = False
    # Busted: the number of the hand (``<table_id>:<n>``) whose end left the seat with no
    # chips; 0 while it has chips. Chips added reset it, a later bust sets the later hand's:
    # what the lobby's grace for a busted seat counts from (and names when it frees the seat).
    busted_hand: int = 0

    def __init__(
        self,
        seat: int,
        player_id: str,
        name: str,
        stack: int,
        token_hash: str,
        ai_level: str = "",
        sitting_out: bool = False,
        leaving: bool = False,
        timeouts: int = 0,
        sit_out_reason: str = "",
        waiting_for_big_blind: bool = False,
        busted_hand: int = 0,
    ) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "player_id", player_id)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "stack", stack)
        object.__setattr__(self, "token_hash", token_hash)
        object.__setattr__(self, "ai_level", ai_level)
        object.__setattr__(self, "sitting_out", sitting_out)
        object.__setattr__(self, "leaving", leaving)
        object.__setattr__(self, "timeouts", timeouts)
        object.__setattr__(self, "sit_out_reason", sit_out_reason)
        object.__setattr__(self, "waiting_for_big_blind", waiting_for_big_blind)
        object.__setattr__(self, "busted_hand", busted_hand)

    @property
    def away(self) -> bool:
        """Played passively (check, else fold) in the running hand: gone, or timed out.

        A seat that asked to sit out still plays the hand it holds cards in;
        it is only no longer dealt in.
        """
        return self.leaving or (self.sitting_out and self.sit_out_reason == "timeouts")
