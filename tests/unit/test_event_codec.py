"""Round trips of every stored event type through ``felt.messages.events`` and the store's bytes
(``felt.storage.eventstore.codec``)."""

from __future__ import annotations

import typing
from datetime import UTC, datetime, timedelta, timezone

import pytest

from felt.core.cards import cards, full_deck, shuffled_deck
from felt.core.rules import events as ev
from felt.core.rules.config import HandSetup, SeatSetup, Variant
from felt.core.rules.views import redact
from felt.core.table import events as te
from felt.core.table.events import AnyEvent
from felt.core.table.player import Player
from felt.core.table.positions import Positions
from felt.messages.events import EVENT_KINDS, EventMeta, from_stored_event, to_stored_event
from felt.messages.values import CodecError, card_from_proto, card_to_proto
from felt.storage.eventstore.codec import decode_event, encode_event
from poker.events.v1 import events_pb2 as pb

SETUP = HandSetup(
    hand_id="h-1",
    variant=Variant.NLHE,
    button=3,
    seats=(
        SeatSetup(seat=0, stack=1000, player_id="p0", blind=5),
        SeatSetup(seat=1, stack=40, player_id="p1", blind=10, ante=1),
        SeatSetup(seat=3, stack=0, player_id=""),
    ),
    deck=shuffled_deck(b"\x01" * 32),
    min_bet=10,
    public_id="5f" * 16,
)

DRAW_SETUP = HandSetup(
    hand_id="h-2",
    variant=Variant.DRAW5,
    button=0,
    seats=(SeatSetup(seat=0, stack=50, ante=2), SeatSetup(seat=1, stack=60, ante=2)),
    deck=full_deck(),
    small_bet=4,
    big_bet=8,
    raise_cap=3,
    allow_all_in=False,
)

HAND_EVENTS: list[ev.Event] = [
    ev.HandStarted(SETUP),
    ev.HandStarted(DRAW_SETUP),
    ev.AntePosted(seat=1, amount=1, all_in=False),
    ev.BlindPosted(seat=0, amount=5, all_in=False),
    ev.BlindPosted(seat=1, amount=10, all_in=True),
    ev.HoleCardsDealt(seat=0, cards=cards("2cAs"), deck_positions=(0, 3)),
    ev.PlayerFolded(seat=0),
    ev.PlayerChecked(seat=1),
    ev.PlayerCalled(seat=1, amount=39, all_in=True),
    ev.BetPlaced(seat=0, to=30, amount=25, all_in=False, full=True),
    ev.BetPlaced(seat=1, to=35, amount=35, all_in=True, full=False),
    ev.CardsDrawn(seat=1, discarded=cards("2d3d"), drawn=cards("KhKs"), deck_positions=(10, 11)),
    ev.CardsDrawn(seat=0, discarded=(), drawn=(), deck_positions=()),
    ev.StreetStarted(street=ev.Street.PREFLOP),
    ev.StreetStarted(street=ev.Street.FLOP, cards=cards("AhKdQc"), deck_positions=(5, 6, 7)),
    ev.StreetStarted(street=ev.Street.SECOND_BET),
    ev.StreetStarted(street=ev.Street.COMPLETE),
    ev.UncalledBetReturned(seat=0, amount=20),
    ev.CardsShown(seat=1, cards=cards("7h8h")),
    ev.CardsShown(seat=0, cards=cards("AsAd"), voluntary=True),
    ev.CardsMucked(seat=0),
    ev.PotAwarded(index=0, amount=81, eligible=(0, 1), shares=((0, 41), (1, 40)), hand="Two Pair"),
    ev.PotAwarded(index=1, amount=10, eligible=(0,), shares=((0, 10),)),
    ev.HandEnded(stacks=((0, 1041), (1, 40), (3, 0))),
]

NLHE_CONFIG = te.TableConfig(
    table_id="t-1",
    variant=Variant.NLHE,
    seat_count=6,
    small_blind=5,
    big_blind=10,
    ante=1,
    action_timeout_ms=15_250,
    max_timeouts=3,
    hand_limit=100,
    name="Main",
)

DRAW_CONFIG = te.TableConfig(
    table_id="t-2",
    variant=Variant.DRAW5,
    seat_count=2,
    ante=2,
    small_bet=4,
    big_bet=8,
    raise_cap=3,
    allow_all_in=False,
    action_timeout_ms=0,
    max_timeouts=0,
)

