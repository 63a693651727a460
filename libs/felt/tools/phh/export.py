"""Write hands played by Felt's rules core as PHH, in full or as one seat saw them.

Exporting lets tools that no one here wrote (PokerKit above all) replay
Felt's hands and check them, and gives players a standard file of their
hand. The input is what the core produces: a hand's events, starting with
``HandStarted`` (whose setup has the seats, forced bets and stacks).

PHH order is Felt's dealing order (``p1`` first left of the button, the
button last; heads-up ``p1`` is the big blind), except that heads-up the
``antes`` and ``blinds_or_straddles`` lists name the small blind (the
button, ``p2``) first, as PokerKit reads them.

Antes are dead money in the main pot, never matched and never returned
(``felt.core.rules.pots``), which is PokerKit's ``ante_trimming_status = false``;
with ``true`` PokerKit would hand an unmatched ante, such as a big-blind
ante, back to its owner as if it were an uncalled bet.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from felt.core.cards import Card, card_str
from felt.core.rules.config import Variant
from felt.core.rules.events import (
    BetPlaced,
    CardsMucked,
    CardsShown,
    Event,
    HandEnded,
    HandStarted,
    HoleCardsDealt,
    MaybeCard,
    PlayerCalled,
    PlayerChecked,
    PlayerFolded,
    StreetStarted,
)

__all__ = ["ExportError", "export_phh", "toml_value"]


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


class ExportError(ValueError):
    """The events are not a Hold'em hand Felt can write as PHH."""


def _cards_text(cards: Iterable[MaybeCard]) -> str:
    return "".join("??" if c is None else card_str(c) for c in cards)


def _toml_string(text: str) -> str:
    if "'" not in text and all(ch >= " " and ch != "\x7f" for ch in text):
        return f"'{text}'"
    out = []
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch < " " or ch == "\x7f":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _toml_string(key)


def toml_value(value: Any) -> str:
    """A TOML literal for the simple values PHH uses (bool, int, Decimal, str, lists)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal) and value.is_finite():
        return format(value, "f")
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise ExportError(f"cannot write {value!r} as a PHH field")


def export_phh(
    events: Sequence[Event],
    *,
    viewer: int | None = None,
    fields: Mapping[str, Any] | None = None,
    scale: int = 1,
) -> str:
    """The hand as PHH text (variant ``NT``).

    ``viewer`` (a table seat number) writes the hand as that seat saw it:
    other seats' hole cards are ``????`` unless they were shown, in which
    case the ``sm`` line carries them. Without it the full log is written.
    A hand shown voluntarily after folding is written as a comment entry
    (``# p2 shows AcKd``), since a PHH ``sm`` by a folded player is invalid.
    ``finishing_stacks`` is written once the hand has ended. ``fields`` are
    extra PHH fields to append (PHH wants user fields to start with ``_``).
    ``scale`` writes amounts in larger units (chips / ``scale``, e.g. 100 for
    a hand read from a PHH file in dollars and cents).
    """
    if not events or not isinstance(events[0], HandStarted):
        raise ExportError("a hand's events start with HandStarted")
    setup = events[0].setup
    if setup.variant != Variant.NLHE:
        raise ExportError(f"PHH export covers No-Limit Hold'em, not {setup.variant}")
    order = {s.seat: i for i, s in enumerate(setup.seats)}
    if viewer is not None and viewer not in order:
        raise ExportError(f"seat {viewer} is not dealt into this hand")

    def who(seat: int) -> str:
        index = order.get(seat)
        if index is None:
            raise ExportError(f"an event names seat {seat}, which is not dealt in")
        return f"p{index + 1}"

    if scale < 1:
        raise ExportError(f"scale must be positive, not {scale}")

    def amount(chips: int) -> int | Decimal:
        if scale == 1:
            return chips
        value = Decimal(chips) / scale
        return int(value) if value == value.to_integral_value() else value

    antes = [amount(s.ante) for s in setup.seats]
    blinds = [amount(s.blind) for s in setup.seats]
    if len(setup.seats) == 2:  # heads-up: the lists name the small blind (button) first
        antes.reverse()
        blinds.reverse()

    actions: list[str] = []
    folded: set[int] = set()
    finishing: list[int | Decimal] | None = None
    for event in events[1:]:
        if isinstance(event, HoleCardsDealt):
            hidden: Sequence[Card | None] = event.cards
            if viewer is not None and event.seat != viewer:
                hidden = [None] * len(event.cards)
            actions.append(f"d dh {who(event.seat)} {_cards_text(hidden)}")
        elif isinstance(event, PlayerFolded):
            folded.add(event.seat)
            actions.append(f"{who(event.seat)} f")
        elif isinstance(event, PlayerChecked | PlayerCalled):
            actions.append(f"{who(event.seat)} cc")
        elif isinstance(event, BetPlaced):
            actions.append(f"{who(event.seat)} cbr {toml_value(amount(event.to))}")
        elif isinstance(event, StreetStarted):
            if event.cards:
                actions.append(f"d db {_cards_text(event.cards)}")
        elif isinstance(event, CardsShown):
            if event.seat in folded:
                # PHH has no show by a folded hand (PokerKit refuses it): keep it as a comment.
                actions.append(f"# {who(event.seat)} shows {_cards_text(event.cards)}")
            else:
                actions.append(f"{who(event.seat)} sm {_cards_text(event.cards)}")
        elif isinstance(event, CardsMucked):
            actions.append(f"{who(event.seat)} sm")
        elif isinstance(event, HandEnded):
            final = dict(event.stacks)
            finishing = [amount(final[s.seat]) for s in setup.seats]
        # Antes, blinds, returned bets and pot awards are implied by the rules.

    lines = [
        ("variant", "NT"),
        ("ante_trimming_status", False),
        ("antes", antes),
        ("blinds_or_straddles", blinds),
        ("min_bet", amount(setup.min_bet)),
        ("starting_stacks", [amount(s.stack) for s in setup.seats]),
        ("actions", actions),
        ("players", [s.player_id or f"seat {s.seat}" for s in setup.seats]),
        ("seats", [s.seat for s in setup.seats]),
    ]
    if finishing is not None:
        lines.append(("finishing_stacks", finishing))
    lines.append(("_felt_hand_id", setup.hand_id))
    lines.append(("_felt_button", setup.button))
    if viewer is not None:
        lines.append(("_felt_viewer", viewer))
    for key, value in (fields or {}).items():
        lines.append((key, value))
    return "".join(f"{_toml_key(key)} = {toml_value(value)}\n" for key, value in lines)
