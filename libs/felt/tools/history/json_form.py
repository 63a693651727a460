"""A hand history as JSON for programs: schema ``felt.hand-history/1``.

The schema (also in docs/api.md, "Hand histories"). Cards are two-character
strings (``"As"``, ``"Td"``); a card the reader did not see is ``null``, so
its count and place stay visible. Amounts are integer chips.

```
{
  "schema": "felt.hand-history/1",
  "hand_id": str,                // the public id (32 hex digits)
  "table_hand": str,             // the table's own count, "<table_id>:<n>"
  "table_id": str, "variant": "NLHE" | "DRAW5",
  "started_at": RFC 3339 str | null,
  "viewer": {"role": "seat" | "spectator" | "operator", "seat": int | null},
  "stakes": {"small_blind": int, "big_blind": int, "ante": int,
             "small_bet": int, "big_bet": int},
  "button": int,
  "commitment": str,            // the deck commitment's Merkle root (hex), "" if none
  "seats": [{"seat": int, "player_id": str, "name": str, "stack": int,
             "dealt": [card], "cards": [card], "button": bool}],
  "streets": [{"street": "PREFLOP" | "FLOP" | "TURN" | "RIVER"
                         | "FIRST_BET" | "DRAW" | "SECOND_BET",
               "cards": [card],   // board cards this round dealt
               "board": [card],   // the whole board so far
               "pot": int,        // the pot when the round began
               "actions": [{"seat": int, "kind": str, "amount": int, "to": int,
                            "all_in": bool,
                            // only for "draws":
                            "drew": int, "discarded": [card], "drawn": [card]}]}],
  "showdown": [{"seat": int, "cards": [card], "hand": str, "mucked": bool}],
  "pots": [{"index": int, "amount": int, "eligible": [int],
            "shares": [{"seat": int, "amount": int}], "hand": str}],
  "results": [{"seat": int, "start": int, "end": int, "net": int}],
  "shown_after": [{"seat": int, "cards": [card], "hand": str}],
  "ended": bool
}
```

Action kinds: ``posts_ante``, ``posts_blind``, ``folds``, ``checks``,
``calls``, ``bets``, ``raises``, ``draws`` (``drew`` 0 is standing pat),
``returned`` (an uncalled bet), ``timed_out``. New fields may be added to
version 1; a changed meaning is a new version.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from felt.core.cards import card_str
from felt.core.rules.events import MaybeCard
from felt.tools.history.model import Action, HandHistory, Shown

__all__ = ["SCHEMA", "history_to_dict", "render_json"]

SCHEMA = "felt.hand-history/1"


def _cards(cards: Iterable[MaybeCard]) -> list[str | None]:
    return [None if c is None else card_str(c) for c in cards]


def _action(a: Action) -> dict[str, Any]:
    out: dict[str, Any] = {
        "seat": a.seat,
        "kind": a.kind,
        "amount": a.amount,
        "to": a.to,
        "all_in": a.all_in,
    }
    if a.kind == "draws":
        out.update(drew=a.drew, discarded=_cards(a.discarded), drawn=_cards(a.drawn))
    return out


def _shown(s: Shown) -> dict[str, Any]:
    return {"seat": s.seat, "cards": _cards(s.cards), "hand": s.hand, "mucked": s.mucked}


def history_to_dict(h: HandHistory) -> dict[str, Any]:
    """The history as plain JSON values (schema :data:`SCHEMA`)."""
    return {
        "schema": SCHEMA,
        "hand_id": h.hand_id,
        "table_hand": h.table_hand,
        "table_id": h.table_id,
        "variant": str(h.variant),
        "started_at": h.started_at.isoformat() if h.started_at is not None else None,
        "viewer": {"role": str(h.viewer.role), "seat": h.viewer.seat},
        "stakes": {
            "small_blind": h.small_blind,
            "big_blind": h.big_blind,
            "ante": h.ante,
            "small_bet": h.small_bet,
            "big_bet": h.big_bet,
        },
        "button": h.button,
        "commitment": h.commitment,
        "seats": [
            {
                "seat": s.seat,
                "player_id": s.player_id,
                "name": s.name,
                "stack": s.stack,
                "dealt": _cards(s.dealt),
                "cards": _cards(s.cards),
                "button": s.button,
            }
            for s in h.seats
        ],
        "streets": [
            {
                "street": str(s.street),
                "cards": _cards(s.cards),
                "board": _cards(s.board),
                "pot": s.pot,
                "actions": [_action(a) for a in s.actions],
            }
            for s in h.streets
        ],
        "showdown": [_shown(s) for s in h.showdown],
        "pots": [
            {
                "index": p.index,
                "amount": p.amount,
                "eligible": list(p.eligible),
                "shares": [{"seat": seat, "amount": chips} for seat, chips in p.shares],
                "hand": p.hand,
            }
            for p in h.pots
        ],
        "results": [
            {"seat": r.seat, "start": r.start, "end": r.end, "net": r.net} for r in h.results
        ],
        "shown_after": [
            {"seat": s.seat, "cards": _cards(s.cards), "hand": s.hand} for s in h.shown_after
        ],
        "ended": h.ended,
    }


def render_json(h: HandHistory) -> str:
    """The history as indented JSON text, ending with a newline."""
    return json.dumps(history_to_dict(h), indent=2) + "\n"
