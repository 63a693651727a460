"""The history service's use cases, without gRPC: one hand as its reader may see it, a
player's hands and statistics.

Why in the lobby's process: the lobby knows the players and issues the access
tokens that say who a caller is, and the archive is in its PostgreSQL, so a
player's own cards are shown by the identity the lobby vouches for (the
player id the table recorded in the hand's setup), not by a seat token that
expired with the seat.

Where a hand comes from: the archive (``felt.storage.archive.HandArchive``) for a
finished hand the projector has written, else, given its table, the tail of
that table's stream (``felt.storage.eventstore.EventStore``: the hand in play, or one
that just ended and is not archived yet). Both give the hand's stored events,
unredacted; what the caller sees is decided here and redacted by the one path
(``felt.tools.history.viewer``), with proofs for the cards it shows the reader.

Who sees what: the operator (the table service's admin token) every card; a
signed-in player who was dealt into the hand its own seat; anyone else, or
anyone asking for it, what was public. Asking for a view one may not have,
and asking for an id that is no hand, are both NOT_FOUND ``HAND_NOT_FOUND``,
so the answer never says whether a hand exists. A player's own history is
its own: another player's id is NOT_FOUND ``PLAYER_NOT_FOUND``, as an unknown
one.

A private lounge's hands (``Lounge.invite_code`` set) are seen only by the
operator, the players dealt into each (their own seat), the lounge's owner and
whoever sends its invite code (as a spectator); to anyone else such a hand is
HAND_NOT_FOUND as well.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from felt.core.rules.config import public_hand_id
from felt.core.rules.events import HandStarted
from felt.core.table.commitment import CardOpening
from felt.core.table.deals import ProofTracker
from felt.core.table.events import (
    ActionTimedOut,
    AnyEvent,
    DeckCommitted,
    PlayerSeated,
    is_hand_event,
)
from felt.messages.events import EventMeta
from felt.storage.archive import HandArchive, PlayerHand, PlayerPageKey, PlayerStats
from felt.storage.eventstore import EventStore, EventsTrimmed
from felt.storage.eventstore.codec import decode_event
from felt.tools.history.viewer import OPERATOR, SPECTATOR, Viewer, seat_for, visible_event
from felt.wire import limits
from poker.v1.reason_pb2 import Reason
from services.lobby.application import LobbyApp
from services.lobby.auth import Caller
from services.lobby.paging import bad_page_token, page_match, page_token
from services.lobby.ports import Lounges
from services.lobby.refusals import NOT_SIGNED_IN, Code, Refused, reason_of, unauthenticated

__all__ = [
    "HAND_NOT_FOUND",
    "HandRead",
    "HistoryApp",
    "PlayerPage",
    "Reading",
    "SeatName",
]

HAND_NOT_FOUND = Refused(
    Code.NOT_FOUND, "no such hand (or not one you may see that way)", Reason.HAND_NOT_FOUND
)
PLAYER_NOT_FOUND = Refused(Code.NOT_FOUND, "no such player", Reason.PLAYER_NOT_FOUND)
LIVE_SCAN = 2000
"""The most events of a table's stream read to find a hand not archived yet (its tail)."""


class Reading(StrEnum):
    """How the caller asks to see a hand (the API's ``HandReader``)."""

    AUTO = "auto"
    SPECTATOR = "spectator"
    SEAT = "seat"
    OPERATOR = "operator"


@dataclass(frozen=True, slots=True)
class SeatName:
    seat: int
    player_id: str
    display_name: str


@dataclass(frozen=True, slots=True)
class Shown:
    """One event as the reader may see it, its public envelope, and the proofs it opens."""

    event: AnyEvent
    meta: EventMeta
    proofs: list[CardOpening]


@dataclass(frozen=True, slots=True)
class HandRead:
    hand_id: str
    table_id: str
    archived: bool
    viewer: Viewer
    seats: list[SeatName]
    events: list[Shown]


@dataclass(frozen=True, slots=True)
class PlayerPage:
    hands: list[PlayerHand]
    next_page_token: str
    stats: PlayerStats


