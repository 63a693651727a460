"""Where an old shape of a stored event becomes today's, before it is decoded and folded.

Events are the contract: a stored event never changes meaning, and a stream
is never rewritten. But how an event is *spelled* may change (a field split
in two, a value now carried by an enum, a default that older writers left
unset). The decoder then meets both shapes. Rather than teach every decoder
branch, the fold and the redaction about every shape ever written, each old
shape is brought up to today's here, once, on its way in:
``felt.messages.events.event_from_stored`` calls :func:`upcast` for every
``StoredEvent`` it decodes, so the fold, the table service's rebuild, the
projector, histories and replays all see only the current shape.

An upcaster is a function of one ``StoredEvent`` message that rewrites, in
place, the old shape of its event into the shape today's decoder reads, with
the same meaning; it is registered in :data:`UPCASTERS` under the event's
``StoredEvent`` oneof field name, in the order the shapes changed. It must be
pure (no clock, no I/O), idempotent (a current event passes unchanged), and
only ever read the event itself. Stored bytes stay as they were: the rewrite
is of the decoded message in memory only.

A worked example (``tests/unit/test_upcast.py`` registers and tests it):
suppose ``PlayerSatOut`` had been written, before reasons existed, without a
``reason``, and that those sit-outs were all a player's own request. Today's
decoder refuses ``SIT_OUT_REASON_UNSPECIFIED``; this upcaster gives such an
event the reason it always meant::

    def sit_out_reason_of_old_event(stored: pb.StoredEvent) -> None:
        if stored.player_sat_out.reason == pb.SIT_OUT_REASON_UNSPECIFIED:
            stored.player_sat_out.reason = pb.SIT_OUT_REASON_REQUESTED

    UPCASTERS["player_sat_out"] = (sit_out_reason_of_old_event,)

Felt's own streams need one: :func:`busted_hand_of_old_snapshot` (a
snapshot written before ``SnapshotSeat.busted_hand`` existed).
"""

from __future__ import annotations

from collections.abc import Callable

from poker.events.v1 import events_pb2 as pb

__all__ = ["UPCASTERS", "Upcaster", "upcast"]

Upcaster = Callable[[pb.StoredEvent], None]
"""Rewrites one old-shaped ``StoredEvent`` in place into today's shape, keeping its meaning."""


def busted_hand_of_old_snapshot(stored: pb.StoredEvent) -> None:
    """A snapshot written before ``SnapshotSeat.busted_hand`` existed left it unset (0) for a
    seat at 0 chips. Such a seat went busted at the end of one of the hands already played
    (a seat is seated, and chips are added, only with a positive amount): the snapshot's own
    ``hands_played``, the latest it can have been, stands for that hand, so the grace for a
    busted seat counts from no earlier than the bust (and never frees a seat that has chips).
    A current snapshot has a positive ``busted_hand`` for every seat at 0: unchanged."""
    m = stored.table_snapshot_taken
    for seat in m.seats:
        if seat.stack == 0 and seat.busted_hand == 0:
            seat.busted_hand = m.hands_played


UPCASTERS: dict[str, tuple[Upcaster, ...]] = {
    "table_snapshot_taken": (busted_hand_of_old_snapshot,),
}
"""Upcasters by ``StoredEvent`` oneof field name (``"player_sat_out"``), oldest shape first."""


def upcast(stored: pb.StoredEvent) -> pb.StoredEvent:
    """``stored`` in today's shape (the same message, rewritten in place if it was old)."""
    if not UPCASTERS:
        return stored
    kind = stored.WhichOneof("event")
    if kind is not None:
        for step in UPCASTERS.get(kind, ()):
            step(stored)
    return stored
