"""Legal actions: what the seat to act may do, with exact amounts.

One function serves the engine (to validate commands), the views (to tell a
client what it may do) and the bots (to choose among legal moves), so the
three can never disagree. The variant's definition (``felt.core.rules.variants``)
says which betting structure's arithmetic applies and whether a round is a
draw; this module holds that arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass

from felt.core.record import Record
from felt.core.rules.events import Street
from felt.core.rules.state import HandQueries, SeatQueries
from felt.core.rules.variants import VariantRules


@dataclass(frozen=True, slots=True, init=False)
class LegalActions(Record):
    """The choices of ``seat``.

    ``call_amount`` is the chips a call adds (``None`` when there is nothing
    to call). ``min_raise_to``/``max_raise_to`` bound a bet or raise *to* a
    total for this round (``None`` when raising is not allowed); ``bet`` tells
    whether it is an opening bet (BET) rather than a raise (RAISE). In fixed
    limit (Draw) the two are equal unless only an all-in for less is left.
    ``all_in_to`` is the total of going all-in when that is a legal bet,
    raise or call. During the draw ``max_discard`` is how many cards may go.
    """

    seat: int
    street: Street
    can_fold: bool = False
    can_check: bool = False
    call_amount: int | None = None
    call_is_all_in: bool = False
    min_raise_to: int | None = None
    max_raise_to: int | None = None
    bet: bool = False
    all_in_to: int | None = None
    max_discard: int | None = None

    def __init__(
        self,
        seat: int,
        street: Street,
        can_fold: bool = False,
        can_check: bool = False,
        call_amount: int | None = None,
        call_is_all_in: bool = False,
        min_raise_to: int | None = None,
        max_raise_to: int | None = None,
        bet: bool = False,
        all_in_to: int | None = None,
        max_discard: int | None = None,
    ) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "street", street)
        object.__setattr__(self, "can_fold", can_fold)
        object.__setattr__(self, "can_check", can_check)
        object.__setattr__(self, "call_amount", call_amount)
        object.__setattr__(self, "call_is_all_in", call_is_all_in)
        object.__setattr__(self, "min_raise_to", min_raise_to)
        object.__setattr__(self, "max_raise_to", max_raise_to)
        object.__setattr__(self, "bet", bet)
        object.__setattr__(self, "all_in_to", all_in_to)
        object.__setattr__(self, "max_discard", max_discard)

    @property
    def can_raise(self) -> bool:
        return self.min_raise_to is not None


def bet_size(state: HandQueries, game: VariantRules) -> int:
    """Fixed limit: the current round's fixed bet (the small bet, or the big bet).

    ``game`` is ``state.game``, passed along by callers that already hold it.
    """
    setup = state.setup
    current = game.round_of(state.street)
    return setup.big_bet if current is not None and current.big_bet else setup.small_bet


def raise_threshold(state: HandQueries, game: VariantRules) -> int:
    """How much the bet must grow for a raise to be full (and to reopen the action)."""
    if not game.fixed_limit:
        return max(state.last_raise, state.setup.min_bet)
    return (bet_size(state, game) + 1) // 2


def may_raise(state: HandQueries, seat: SeatQueries, game: VariantRules) -> bool:
    """Whether the betting is open to ``seat``: not yet acted this round, or reopened since.

    Judged for each seat by the wager it faces (TDA 47; RULES.md): a seat
    that already acted may raise again only when the bet has grown by at
    least ``raise_threshold`` since it last acted: in no-limit a full raise
    (one, or several incomplete all-ins that add up to one), in fixed limit
    half a bet. A wager that counted as full for the cap therefore reopens
    the betting only to the seats it raised by that much, not to a seat that
    already called part of it. Fixed limit also stops at the raise cap.
    """
    if game.fixed_limit and state.raises >= state.setup.raise_cap:
        return False
    if not seat.acted:
        return True
    return state.current_bet - seat.matched >= raise_threshold(state, game)


def can_be_raised(state: HandQueries, seat: SeatQueries) -> bool:
    """Whether another live seat can put in more than the current bet.

    A bet or raise that no opponent can answer is not a wager at all (it
    would come straight back), so it is not offered; "has chips" is not
    enough: an opponent all-in for less than the bet cannot answer a raise.
    """
    current = state.current_bet
    return any(o is not seat and not o.folded and o.bet + o.stack > current for o in state.seats)


def legal_actions(state: HandQueries) -> LegalActions | None:
    """The legal actions of the seat to act, or None when nobody is to act."""
    if state.actor is None or state.ended:
        return None
    seat = state.seats[state.actor]
    game = state.game
    current = game.round_of(state.street)
    if current is None:  # not one of the variant's rounds: the showdown
        return None
    if current.max_discard:
        return LegalActions(seat=seat.seat, street=state.street, max_discard=current.max_discard)
    to_call = state.current_bet - seat.bet
    behind = seat.stack
    can_check = to_call <= 0
    call_amount = None if can_check else min(to_call, behind)
    call_all_in = call_amount is not None and call_amount == behind
    min_to: int | None = None
    max_to: int | None = None
    all_in_to: int | None = seat.bet + behind if call_all_in else None
    if behind > max(to_call, 0) and may_raise(state, seat, game) and can_be_raised(state, seat):
        most = seat.bet + behind
        if game.fixed_limit:
            least = state.full_level + bet_size(state, game)
            max_to = least
        else:
            least = state.current_bet + raise_threshold(state, game)
            max_to = most
        if most <= least:
            least = max_to = most
        min_to = least
        if max_to == most:
            all_in_to = most
    return LegalActions(
        seat=seat.seat,
        street=state.street,
        can_fold=not can_check,
        can_check=can_check,
        call_amount=call_amount,
        call_is_all_in=call_all_in,
        min_raise_to=min_to,
        max_raise_to=max_to,
        bet=state.current_bet == 0,
        all_in_to=all_in_to,
    )