TABLE_EVENTS: list[AnyEvent] = [
    te.TableCreated(NLHE_CONFIG),
    te.TableCreated(DRAW_CONFIG),
    te.PlayerSeated(seat=2, player_id="p-1", name="Ann", stack=500, token_hash="ab" * 32),
    *(
        te.PlayerSeated(seat=3, player_id="bot", name="Robo", stack=1, token_hash="", ai_level=a)
        for a in ("easy", "normal", "hard")
    ),
    te.SeatTokenReissued(seat=2, player_id="p-1", token_hash="cd" * 32),
    te.PlayerLeft(seat=2, stack=480),
    te.PlayerLeft(3, 0, busted=True),
    *(te.PlayerSatOut(seat=2, reason=r) for r in ("requested", "timeouts", "leaving", "busted")),
    te.PlayerSatIn(seat=2),
    te.PlayerWaitingForBigBlind(seat=2),
    te.PlayerWaitingForBigBlind(seat=0),
    te.ChipsAdded(seat=2, amount=100),
    te.ActionTimedOut(seat=2),
    te.DeckCommitted(hand_id="h-1", root="0f" * 32, leaf_count=52, seed=bytes(range(32))),
    te.DeckCommitted(hand_id="h-2", root="", leaf_count=0),
    te.TableClosed(reason="hand limit reached"),
    te.TableClosed(),
    te.TableSnapshotTaken(NLHE_CONFIG),
    te.TableSnapshotTaken(
        DRAW_CONFIG,
        players=(
            Player(0, "p-0", "Ann", 480, "ab" * 32),
            Player(2, "bot", "Robo", 7, "", "hard", True, False, 1, "timeouts"),
            Player(4, "p-4", "Bea", 0, "cd" * 32, "", True, True, 0, "leaving", busted_hand=40),
            Player(5, "p-5", "Cy", 9, "ef" * 32, "easy", True, False, 0, "requested"),
        ),
        hands_played=41,
        positions=Positions(2),
        timing_out=2,
        closed=True,
        seated_at=((0, 3), (2, 4), (4, 90), (5, 0)),
    ),
    te.TableSnapshotTaken(NLHE_CONFIG, hands_played=1, positions=Positions(1, 1, 3)),
    te.TableSnapshotTaken(
        NLHE_CONFIG,
        players=(
            Player(1, "p-1", "Di", 200, "ab" * 32, waiting_for_big_blind=True),
            Player(3, "p-3", "Ed", 300, "cd" * 32),
            Player(4, "p-4", "Flo", 400, "ef" * 32),
        ),
        hands_played=7,
        positions=Positions(3, 3, 4),
        seated_at=((1, 12), (3, 2), (4, 3)),
    ),
]

META = EventMeta(
    table_id="t-1",
    sequence=42,
    recorded_at=datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
    request_id="req-9",
    hand_id="h-1",
)


def test_every_event_type_is_covered() -> None:
    hand_types = set(typing.get_args(ev.Event))
    assert {type(e) for e in HAND_EVENTS} == hand_types
    table_types = set(typing.get_args(te.TableEvent))
    assert {type(e) for e in TABLE_EVENTS} == table_types
    oneof = pb.StoredEvent.DESCRIPTOR.oneofs_by_name["event"]
    assert len(oneof.fields) == len(hand_types) + len(table_types)


def test_the_event_table_has_one_row_per_event_and_per_field() -> None:
    """The encoder and the decoder both read EVENT_KINDS: each event and each field once."""
    oneof = pb.StoredEvent.DESCRIPTOR.oneofs_by_name["event"]
    assert sorted(k.field for k in EVENT_KINDS) == sorted(f.name for f in oneof.fields)
    events = [k.event for k in EVENT_KINDS]
    assert sorted(events, key=str) == sorted(
        {*typing.get_args(ev.Event), *typing.get_args(te.TableEvent)}, key=str
    )


@pytest.mark.parametrize("event", [*HAND_EVENTS, *TABLE_EVENTS], ids=lambda e: type(e).__name__)
def test_round_trip(event: AnyEvent) -> None:
    data = encode_event(event, META)
    decoded, meta = decode_event(data)
    assert decoded == event
    assert type(decoded) is type(event)
    assert meta == META
    assert encode_event(decoded, meta) == data  # deterministic bytes


def test_round_trip_keeps_tuples_and_enums() -> None:
    decoded, _ = decode_event(encode_event(ev.HandStarted(SETUP), META))
    assert isinstance(decoded, ev.HandStarted)
    assert isinstance(decoded.setup.deck, tuple) and len(decoded.setup.deck) == 52
    assert isinstance(decoded.setup.seats, tuple)
    assert decoded.setup.variant is Variant.NLHE
    street, _ = decode_event(encode_event(ev.StreetStarted(street=ev.Street.TURN), META))
    assert isinstance(street, ev.StreetStarted) and street.street is ev.Street.TURN


def test_minimal_meta() -> None:
    meta = EventMeta(table_id="t")
    decoded, got = decode_event(encode_event(ev.PlayerFolded(seat=0), meta))
    assert decoded == ev.PlayerFolded(seat=0)
    assert got == meta and got.recorded_at is None


