"""The table's opponent model, fed the events the runtime applies (``felt.players.bots.opponents``).

An AI decision request carries the table's public opponent model: per-seat
counts of how each seat has played its completed hands. It is a fold of the
table's events as a spectator sees them (``redact_event(e, None)``: no hidden
card), so the runtime feeds it the very events it folds into its cache,
after each append, instead of reading and decoding the stream again.

Only its start reads the stream: the first request after a table is loaded
folds what the stream still holds up to then (the hands before a trim were
archived and are gone), once; from there the runtime keeps it current. So the
model a request carries is exactly the fold of the stream the store holds up
to the request's version, as it was when it was read back for every request.
"""

from __future__ import annotations

from collections.abc import Iterable

from felt.core.table.events import AnyEvent
from felt.core.table.redaction import redact_event
from felt.core.table.stats import SeatStats
from felt.messages.events import from_stored_event
from felt.players.bots.opponents import ModelBuilder
from felt.storage.eventstore import EventStore, EventsTrimmed
from poker.events.v1 import events_pb2 as epb


class OpponentModel:
    """The opponent model of one table, folded up to ``done`` (a sequence of its stream)."""

    __slots__ = ("_builder", "done")

    def __init__(self, builder: ModelBuilder, done: int) -> None:
        self._builder = builder
        self.done = done

    def fold(self, events: Iterable[AnyEvent], last: int) -> None:
        """Fold the events that follow ``done``, the last of them at sequence ``last``."""
        for event in events:
            self._builder.observe(redact_event(event, None))
        self.done = last

    @property
    def stats(self) -> dict[int, SeatStats]:
        """The per-seat stats of the completed hands (a copy: the model keeps folding)."""
        return self._builder.stats


async def read_model(store: EventStore, table_id: str, version: int) -> OpponentModel:
    """The model of the stream ``store`` holds up to ``version``: one read, for its start.

    A stream whose older hands were archived and trimmed is modelled from what
    is left of it.
    """
    try:
        records = await store.read(table_id)
    except EventsTrimmed as trimmed:
        records = await store.read(table_id, from_sequence=trimmed.first_available - 1)
    model = OpponentModel(ModelBuilder(), 0)
    for record in records:
        if record.sequence > version:
            break
        event, _ = from_stored_event(epb.StoredEvent.FromString(record.payload))
        model.fold((event,), record.sequence)
    return model
