"""Spectators' frames: each live event encoded once for all of a table's spectator streams.

Issue #23. The watchers of a table on this instance share one tail of its
stream (``services.table.watch``): each is handed the same decoded event. A
spectator sees it redacted for nobody, so every spectator's
``WatchTableResponse`` for it is the same bytes; they were built (redaction,
conversion, the proofs) and encoded once per stream. :class:`SpectatorFrames`
makes them once per event and hands every spectator stream those bytes (the
service's stream serializer sends bytes as they are:
``felt.service.interceptors``). A seat's stream shows its own cards: its
items are made for it alone, as before.

An entry is found by the decoded event object itself (identity, never an
equal-looking event of another stream or table) and the proofs it opens; a
replay decodes its own events, so it misses and is encoded for itself. At
most ``entries`` frames are kept (the most recent).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from felt.core.table.commitment import CardOpening
from felt.core.table.events import AnyEvent
from services.table.queries import Seen

FRAMES = 1024  # recent events' frames kept: many tables' live events at once


class SpectatorFrames:
    """The encoded ``WatchTableResponse`` of recent events as spectators see them."""

    def __init__(self, encode: Callable[[Seen], bytes], entries: int = FRAMES) -> None:
        self.encode = encode
        self.entries = entries
        # id(event) -> (the event, its sequence, its proofs, the frame); the entry holds the
        # event, so its id is not reused while the entry lives.
        self._frames: OrderedDict[int, tuple[AnyEvent, int, list[CardOpening], bytes]] = (
            OrderedDict()
        )

    def frame(self, seen: Seen) -> bytes:
        """``seen`` (a spectator's: ``viewer`` None) encoded, once for every stream."""
        assert seen.viewer is None, "a seat's items are its own"
        key = id(seen.event)
        entry = self._frames.get(key)
        if (
            entry is not None
            and entry[0] is seen.event
            and entry[1] == seen.sequence
            and entry[2] == seen.proofs
        ):
            return entry[3]
        data = self.encode(seen)
        self._frames[key] = (seen.event, seen.sequence, seen.proofs, data)
        self._frames.move_to_end(key)
        if len(self._frames) > self.entries:
            self._frames.popitem(last=False)
        return data
