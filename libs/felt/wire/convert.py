"""Between the core's types and the ``poker.v1`` API messages, both ways.

The table service turns domain state into redacted API views; the AI worker
turns a decision request back into the domain view and legal actions a bot
decides from. Keeping both directions here keeps them inverse.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from felt.core.rules.commands import Act, ActionKind, Discard
from felt.core.rules.events import Street
from felt.core.rules.legal import LegalActions
from felt.core.rules.views import HandView, PotView, SeatView, view_for
from felt.core.table.aggregate import TableState
from felt.core.table.commitment import CardOpening
from felt.core.table.events import (
    AnyEvent,
    TableConfig,
)
from felt.core.table.redaction import redact_event
from felt.messages.events import EventMeta, to_stored_event
from felt.messages.values import (
    ai_level_to_proto,
    card_from_proto,
    card_messages,
    street_from_proto,
    street_to_proto,
    table_config_to_proto,
    variant_from_proto,
    variant_to_proto,
)
from felt.wire.limits import CHIP_CAP, DISCARDS_MAX
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as tsvpb


class BadAction(ValueError):
    """An ``Action`` message that names no action or a malformed one."""


# ------------------------------------------------------------------ actions

_KIND_TO_TYPE = {
    ActionKind.FOLD: tpb.ACTION_TYPE_FOLD,
    ActionKind.CHECK: tpb.ACTION_TYPE_CHECK,
    ActionKind.CALL: tpb.ACTION_TYPE_CALL,
    ActionKind.BET: tpb.ACTION_TYPE_BET,
    ActionKind.RAISE: tpb.ACTION_TYPE_RAISE,
    ActionKind.ALL_IN: tpb.ACTION_TYPE_ALL_IN,
}


def action_from_proto(seat: int, action: tpb.Action) -> Act | Discard:
    """The domain command for an API action; raises :class:`BadAction`."""
    kind = action.WhichOneof("kind")
    if kind == "fold":
        return Act(seat, ActionKind.FOLD)
    if kind == "check":
        return Act(seat, ActionKind.CHECK)
    if kind == "call":
        return Act(seat, ActionKind.CALL)
    if kind == "all_in":
        return Act(seat, ActionKind.ALL_IN)
    if kind == "bet_to":
        if not 0 < action.bet_to.amount <= CHIP_CAP:
            raise BadAction(f"bet_to.amount must be 1 to {CHIP_CAP:,} chips")
        return Act(seat, ActionKind.BET, action.bet_to.amount)
    if kind == "raise_to":
        if not 0 < action.raise_to.amount <= CHIP_CAP:
            raise BadAction(f"raise_to.amount must be 1 to {CHIP_CAP:,} chips")
        return Act(seat, ActionKind.RAISE, action.raise_to.amount)
    if kind == "discard":
        cards = tuple(action.discard.cards)
        if len(cards) > DISCARDS_MAX or len(set(cards)) != len(cards):
            raise BadAction(f"discard.cards names at most {DISCARDS_MAX} cards, each once")
        if any(c > 51 for c in cards):
            raise BadAction("discard.cards holds a number that is not a card (0..51)")
        return Discard(seat, cards)
    raise BadAction("action must set one of fold, check, call, bet_to, raise_to, all_in, discard")


def action_to_proto(command: Act | Discard) -> tpb.Action:
    """The API action for a domain command (what an AI worker submits)."""
    if isinstance(command, Discard):
        return tpb.Action(discard=tpb.Action.Discard(cards=list(command.cards)))
    kind = command.kind
    if kind == ActionKind.FOLD:
        return tpb.Action(fold=tpb.Action.Fold())
    if kind == ActionKind.CHECK:
        return tpb.Action(check=tpb.Action.Check())
    if kind == ActionKind.CALL:
        return tpb.Action(call=tpb.Action.Call())
    if kind == ActionKind.ALL_IN:
        return tpb.Action(all_in=tpb.Action.AllIn())
    if kind == ActionKind.BET:
        return tpb.Action(bet_to=tpb.Action.BetTo(amount=command.amount))
    return tpb.Action(raise_to=tpb.Action.RaiseTo(amount=command.amount))


# ------------------------------------------------------------------ legal actions


def legal_to_proto(legal: LegalActions | None, bet: int = 0) -> list[tpb.LegalAction]:
    """Legal actions as the API lists them, with exact amounts.

    ``bet`` is what the seat already has in front of it this round, so an
    all-in can also say how many chips it adds.
    """
    if legal is None:
        return []
    if legal.max_discard is not None:
        return [tpb.LegalAction(type=tpb.ACTION_TYPE_DISCARD, max_discards=legal.max_discard)]
    out = []
    if legal.can_fold:
        out.append(tpb.LegalAction(type=tpb.ACTION_TYPE_FOLD))
    if legal.can_check:
        out.append(tpb.LegalAction(type=tpb.ACTION_TYPE_CHECK))
    if legal.call_amount is not None:
        out.append(tpb.LegalAction(type=tpb.ACTION_TYPE_CALL, amount=legal.call_amount))
    if legal.min_raise_to is not None and legal.max_raise_to is not None:
        kind = tpb.ACTION_TYPE_BET if legal.bet else tpb.ACTION_TYPE_RAISE
        out.append(tpb.LegalAction(type=kind, min_to=legal.min_raise_to, max_to=legal.max_raise_to))
    if legal.all_in_to is not None:
        out.append(
            tpb.LegalAction(
                type=tpb.ACTION_TYPE_ALL_IN,
                amount=legal.all_in_to - bet,
                min_to=legal.all_in_to,
                max_to=legal.all_in_to,
            )
        )
    return out


def legal_from_proto(seat: int, street: Street, items: Sequence[tpb.LegalAction]) -> LegalActions:
    """The domain legal actions of a decision request (inverse of :func:`legal_to_proto`)."""
    legal = LegalActions(seat=seat, street=street)
    for item in items:
        if item.type == tpb.ACTION_TYPE_DISCARD:
            legal = replace(legal, max_discard=item.max_discards)
        elif item.type == tpb.ACTION_TYPE_FOLD:
            legal = replace(legal, can_fold=True)
        elif item.type == tpb.ACTION_TYPE_CHECK:
            legal = replace(legal, can_check=True)
        elif item.type == tpb.ACTION_TYPE_CALL:
            legal = replace(legal, call_amount=item.amount)
        elif item.type in (tpb.ACTION_TYPE_BET, tpb.ACTION_TYPE_RAISE):
            legal = replace(
                legal,
                min_raise_to=item.min_to,
                max_raise_to=item.max_to,
                bet=item.type == tpb.ACTION_TYPE_BET,
            )
        elif item.type == tpb.ACTION_TYPE_ALL_IN:
            legal = replace(legal, all_in_to=item.max_to)
    if legal.call_amount is not None and legal.all_in_to is not None and legal.min_raise_to is None:
        legal = replace(legal, call_is_all_in=True)
    return legal


# ------------------------------------------------------------------ views


def table_to_proto(state: TableState, sequence: int) -> tpb.Table:
    """A table's public state."""
    msg = tpb.Table()
    _fill_table(msg, state, sequence)
    return msg


