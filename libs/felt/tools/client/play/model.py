"""What the terminal client shows and offers, as pure functions of the API's messages.

Everything here reads only what the server sent this seat (a ``TableView``
and redacted ``StoredEvent``s), so the client can never show more than the
seat may see: it has nothing more. The choices offered are built from the
view's ``legal_actions`` alone; the client never works out on its own what is
legal, it only picks amounts inside the ranges the server allows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1.reason_pb2 import Reason

RANKS = "23456789TJQKA"
SUIT_SYMBOLS = "♣♦♥♠"  # clubs, diamonds, hearts, spades: the order of `Card.code`
HIDDEN_CARD = "▒▒"

STREET_NAMES = {
    epb.STREET_PREFLOP: "pre-flop",
    epb.STREET_FLOP: "flop",
    epb.STREET_TURN: "turn",
    epb.STREET_RIVER: "river",
    epb.STREET_FIRST_BET: "first betting round",
    epb.STREET_DRAW: "draw",
    epb.STREET_SECOND_BET: "second betting round",
    epb.STREET_SHOWDOWN: "showdown",
    epb.STREET_COMPLETE: "hand complete",
}
AI_NAMES = {epb.AI_LEVEL_EASY: "easy", epb.AI_LEVEL_NORMAL: "normal", epb.AI_LEVEL_HARD: "hard"}


def card_label(card: epb.Card) -> str:
    """``A♠``, ``10♥``; a card this viewer may not see is a blank back."""
    if card.WhichOneof("kind") != "code":
        return HIDDEN_CARD
    rank = RANKS[card.code // 4]
    return ("10" if rank == "T" else rank) + SUIT_SYMBOLS[card.code % 4]


def cards_label(cards: Iterable[epb.Card]) -> str:
    return " ".join(card_label(c) for c in cards)


def is_red(card: epb.Card) -> bool:
    return card.WhichOneof("kind") == "code" and card.code % 4 in (1, 2)


def pot_total(hand: tpb.HandView) -> int:
    """Every chip in the middle: the pots of earlier rounds and this round's bets."""
    return sum(p.amount for p in hand.pots) + sum(s.bet for s in hand.seats)


def seat_names(table: tpb.Table) -> dict[int, str]:
    """Seat number to the name shown for it (an AI seat says its level)."""
    names: dict[int, str] = {}
    for seat in table.seats:
        if seat.status == tpb.SEAT_STATUS_EMPTY:
            continue
        level = AI_NAMES.get(seat.ai_level)
        name = seat.display_name or f"seat {seat.seat}"
        if level and level not in name.lower():
            name = f"{name} (AI {level})"
        names[seat.seat] = name
    return names


@dataclass(frozen=True, slots=True)
class Choice:
    """One thing the seat may do now: a key, a label and the action it sends."""

    key: str
    label: str
    action: tpb.Action


def _amount_action(kind: int, amount: int) -> tpb.Action:
    if kind == tpb.ACTION_TYPE_BET:
        return tpb.Action(bet_to=tpb.Action.BetTo(amount=amount))
    return tpb.Action(raise_to=tpb.Action.RaiseTo(amount=amount))


