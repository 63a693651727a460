"""Opponent styles hard was never tuned against (issue #25): eight independent players.

Written by an engineer who did not read the hard or normal bots' code, from the bot
interface (``felt.players.bots.base``: what a seat sees and may return), the equity library
and the rules. Each style is a :class:`felt.players.bots.base.Bot` for both games, sees only
its seat's view and the public record, keeps no state, and is deterministic given
the RNG it is handed.

The styles are split in two halves. **DEVELOPMENT** may be used by anyone improving
the hard bot; **HELD_OUT** must not be played against hard (nor read by whoever tunes
it) until the final judging run, so that run measures hard against players it was
never fitted to (docs/ai.md).

This package is development tooling: it imports ``felt``; ``felt`` never imports it.
``felt ladder --bots felt_styles`` registers :data:`BOTS` and :data:`GROUPS` so the
ladder can name the styles (``--opponents development``).

Two more **development** styles, ``reader`` and ``prober`` (group
``development_more``), were added on 2026-12-04 (stop 40) by another engineer who
likewise never read the hard, normal or easy bots, the solver, docs/ai.md or the
held-out styles: ``reader`` reads each opponent's ranges from its observed opening,
VPIP and PFR rates and plays its equity against them; ``prober`` prices bets,
bluffs, steals and calls by each opponent's observed fold, bet and bluff rates. They
may be played against hard like the rest of the development half; they are not in
:data:`DEVELOPMENT` (documented commands name that group), nor in :data:`STYLES`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from felt.players.bots.base import Bot
from felt_styles.adapter import Adapter
from felt_styles.check_raiser import CheckRaiser
from felt_styles.lag import LooseAggressive
from felt_styles.maniac import Maniac
from felt_styles.nit import Nit
from felt_styles.overbettor import Overbettor
from felt_styles.prober import Prober
from felt_styles.reader import Reader
from felt_styles.station import ValueStation
from felt_styles.style import Style
from felt_styles.tight_aggressive import TightAggressive

_CLASSES: tuple[type[Style], ...] = (
    LooseAggressive,
    Nit,
    ValueStation,
    CheckRaiser,
    TightAggressive,
    Maniac,
    Overbettor,
    Adapter,
    Reader,
    Prober,
)

# Every style by name: what the ladder's pairings and `--opponents` name.
BOTS: Mapping[str, Callable[[], Bot]] = {cls.name: cls for cls in _CLASSES}

# For developing hard: play against these as often as you like.
DEVELOPMENT: tuple[str, ...] = ("lag", "nit", "value_station", "check_raiser")
# Untouched until the final judging run: never tune hard against these.
HELD_OUT: tuple[str, ...] = ("tight_aggressive", "maniac_plus", "overbettor", "adapter")
STYLES: tuple[str, ...] = (*DEVELOPMENT, *HELD_OUT)
# More development styles (2026-12-04), kept out of DEVELOPMENT so its commands stay as
# documented: name them with `--opponents development_more`.
DEVELOPMENT_MORE: tuple[str, ...] = ("reader", "prober")

# Names the ladder's `--opponents` expands.
GROUPS: Mapping[str, tuple[str, ...]] = {
    "development": DEVELOPMENT,
    "held_out": HELD_OUT,
    "styles": STYLES,
    "development_more": DEVELOPMENT_MORE,
}


def get_style(name: str) -> Style:
    """A fresh style by name; ``ValueError`` names the choices."""
    cls = BOTS.get(name)
    if cls is None:
        names = ", ".join((*STYLES, *DEVELOPMENT_MORE))
        raise ValueError(f"unknown style {name!r}; choose one of {names}")
    bot = cls()
    assert isinstance(bot, Style)
    return bot


__all__ = [
    "BOTS",
    "DEVELOPMENT",
    "DEVELOPMENT_MORE",
    "GROUPS",
    "HELD_OUT",
    "STYLES",
    "Adapter",
    "CheckRaiser",
    "LooseAggressive",
    "Maniac",
    "Nit",
    "Overbettor",
    "Prober",
    "Reader",
    "Style",
    "TightAggressive",
    "ValueStation",
    "get_style",
]
