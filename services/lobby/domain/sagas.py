"""The saga transitions' rules (buy-ins and chip adds), without storage.

Each rule looks at the saga as stored (locked by the unit of work) and answers what the
transition does: a :class:`Step` (the saga after, the chips to credit, once each by their
ledger key, and the lounge seat to free), or None when the saga is in no state the
transition starts from: then nothing changes and the caller gets the saga as it is, so each
transition happens at most once whoever drives it (a client's retry, the recovery pass, a
close, an operator).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from felt.storage.idempotency import RequestKey
from services.lobby.ports.buy_ins import BuyIn, BuyInState, NewBuyIn, NotSeated
from services.lobby.ports.chip_adds import ChipAdd, ChipAddState, NewChipAdd
from services.lobby.ports.ledger import Kind
from services.lobby.ports.lounges import LoungeSeat
from services.lobby.ports.tables import SeatGrant

S = TypeVar("S", BuyIn, ChipAdd)


@dataclass(frozen=True, slots=True)
class Credit:
    """Chips back to a player's balance: ``amount`` as ``kind``, keyed ``key`` (once)."""

    player_id: str
    kind: Kind
    amount: int
    key: RequestKey
    lounge_id: str


@dataclass(frozen=True, slots=True)
class FreedSeat:
    """A lounge seat its player no longer holds (the lounge's view of its seats)."""

    lounge_id: str
    seat: int | None
    player_id: str


@dataclass(frozen=True, slots=True)
class Step(Generic[S]):
    """What one transition does."""

    saga: S  # the saga after it
    credits: tuple[Credit, ...] = ()
    freed: FreedSeat | None = None


HELD = (BuyInState.SEATED, BuyInState.LEAVING)
"""The states of a saga whose player holds its seat at the table (a leave is of one)."""


def reserved(new: NewBuyIn, display_name: str) -> BuyIn:
    """The saga a reservation starts: RESERVED, as asked, its ``amount`` taken from the
    balance (a ``buy_in`` movement keyed ``reserve_key``, checked by the ledger's rules).
    PostgreSQL's ``lobby_reserve_buy_in`` (migrations 0005 and 0015) inserts this row in
    the statement that moves the chips: one round trip on every join."""
    return BuyIn(
        new.saga_id,
        new.player_id,
        display_name,
        new.lounge_id,
        new.seat,
        new.amount,
        BuyInState.RESERVED,
        None,
        None,
        None,
        new.at,
        wait_for_big_blind=new.wait_for_big_blind,
    )


def chips_reserved(new: NewChipAdd) -> ChipAdd:
    """The saga a chip add's reservation starts: RESERVED, as asked, its ``amount`` taken
    from the balance (a ``buy_in`` movement keyed ``add_key``, checked by the ledger's
    rules)."""
    return ChipAdd(
        new.saga_id,
        new.player_id,
        new.lounge_id,
        new.buy_in_id,
        new.seat,
        new.seat_token,
        new.amount,
        new.max_stack,
        ChipAddState.RESERVED,
        None,
        None,
        new.at,
    )


@dataclass(frozen=True, slots=True)
class Seated:
    """A reserved saga seated: the saga after, and the lounge seat its player now takes
    (the table service is the authority on who sits where: it replaces whatever the
    lounge's view had at that seat)."""

    saga: BuyIn
    lounge_id: str
    taken: LoungeSeat


def seated(saga: BuyIn, grant: SeatGrant) -> Seated | None:
    """RESERVED to SEATED at the table's seat with its token (None from any other state:
    nothing changes). PostgreSQL's ``lobby_seat_buy_in`` (migration 0005) makes this
    transition in one statement, as this rule says."""
    if saga.state is not BuyInState.RESERVED:
        return None
    after = replace(
        saga,
        state=BuyInState.SEATED,
        seat=grant.seat,
        seat_token=grant.seat_token,
        seat_token_expires_at=grant.expires_at,
    )
    taken = LoungeSeat(grant.seat, saga.player_id, saga.display_name, 0, saga.amount)
    return Seated(after, saga.lounge_id, taken)


