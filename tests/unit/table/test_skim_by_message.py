"""A rebuild's skim read from the stored messages is the skim of the decoded events.

``services.table.stream.rebuild`` skims the hands that are over through the
skim column of ``EVENT_KINDS`` (``skim_from_stored``: a deal's variant and
seats and an action's seat only, the events a skim needs nothing of not
decoded). On random tables
of both variants and on the golden streams (synthetic and recorded from the
services): folding those with ``skim=True`` gives the state the decoded events
give with ``skim=True``, and the rebuild gives the state of ``apply_event``
throughout.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from felt.core.rules.config import Variant
from felt.core.table.aggregate import LASTING_HAND_EVENTS, SkimmedAction, SkimmedDeal, fold
from felt.core.table.events import HAND_EVENTS, AnyEvent
from felt.messages.events import EVENT_KINDS, EventMeta, event_from_stored, skim_from_stored
from felt.storage.eventstore import StoredRecord
from felt.storage.eventstore.codec import encode_event
from poker.events.v1 import events_pb2 as epb
from services.table.stream import rebuild
from tests.golden.record import CONFIGS, stream_path
from tests.golden.record_live import LIVE
from tests.unit.table.random_tables import RandomTable, random_table

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check(payloads: list[bytes]) -> None:
    messages = [epb.StoredEvent.FromString(p) for p in payloads]
    events: list[AnyEvent] = [event_from_stored(m) for m in messages]
    skims = [s for s in (skim_from_stored(m) for m in messages) if s is not None]
    # The events a skim needs nothing of change nothing when skimmed.
    assert fold(None, skims, skim=True) == fold(None, events, skim=True)
    records = [StoredRecord(i + 1, p) for i, p in enumerate(payloads)]
    rebuilt = rebuild(records)
    assert rebuilt.state == fold(None, events)
    assert rebuilt.version == len(payloads)


@SETTINGS
@given(random_table())
def test_skimming_the_messages_of_a_random_table_is_skimming_its_events(
    table: RandomTable,
) -> None:
    payloads = [
        encode_event(event, EventMeta(table.config.table_id, i + 1))
        for i, event in enumerate(table.events)
    ]
    _check(payloads)


@pytest.mark.parametrize("name", sorted(CONFIGS) + sorted(LIVE))
def test_skimming_the_messages_of_a_golden_stream_is_skimming_its_events(name: str) -> None:
    _check([bytes.fromhex(line) for line in stream_path(name).read_text().split()])


def test_a_deal_and_an_action_are_skimmed_to_what_outlives_them_only() -> None:
    """A deal to its variant and seats, a seat's action to its seat; the rest is read whole."""
    own = {k.field for k in EVENT_KINDS if k.skim is not None and k.skim is not k.read}
    actions = {"player_folded", "player_checked", "player_called", "bet_placed", "cards_drawn"}
    assert own == {"hand_started"} | actions
    # Not read at all: exactly the hand events whose effect ends with their hand.
    unread = {k.event for k in EVENT_KINDS if k.skim is None}
    assert unread == set(HAND_EVENTS) - set(LASTING_HAND_EVENTS)
    stored = epb.StoredEvent()
    stored.hand_started.setup.variant = epb.VARIANT_DRAW5
    stored.hand_started.setup.seats.add(seat=4)
    stored.hand_started.setup.seats.add(seat=1)
    assert skim_from_stored(stored) == SkimmedDeal(Variant.DRAW5, (4, 1))
    stored = epb.StoredEvent()
    stored.bet_placed.seat, stored.bet_placed.to, stored.bet_placed.amount = 3, 40, 30
    assert skim_from_stored(stored) == SkimmedAction(3)