@dataclass(frozen=True, slots=True)
class _Raw:
    """A hand's stored events, unredacted, wherever they were read from."""

    table_id: str
    archived: bool
    events: list[tuple[AnyEvent, EventMeta]]
    seats: list[SeatName]


class HistoryApp:
    """GetHandHistory and ListPlayerHands (see the module docstring)."""

    def __init__(
        self,
        lobby: LobbyApp,
        archive: HandArchive,
        streams: EventStore | None,
        lounges: Lounges | None = None,
    ) -> None:
        self.lobby = lobby
        self.archive = archive
        self.streams = streams
        self.lounges = lounges  # which tables are private lounges' (None: no lounges here)

    # ------------------------------------------------------------------ one hand

    async def hand_history(
        self,
        caller: Caller,
        hand_id: str,
        table_id: str,
        reading: Reading,
        seat: int | None,
        invite_code: str = "",
    ) -> HandRead:
        limits.check_public_hand_id(hand_id)
        if table_id:
            limits.check_table_id(table_id)
        limits.check_invite_code(invite_code)
        if reading == Reading.SEAT:
            if seat is None:
                raise limits.LimitError(Reason.BAD_SEAT, "a seat's view names the seat (0 to 8)")
            limits.check_seat(seat)
        player = await self._player(caller, reading)
        raw = await self._find(hand_id, table_id)
        if raw is None:
            raise HAND_NOT_FOUND
        await self._check_private(caller, player, raw, invite_code)
        viewer = _viewer(caller, player, raw.seats, reading, seat)
        tracker = ProofTracker(viewer.seat)
        shown = []
        for event, meta in raw.events:
            tracker.viewer = seat_for(event, viewer)
            proofs = tracker.openings(event)
            public = EventMeta(meta.table_id, meta.sequence, meta.recorded_at, hand_id=meta.hand_id)
            shown.append(Shown(visible_event(event, viewer), public, proofs))
        return HandRead(hand_id, raw.table_id, raw.archived, viewer, raw.seats, shown)

    async def _check_private(
        self, caller: Caller, player: str, raw: _Raw, invite_code: str
    ) -> None:
        """A private lounge's hand only for the operator, the players dealt into it, the
        lounge's owner, and whoever sends its invite code; for anyone else it is no hand
        (HAND_NOT_FOUND, as an id that is no hand's: its existence is not told)."""
        if caller.operator or self.lounges is None:
            return
        lounge = await self.lounges.get(raw.table_id)
        if lounge is None or lounge.invite_code is None:
            return  # a public lounge's table, or a table no lounge has
        if player and (player == lounge.owner_id or any(s.player_id == player for s in raw.seats)):
            return
        if invite_code and hmac.compare_digest(invite_code.encode(), lounge.invite_code.encode()):
            return
        raise HAND_NOT_FOUND

    async def _player(self, caller: Caller, reading: Reading) -> str:
        """The signed-in player's id ("" for the operator or an anonymous caller)."""
        if caller.error is not None:
            raise unauthenticated(reason_of(caller.error.reason), caller.error.message)
        if caller.operator:
            return ""
        if caller.claim is None:
            if reading in (Reading.SEAT, Reading.OPERATOR):
                raise NOT_SIGNED_IN
            return ""
        return (await self.lobby.signed_in(caller)).player_id

    async def _find(self, hand_id: str, table_id: str) -> _Raw | None:
        archived = await self.archive.hand(hand_id)
        if archived is not None:
            events = [decode_event(e.payload) for e in archived.events]
            seats = [SeatName(s.seat, s.player_id, s.display_name) for s in archived.seats]
            return _Raw(archived.table_id, True, events, seats)
        if table_id and self.streams is not None:
            return await self._live(table_id, hand_id)
        return None

    async def _live(self, table_id: str, hand_id: str) -> _Raw | None:
        """The hand from the tail of its table's stream (at most :data:`LIVE_SCAN` events)."""
        assert self.streams is not None
        version = await self.streams.version(table_id)
        start = max(0, version - LIVE_SCAN)
        try:
            records = await self.streams.read(table_id, start)
        except EventsTrimmed as exc:
            records = await self.streams.read(table_id, exc.first_available - 1)
        decoded = [decode_event(r.payload) for r in records]
        return _live_hand(table_id, hand_id, decoded)

    # ------------------------------------------------------------------ a player's hands

    async def player_hands(
        self, caller: Caller, player_id: str, page_size: int, page_token: str
    ) -> PlayerPage:
        size = limits.check_page_size(page_size)
        before = _page_position(page_token)
        if player_id:
            limits.check_player_id(player_id)
        if caller.error is not None:
            raise unauthenticated(reason_of(caller.error.reason), caller.error.message)
        if caller.operator:
            if not player_id:
                raise limits.LimitError(Reason.BAD_PLAYER_ID, "the operator names the player_id")
            who = player_id
        else:
            who = (await self.lobby.signed_in(caller)).player_id
            if player_id and player_id != who:
                raise PLAYER_NOT_FOUND
        rows = await self.archive.player_hands(who, before=before, limit=size + 1)
        more = len(rows) > size
        rows = rows[:size]
        token = _page_token(rows[-1]) if more else ""
        return PlayerPage(rows, token, await self.archive.player_stats(who))


