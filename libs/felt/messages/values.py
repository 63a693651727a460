"""The core's values as ``poker.events.v1`` messages, both ways: enums, cards, setups, configs.

Shared by both boundaries: the event store keeps events in these messages
(``felt.storage.eventstore.codec``) and the API sends them, redacted, and the
table configs in them (``felt.wire.convert``). A value the messages cannot
hold, or a message value the core does not know, raises :class:`CodecError`
rather than being stored or read wrongly.

Redacted copies encode too: a hidden card (``None`` in a redacted dataclass)
becomes ``Card(hidden=True)`` and decodes back to ``None``; fields that can
never be hidden (board cards, shown cards, the deck) refuse it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.protobuf.duration_pb2 import Duration

from felt.core.cards import Card
from felt.core.rules.config import HandSetup, SeatSetup, Variant
from felt.core.rules.events import MaybeCard, Street
from felt.core.rules.variants import rules_for
from felt.core.table import events as te
from poker.events.v1 import events_pb2 as pb

__all__ = [
    "CodecError",
    "ai_level_from_proto",
    "ai_level_to_proto",
    "card_from_proto",
    "card_messages",
    "card_to_proto",
    "check_card",
    "hand_setup_from_proto",
    "hand_setup_to_proto",
    "known_cards",
    "maybe_cards",
    "sit_out_reason_from_proto",
    "sit_out_reason_to_proto",
    "street_from_proto",
    "street_to_proto",
    "table_config_from_proto",
    "table_config_to_proto",
    "variant_from_proto",
    "variant_to_proto",
]


class CodecError(ValueError):
    """A message this codec does not understand, or a value it cannot put in a message."""


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


def sit_out_reason_to_proto(reason: str) -> pb.SitOutReason.ValueType:
    try:
        return _SIT_OUT_REASON_TO_PB[reason]
    except KeyError:
        raise CodecError(f"unknown sit-out reason {reason!r}") from None


def sit_out_reason_from_proto(value: pb.SitOutReason.ValueType) -> str:
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


def check_card(card: Card) -> None:
    if not 0 <= card < 52:
        raise CodecError(f"{card} is not a card number (0..51)")


def card_to_proto(card: MaybeCard) -> pb.Card:
    """A card, or ``None`` (hidden in a redacted copy), as a ``poker.events.v1.Card``."""
    if card is None:
        return pb.Card(hidden=True)
    check_card(card)
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


def maybe_cards(msgs: Any) -> tuple[MaybeCard, ...]:
    return tuple(card_from_proto(m) for m in msgs)


def known_cards(msgs: Any, what: str) -> tuple[Card, ...]:
    result: list[Card] = []
    for m in msgs:
        c = card_from_proto(m)
        if c is None:
            raise CodecError(f"{what} cannot be hidden")
        result.append(c)
    return tuple(result)


def hand_setup_to_proto(setup: HandSetup) -> pb.HandSetup:
    for c in setup.deck:
        check_card(c)
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
            check_card(c)
            out.append(_CARD_PB[c])
    return out