def leaving(held: Iterable[BuyIn], lounge_id: str) -> Step[BuyIn]:
    """The saga a leave of ``lounge_id`` is of, among the player's sagas there: its first
    (by reservation) that holds the seat (:data:`HELD`), SEATED to LEAVING, or LEAVING as it
    is (a second leave of a seat that leaves when the hand ends); :class:`NotSeated` when
    none holds one. The adapter records the leave's request with the saga either way, so
    a retry answers the same saga."""
    current = sorted((s for s in held if s.state in HELD), key=lambda s: s.created_at)
    if not current:
        raise NotSeated(lounge_id)
    saga = current[0]
    if saga.state is BuyInState.SEATED:
        return Step(replace(saga, state=BuyInState.LEAVING))
    return Step(saga)


def compensated(saga: S, refusal: str, refund: RequestKey) -> Step[S] | None:
    """RESERVED to COMPENSATED with the table's ``refusal``: its chips back to the balance
    (a ``cash_out`` keyed ``refund``)."""
    if isinstance(saga, BuyIn):
        if saga.state is not BuyInState.RESERVED:
            return None
        after: S = replace(saga, state=BuyInState.COMPENSATED, refusal=refusal)
    else:
        if saga.state is not ChipAddState.RESERVED:
            return None
        after = replace(saga, state=ChipAddState.COMPENSATED, refusal=refusal)
    credit = Credit(saga.player_id, Kind.CASH_OUT, saga.amount, refund, saga.lounge_id)
    return Step(after, (credit,))


def chips_added(saga: ChipAdd, stack_after: int) -> Step[ChipAdd] | None:
    """RESERVED to ADDED with the seat's stack after (no chips move: they are on it)."""
    if saga.state is not ChipAddState.RESERVED:
        return None
    return Step(replace(saga, state=ChipAddState.ADDED, stack_after=stack_after))


def vacated(
    saga: BuyIn, states: tuple[BuyInState, ...], kind: Kind, key: RequestKey, stack: int
) -> Step[BuyIn] | None:
    """A vacated seat's saga from one of ``states`` to LEFT: its ``stack`` back to the
    balance as ``kind`` (keyed ``key``; nothing for 0) and its lounge seat freed. A leave's
    cash-out and a close's "table closed" are both this."""
    if saga.state not in states:
        return None
    credits = (Credit(saga.player_id, kind, stack, key, saga.lounge_id),) if stack > 0 else ()
    after = replace(saga, state=BuyInState.LEFT, left_stack=stack)
    return Step(after, credits, FreedSeat(saga.lounge_id, saga.seat, saga.player_id))


def token_reissued(saga: BuyIn, grant: SeatGrant) -> Step[BuyIn] | None:
    """The seat's fresh token and expiry replace the stored ones, SEATED or LEAVING only
    (the table now knows only the new token)."""
    if saga.state not in HELD:
        return None
    return Step(replace(saga, seat_token=grant.seat_token, seat_token_expires_at=grant.expires_at))


def leave_called(saga: BuyIn, sequence: int) -> Step[BuyIn] | None:
    """The table's sequence of a leave's ``LeaveSeat`` call, LEAVING only, the first kept:
    the seat's ``PlayerLeft`` is at or after it."""
    if saga.state is not BuyInState.LEAVING or saga.leave_sequence is not None:
        return None
    return Step(replace(saga, leave_sequence=sequence))


def seen_seated(saga: BuyIn, sequence: int) -> Step[BuyIn] | None:
    """A closing table's sequence at which the seat was seen held (SEATED or LEAVING), the
    first kept: the seat's ``PlayerLeft`` is after it, whenever it comes."""
    if saga.state not in HELD or saga.leave_sequence is not None:
        return None
    return Step(replace(saga, leave_sequence=sequence))
