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
"""

from __future__ import annotations

from collections.abc import Callable

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


def get_bot(level: str) -> Bot:
    """A bot by name (case-insensitive); raises ``ValueError`` naming the choices."""
    factory = _FACTORIES.get(level.strip().lower())
    if factory is None:
        raise ValueError(f"unknown bot {level!r}; choose one of {', '.join(BOT_NAMES)}")
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
]
