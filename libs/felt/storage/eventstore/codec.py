"""Serialization of events: the core's dataclasses <-> ``poker.events.v1.StoredEvent`` bytes.

Hand events (``felt.core.rules.events``) and table events (``felt.core.table.events``)
are converted field by field; every field round-trips exactly. String enums of
the table events map to proto enums (``ai_level``, ``PlayerSatOut.reason``);
a value the codec does not know is refused rather than stored wrongly.

Redacted copies encode too: a hidden card (``None`` in a redacted dataclass)
becomes ``Card(hidden=True)`` and decodes back to ``None``. Fields that can
never be hidden (board cards, shown cards, the deck) refuse it.

Why one module of this size: it is two tables (event to message, message to
event) with one short function per event kind; keeping an event's two halves
side by side is what lets a reader check that every field round-trips.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from google.protobuf.duration_pb2 import Duration
from google.protobuf.message import DecodeError
from google.protobuf.timestamp_pb2 import Timestamp

from felt.core.cards import Card
from felt.core.rules.config import HandSetup, SeatSetup, Variant
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
    MaybeCard,
    PlayerCalled,
    PlayerChecked,
    PlayerFolded,
    PotAwarded,
    Street,
    StreetStarted,
    UncalledBetReturned,
)
from felt.core.rules.variants import rules_for
from felt.core.table import events as te
from felt.core.table.events import AnyEvent, TableEvent
from felt.core.table.player import Player
from felt.core.table.positions import Positions
from poker.events.v1 import events_pb2 as pb

__all__ = [
    "AnyEvent",
    "CodecError",
    "EventMeta",
    "TableEvent",
    "ai_level_from_proto",
    "ai_level_to_proto",
    "card_from_proto",
    "card_messages",
    "card_to_proto",
    "decode_event",
    "encode_event",
    "encode_stored",
    "from_stored_event",
    "hand_setup_from_proto",
    "hand_setup_to_proto",
    "street_from_proto",
    "street_to_proto",
    "table_config_from_proto",
    "table_config_to_proto",
    "to_stored_event",
    "variant_from_proto",
    "variant_to_proto",
]


SNAPSHOT_FORMAT = 1
"""``TableSnapshotTaken.format`` this codec writes and reads."""


class CodecError(ValueError):
    """Bytes that are not a stored event this codec understands, or an event it cannot store."""


@dataclass(frozen=True, slots=True)
class EventMeta:
    """The envelope around an event. ``sequence`` is the one the append will give it."""

    table_id: str
    sequence: int = 0
    recorded_at: datetime | None = None
    request_id: str = ""
    hand_id: str = ""
    request_key: str = ""


# ------------------------------------------------------------------ scalars


_VARIANT_TO_PB: dict[Variant, pb.Variant.ValueType] = {
    Variant.NLHE: pb.VARIANT_NLHE,
    Variant.DRAW5: pb.VARIANT_DRAW5,
}
_VARIANT_FROM_PB = {v: k for k, v in _VARIANT_TO_PB.items()}

_STREET_TO_PB: dict[Street, pb.Street.ValueType] = {
    Street.PREFLOP: pb.STREET_PREFLOP,
    Street.FLOP: pb.STREET_FLOP,
    Street.TURN: pb.STREET_TURN,
    Street.RIVER: pb.STREET_RIVER,
    Street.FIRST_BET: pb.STREET_FIRST_BET,
    Street.DRAW: pb.STREET_DRAW,
    Street.SECOND_BET: pb.STREET_SECOND_BET,
    Street.SHOWDOWN: pb.STREET_SHOWDOWN,
    Street.COMPLETE: pb.STREET_COMPLETE,
}
_STREET_FROM_PB = {v: k for k, v in _STREET_TO_PB.items()}

# felt.core.table.events spells these as strings (AI_LEVELS); each level's wire value is
# AI_LEVEL_<LEVEL> (a level the protos lack fails here, at import).
_AI_LEVEL_TO_PB: dict[str, pb.AiLevel.ValueType] = {
    "": pb.AI_LEVEL_UNSPECIFIED,
    **{level: pb.AiLevel.Value(f"AI_LEVEL_{level.upper()}") for level in te.AI_LEVELS},
}
_AI_LEVEL_FROM_PB = {v: k for k, v in _AI_LEVEL_TO_PB.items()}

_SIT_OUT_REASON_TO_PB: dict[str, pb.SitOutReason.ValueType] = {
    "requested": pb.SIT_OUT_REASON_REQUESTED,
    "timeouts": pb.SIT_OUT_REASON_TIMED_OUT,
    "busted": pb.SIT_OUT_REASON_BUSTED,
    "leaving": pb.SIT_OUT_REASON_LEAVING,
}
_SIT_OUT_REASON_FROM_PB = {v: k for k, v in _SIT_OUT_REASON_TO_PB.items()}


def ai_level_to_proto(level: str) -> pb.AiLevel.ValueType:
    """``""`` (a human) or one of ``felt.core.table.events.AI_LEVELS`` as the proto enum."""
    try:
        return _AI_LEVEL_TO_PB[level]
    except KeyError:
        raise CodecError(f"unknown AI level {level!r}") from None


def ai_level_from_proto(value: pb.AiLevel.ValueType) -> str:
    try:
        return _AI_LEVEL_FROM_PB[value]
    except KeyError:
        raise CodecError(f"unknown AI level {value}") from None


def _sit_out_reason_to_proto(reason: str) -> pb.SitOutReason.ValueType:
    try:
        return _SIT_OUT_REASON_TO_PB[reason]
    except KeyError:
        raise CodecError(f"unknown sit-out reason {reason!r}") from None


def _sit_out_reason_from_proto(value: pb.SitOutReason.ValueType) -> str:
    try:
        return _SIT_OUT_REASON_FROM_PB[value]
    except KeyError:
        raise CodecError(f"unknown sit-out reason {value}") from None


def variant_to_proto(variant: Variant) -> pb.Variant.ValueType:
    return _VARIANT_TO_PB[variant]


def variant_from_proto(value: pb.Variant.ValueType) -> Variant:
    try:
        return _VARIANT_FROM_PB[value]
    except KeyError:
        raise CodecError(f"unknown variant {value}") from None


def street_to_proto(street: Street) -> pb.Street.ValueType:
    return _STREET_TO_PB[street]


def street_from_proto(value: pb.Street.ValueType) -> Street:
    try:
        return _STREET_FROM_PB[value]
    except KeyError:
        raise CodecError(f"unknown street {value}") from None


def _check_card(card: Card) -> None:
    if not 0 <= card < 52:
        raise CodecError(f"{card} is not a card number (0..51)")


def card_to_proto(card: MaybeCard) -> pb.Card:
    """A card, or ``None`` (hidden in a redacted copy), as a ``poker.events.v1.Card``."""
    if card is None:
        return pb.Card(hidden=True)
    _check_card(card)
    return pb.Card(code=card)


def card_from_proto(msg: pb.Card) -> MaybeCard:
    """The card in ``msg``, or ``None`` if it is hidden."""
    kind = msg.WhichOneof("kind")
    if kind == "code":
        if msg.code >= 52:
            raise CodecError(f"{msg.code} is not a card number (0..51)")
        return msg.code
    if kind == "hidden":
        return None
    raise CodecError("card has neither a code nor the hidden flag")


def _maybe_cards(msgs: Any) -> tuple[MaybeCard, ...]:
    return tuple(card_from_proto(m) for m in msgs)


def _known_cards(msgs: Any, what: str) -> tuple[Card, ...]:
    result: list[Card] = []
    for m in msgs:
        c = card_from_proto(m)
        if c is None:
            raise CodecError(f"{what} cannot be hidden")
        result.append(c)
    return tuple(result)


def hand_setup_to_proto(setup: HandSetup) -> pb.HandSetup:
    for c in setup.deck:
        _check_card(c)
    return pb.HandSetup(
        hand_id=setup.hand_id,
        variant=variant_to_proto(setup.variant),
        button=setup.button,
        seats=[
            pb.SeatSetup(
                seat=s.seat, stack=s.stack, player_id=s.player_id, ante=s.ante, blind=s.blind
            )
            for s in setup.seats
        ],
        deck=list(setup.deck),
        min_bet=setup.min_bet,
        small_bet=setup.small_bet,
        big_bet=setup.big_bet,
        raise_cap=setup.raise_cap,
        allow_all_in=setup.allow_all_in,
        public_id=setup.public_id,
    )


def hand_setup_from_proto(msg: pb.HandSetup) -> HandSetup:
    for c in msg.deck:
        if c >= 52:
            raise CodecError(f"deck holds {c}, not a card number (0..51)")
    return HandSetup(
        hand_id=msg.hand_id,
        variant=variant_from_proto(msg.variant),
        button=msg.button,
        seats=tuple(
            SeatSetup(seat=s.seat, stack=s.stack, player_id=s.player_id, ante=s.ante, blind=s.blind)
            for s in msg.seats
        ),
        deck=tuple(msg.deck),
        min_bet=msg.min_bet,
        small_bet=msg.small_bet,
        big_bet=msg.big_bet,
        raise_cap=msg.raise_cap,
        allow_all_in=msg.allow_all_in,
        public_id=msg.public_id,
    )


def table_config_to_proto(config: te.TableConfig) -> pb.TableConfig:
    """The rules part of a table config (``table_id`` and ``name`` go on ``TableCreated``)."""
    msg = pb.TableConfig(
        variant=variant_to_proto(config.variant),
        seat_count=config.seat_count,
        small_blind=config.small_blind,
        big_blind=config.big_blind,
        ante=config.ante,
        small_bet=config.small_bet,
        big_bet=config.big_bet,
        raise_cap=config.raise_cap,
        allow_all_in=config.allow_all_in,
        max_consecutive_timeouts=config.max_timeouts,
        max_hands=config.hand_limit,
        private=config.private,
    )
    if config.action_timeout_ms:
        msg.action_clock.FromMilliseconds(config.action_timeout_ms)
    if config.close_at_ms:
        msg.close_time.FromMilliseconds(config.close_at_ms)
    return msg


def table_config_from_proto(msg: pb.TableConfig, table_id: str, name: str) -> te.TableConfig:
    """The domain config of a ``TableConfig``, with the defaults the message documents.

    Decodes stored configs too, so it checks no bounds (``felt.wire.limits`` does,
    for a new table's request): a table created under older bounds still loads.
    """
    clock: Duration = msg.action_clock
    variant = variant_from_proto(msg.variant)
    # RULES.md: Draw's big bet defaults to twice the small bet (fixed limit's big bet).
    big_bet = msg.big_bet or (2 * msg.small_bet if rules_for(variant).fixed_limit else 0)
    return te.TableConfig(
        table_id=table_id,
        variant=variant,
        seat_count=msg.seat_count,
        small_blind=msg.small_blind,
        big_blind=msg.big_blind,
        ante=msg.ante,
        small_bet=msg.small_bet,
        big_bet=big_bet,
        raise_cap=msg.raise_cap or 4,
        allow_all_in=msg.allow_all_in if msg.HasField("allow_all_in") else True,
        action_timeout_ms=clock.ToMilliseconds() if msg.HasField("action_clock") else 0,
        max_timeouts=msg.max_consecutive_timeouts,
        hand_limit=msg.max_hands,
        close_at_ms=msg.close_time.ToMilliseconds() if msg.HasField("close_time") else 0,
        name=name,
        private=msg.private,
    )


# ------------------------------------------------------------------ events


# Card messages, shared (repeated fields copy them): what ``card_to_proto`` builds.
_CARD_PB = tuple(pb.Card(code=c) for c in range(52))
_HIDDEN_PB = pb.Card(hidden=True)


def card_messages(cards: Sequence[MaybeCard]) -> list[pb.Card]:
    """``card_to_proto`` of each card, as shared messages: only for a repeated field
    (which copies them), never to change."""
    out = []
    for c in cards:
        if c is None:
            out.append(_HIDDEN_PB)
        else:
            _check_card(c)
            out.append(_CARD_PB[c])
    return out


# One filler per event class: sets the event's field of a StoredEvent in place (no
# message built and copied), found by the event's type instead of a chain of matches.


def _hand_started(stored: pb.StoredEvent, e: HandStarted) -> None:
    stored.hand_started.setup.CopyFrom(hand_setup_to_proto(e.setup))


def _ante_posted(stored: pb.StoredEvent, e: AntePosted) -> None:
    m = stored.ante_posted
    m.seat, m.amount, m.all_in = e.seat, e.amount, e.all_in


def _blind_posted(stored: pb.StoredEvent, e: BlindPosted) -> None:
    m = stored.blind_posted
    m.seat, m.amount, m.all_in = e.seat, e.amount, e.all_in


def _hole_cards_dealt(stored: pb.StoredEvent, e: HoleCardsDealt) -> None:
    m = stored.hole_cards_dealt
    m.seat = e.seat
    m.cards.extend(card_messages(e.cards))
    m.deck_positions.extend(e.deck_positions)


def _player_folded(stored: pb.StoredEvent, e: PlayerFolded) -> None:
    stored.player_folded.seat = e.seat


def _player_checked(stored: pb.StoredEvent, e: PlayerChecked) -> None:
    stored.player_checked.seat = e.seat


def _player_called(stored: pb.StoredEvent, e: PlayerCalled) -> None:
    m = stored.player_called
    m.seat, m.amount, m.all_in = e.seat, e.amount, e.all_in


def _bet_placed(stored: pb.StoredEvent, e: BetPlaced) -> None:
    m = stored.bet_placed
    m.seat, m.to, m.amount, m.all_in, m.full = e.seat, e.to, e.amount, e.all_in, e.full


def _cards_drawn(stored: pb.StoredEvent, e: CardsDrawn) -> None:
    m = stored.cards_drawn
    m.seat = e.seat
    m.discarded.extend(card_messages(e.discarded))
    m.drawn.extend(card_messages(e.drawn))
    m.deck_positions.extend(e.deck_positions)


def _street_started(stored: pb.StoredEvent, e: StreetStarted) -> None:
    m = stored.street_started
    m.street = street_to_proto(e.street)
    m.cards.extend(card_messages(e.cards))
    m.deck_positions.extend(e.deck_positions)


def _uncalled_bet_returned(stored: pb.StoredEvent, e: UncalledBetReturned) -> None:
    m = stored.uncalled_bet_returned
    m.seat, m.amount = e.seat, e.amount


def _cards_shown(stored: pb.StoredEvent, e: CardsShown) -> None:
    m = stored.cards_shown
    m.seat = e.seat
    m.cards.extend(card_messages(e.cards))
    m.voluntary = e.voluntary


def _cards_mucked(stored: pb.StoredEvent, e: CardsMucked) -> None:
    stored.cards_mucked.seat = e.seat


def _pot_awarded(stored: pb.StoredEvent, e: PotAwarded) -> None:
    m = stored.pot_awarded
    m.index, m.amount = e.index, e.amount
    m.eligible.extend(e.eligible)
    for seat, amount in e.shares:
        m.shares.add(seat=seat, amount=amount)
    m.hand = e.hand


def _hand_ended(stored: pb.StoredEvent, e: HandEnded) -> None:
    m = stored.hand_ended
    m.SetInParent()
    for seat, stack in e.stacks:
        m.stacks.add(seat=seat, stack=stack)


def _table_created(stored: pb.StoredEvent, e: te.TableCreated) -> None:
    m = stored.table_created
    m.table_id, m.name = e.config.table_id, e.config.name
    m.config.CopyFrom(table_config_to_proto(e.config))


def _player_seated(stored: pb.StoredEvent, e: te.PlayerSeated) -> None:
    m = stored.player_seated
    m.seat, m.player_id, m.display_name, m.stack = e.seat, e.player_id, e.name, e.stack
    m.ai_level = ai_level_to_proto(e.ai_level)
    m.token_hash = e.token_hash


def _seat_token_reissued(stored: pb.StoredEvent, e: te.SeatTokenReissued) -> None:
    m = stored.seat_token_reissued
    m.seat, m.player_id, m.token_hash = e.seat, e.player_id, e.token_hash


def _player_left(stored: pb.StoredEvent, e: te.PlayerLeft) -> None:
    m = stored.player_left
    m.seat, m.stack = e.seat, e.stack


def _player_sat_out(stored: pb.StoredEvent, e: te.PlayerSatOut) -> None:
    m = stored.player_sat_out
    m.seat, m.reason = e.seat, _sit_out_reason_to_proto(e.reason)


def _player_sat_in(stored: pb.StoredEvent, e: te.PlayerSatIn) -> None:
    stored.player_sat_in.seat = e.seat


def _chips_added(stored: pb.StoredEvent, e: te.ChipsAdded) -> None:
    m = stored.chips_added
    m.seat, m.amount = e.seat, e.amount


def _action_timed_out(stored: pb.StoredEvent, e: te.ActionTimedOut) -> None:
    stored.action_timed_out.seat = e.seat


def _deck_committed(stored: pb.StoredEvent, e: te.DeckCommitted) -> None:
    m = stored.deck_committed
    m.hand_id, m.root, m.leaf_count, m.seed = e.hand_id, e.root, e.leaf_count, e.seed


def _table_closed(stored: pb.StoredEvent, e: te.TableClosed) -> None:
    stored.table_closed.reason = e.reason


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
                _sit_out_reason_to_proto(p.sit_out_reason)
                if p.sit_out_reason
                else pb.SIT_OUT_REASON_UNSPECIFIED
            ),
            seated_sequence=seated_at.get(p.seat, 0),
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


def _snapshot_from(m: pb.TableSnapshotTaken) -> te.TableSnapshotTaken:
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
                _sit_out_reason_from_proto(s.sit_out_reason)
                if s.sit_out_reason != pb.SIT_OUT_REASON_UNSPECIFIED
                else ""
            ),
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


_FILLERS: dict[type, Any] = {
    HandStarted: _hand_started,
    AntePosted: _ante_posted,
    BlindPosted: _blind_posted,
    HoleCardsDealt: _hole_cards_dealt,
    PlayerFolded: _player_folded,
    PlayerChecked: _player_checked,
    PlayerCalled: _player_called,
    BetPlaced: _bet_placed,
    CardsDrawn: _cards_drawn,
    StreetStarted: _street_started,
    UncalledBetReturned: _uncalled_bet_returned,
    CardsShown: _cards_shown,
    CardsMucked: _cards_mucked,
    PotAwarded: _pot_awarded,
    HandEnded: _hand_ended,
    te.TableCreated: _table_created,
    te.PlayerSeated: _player_seated,
    te.SeatTokenReissued: _seat_token_reissued,
    te.PlayerLeft: _player_left,
    te.PlayerSatOut: _player_sat_out,
    te.PlayerSatIn: _player_sat_in,
    te.ChipsAdded: _chips_added,
    te.ActionTimedOut: _action_timed_out,
    te.DeckCommitted: _deck_committed,
    te.TableClosed: _table_closed,
    te.TableSnapshotTaken: _table_snapshot_taken,
}


def _fill(stored: pb.StoredEvent, event: AnyEvent) -> None:
    filler = _FILLERS.get(type(event))
    if filler is None:  # a subclass of an event class, or not an event at all
        filler = next((f for t, f in _FILLERS.items() if isinstance(event, t)), None)
        if filler is None:
            raise CodecError(f"cannot store {type(event).__name__}: not an event")
    filler(stored, event)


def _event_from(stored: pb.StoredEvent) -> AnyEvent:
    kind = stored.WhichOneof("event")
    if kind is None:
        raise CodecError("stored event has no event set (written by a newer version?)")
    if kind == "hand_started":
        return HandStarted(hand_setup_from_proto(stored.hand_started.setup))
    if kind == "ante_posted":
        m1 = stored.ante_posted
        return AntePosted(seat=m1.seat, amount=m1.amount, all_in=m1.all_in)
    if kind == "blind_posted":
        m2 = stored.blind_posted
        return BlindPosted(seat=m2.seat, amount=m2.amount, all_in=m2.all_in)
    if kind == "hole_cards_dealt":
        m3 = stored.hole_cards_dealt
        return HoleCardsDealt(
            seat=m3.seat, cards=_maybe_cards(m3.cards), deck_positions=tuple(m3.deck_positions)
        )
    if kind == "player_folded":
        return PlayerFolded(seat=stored.player_folded.seat)
    if kind == "player_checked":
        return PlayerChecked(seat=stored.player_checked.seat)
    if kind == "player_called":
        m4 = stored.player_called
        return PlayerCalled(seat=m4.seat, amount=m4.amount, all_in=m4.all_in)
    if kind == "bet_placed":
        m5 = stored.bet_placed
        return BetPlaced(seat=m5.seat, to=m5.to, amount=m5.amount, all_in=m5.all_in, full=m5.full)
    if kind == "cards_drawn":
        m6 = stored.cards_drawn
        return CardsDrawn(
            seat=m6.seat,
            discarded=_maybe_cards(m6.discarded),
            drawn=_maybe_cards(m6.drawn),
            deck_positions=tuple(m6.deck_positions),
        )
    if kind == "street_started":
        m7 = stored.street_started
        return StreetStarted(
            street=street_from_proto(m7.street),
            cards=_known_cards(m7.cards, "board cards"),
            deck_positions=tuple(m7.deck_positions),
        )
    if kind == "uncalled_bet_returned":
        m8 = stored.uncalled_bet_returned
        return UncalledBetReturned(seat=m8.seat, amount=m8.amount)
    if kind == "cards_shown":
        m9 = stored.cards_shown
        return CardsShown(
            seat=m9.seat, cards=_known_cards(m9.cards, "shown cards"), voluntary=m9.voluntary
        )
    if kind == "cards_mucked":
        return CardsMucked(seat=stored.cards_mucked.seat)
    if kind == "pot_awarded":
        m10 = stored.pot_awarded
        return PotAwarded(
            index=m10.index,
            amount=m10.amount,
            eligible=tuple(m10.eligible),
            shares=tuple((s.seat, s.amount) for s in m10.shares),
            hand=m10.hand,
        )
    if kind == "hand_ended":
        return HandEnded(stacks=tuple((s.seat, s.stack) for s in stored.hand_ended.stacks))
    if kind == "table_created":
        m11 = stored.table_created
        return te.TableCreated(table_config_from_proto(m11.config, m11.table_id, m11.name))
    if kind == "player_seated":
        m12 = stored.player_seated
        return te.PlayerSeated(
            seat=m12.seat,
            player_id=m12.player_id,
            name=m12.display_name,
            stack=m12.stack,
            token_hash=m12.token_hash,
            ai_level=ai_level_from_proto(m12.ai_level),
        )
    if kind == "seat_token_reissued":
        m = stored.seat_token_reissued
        return te.SeatTokenReissued(seat=m.seat, player_id=m.player_id, token_hash=m.token_hash)
    if kind == "player_left":
        return te.PlayerLeft(seat=stored.player_left.seat, stack=stored.player_left.stack)
    if kind == "player_sat_out":
        m13 = stored.player_sat_out
        return te.PlayerSatOut(seat=m13.seat, reason=_sit_out_reason_from_proto(m13.reason))
    if kind == "player_sat_in":
        return te.PlayerSatIn(seat=stored.player_sat_in.seat)
    if kind == "chips_added":
        return te.ChipsAdded(seat=stored.chips_added.seat, amount=stored.chips_added.amount)
    if kind == "action_timed_out":
        return te.ActionTimedOut(seat=stored.action_timed_out.seat)
    if kind == "deck_committed":
        m14 = stored.deck_committed
        return te.DeckCommitted(
            hand_id=m14.hand_id, root=m14.root, leaf_count=m14.leaf_count, seed=m14.seed
        )
    if kind == "table_closed":
        return te.TableClosed(reason=stored.table_closed.reason)
    if kind == "table_snapshot_taken":
        return _snapshot_from(stored.table_snapshot_taken)
    raise CodecError(f"no decoder for stored event {kind!r}")


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
    _fill(stored, event)
    return stored


def encode_stored(
    event: AnyEvent,
    table_id: str,
    sequence: int,
    request_key: str,
    hand_id: str,
    recorded_at: Timestamp | None,
) -> bytes:
    """``encode_event`` with the envelope's fields given one by one (the append's hot path)."""
    stored = pb.StoredEvent(
        sequence=sequence, table_id=table_id, hand_id=hand_id, request_key=request_key
    )
    if recorded_at is not None:
        stored.recorded_at.CopyFrom(recorded_at)
    _fill(stored, event)
    return stored.SerializeToString(deterministic=True)


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
    return _event_from(stored), meta


def encode_event(event: AnyEvent, meta: EventMeta) -> bytes:
    """Serialize ``event`` with its envelope (deterministic bytes)."""
    return to_stored_event(event, meta).SerializeToString(deterministic=True)


def decode_event(data: bytes) -> tuple[AnyEvent, EventMeta]:
    """The event and envelope serialized by :func:`encode_event`."""
    stored = pb.StoredEvent()
    try:
        stored.ParseFromString(data)
    except DecodeError as e:
        raise CodecError(f"not a poker.events.v1.StoredEvent: {e}") from e
    return from_stored_event(stored)
