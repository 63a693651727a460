"""A hand history as a person reads one: a header, the seats, each round, the showdown, the summary.

The layout follows the hand histories poker sites print (rounds between
``*** NAME ***`` lines, one line per action, a summary of pots and results),
so a player reads it without learning a new format. Cards the reader did not
see print as ``??``.
"""

from __future__ import annotations

from collections.abc import Iterable

from felt.core.cards import card_str
from felt.core.rules.config import Variant
from felt.core.rules.events import MaybeCard, Street
from felt.tools.history.model import Action, HandHistory, Shown
from felt.tools.history.viewer import Role

__all__ = ["render_text"]

_VARIANT_NAMES = {Variant.NLHE: "No-Limit Hold'em", Variant.DRAW5: "Five-Card Draw"}
_STREET_NAMES = {
    Street.PREFLOP: "PRE-FLOP",
    Street.FLOP: "FLOP",
    Street.TURN: "TURN",
    Street.RIVER: "RIVER",
    Street.FIRST_BET: "FIRST BETTING ROUND",
    Street.DRAW: "DRAW",
    Street.SECOND_BET: "SECOND BETTING ROUND",
}


def _cards(cards: Iterable[MaybeCard]) -> str:
    return "[" + " ".join("??" if c is None else card_str(c) for c in cards) + "]"


def _chips(n: int) -> str:
    return f"{n:,}"


def _stakes(h: HandHistory) -> str:
    if h.variant == Variant.NLHE:
        text = f"blinds {_chips(h.small_blind)}/{_chips(h.big_blind or h.min_bet)}"
    else:
        text = f"fixed limit {_chips(h.small_bet)}/{_chips(h.big_bet)}"
    return text + (f", ante {_chips(h.ante)}" if h.ante else "")


def _reader(h: HandHistory) -> str:
    if h.viewer.role == Role.SEAT:
        assert h.viewer.seat is not None
        return f"as {h.name(h.viewer.seat)} (seat {h.viewer.seat}) saw it"
    if h.viewer.role == Role.OPERATOR:
        return "in full (operator)"
    return "as a spectator saw it"


def _action(h: HandHistory, a: Action) -> str:
    who = h.name(a.seat)
    all_in = " and is all-in" if a.all_in else ""
    if a.kind == "posts_ante":
        return f"{who} posts the ante {_chips(a.amount)}{all_in}"
    if a.kind == "posts_blind":
        owed = next((s.blind for s in h.seats if s.seat == a.seat), 0)
        which = (
            "the small blind"
            if owed == h.small_blind and owed < h.big_blind
            else "the big blind"
            if owed == h.big_blind
            else "a blind"
        )
        return f"{who} posts {which} {_chips(a.amount)}{all_in}"
    if a.kind in ("folds", "checks"):
        return f"{who} {a.kind}"
    if a.kind == "calls":
        return f"{who} calls {_chips(a.amount)}{all_in}"
    if a.kind in ("bets", "raises"):
        verb = "bets" if a.kind == "bets" else "raises to"
        return f"{who} {verb} {_chips(a.to)}{all_in}"
    if a.kind == "draws":
        if not a.drew:
            return f"{who} stands pat"
        line = f"{who} draws {a.drew}"
        if any(c is not None for c in a.drawn):
            line += f": discards {_cards(a.discarded)}, draws {_cards(a.drawn)}"
        return line
    if a.kind == "returned":
        return f"Uncalled bet of {_chips(a.amount)} returned to {who}"
    if a.kind == "timed_out":
        return f"{who}'s time ran out"
    return f"{who} {a.kind}"  # pragma: no cover - every kind is listed above


def _shown(h: HandHistory, s: Shown) -> str:
    who = h.name(s.seat)
    if s.mucked:
        return f"{who} mucks"
    return f"{who} shows {_cards(s.cards)}" + (f" ({s.hand})" if s.hand else "")


def render_text(h: HandHistory) -> str:
    """The hand as lines of text, ending with a newline."""
    out = [
        f"Hand {h.hand_id} ({h.table_hand})" + (f" at table {h.table_id}" if h.table_id else ""),
        f"{_VARIANT_NAMES.get(h.variant, str(h.variant))}, {_stakes(h)}",
    ]
    if h.started_at is not None:
        out.append(f"Started {h.started_at:%Y-%m-%d %H:%M:%S %Z}".rstrip())
    out.append(f"Shown {_reader(h)}")
    for line in h.seats:
        name = f"{line.name} ({line.player_id})" if line.name else line.player_id
        button = " [button]" if line.button else ""
        out.append(f"Seat {line.seat}: {name or '-'}, {_chips(line.stack)} in chips{button}")
    for street in h.streets:
        header = f"*** {_STREET_NAMES.get(street.street, str(street.street))} ***"
        if street.cards:
            header += f" {_cards(street.board)}"
        if street is not h.streets[0]:
            header += f" (pot {_chips(street.pot)})"
        out.append(header)
        if street is h.streets[0]:
            posts = [a for a in street.actions if a.kind.startswith("posts_")]
            out += [_action(h, a) for a in posts]
            out += [f"Dealt to {h.name(s.seat)} {_cards(s.dealt)}" for s in h.seats if s.dealt]
            out += [_action(h, a) for a in street.actions if a not in posts]
        else:
            out += [_action(h, a) for a in street.actions]
    if h.showdown:
        out.append("*** SHOWDOWN ***")
        out += [_shown(h, s) for s in h.showdown]
    out.append("*** SUMMARY ***")
    board = h.streets[-1].board if h.streets else ()
    if board:
        out.append(f"Board {_cards(board)}")
    for pot in h.pots:
        label = "Main pot" if pot.index == 0 else f"Side pot {pot.index}"
        winners = ", ".join(f"{h.name(seat)} wins {_chips(chips)}" for seat, chips in pot.shares)
        out.append(
            f"{label} {_chips(pot.amount)}: {winners}" + (f" with {pot.hand}" if pot.hand else "")
        )
    for r in h.results:
        out.append(f"{h.name(r.seat)}: {_chips(r.start)} -> {_chips(r.end)} ({r.net:+,})")
    if not h.ended:
        out.append("(the hand is still being played)")
    for s in h.shown_after:
        out.append(f"After the hand, {_shown(h, s)}")
    return "\n".join(out) + "\n"
