"""The opponent model on the wire: ``SeatStats`` <-> ``poker.v1.SeatStats``.

The table service builds the model (``felt.players.bots.opponents.ModelBuilder``) and
sends it in each ``DecisionRequest``; a worker reads it back here. Input is
checked like any other: seats outside the table range are dropped, and every
count that is a subset of another (folds among decisions faced, and so on) is
capped by it, so a malformed request cannot push a rate outside [0, 1]. Counts of
decisions (``first_faced``, ``faced``) are not subsets of ``hands``: a player can face
several raises in one hand, so they are left as sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import fields

from felt.core.table.stats import SeatStats
from poker.v1 import ai_pb2

MAX_SEAT = 8  # tables seat at most 9 (Hold'em)

# count -> the count it is a subset of
_WITHIN = {
    "vpip": "hands",
    "pfr": "hands",
    "first_folded": "first_faced",
    "reraised": "first_faced",
    "folded": "faced",
    "hu_faced": "faced",
    "hu_folded": "hu_faced",
    "open_chances": "hands",
    "opened": "open_chances",
    "late_open_chances": "open_chances",
    "late_opened": "late_open_chances",
    "saw_later": "hands",
    "showdowns": "hands",
    "shown": "showdowns",
    "shown_bettor": "shown",
    "shown_bettor_weak": "shown_bettor",
    "pat": "hands",
    "shown_drawn": "shown",
    "shown_drawn_odd": "shown_drawn",
}
_NAMES = tuple(f.name for f in fields(SeatStats))


def stats_to_proto(table: Mapping[int, SeatStats]) -> list[ai_pb2.SeatStats]:
    """The model as ``repeated SeatStats`` (seats in order)."""
    return [
        ai_pb2.SeatStats(seat=seat, **{n: getattr(s, n) for n in _NAMES})
        for seat, s in sorted(table.items())
    ]


def stats_from_proto(messages: Iterable[ai_pb2.SeatStats]) -> dict[int, SeatStats]:
    """The model from a request, checked (see the module docstring)."""
    out: dict[int, SeatStats] = {}
    for m in messages:
        if not 0 <= m.seat <= MAX_SEAT:
            continue
        counts = {n: int(getattr(m, n)) for n in _NAMES}
        for name, parent in _WITHIN.items():  # parents come first in this order
            counts[name] = min(counts[name], counts[parent])
        out[m.seat] = SeatStats(**counts)
    return out