def _fill_table(msg: tpb.Table, state: TableState, sequence: int) -> None:
    """``table_to_proto`` into an empty message (built in place: no copies of sub-messages)."""
    config = state.config
    players = {p.seat: p for p in state.players}
    hand = state.hand if state.hand_running else None
    behind = {x.seat: x.stack for x in hand.seats} if hand is not None else {}
    msg.table_id = config.table_id
    msg.name = config.name
    msg.config.CopyFrom(_config_proto(config))
    msg.state = table_state_to_proto(state)
    msg.sequence = sequence
    seats = msg.seats
    for number in range(config.seat_count):
        p = players.get(number)
        if p is None:
            seats.add(seat=number, status=tpb.SEAT_STATUS_EMPTY)
            continue
        seats.add(
            seat=number,
            status=tpb.SEAT_STATUS_SITTING_OUT if p.sitting_out else tpb.SEAT_STATUS_SITTING_IN,
            player_id=p.player_id,
            display_name=p.name,
            stack=behind.get(number, p.stack),
            ai_level=ai_level_to_proto(p.ai_level),
            consecutive_timeouts=p.timeouts,
            waiting_for_big_blind=p.waiting_for_big_blind,
            busted_hand=p.busted_hand,
        )
    msg.hands_played = state.hands_played


def table_state_to_proto(state: TableState) -> tpb.TableState.ValueType:
    """``Table.state``: closed, playing (a hand runs or can start) or waiting."""
    if state.closed:
        return tpb.TABLE_STATE_CLOSED
    if state.hand_running or state.can_start_hand():
        return tpb.TABLE_STATE_PLAYING
    return tpb.TABLE_STATE_WAITING


def fill_view_change(
    msg: tsvpb.ViewChange, state: TableState, viewer: int | None, deadline: datetime | None
) -> None:
    """What the rules made of ``state`` for ``viewer`` (None: a spectator): the fields of its
    ``TableView`` that no event states (``WatchTableResponse.view_change``).

    The same values ``fill_table_view`` gives (one ``view_for`` of the hand), so a client
    folding events with these gets what ``GetTableView`` would have returned.
    """
    msg.SetInParent()
    msg.table_state = table_state_to_proto(state)
    if state.hand is None:
        return
    view = view_for(state.hand, state.hand_viewer(viewer))
    pots = msg.pots
    for p in view.pots:
        pots.add(amount=p.amount, eligible=p.eligible)
    if view.actor is None:
        return
    msg.to_act = view.actor
    if deadline is not None:
        msg.action_deadline.FromDatetime(deadline)
    if view.legal is not None:
        bet = next((s.bet for s in view.seats if s.seat == view.viewer), 0)
        msg.legal_actions.extend(legal_to_proto(view.legal, bet))


@functools.lru_cache(maxsize=4096)
def _config_proto(config: TableConfig) -> epb.TableConfig:
    """A table's config as a message (configs never change; callers only copy it)."""
    return table_config_to_proto(config)


