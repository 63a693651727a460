"""The golden tables' events as the table service stores them: envelopes with hand ids and times.

The recorded streams (``tests/golden/*.events.jsonl``) hold the events of a
whole table; the service's envelope also names the hand each event belongs
to (``services.table.stream.hand_ids``) and when it was recorded. This gives
the history and archive tests a realistic stream of either variant, under any
table id, with chosen players put in the seats of the recorded ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from google.protobuf.timestamp_pb2 import Timestamp

from felt.core.rules.config import public_hand_id
from felt.core.rules.events import HandStarted
from felt.core.table.events import AnyEvent, DeckCommitted, PlayerSeated
from felt.storage.eventstore.base import StoredRecord
from felt.storage.eventstore.codec import encode_stored
from services.table.stream import hand_ids
from tests.golden.record import decode_stream, stream_path

START = datetime(2026, 1, 1, tzinfo=UTC)


def golden_events(name: str, players: Mapping[str, str] | None = None) -> list[AnyEvent]:
    """The golden table ``name`` ("holdem", "draw"), player ids renamed by ``players``."""
    events = decode_stream(stream_path(name).read_text().split())
    if not players:
        return events
    out: list[AnyEvent] = []
    for e in events:
        if isinstance(e, PlayerSeated) and e.player_id in players:
            e = replace(e, player_id=players[e.player_id])
        elif isinstance(e, HandStarted):
            seats = tuple(
                replace(s, player_id=players.get(s.player_id, s.player_id)) for s in e.setup.seats
            )
            e = HandStarted(replace(e.setup, seats=seats))
        out.append(e)
    return out


def stored_records(table_id: str, events: list[AnyEvent]) -> list[StoredRecord]:
    """``events`` as the stream holds them: sequence N at ``START`` + N seconds."""
    records = []
    for sequence, (event, hand) in enumerate(zip(events, hand_ids(None, events), strict=True), 1):
        stamp = Timestamp()
        stamp.FromDatetime(START + timedelta(seconds=sequence))
        payload = encode_stored(event, table_id, sequence, "", hand, stamp)
        records.append(StoredRecord(sequence, payload))
    return records


def public_ids(events: list[AnyEvent]) -> list[str]:
    """The public id of every hand, in order."""
    return [public_hand_id(e.setup) for e in events if isinstance(e, HandStarted)]


def hand_events(events: list[AnyEvent], hand: str) -> list[AnyEvent]:
    """The events of the hand whose public id is ``hand``, as the table recorded them (never
    redacted: the tests' oracle): its deck commitment, then everything up to the next one."""
    start = next(
        i
        for i, e in enumerate(events)
        if isinstance(e, HandStarted) and public_hand_id(e.setup) == hand
    )
    out = [events[start - 1]]
    for e in events[start:]:
        if isinstance(e, DeckCommitted):
            break
        out.append(e)
    return out