def test_recorded_at_is_utc() -> None:
    local = datetime(2026, 1, 2, 5, 0, tzinfo=UTC).astimezone(timezone(timedelta(hours=2)))
    _, meta = decode_event(encode_event(ev.PlayerFolded(seat=0), EventMeta("t", recorded_at=local)))
    assert meta.recorded_at == local and meta.recorded_at.tzinfo == UTC


@pytest.mark.parametrize("viewer", [None, 0, 1])
def test_redacted_copies_round_trip(viewer: int | None) -> None:
    for event in HAND_EVENTS:
        redacted = redact(event, viewer)
        stored = to_stored_event(redacted, META)
        decoded, _ = from_stored_event(stored)
        assert decoded == redacted
    hidden = redact(ev.HoleCardsDealt(seat=5, cards=cards("AsKs"), deck_positions=(0, 1)), 0)
    msg = to_stored_event(hidden, META).hole_cards_dealt
    assert [c.WhichOneof("kind") for c in msg.cards] == ["hidden", "hidden"]
    started = to_stored_event(redact(ev.HandStarted(SETUP), viewer), META)
    assert len(started.hand_started.setup.deck) == 0


def test_cards() -> None:
    assert card_to_proto(0).WhichOneof("kind") == "code"  # 2c is 0, still present
    assert card_from_proto(card_to_proto(0)) == 0
    assert card_from_proto(card_to_proto(51)) == 51
    assert card_from_proto(card_to_proto(None)) is None
    with pytest.raises(CodecError):
        card_to_proto(52)
    with pytest.raises(CodecError):
        card_from_proto(pb.Card())
    with pytest.raises(CodecError):
        card_from_proto(pb.Card(code=52))


def test_public_cards_cannot_be_hidden() -> None:
    stored = pb.StoredEvent(
        street_started=pb.StreetStarted(street=pb.STREET_FLOP, cards=[pb.Card(hidden=True)])
    )
    with pytest.raises(CodecError, match="board cards"):
        decode_event(stored.SerializeToString())
    shown = pb.StoredEvent(cards_shown=pb.CardsShown(seat=1, cards=[pb.Card(hidden=True)]))
    with pytest.raises(CodecError, match="shown cards"):
        decode_event(shown.SerializeToString())


def test_unknown_table_enum_strings_are_refused() -> None:
    with pytest.raises(CodecError, match="AI level"):
        encode_event(te.PlayerSeated(1, "p", "n", 10, "h", ai_level="godlike"), META)
    with pytest.raises(CodecError, match="sit-out reason"):
        encode_event(te.PlayerSatOut(1, reason="bored"), META)
    with pytest.raises(CodecError, match="sit-out reason"):
        decode_event(pb.StoredEvent(player_sat_out=pb.PlayerSatOut(seat=1)).SerializeToString())


def test_action_clock_is_a_duration() -> None:
    msg = to_stored_event(te.TableCreated(NLHE_CONFIG), META).table_created
    assert (msg.config.action_clock.seconds, msg.config.action_clock.nanos) == (15, 250_000_000)
    assert (msg.table_id, msg.name) == ("t-1", "Main")
    no_clock = to_stored_event(te.TableCreated(DRAW_CONFIG), META).table_created
    assert not no_clock.config.HasField("action_clock")


def test_bad_input() -> None:
    with pytest.raises(CodecError, match="no event"):
        decode_event(pb.StoredEvent(sequence=1).SerializeToString())
    with pytest.raises(CodecError):
        decode_event(b"\xff\xff\xff")
    bad_street = pb.StoredEvent(street_started=pb.StreetStarted())
    with pytest.raises(CodecError, match="street"):
        decode_event(bad_street.SerializeToString())
    with pytest.raises(CodecError, match="not an event"):
        encode_event(typing.cast(AnyEvent, "HandStarted"), META)
    with pytest.raises(CodecError):
        encode_event(pb.StoredEvent(), META)  # type: ignore[arg-type]


def test_unknown_fields_from_newer_writers_are_tolerated() -> None:
    """An older reader decodes an event a newer writer extended with a field it does not know."""
    data = encode_event(ev.PlayerFolded(seat=4), META)
    extended = pb.StoredEvent.FromString(data)
    folded = extended.player_folded
    # Field 99, varint 1, appended to the submessage as a newer schema might.
    raw = folded.SerializeToString() + b"\x98\x06\x01"
    folded.Clear()
    folded.MergeFromString(raw)
    extended.player_folded.CopyFrom(folded)
    decoded, _ = decode_event(extended.SerializeToString())
    assert decoded == ev.PlayerFolded(seat=4)
