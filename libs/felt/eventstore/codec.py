"""Serialization of events: the core's dataclasses <-> ``poker.events.v1.StoredEvent`` bytes.

Hand events (``felt.rules.events``) and table events (``felt.table.events``)
are converted field by field; every field round-trips exactly. String enums of
the table events map to proto enums (``ai_level``, ``PlayerSatOut.reason``);
a value the codec does not know is refused rather than stored wrongly.

Redacted copies encode too: a hidden card (``None`` in a redacted dataclass)
becomes ``Card(hidden=True)`` and decodes back to ``None``. Fields that can
never be hidden (board cards, shown cards, the deck) refuse it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from google.protobuf.duration_pb2 import Duration
from google.protobuf.message import DecodeError

from felt.cards import Card
from felt.rules.config import HandSetup, SeatSetup, Variant
from felt.rules.events import (
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
from felt.table import events as te
from felt.table.events import AnyEvent, TableEvent
from poker.events.v1 import events_pb2 as pb

__all__ = [
    "AnyEvent",
    "CodecError",
    "EventMeta",
    "TableEvent",
    "ai_level_from_proto",
    "ai_level_to_proto",
    "card_from_proto",
    "card_to_proto",
    "decode_event",
    "encode_event",
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

# felt.table.events spells these as strings.
_AI_LEVEL_TO_PB: dict[str, pb.AiLevel.ValueType] = {
    "": pb.AI_LEVEL_UNSPECIFIED,
    "easy": pb.AI_LEVEL_EASY,
    "normal": pb.AI_LEVEL_NORMAL,
    "hard": pb.AI_LEVEL_HARD,
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
    """``""`` (a human), ``"easy"``, ``"normal"`` or ``"hard"`` as the proto enum."""
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


def card_to_proto(card: MaybeCard) -> pb.Card:
    """A card, or ``None`` (hidden in a redacted copy), as a ``poker.events.v1.Card``."""
    if card is None:
        return pb.Card(hidden=True)
    if not 0 <= card < 52:
        raise CodecError(f"{card} is not a card number (0..51)")
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


def _cards_pb(cards: tuple[MaybeCard, ...]) -> list[pb.Card]:
    return [card_to_proto(c) for c in cards]


def hand_setup_to_proto(setup: HandSetup) -> pb.HandSetup:
    for c in setup.deck:
        card_to_proto(c)  # range check
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
    )
    if config.action_timeout_ms:
        msg.action_clock.FromMilliseconds(config.action_timeout_ms)
    if config.close_at_ms:
        msg.close_time.FromMilliseconds(config.close_at_ms)
    return msg


def table_config_from_proto(msg: pb.TableConfig, table_id: str, name: str) -> te.TableConfig:
    clock: Duration = msg.action_clock
    return te.TableConfig(
        table_id=table_id,
        variant=variant_from_proto(msg.variant),
        seat_count=msg.seat_count,
        small_blind=msg.small_blind,
        big_blind=msg.big_blind,
        ante=msg.ante,
        small_bet=msg.small_bet,
        big_bet=msg.big_bet,
        raise_cap=msg.raise_cap or 4,
        allow_all_in=msg.allow_all_in if msg.HasField("allow_all_in") else True,
        action_timeout_ms=clock.ToMilliseconds() if msg.HasField("action_clock") else 0,
        max_timeouts=msg.max_consecutive_timeouts,
        hand_limit=msg.max_hands,
        close_at_ms=msg.close_time.ToMilliseconds() if msg.HasField("close_time") else 0,
        name=name,
    )


# ------------------------------------------------------------------ events


def _fill(stored: pb.StoredEvent, event: AnyEvent) -> None:
    match event:
        case HandStarted(setup=setup):
            stored.hand_started.setup.CopyFrom(hand_setup_to_proto(setup))
        case AntePosted(seat=seat, amount=amount, all_in=all_in):
            stored.ante_posted.CopyFrom(pb.AntePosted(seat=seat, amount=amount, all_in=all_in))
        case BlindPosted(seat=seat, amount=amount, all_in=all_in):
            stored.blind_posted.CopyFrom(pb.BlindPosted(seat=seat, amount=amount, all_in=all_in))
        case HoleCardsDealt(seat=seat, cards=cards, deck_positions=positions):
            stored.hole_cards_dealt.CopyFrom(
                pb.HoleCardsDealt(seat=seat, cards=_cards_pb(cards), deck_positions=positions)
            )
        case PlayerFolded(seat=seat):
            stored.player_folded.CopyFrom(pb.PlayerFolded(seat=seat))
        case PlayerChecked(seat=seat):
            stored.player_checked.CopyFrom(pb.PlayerChecked(seat=seat))
        case PlayerCalled(seat=seat, amount=amount, all_in=all_in):
            stored.player_called.CopyFrom(pb.PlayerCalled(seat=seat, amount=amount, all_in=all_in))
        case BetPlaced(seat=seat, to=to, amount=amount, all_in=all_in, full=full):
            stored.bet_placed.CopyFrom(
                pb.BetPlaced(seat=seat, to=to, amount=amount, all_in=all_in, full=full)
            )
        case CardsDrawn(seat=seat, discarded=discarded, drawn=drawn, deck_positions=positions):
            stored.cards_drawn.CopyFrom(
                pb.CardsDrawn(
                    seat=seat,
                    discarded=_cards_pb(discarded),
                    drawn=_cards_pb(drawn),
                    deck_positions=positions,
                )
            )
        case StreetStarted(street=street, cards=cards, deck_positions=positions):
            stored.street_started.CopyFrom(
                pb.StreetStarted(
                    street=street_to_proto(street), cards=_cards_pb(cards), deck_positions=positions
                )
            )
        case UncalledBetReturned(seat=seat, amount=amount):
            stored.uncalled_bet_returned.CopyFrom(pb.UncalledBetReturned(seat=seat, amount=amount))
        case CardsShown(seat=seat, cards=cards, voluntary=voluntary):
            stored.cards_shown.CopyFrom(
                pb.CardsShown(seat=seat, cards=_cards_pb(cards), voluntary=voluntary)
            )
        case CardsMucked(seat=seat):
            stored.cards_mucked.CopyFrom(pb.CardsMucked(seat=seat))
        case PotAwarded(index=index, amount=amount, eligible=eligible, shares=shares, hand=hand):
            stored.pot_awarded.CopyFrom(
                pb.PotAwarded(
                    index=index,
                    amount=amount,
                    eligible=eligible,
                    shares=[pb.PotShare(seat=s, amount=a) for s, a in shares],
                    hand=hand,
                )
            )
        case HandEnded(stacks=stacks):
            stored.hand_ended.CopyFrom(
                pb.HandEnded(stacks=[pb.SeatStack(seat=s, stack=st) for s, st in stacks])
            )
        case te.TableCreated(config=config):
            stored.table_created.CopyFrom(
                pb.TableCreated(
                    table_id=config.table_id,
                    name=config.name,
                    config=table_config_to_proto(config),
                )
            )
        case te.PlayerSeated(
            seat=seat,
            player_id=player_id,
            name=name,
            stack=stack,
            token_hash=token_hash,
            ai_level=ai_level,
        ):
            stored.player_seated.CopyFrom(
                pb.PlayerSeated(
                    seat=seat,
                    player_id=player_id,
                    display_name=name,
                    stack=stack,
                    ai_level=ai_level_to_proto(ai_level),
                    token_hash=token_hash,
                )
            )
        case te.PlayerLeft(seat=seat, stack=stack):
            stored.player_left.CopyFrom(pb.PlayerLeft(seat=seat, stack=stack))
        case te.PlayerSatOut(seat=seat, reason=reason):
            stored.player_sat_out.CopyFrom(
                pb.PlayerSatOut(seat=seat, reason=_sit_out_reason_to_proto(reason))
            )
        case te.PlayerSatIn(seat=seat):
            stored.player_sat_in.CopyFrom(pb.PlayerSatIn(seat=seat))
        case te.ChipsAdded(seat=seat, amount=amount):
            stored.chips_added.CopyFrom(pb.ChipsAdded(seat=seat, amount=amount))
        case te.ActionTimedOut(seat=seat):
            stored.action_timed_out.CopyFrom(pb.ActionTimedOut(seat=seat))
        case te.DeckCommitted(hand_id=hand_id, root=root, leaf_count=leaf_count, seed=seed):
            stored.deck_committed.CopyFrom(
                pb.DeckCommitted(hand_id=hand_id, root=root, leaf_count=leaf_count, seed=seed)
            )
        case te.TableClosed(reason=reason):
            stored.table_closed.CopyFrom(pb.TableClosed(reason=reason))
        case _:
            raise CodecError(f"cannot store {type(event).__name__}: not an event")


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
    raise CodecError(f"no decoder for stored event {kind!r}")


def to_stored_event(event: AnyEvent, meta: EventMeta) -> pb.StoredEvent:
    """``event`` in its envelope, as a message (e.g. to send a redacted copy to a watcher)."""
    stored = pb.StoredEvent(
        sequence=meta.sequence,
        request_id=meta.request_id,
        table_id=meta.table_id,
        hand_id=meta.hand_id,
    )
    if meta.recorded_at is not None:
        stored.recorded_at.FromDatetime(meta.recorded_at)
    _fill(stored, event)
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
