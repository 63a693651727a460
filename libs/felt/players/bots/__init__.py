"""AI players for both variants, at three levels plus two baselines.

A bot decides from its seat's redacted view, the redacted history of the hand
and the legal actions it was offered, with a caller-supplied random source
(see :class:`felt.players.bots.base.Bot`). ``get_bot(name)`` returns a fresh bot:
``"easy"``, ``"normal"`` and ``"hard"`` are the product's levels
(``felt.core.table.events.AI_LEVELS``, which a seat's ``ai_level`` names);
``"calling_station"``, ``"random"``, ``"maniac"``, ``"rock"`` and
``"loose_passive"`` are fixed references for the ladder (``felt.players.bots.baseline``), and
``"tag"`` a textbook tight-aggressive reference written apart from the levels
(``felt.players.bots.tag``).

``register(bots)`` adds bots from outside the package (the opponent styles of
``felt_styles``, dev tooling the runtime never imports) so the ladder can name them;
``felt ladder --bots MODULE`` calls it with that module's ``BOTS``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from felt.core.table.events import AI_LEVELS
from felt.players.bots.base import Bot, Decision
from felt.players.bots.baseline import CallingStation, LoosePassive, Maniac, RandomBot, Rock
from felt.players.bots.easy import EasyBot
from felt.players.bots.hard import HardBot
from felt.players.bots.normal import NormalBot
from felt.players.bots.tag import TightAggressive

LEVELS = AI_LEVELS
BASELINES = ("calling_station", "random", "maniac", "rock", "loose_passive", "tag")
BOT_NAMES = (*LEVELS, *BASELINES)

_FACTORIES: dict[str, Callable[[], Bot]] = {
    "easy": EasyBot,
    "normal": NormalBot,
    "hard": HardBot,
    "calling_station": CallingStation,
    "random": RandomBot,
    "maniac": Maniac,
    "rock": Rock,
    "loose_passive": LoosePassive,
    "tag": TightAggressive,
}


def register(bots: Mapping[str, Callable[[], Bot]]) -> None:
    """Make more bots known to :func:`get_bot` by name (lower case, no ``:`` or ``,``).

    A name already taken by another factory is refused (``ValueError``): a ladder run
    must never play a different bot than the one its results name. Registering the
    same factory again is harmless.
    """
    for name, factory in bots.items():
        key = name.strip().lower()
        if not key or key != name or any(ch in key for ch in ":,"):
            raise ValueError(f"bad bot name {name!r}: lower case, without ':' or ','")
        known = _FACTORIES.get(key)
        if known is not None and known is not factory:
            raise ValueError(f"bot name {name!r} is already taken")
    for name, factory in bots.items():
        _FACTORIES[name] = factory


def known_bots() -> tuple[str, ...]:
    """Every name :func:`get_bot` accepts: the built-in bots, then registered ones."""
    return tuple(_FACTORIES)


def get_bot(level: str) -> Bot:
    """A bot by name (case-insensitive); raises ``ValueError`` naming the choices."""
    factory = _FACTORIES.get(level.strip().lower())
    if factory is None:
        raise ValueError(f"unknown bot {level!r}; choose one of {', '.join(_FACTORIES)}")
    return factory()


__all__ = [
    "BASELINES",
    "BOT_NAMES",
    "LEVELS",
    "Bot",
    "CallingStation",
    "Decision",
    "EasyBot",
    "HardBot",
    "LoosePassive",
    "Maniac",
    "NormalBot",
    "RandomBot",
    "Rock",
    "TightAggressive",
    "get_bot",
    "known_bots",
    "register",
]
