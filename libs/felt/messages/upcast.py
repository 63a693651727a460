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

No stream Felt has written needs one yet, so the table is empty, and
:func:`upcast` costs one truth test per event until it is not.
"""

from __future__ import annotations

from collections.abc import Callable

from poker.events.v1 import events_pb2 as pb

__all__ = ["UPCASTERS", "Upcaster", "upcast"]

Upcaster = Callable[[pb.StoredEvent], None]
"""Rewrites one old-shaped ``StoredEvent`` in place into today's shape, keeping its meaning."""

UPCASTERS: dict[str, tuple[Upcaster, ...]] = {}
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
