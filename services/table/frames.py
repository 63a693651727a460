"""Spectators' frames: each live event encoded once for all of a table's spectator streams.

Issue #23. The watchers of a table on this instance share one tail of its
stream (``services.table.watch``): each is handed the same decoded event. A
spectator sees it redacted for nobody, so every spectator's
``WatchTableResponse`` for it is the same bytes; they were built (redaction,
conversion, the proofs) and encoded once per stream. :class:`SpectatorFrames`
makes them once per event and hands every spectator stream those bytes (the
service's stream serializer sends a :class:`~felt.service.interceptors.Frame`
as it is: ``felt.service.interceptors``). A seat's stream shows its own cards:
its items are made for it alone, as before, and so is a spectator's that asks
for view changes.

Only the live feed's items come here (``Seen.live``): a replay decodes its own
events, which no other stream will ever be handed, so caching them would only
push live frames out; ``WatchTable`` sends those as messages of their own. An
entry is found by the decoded event object itself (identity, never an
equal-looking event of another stream or table) and the proofs it opens. At
most ``entries`` frames are kept, the least recently used evicted first.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from felt.core.table.commitment import CardOpening
from felt.core.table.events import AnyEvent
from felt.messages.events import EventMeta
from felt.service.interceptors import Frame
from services.table.queries import Seen

FRAMES = 1024  # recent events' frames kept: many tables' live events at once


class SpectatorFrames:
    """The encoded ``WatchTableResponse`` of recent events as spectators see them."""

    def __init__(self, encode: Callable[[Seen], bytes], entries: int = FRAMES) -> None:
        self.encode = encode
        self.entries = entries
        # id(event) -> (the event, its meta, its sequence, its proofs, the frame); the entry
        # holds the event, so its id is not reused while the entry lives. The meta (the
        # table, the hand) is decoded with the event, so one event object has one meta; it
        # is compared too, so that no frame is ever served for another table.
        self._frames: OrderedDict[
            int, tuple[AnyEvent, EventMeta, int, list[CardOpening], Frame]
        ] = OrderedDict()

    def frame(self, seen: Seen) -> Frame:
        """``seen`` (a spectator's, ``viewer`` None, of the live feed) encoded, once for
        every stream. Raises ``ValueError`` for any other item (a seat's is its own)."""
        if seen.viewer is not None or not seen.live:
            raise ValueError("only a spectator's item of the live feed has a shared frame")
        key = id(seen.event)
        entry = self._frames.get(key)
        if (
            entry is not None
            and entry[0] is seen.event
            and entry[1] is seen.meta
            and entry[2] == seen.sequence
            and entry[3] == seen.proofs
        ):
            self._frames.move_to_end(key)
            return entry[4]
        data = Frame(self.encode(seen))
        self._frames[key] = (seen.event, seen.meta, seen.sequence, seen.proofs, data)
        self._frames.move_to_end(key)
        if len(self._frames) > self.entries:
            self._frames.popitem(last=False)
        return data
