"""The house's rules, without storage: funding an AI seat, and settling one when its
lounge closes.

``Ledger.fund_ai_seat`` and ``Closes.settle_ai`` in both adapters load what the rule needs
(the AI seat's row, locked; whether the house funded it), ask it, and write what it
answered: the ``house_return`` movement and the freed seat.
"""

from __future__ import annotations

from dataclasses import dataclass


def funding(amount: int) -> int:
    """What funding an AI seat with ``amount`` chips changes the house's balance by (they
    leave it); ``ValueError`` for no chips."""
    if amount <= 0:
        raise ValueError("a movement moves at least one chip")
    return -amount


@dataclass(frozen=True, slots=True)
class AiSettled:
    """A vacated AI seat settled: ``returned`` chips back to the house (a ``house_return``
    movement; none for 0) and its lounge seat freed."""

    returned: int


def settle_ai(held: bool, funded: bool, stack: int) -> AiSettled | None:
    """A closing lounge's AI seat that left the table with ``stack`` chips. ``held``: the
    lounge still holds an AI seat there (None if not: settled already, nothing changes, so
    of two passes settling it one does); ``funded``: the house paid for it (a seat from
    before the house had no ``house_seat`` movement: nothing of the house's to return)."""
    if not held:
        return None
    return AiSettled(stack if stack > 0 and funded else 0)