def sizing(
    legal: tpb.LegalAction, hand: tpb.HandView, viewer: int, all_in_offered: bool = False
) -> list[tuple[str, int]]:
    """Bet or raise sizes to offer: min, half pot, pot and all-in, each clamped to the
    server's ``[min_to, max_to]`` and listed once. A fixed-limit bet has one size, with no
    size label (it is not a "min": there is no other). The all-in size is left out when the
    server offers all-in as an action of its own (``all_in_offered``), so it is offered once.

    A pot-sized raise is to the current bet plus the pot after calling, as players
    reckon it; a bet into no bet is the same with nothing to call.
    """
    low, high = legal.min_to, max(legal.max_to, legal.min_to)
    if low == high:
        return [("", low)]
    mine = next((s.bet for s in hand.seats if s.seat == viewer), 0)
    to_call = max(hand.current_bet - mine, 0)
    after_call = pot_total(hand) + to_call
    wanted = [
        ("min", low),
        ("½ pot", hand.current_bet + after_call // 2),
        ("pot", hand.current_bet + after_call),
        ("all-in", high),
    ]
    sizes: list[tuple[str, int]] = []
    seen: set[int] = set()
    for label, amount in wanted:
        amount = min(max(amount, low), high)
        if all_in_offered and amount == high:
            continue
        if amount not in seen:
            seen.add(amount)
            sizes.append((label, amount))
    return sizes


def clamp_amount(legal: tpb.LegalAction, amount: int) -> int:
    """An amount typed by the player, brought inside what the server allows."""
    return min(max(amount, legal.min_to), max(legal.max_to, legal.min_to))


def choices(view: tpb.TableView) -> list[Choice]:
    """What the viewing seat may do now, from the server's legal actions (empty when it is
    not this seat's turn). Discards are chosen separately (:func:`discard_action`)."""
    hand = view.hand
    if not view.HasField("viewer_seat") or not hand.HasField("to_act"):
        return []
    if hand.to_act != view.viewer_seat:
        return []
    offered: list[Choice] = []
    all_in = any(legal.type == tpb.ACTION_TYPE_ALL_IN for legal in hand.legal_actions)
    for legal in hand.legal_actions:
        if legal.type == tpb.ACTION_TYPE_FOLD:
            offered.append(Choice("f", "Fold", tpb.Action(fold=tpb.Action.Fold())))
        elif legal.type == tpb.ACTION_TYPE_CHECK:
            offered.append(Choice("c", "Check", tpb.Action(check=tpb.Action.Check())))
        elif legal.type == tpb.ACTION_TYPE_CALL:
            offered.append(Choice("c", f"Call {legal.amount}", tpb.Action(call=tpb.Action.Call())))
        elif legal.type in (tpb.ACTION_TYPE_BET, tpb.ACTION_TYPE_RAISE):
            verb = "Bet" if legal.type == tpb.ACTION_TYPE_BET else "Raise to"
            for n, (label, amount) in enumerate(sizing(legal, hand, view.viewer_seat, all_in)):
                text = f"{verb} {amount}" + (f" · {label}" if label else "")
                offered.append(Choice(str(n + 1), text, _amount_action(legal.type, amount)))
        elif legal.type == tpb.ACTION_TYPE_ALL_IN:
            offered.append(
                Choice("a", f"All-in {legal.amount}", tpb.Action(all_in=tpb.Action.AllIn()))
            )
    return offered


def bet_legal(view: tpb.TableView) -> tpb.LegalAction | None:
    """The bet or raise the seat may make now, if any (for a typed amount)."""
    for legal in view.hand.legal_actions:
        if legal.type in (tpb.ACTION_TYPE_BET, tpb.ACTION_TYPE_RAISE):
            return legal
    return None


def typed_action(legal: tpb.LegalAction, amount: int) -> tpb.Action:
    return _amount_action(legal.type, clamp_amount(legal, amount))


def max_discards(view: tpb.TableView) -> int | None:
    """How many cards the seat may discard now, or None when it is not drawing."""
    if choices_blocked(view):
        return None
    for legal in view.hand.legal_actions:
        if legal.type == tpb.ACTION_TYPE_DISCARD:
            return legal.max_discards
    return None


def choices_blocked(view: tpb.TableView) -> bool:
    hand = view.hand
    return (
        not view.HasField("viewer_seat")
        or not hand.HasField("to_act")
        or hand.to_act != view.viewer_seat
    )


def discard_action(hand: Iterable[epb.Card], positions: Iterable[int]) -> tpb.Action:
    """Discard the cards at these positions of the seat's hand (0-based; none: stand pat).

    The API names discards by card code; the player picks them by position.
    """
    cards = list(hand)
    codes = sorted({cards[i].code for i in set(positions) if 0 <= i < len(cards)})
    return tpb.Action(discard=tpb.Action.Discard(cards=codes))


def my_cards(view: tpb.TableView) -> list[epb.Card]:
    if not view.HasField("viewer_seat"):
        return []
    for seat in view.hand.seats:
        if seat.seat == view.viewer_seat:
            return list(seat.cards)
    return []


def seat_lines(view: tpb.TableView) -> list[str]:
    """One line per occupied seat: marker, name, stack, this round's bet, cards, state."""
    hand = view.hand
    names = seat_names(view.table)
    in_hand = {s.seat: s for s in hand.seats}
    lines = []
    for seat in view.table.seats:
        if seat.status == tpb.SEAT_STATUS_EMPTY:
            continue
        marks = ""
        if hand.hand_id and seat.seat == hand.button:
            marks += "Ⓑ"
        if hand.HasField("to_act") and hand.to_act == seat.seat:
            marks += "▶"
        you = view.HasField("viewer_seat") and seat.seat == view.viewer_seat
        name = names[seat.seat] + (" — you" if you else "")
        dealt = in_hand.get(seat.seat)
        stack = dealt.stack if dealt is not None else seat.stack
        parts = [f"{marks:>2} {seat.seat}: {name}", f"stack {stack}"]
        if dealt is not None:
            if dealt.bet:
                parts.append(f"bet {dealt.bet}")
            if dealt.cards and not dealt.folded:  # folded cards are out of the hand
                parts.append(cards_label(dealt.cards))
            if dealt.folded:
                parts.append("folded")
            elif dealt.all_in:
                parts.append("all-in")
            if dealt.drawn_count:
                parts.append(f"drew {dealt.drawn_count}")
        if seat.status == tpb.SEAT_STATUS_SITTING_OUT:
            parts.append("sitting out")
        elif seat.waiting_for_big_blind:
            parts.append("waiting for the big blind")
        lines.append(" · ".join(parts))
    return lines


def freed_notice(grace_s: int) -> str:
    """What the player reads when the lounge freed their seat after its grace without chips
    (RULES.md: the player leaves the table)."""
    minutes = round(grace_s / 60)
    after = f"after {minutes} minute{'' if minutes == 1 else 's'}" if minutes else "after a while"
    return f"Your seat was freed {after} without chips: you have left the table. q quits."


def busted(view: tpb.TableView) -> bool:
    """The viewing seat has no chips left and no part in a hand in play: only adding chips
    (or leaving) takes it on."""
    if not view.HasField("viewer_seat"):
        return False
    mine = next((s for s in view.table.seats if s.seat == view.viewer_seat), None)
    if mine is None or mine.status == tpb.SEAT_STATUS_EMPTY or mine.stack > 0:
        return False
    hand = view.hand
    in_play = bool(hand.hand_id) and hand.street != epb.STREET_COMPLETE
    return not (in_play and any(s.seat == view.viewer_seat for s in hand.seats))


_SENTENCES: dict[Reason.ValueType, str] = {
    Reason.NO_LOUNGE: "That lounge does not exist (or it is private)",
    Reason.LOUNGE_NOT_OPEN: "That lounge is closed",
    Reason.TABLE_FULL: "The table is full",
    Reason.INSUFFICIENT_CHIPS: "Your balance is too low for that buy-in",
    Reason.NOT_SEATED: "You no longer have a seat at this lounge",
    Reason.ALREADY_SEATED: "You already sit at this lounge",
    Reason.TABLE_CLOSED: "The table is closed",
    Reason.NO_TABLE: "The table is gone",
    Reason.TABLES_UNAVAILABLE: "The table service did not answer; try again in a moment",
    Reason.RATE_LIMITED: "Too many requests; slow down",
    Reason.HAND_RUNNING: "Chips can be added between your hands only",
    Reason.ABOVE_MAX_BUY_IN: "Your stack is at the lounge's maximum already",
    Reason.ABOVE_MAX_STACK: "Your stack is at the lounge's maximum already",
    Reason.BELOW_MIN_BUY_IN: "That is less than the lounge's minimum stack",
    Reason.NO_BIG_BLIND: "This game has no big blind to wait for",
}
REFUSALS = {Reason.Name(reason): text for reason, text in _SENTENCES.items()}
"""Sentences for the refusals a player meets, by ``ErrorInfo`` reason (the declared
``poker.v1.Reason``'s name, as the wire has it; others: the reason)."""


def refusal_text(reason: str, code: str) -> str:
    """A refusal as a sentence for the player: never a raw status, a token or a traceback."""
    if reason in REFUSALS:
        return REFUSALS[reason]
    if code == "UNAVAILABLE":
        return "The server did not answer; try again in a moment"
    words = (reason or code).replace("_", " ").lower()
    return f"Refused: {words}"


def pot_lines(hand: tpb.HandView) -> list[str]:
    """The main pot and side pots of earlier rounds, and this round's bets."""
    if not hand.hand_id:
        return []
    lines = []
    for n, pot in enumerate(hand.pots):
        label = "Main pot" if n == 0 else f"Side pot {n}"
        lines.append(f"{label}: {pot.amount} (seats {', '.join(map(str, pot.eligible))})")
    bets = sum(s.bet for s in hand.seats)
    if bets:
        lines.append(f"Bets this round: {bets}")
    if hand.pots and bets:
        lines.append(f"Total: {pot_total(hand)}")
    return lines


def describe_event(
    event: epb.StoredEvent, names: Mapping[int, str], facing_bet: bool = False
) -> str | None:
    """A line of the hand's log for a redacted event, or None for events a player
    needs no line for (deck commitments, the hand's setup). ``facing_bet``: the round had
    a bet before this event (the blinds count), so a ``BetPlaced`` is a raise."""

    def who(seat: int) -> str:
        return names.get(seat, f"seat {seat}")

    kind = event.WhichOneof("event")
    if kind is None:
        return None
    body = getattr(event, kind)
    if kind == "hand_started":
        return f"— New hand (button: {who(body.setup.button)}) —"
    if kind == "ante_posted":
        return f"{who(body.seat)} posts ante {body.amount}"
    if kind == "blind_posted":
        return f"{who(body.seat)} posts blind {body.amount}"
    if kind == "hole_cards_dealt":
        if any(c.WhichOneof("kind") == "code" for c in body.cards):
            return f"Dealt to {who(body.seat)}: {cards_label(body.cards)}"
        return None
    if kind == "player_folded":
        return f"{who(body.seat)} folds"
    if kind == "player_checked":
        return f"{who(body.seat)} checks"
    if kind == "player_called":
        return f"{who(body.seat)} calls {body.amount}" + (" (all-in)" if body.all_in else "")
    if kind == "bet_placed":
        verb = "raises to" if facing_bet else "bets"
        return f"{who(body.seat)} {verb} {body.to}" + (" (all-in)" if body.all_in else "")
    if kind == "cards_drawn":
        shown = ""
        if any(c.WhichOneof("kind") == "code" for c in body.drawn):
            shown = f": {cards_label(body.drawn)}"
        count = len(body.drawn)
        return f"{who(body.seat)} draws {count}" + (shown if count else " (stands pat)")
    if kind == "street_started":
        name = STREET_NAMES.get(body.street, "next round")
        return f"*** {name} *** {cards_label(body.cards)}".rstrip()
    if kind == "uncalled_bet_returned":
        return f"{body.amount} returned to {who(body.seat)}"
    if kind == "cards_shown":
        return f"{who(body.seat)} shows {cards_label(body.cards)}"
    if kind == "cards_mucked":
        return f"{who(body.seat)} mucks"
    if kind == "pot_awarded":
        winners = ", ".join(f"{who(s.seat)} {s.amount}" for s in body.shares)
        hand = f" with {body.hand}" if body.hand else ""
        return f"Pot {body.amount} to {winners}{hand}"
    if kind == "hand_ended":
        return "— Hand over —"
    if kind == "player_seated":
        return f"{body.display_name} sits down at seat {body.seat}"
    if kind == "player_left":
        if body.busted:
            return f"{who(body.seat)} leaves: no chips for longer than the lounge allows"
        return f"{who(body.seat)} leaves with {body.stack}"
    if kind == "player_sat_out":
        return f"{who(body.seat)} sits out"
    if kind == "player_sat_in":
        return f"{who(body.seat)} sits in"
    if kind == "player_waiting_for_big_blind":
        return f"{who(body.seat)} waits for the big blind"
    if kind == "chips_added":
        return f"{who(body.seat)} adds {body.amount} chips"
    if kind == "action_timed_out":
        return f"{who(body.seat)} ran out of time"
    if kind == "table_closed":
        return "The table is closed" + (f" ({body.reason})" if body.reason else "")
    return None
