"""Events as ``poker.events.v1.StoredEvent`` messages, both ways, from one table.

Each row of :data:`EVENT_KINDS` describes one event once: its class, its field of the
``StoredEvent`` oneof, the function that fills that field from the event and the one
that reads the event back. The two functions of a row sit side by side below, so a
reader can check that every field round-trips. The encoder finds a row by the event's
type and fills the field in place (no message built and copied: the append's hot
path); the decoder finds it by the oneof's name. Adding an event is one row and its
two functions (docs/architecture.md, "Adding an event").

A row's third function, ``skim``, is what a rebuild folds of the event in a hand that is
over (``felt.core.table.aggregate.skim_event``), read from the message: the event itself
(``read``) for a table event or a hand's end; only the seat of a seat's action (a
``SkimmedAction``) and the variant and seats of a deal (a ``SkimmedDeal``, not the whole
setup); None for the hand events a skim does not need, which are then not decoded at all
(:func:`skim_from_stored`).

Shared by both boundaries: the event store keeps these messages as bytes
(``felt.storage.eventstore.codec``) and the API sends redacted copies of them
(``felt.wire.convert``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from felt.core.rules.events import (
    AntePosted,
    BetPlaced,
    BlindPosted,
    CardsDrawn,
    CardsMucked,
    CardsShown,
    HandEnded,
    HandStarted,
    HoleCardsDealt,
    PlayerCalled,
    PlayerChecked,
    PlayerFolded,
    PotAwarded,
    StreetStarted,
    UncalledBetReturned,
)
from felt.core.table import events as te
from felt.core.table.aggregate import Skim, SkimmedAction, SkimmedDeal
from felt.core.table.events import AnyEvent
from felt.core.table.player import Player
from felt.core.table.positions import Positions
from felt.messages.upcast import upcast
from felt.messages.values import (
    CodecError,
    ai_level_from_proto,
    ai_level_to_proto,
    card_messages,
    hand_setup_from_proto,
    hand_setup_to_proto,
    known_cards,
    maybe_cards,
    sit_out_reason_from_proto,
    sit_out_reason_to_proto,
    street_from_proto,
    street_to_proto,
    table_config_from_proto,
    table_config_to_proto,
    variant_from_proto,
)
from poker.events.v1 import events_pb2 as pb

__all__ = [
    "EVENT_KINDS",
    "SNAPSHOT_FORMAT",
    "EventKind",
    "EventMeta",
    "event_from_stored",
    "fill_stored",
    "from_stored_event",
    "skim_from_stored",
    "to_stored_event",
]

SNAPSHOT_FORMAT = 1
"""``TableSnapshotTaken.format`` this codec writes and reads."""


@dataclass(frozen=True, slots=True)
class EventMeta:
    """The envelope around an event. ``sequence`` is the one the append will give it."""

    table_id: str
    sequence: int = 0
    recorded_at: datetime | None = None
    request_id: str = ""
    hand_id: str = ""
    request_key: str = ""


@dataclass(frozen=True, slots=True)
class EventKind:
    """One event in the table: ``fill(stored, event)`` sets ``stored.<field>``;
    ``read(stored.<field>)`` is the event again."""

    event: type
    field: str
    fill: Callable[[pb.StoredEvent, Any], None]
    read: Callable[[Any], AnyEvent]
    skim: Callable[[Any], AnyEvent | Skim] | None  # None: a skim needs nothing of it


# ------------------------------------------------------------------ each event, both ways


def _hand_started(stored: pb.StoredEvent, e: HandStarted) -> None:
    stored.hand_started.setup.CopyFrom(hand_setup_to_proto(e.setup))


def _read_hand_started(m: pb.HandStarted) -> HandStarted:
    return HandStarted(hand_setup_from_proto(m.setup))


def _skim_hand_started(m: pb.HandStarted) -> SkimmedDeal:
    setup = m.setup
    return SkimmedDeal(variant_from_proto(setup.variant), tuple(s.seat for s in setup.seats))


def _skim_seat_action(
    m: pb.PlayerFolded | pb.PlayerChecked | pb.PlayerCalled | pb.BetPlaced | pb.CardsDrawn,
) -> SkimmedAction:
    return SkimmedAction(m.seat)


def _ante_posted(stored: pb.StoredEvent, e: AntePosted) -> None:
    m = stored.ante_posted
    m.seat, m.amount, m.all_in = e.seat, e.amount, e.all_in


def _read_ante_posted(m: pb.AntePosted) -> AntePosted:
    return AntePosted(seat=m.seat, amount=m.amount, all_in=m.all_in)


def _blind_posted(stored: pb.StoredEvent, e: BlindPosted) -> None:
    m = stored.blind_posted
    m.seat, m.amount, m.all_in = e.seat, e.amount, e.all_in


def _read_blind_posted(m: pb.BlindPosted) -> BlindPosted:
    return BlindPosted(seat=m.seat, amount=m.amount, all_in=m.all_in)


def _hole_cards_dealt(stored: pb.StoredEvent, e: HoleCardsDealt) -> None:
    m = stored.hole_cards_dealt
    m.seat = e.seat
    m.cards.extend(card_messages(e.cards))
    m.deck_positions.extend(e.deck_positions)


def _read_hole_cards_dealt(m: pb.HoleCardsDealt) -> HoleCardsDealt:
    return HoleCardsDealt(
        seat=m.seat, cards=maybe_cards(m.cards), deck_positions=tuple(m.deck_positions)
    )


def _player_folded(stored: pb.StoredEvent, e: PlayerFolded) -> None:
    stored.player_folded.seat = e.seat


def _read_player_folded(m: pb.PlayerFolded) -> PlayerFolded:
    return PlayerFolded(seat=m.seat)


def _player_checked(stored: pb.StoredEvent, e: PlayerChecked) -> None:
    stored.player_checked.seat = e.seat


def _read_player_checked(m: pb.PlayerChecked) -> PlayerChecked:
    return PlayerChecked(seat=m.seat)


def _player_called(stored: pb.StoredEvent, e: PlayerCalled) -> None:
    m = stored.player_called
    m.seat, m.amount, m.all_in = e.seat, e.amount, e.all_in


def _read_player_called(m: pb.PlayerCalled) -> PlayerCalled:
    return PlayerCalled(seat=m.seat, amount=m.amount, all_in=m.all_in)


def _bet_placed(stored: pb.StoredEvent, e: BetPlaced) -> None:
    m = stored.bet_placed
    m.seat, m.to, m.amount, m.all_in, m.full = e.seat, e.to, e.amount, e.all_in, e.full


def _read_bet_placed(m: pb.BetPlaced) -> BetPlaced:
    return BetPlaced(seat=m.seat, to=m.to, amount=m.amount, all_in=m.all_in, full=m.full)


def _cards_drawn(stored: pb.StoredEvent, e: CardsDrawn) -> None:
    m = stored.cards_drawn
    m.seat = e.seat
    m.discarded.extend(card_messages(e.discarded))
    m.drawn.extend(card_messages(e.drawn))
    m.deck_positions.extend(e.deck_positions)


def _read_cards_drawn(m: pb.CardsDrawn) -> CardsDrawn:
    return CardsDrawn(
        seat=m.seat,
        discarded=maybe_cards(m.discarded),
        drawn=maybe_cards(m.drawn),
        deck_positions=tuple(m.deck_positions),
    )


def _street_started(stored: pb.StoredEvent, e: StreetStarted) -> None:
    m = stored.street_started
    m.street = street_to_proto(e.street)
    m.cards.extend(card_messages(e.cards))
    m.deck_positions.extend(e.deck_positions)


def _read_street_started(m: pb.StreetStarted) -> StreetStarted:
    return StreetStarted(
        street=street_from_proto(m.street),
        cards=known_cards(m.cards, "board cards"),
        deck_positions=tuple(m.deck_positions),
    )


def _uncalled_bet_returned(stored: pb.StoredEvent, e: UncalledBetReturned) -> None:
    m = stored.uncalled_bet_returned
    m.seat, m.amount = e.seat, e.amount


def _read_uncalled_bet_returned(m: pb.UncalledBetReturned) -> UncalledBetReturned:
    return UncalledBetReturned(seat=m.seat, amount=m.amount)


def _cards_shown(stored: pb.StoredEvent, e: CardsShown) -> None:
    m = stored.cards_shown
    m.seat = e.seat
    m.cards.extend(card_messages(e.cards))
    m.voluntary = e.voluntary


def _read_cards_shown(m: pb.CardsShown) -> CardsShown:
    return CardsShown(seat=m.seat, cards=known_cards(m.cards, "shown cards"), voluntary=m.voluntary)


def _cards_mucked(stored: pb.StoredEvent, e: CardsMucked) -> None:
    stored.cards_mucked.seat = e.seat


def _read_cards_mucked(m: pb.CardsMucked) -> CardsMucked:
    return CardsMucked(seat=m.seat)


def _pot_awarded(stored: pb.StoredEvent, e: PotAwarded) -> None:
    m = stored.pot_awarded
    m.index, m.amount = e.index, e.amount
    m.eligible.extend(e.eligible)
    for seat, amount in e.shares:
        m.shares.add(seat=seat, amount=amount)
    m.hand = e.hand


def _read_pot_awarded(m: pb.PotAwarded) -> PotAwarded:
    return PotAwarded(
        index=m.index,
        amount=m.amount,
        eligible=tuple(m.eligible),
        shares=tuple((s.seat, s.amount) for s in m.shares),
        hand=m.hand,
    )


def _hand_ended(stored: pb.StoredEvent, e: HandEnded) -> None:
    m = stored.hand_ended
    m.SetInParent()
    for seat, stack in e.stacks:
        m.stacks.add(seat=seat, stack=stack)


def _read_hand_ended(m: pb.HandEnded) -> HandEnded:
    return HandEnded(stacks=tuple((s.seat, s.stack) for s in m.stacks))


def _table_created(stored: pb.StoredEvent, e: te.TableCreated) -> None:
    m = stored.table_created
    m.table_id, m.name = e.config.table_id, e.config.name
    m.config.CopyFrom(table_config_to_proto(e.config))


def _read_table_created(m: pb.TableCreated) -> te.TableCreated:
    return te.TableCreated(table_config_from_proto(m.config, m.table_id, m.name))


def _player_seated(stored: pb.StoredEvent, e: te.PlayerSeated) -> None:
    m = stored.player_seated
    m.seat, m.player_id, m.display_name, m.stack = e.seat, e.player_id, e.name, e.stack
    m.ai_level = ai_level_to_proto(e.ai_level)
    m.token_hash = e.token_hash


def _read_player_seated(m: pb.PlayerSeated) -> te.PlayerSeated:
    return te.PlayerSeated(
        seat=m.seat,
        player_id=m.player_id,
        name=m.display_name,
        stack=m.stack,
        token_hash=m.token_hash,
        ai_level=ai_level_from_proto(m.ai_level),
    )


def _seat_token_reissued(stored: pb.StoredEvent, e: te.SeatTokenReissued) -> None:
    m = stored.seat_token_reissued
    m.seat, m.player_id, m.token_hash = e.seat, e.player_id, e.token_hash


def _read_seat_token_reissued(m: pb.SeatTokenReissued) -> te.SeatTokenReissued:
    return te.SeatTokenReissued(seat=m.seat, player_id=m.player_id, token_hash=m.token_hash)


def _player_left(stored: pb.StoredEvent, e: te.PlayerLeft) -> None:
    m = stored.player_left
    m.seat, m.stack, m.busted = e.seat, e.stack, e.busted


def _read_player_left(m: pb.PlayerLeft) -> te.PlayerLeft:
    return te.PlayerLeft(seat=m.seat, stack=m.stack, busted=m.busted)


def _player_sat_out(stored: pb.StoredEvent, e: te.PlayerSatOut) -> None:
    m = stored.player_sat_out
    m.seat, m.reason = e.seat, sit_out_reason_to_proto(e.reason)


def _read_player_sat_out(m: pb.PlayerSatOut) -> te.PlayerSatOut:
    return te.PlayerSatOut(seat=m.seat, reason=sit_out_reason_from_proto(m.reason))


def _player_sat_in(stored: pb.StoredEvent, e: te.PlayerSatIn) -> None:
    stored.player_sat_in.seat = e.seat


def _read_player_sat_in(m: pb.PlayerSatIn) -> te.PlayerSatIn:
    return te.PlayerSatIn(seat=m.seat)


def _player_waiting_for_big_blind(stored: pb.StoredEvent, e: te.PlayerWaitingForBigBlind) -> None:
    stored.player_waiting_for_big_blind.seat = e.seat


def _read_player_waiting_for_big_blind(
    m: pb.PlayerWaitingForBigBlind,
) -> te.PlayerWaitingForBigBlind:
    return te.PlayerWaitingForBigBlind(seat=m.seat)


def _chips_added(stored: pb.StoredEvent, e: te.ChipsAdded) -> None:
    m = stored.chips_added
    m.seat, m.amount = e.seat, e.amount


def _read_chips_added(m: pb.ChipsAdded) -> te.ChipsAdded:
    return te.ChipsAdded(seat=m.seat, amount=m.amount)


def _action_timed_out(stored: pb.StoredEvent, e: te.ActionTimedOut) -> None:
    stored.action_timed_out.seat = e.seat


def _read_action_timed_out(m: pb.ActionTimedOut) -> te.ActionTimedOut:
    return te.ActionTimedOut(seat=m.seat)


def _deck_committed(stored: pb.StoredEvent, e: te.DeckCommitted) -> None:
    m = stored.deck_committed
    m.hand_id, m.root, m.leaf_count, m.seed = e.hand_id, e.root, e.leaf_count, e.seed


def _read_deck_committed(m: pb.DeckCommitted) -> te.DeckCommitted:
    return te.DeckCommitted(hand_id=m.hand_id, root=m.root, leaf_count=m.leaf_count, seed=m.seed)


def _table_closed(stored: pb.StoredEvent, e: te.TableClosed) -> None:
    stored.table_closed.reason = e.reason


def _read_table_closed(m: pb.TableClosed) -> te.TableClosed:
    return te.TableClosed(reason=m.reason)


def _table_snapshot_taken(stored: pb.StoredEvent, e: te.TableSnapshotTaken) -> None:
    m = stored.table_snapshot_taken
    m.format = SNAPSHOT_FORMAT
    m.table.table_id, m.table.name = e.config.table_id, e.config.name
    m.table.config.CopyFrom(table_config_to_proto(e.config))
    seated_at = dict(e.seated_at)
    for p in e.players:
        m.seats.add(
            seat=p.seat,
            player_id=p.player_id,
            display_name=p.name,
            stack=p.stack,
            token_hash=p.token_hash,
            ai_level=ai_level_to_proto(p.ai_level),
            sitting_out=p.sitting_out,
            leaving=p.leaving,
            timeouts=p.timeouts,
            sit_out_reason=(
                sit_out_reason_to_proto(p.sit_out_reason)
                if p.sit_out_reason
                else pb.SIT_OUT_REASON_UNSPECIFIED
            ),
            seated_sequence=seated_at.get(p.seat, 0),
            waiting_for_big_blind=p.waiting_for_big_blind,
            busted_hand=p.busted_hand,
        )
    m.hands_played = e.hands_played
    if e.positions is not None:
        pos = m.positions
        pos.button = e.positions.button
        if e.positions.small_blind is not None:
            pos.small_blind = e.positions.small_blind
        if e.positions.big_blind is not None:
            pos.big_blind = e.positions.big_blind
    if e.timing_out is not None:
        m.timing_out_seat = e.timing_out
    m.closed = e.closed


def _read_table_snapshot_taken(m: pb.TableSnapshotTaken) -> te.TableSnapshotTaken:
    if m.format != SNAPSHOT_FORMAT:
        raise CodecError(f"unknown table snapshot format {m.format} (written by a newer version?)")
    players = tuple(
        Player(
            seat=s.seat,
            player_id=s.player_id,
            name=s.display_name,
            stack=s.stack,
            token_hash=s.token_hash,
            ai_level=ai_level_from_proto(s.ai_level),
            sitting_out=s.sitting_out,
            leaving=s.leaving,
            timeouts=s.timeouts,
            sit_out_reason=(
                sit_out_reason_from_proto(s.sit_out_reason)
                if s.sit_out_reason != pb.SIT_OUT_REASON_UNSPECIFIED
                else ""
            ),
            waiting_for_big_blind=s.waiting_for_big_blind,
            busted_hand=s.busted_hand,
        )
        for s in m.seats
    )
    positions = None
    if m.HasField("positions"):
        p = m.positions
        positions = Positions(
            p.button,
            p.small_blind if p.HasField("small_blind") else None,
            p.big_blind if p.HasField("big_blind") else None,
        )
    return te.TableSnapshotTaken(
        config=table_config_from_proto(m.table.config, m.table.table_id, m.table.name),
        players=players,
        hands_played=m.hands_played,
        positions=positions,
        timing_out=m.timing_out_seat if m.HasField("timing_out_seat") else None,
        closed=m.closed,
        seated_at=tuple((s.seat, s.seated_sequence) for s in m.seats),
    )


# ------------------------------------------------------------------ the table


EVENT_KINDS: tuple[EventKind, ...] = (
    EventKind(HandStarted, "hand_started", _hand_started, _read_hand_started, _skim_hand_started),
    EventKind(AntePosted, "ante_posted", _ante_posted, _read_ante_posted, None),
    EventKind(BlindPosted, "blind_posted", _blind_posted, _read_blind_posted, None),
    EventKind(HoleCardsDealt, "hole_cards_dealt", _hole_cards_dealt, _read_hole_cards_dealt, None),
    EventKind(
        PlayerFolded, "player_folded", _player_folded, _read_player_folded, _skim_seat_action
    ),
    EventKind(
        PlayerChecked, "player_checked", _player_checked, _read_player_checked, _skim_seat_action
    ),
    EventKind(
        PlayerCalled, "player_called", _player_called, _read_player_called, _skim_seat_action
    ),
    EventKind(BetPlaced, "bet_placed", _bet_placed, _read_bet_placed, _skim_seat_action),
    EventKind(CardsDrawn, "cards_drawn", _cards_drawn, _read_cards_drawn, _skim_seat_action),
    EventKind(StreetStarted, "street_started", _street_started, _read_street_started, None),
    EventKind(
        UncalledBetReturned,
        "uncalled_bet_returned",
        _uncalled_bet_returned,
        _read_uncalled_bet_returned,
        None,
    ),
    EventKind(CardsShown, "cards_shown", _cards_shown, _read_cards_shown, None),
    EventKind(CardsMucked, "cards_mucked", _cards_mucked, _read_cards_mucked, None),
    EventKind(PotAwarded, "pot_awarded", _pot_awarded, _read_pot_awarded, None),
    EventKind(HandEnded, "hand_ended", _hand_ended, _read_hand_ended, _read_hand_ended),
    EventKind(
        te.TableCreated, "table_created", _table_created, _read_table_created, _read_table_created
    ),
    EventKind(
        te.PlayerSeated, "player_seated", _player_seated, _read_player_seated, _read_player_seated
    ),
    EventKind(
        te.SeatTokenReissued,
        "seat_token_reissued",
        _seat_token_reissued,
        _read_seat_token_reissued,
        _read_seat_token_reissued,
    ),
    EventKind(te.PlayerLeft, "player_left", _player_left, _read_player_left, _read_player_left),
    EventKind(
        te.PlayerSatOut,
        "player_sat_out",
        _player_sat_out,
        _read_player_sat_out,
        _read_player_sat_out,
    ),
    EventKind(
        te.PlayerSatIn, "player_sat_in", _player_sat_in, _read_player_sat_in, _read_player_sat_in
    ),
    EventKind(
        te.PlayerWaitingForBigBlind,
        "player_waiting_for_big_blind",
        _player_waiting_for_big_blind,
        _read_player_waiting_for_big_blind,
        _read_player_waiting_for_big_blind,
    ),
    EventKind(te.ChipsAdded, "chips_added", _chips_added, _read_chips_added, _read_chips_added),
    EventKind(
        te.ActionTimedOut,
        "action_timed_out",
        _action_timed_out,
        _read_action_timed_out,
        _read_action_timed_out,
    ),
    EventKind(
        te.DeckCommitted,
        "deck_committed",
        _deck_committed,
        _read_deck_committed,
        _read_deck_committed,
    ),
    EventKind(
        te.TableClosed, "table_closed", _table_closed, _read_table_closed, _read_table_closed
    ),
    EventKind(
        te.TableSnapshotTaken,
        "table_snapshot_taken",
        _table_snapshot_taken,
        _read_table_snapshot_taken,
        _read_table_snapshot_taken,
    ),
)

_BY_TYPE: dict[type, EventKind] = {k.event: k for k in EVENT_KINDS}
_BY_FIELD: dict[str, EventKind] = {k.field: k for k in EVENT_KINDS}
_SKIM_BY_FIELD = {k.field: k.skim for k in EVENT_KINDS if k.skim is not None}


def fill_stored(stored: pb.StoredEvent, event: AnyEvent) -> None:
    """Set ``event``'s field of ``stored`` (its envelope is the caller's)."""
    kind = _BY_TYPE.get(type(event))
    if kind is None:  # a subclass of an event class, or not an event at all
        kind = next((k for k in EVENT_KINDS if isinstance(event, k.event)), None)
        if kind is None:
            raise CodecError(f"cannot store {type(event).__name__}: not an event")
    kind.fill(stored, event)


def event_from_stored(stored: pb.StoredEvent) -> AnyEvent:
    """The event in ``stored`` (its envelope aside), brought to today's shape first
    (:func:`felt.messages.upcast.upcast`)."""
    field = upcast(stored).WhichOneof("event")
    if field is None:
        raise CodecError("stored event has no event set (written by a newer version?)")
    kind = _BY_FIELD.get(field)
    if kind is None:
        raise CodecError(f"no decoder for stored event {field!r}")
    return kind.read(getattr(stored, field))


def skim_from_stored(stored: pb.StoredEvent) -> AnyEvent | Skim | None:
    """What a skim of a hand that is over folds of ``stored`` (its ``skim`` column).

    The event, or only what a skim needs of a deal or a seat's action, read
    from the message brought to today's shape (:func:`felt.messages.upcast.upcast`)
    like any decode; None for an event a skim does not need (not decoded).
    """
    field = upcast(stored).WhichOneof("event")
    if field is None:
        raise CodecError("stored event has no event set (written by a newer version?)")
    skim = _SKIM_BY_FIELD.get(field)
    if skim is not None:
        return skim(getattr(stored, field))
    if field not in _BY_FIELD:
        raise CodecError(f"no decoder for stored event {field!r}")
    return None


def to_stored_event(event: AnyEvent, meta: EventMeta) -> pb.StoredEvent:
    """``event`` in its envelope, as a message (e.g. to send a redacted copy to a watcher)."""
    stored = pb.StoredEvent(
        sequence=meta.sequence,
        request_id=meta.request_id,
        table_id=meta.table_id,
        hand_id=meta.hand_id,
        request_key=meta.request_key,
    )
    if meta.recorded_at is not None:
        stored.recorded_at.FromDatetime(meta.recorded_at)
    fill_stored(stored, event)
    return stored


def from_stored_event(stored: pb.StoredEvent) -> tuple[AnyEvent, EventMeta]:
    """The event and envelope in a ``StoredEvent`` message."""
    recorded_at = (
        stored.recorded_at.ToDatetime(tzinfo=UTC) if stored.HasField("recorded_at") else None
    )
    meta = EventMeta(
        table_id=stored.table_id,
        sequence=stored.sequence,
        recorded_at=recorded_at,
        request_id=stored.request_id,
        hand_id=stored.hand_id,
        request_key=stored.request_key,
    )
    return event_from_stored(stored), meta