def _viewer(
    caller: Caller, player: str, seats: Sequence[SeatName], reading: Reading, seat: int | None
) -> Viewer:
    """Whom the hand is shown as; a view the caller may not have is HAND_NOT_FOUND."""
    if reading == Reading.SPECTATOR:
        return SPECTATOR
    dealt = {s.seat for s in seats}
    mine = [s.seat for s in seats if player and s.player_id == player]
    if reading == Reading.SEAT:
        assert seat is not None
        if seat in dealt and (caller.operator or seat in mine):
            return Viewer.of_seat(seat)
        raise HAND_NOT_FOUND
    if caller.operator:
        return OPERATOR
    if reading == Reading.OPERATOR:
        raise HAND_NOT_FOUND
    return Viewer.of_seat(mine[0]) if mine else SPECTATOR


def _live_hand(
    table_id: str, hand_id: str, decoded: Sequence[tuple[AnyEvent, EventMeta]]
) -> _Raw | None:
    """The hand named ``hand_id`` among a stream's events: its deck commitment, its hand
    events and time-outs up to the next hand's commitment; names as seated before it."""
    names: dict[int, tuple[str, str]] = {}
    start = None
    for i, (event, _) in enumerate(decoded):
        if isinstance(event, PlayerSeated):
            names[event.seat] = (event.player_id, event.name)
        elif isinstance(event, HandStarted) and public_hand_id(event.setup) == hand_id:
            start = i
            break
    if start is None:
        return None
    first = start
    if start and isinstance(decoded[start - 1][0], DeckCommitted):
        first = start - 1
    events = [decoded[first]] if first < start else []
    for event, meta in decoded[start:]:
        if isinstance(event, DeckCommitted):
            break
        if is_hand_event(event) or isinstance(event, ActionTimedOut):
            events.append((event, meta))
    setup = decoded[start][0]
    assert isinstance(setup, HandStarted)
    seats = [
        SeatName(
            s.seat,
            s.player_id,
            names[s.seat][1] if names.get(s.seat, ("", ""))[0] == s.player_id else "",
        )
        for s in setup.setup.seats
    ]
    return _Raw(table_id, False, events, seats)


_PAGE = re.compile(r"h([0-9a-f]{32})@(.{10,40})")


def _page_token(row: PlayerHand) -> str:
    return page_token(f"h{row.hand_id}@{row.ended_at.isoformat()}")


def _page_position(token: str) -> PlayerPageKey | None:
    match = page_match(token, _PAGE)
    if match is None:
        return None
    try:
        ended = datetime.fromisoformat(match[2])
    except ValueError:
        raise bad_page_token() from None
    if ended.tzinfo is None:
        raise bad_page_token()
    return PlayerPageKey(ended, match[1])