def hand_view_to_proto(view: HandView, deadline: datetime | None) -> tpb.HandView:
    msg = tpb.HandView()
    _fill_hand_view(msg, view, deadline)
    return msg


def _fill_hand_view(msg: tpb.HandView, view: HandView, deadline: datetime | None) -> None:
    """``hand_view_to_proto`` into an empty message (built in place)."""
    msg.SetInParent()
    msg.hand_id = view.hand_id
    msg.public_id = view.public_id
    msg.variant = variant_to_proto(view.variant)
    msg.button = view.button
    msg.street = street_to_proto(view.street)
    if view.board:
        msg.board.extend(card_messages(view.board))
    pots = msg.pots
    for p in view.pots:
        pots.add(amount=p.amount, eligible=p.eligible)
    seats = msg.seats
    viewer_bet = 0
    for s in view.seats:
        if s.seat == view.viewer:
            viewer_bet = s.bet
        seats.add(
            seat=s.seat,
            stack=s.stack,
            bet=s.bet,
            committed=s.committed,
            folded=s.folded,
            all_in=s.all_in,
            cards=card_messages(s.cards),
            drawn_count=s.drawn or 0,
        )
    msg.current_bet = view.current_bet
    if view.legal is not None:
        msg.legal_actions.extend(legal_to_proto(view.legal, viewer_bet))
    if view.actor is not None:
        msg.to_act = view.actor
        if deadline is not None:
            msg.action_deadline.FromDatetime(deadline)


def table_view_to_proto(
    state: TableState, viewer: int | None, sequence: int, deadline: datetime | None = None
) -> tpb.TableView:
    """What ``viewer`` (a seat, or None for a spectator) may see of the table now."""
    msg = tpb.TableView()
    fill_table_view(msg, state, viewer, sequence, deadline)
    return msg


def fill_table_view(
    msg: tpb.TableView,
    state: TableState,
    viewer: int | None,
    sequence: int,
    deadline: datetime | None = None,
) -> None:
    """``table_view_to_proto`` into an empty message, e.g. a response's field (no copy)."""
    msg.SetInParent()
    _fill_table(msg.table, state, sequence)
    if viewer is not None:
        msg.viewer_seat = viewer
    if state.hand is not None:
        _fill_hand_view(msg.hand, view_for(state.hand, state.hand_viewer(viewer)), deadline)


def hand_view_from_proto(msg: tpb.HandView, viewer: int | None, state: tpb.Table) -> HandView:
    """The domain view in a decision request (what a bot decides from)."""
    config = state.config
    street = street_from_proto(msg.street)
    seats = tuple(
        SeatView(
            seat=s.seat,
            player_id="",
            stack=s.stack,
            bet=s.bet,
            committed=s.committed,
            folded=s.folded,
            all_in=s.all_in,
            cards=tuple(card_from_proto(c) for c in s.cards),
            shown=s.seat != viewer and all(c.HasField("code") for c in s.cards),
            mucked=False,
            drawn=s.drawn_count if street in (Street.SECOND_BET, Street.SHOWDOWN) else None,
        )
        for s in msg.seats
    )
    actor = msg.to_act if msg.HasField("to_act") else None
    legal = (
        legal_from_proto(actor, street, msg.legal_actions)
        if actor == viewer and actor is not None
        else None
    )
    return HandView(
        hand_id=msg.hand_id,
        variant=variant_from_proto(msg.variant),
        viewer=viewer,
        street=street,
        button=msg.button,
        seats=seats,
        board=tuple(c for c in (card_from_proto(b) for b in msg.board) if c is not None),
        pot=sum(s.committed for s in msg.seats),
        pots=tuple(PotView(p.amount, tuple(p.eligible)) for p in msg.pots),
        current_bet=msg.current_bet,
        min_bet=config.big_blind,
        small_bet=config.small_bet,
        big_bet=config.big_bet,
        raise_cap=config.raise_cap,
        raises=0,
        actor=actor,
        legal=legal,
        ended=street == Street.COMPLETE,
        public_id=msg.public_id,
    )


# ------------------------------------------------------------------ events


def redacted_stored_event(event: AnyEvent, meta: EventMeta, viewer: int | None) -> epb.StoredEvent:
    """``event`` as ``viewer`` may see it, in an envelope without request ids or keys.

    A request id shown to others could be replayed by them (``felt.storage.idempotency``).
    """
    public = EventMeta(meta.table_id, meta.sequence, meta.recorded_at, hand_id=meta.hand_id)
    return to_stored_event(redact_event(event, viewer), public)


def proof_to_proto(opening: CardOpening) -> tpb.CardProof:
    return tpb.CardProof(
        position=opening.position,
        card=opening.card,
        salt=opening.salt,
        steps=[tpb.ProofStep(sibling=h, sibling_is_right=r) for h, r in opening.proof],
    )


def proof_from_proto(msg: tpb.CardProof) -> CardOpening:
    return CardOpening(
        msg.position,
        msg.card,
        msg.salt,
        tuple((s.sibling, s.sibling_is_right) for s in msg.steps),
    )
