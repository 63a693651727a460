"""Each game Felt plays, described once: the rules read these definitions, never the name.

A variant is data (the model is PokerKit's declarative games, where a game is
its hole-card count, betting structure and streets): how many hole cards are
dealt, the streets in order (board cards dealt, a draw and its limit, which
fixed bet a round uses, who acts first), the betting structure, the seat
range, the forced bets, how hands are ranked and who shows at showdown. The
engine, the fold, the legal actions, the table and the bots ask
:func:`rules_for` for the definition of ``setup.variant`` and follow it;
nothing branches on "Hold'em, else Draw". :func:`rules_for` fails loudly
(:class:`UnknownVariant`) for a variant without a definition, so a new
``Variant`` member can never be played by another game's rules.

What stays code is what a definition cannot say: a betting structure's
arithmetic (``felt.core.rules.legal``), a hand ranking's evaluator
(:func:`hand_value`) and the table's button-and-blinds rule
(``felt.core.table.positions``). A new variant that needs a new one of those adds
it there, under a new member of :class:`Betting` or :class:`Ranking`.

Adding Pot-Limit Omaha, for example, takes:

1. ``Variant.PLO = "PLO"`` in ``felt.core.rules.config`` and its wire value in
   ``felt.messages.values`` and the protos (events are the contract);
2. one definition here: ``hole_cards=4``, the Hold'em streets, blinds,
   2 to 9 seats, ``betting=Betting.POT_LIMIT``, ``ranking=Ranking.OMAHA_HIGH``;
3. what is truly new: ``Ranking.OMAHA_HIGH`` in :func:`hand_value` (exactly
   two hole cards and three board cards), and ``Betting.POT_LIMIT`` in
   ``felt.core.rules.legal.legal_actions``: the no-limit minimum, with the maximum
   capped at the pot after calling (every other rule of no-limit betting,
   full raises and reopening, applies unchanged);
4. the tests of ``tests/unit/rules/test_variants.py`` cover the new member
   by themselves (every variant has a definition); add its own rule tests.

docs/architecture.md ("How to add a variant") has the checklist.

This module is on the hot path (the engine reads a hand's definition once
per hand and its rounds once per street), so it is compiled (``felt.compiled``)
and its value classes are ``felt.core.record.Record`` classes; made once, at import, they keep
the ``__init__`` that ``dataclasses`` generates.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from felt.core.cards import Card
from felt.core.evaluator import evaluate
from felt.core.record import Record
from felt.core.rules.config import Variant
from felt.core.rules.events import Street


class Betting(StrEnum):
    """How much a bet or raise may be.

    ``NO_LIMIT``: at least the last full raise (at least the big blind), at
    most the whole stack. ``FIXED_LIMIT``: exactly one fixed bet above the
    last full bet level (the round's small or big bet), at most
    ``HandSetup.raise_cap`` full bets and raises a round. (``POT_LIMIT``
    would be no-limit with the maximum capped at the pot.)
    """

    NO_LIMIT = "NO_LIMIT"
    FIXED_LIMIT = "FIXED_LIMIT"


class Ranking(StrEnum):
    """How a hand is valued at showdown (see :func:`hand_value`).

    ``HIGH``: the best five cards of the hole cards and the board together,
    high hand wins (Hold'em, and five-card Draw, which has no board).
    """

    HIGH = "HIGH"


class FirstToAct(StrEnum):
    """Who acts first in a betting round (the draw follows the same order).

    ``LEFT_OF_BLINDS``: the first seat left of the largest blind (big blind or
    straddle); left of the button when nobody posted one. ``LEFT_OF_BUTTON``:
    the first seat left of the button still able to act.
    """

    LEFT_OF_BLINDS = "LEFT_OF_BLINDS"
    LEFT_OF_BUTTON = "LEFT_OF_BUTTON"


# Members as module constants: an enum attribute read goes through the metaclass.
NO_LIMIT, FIXED_LIMIT = Betting.NO_LIMIT, Betting.FIXED_LIMIT
HIGH = Ranking.HIGH
LEFT_OF_BLINDS = FirstToAct.LEFT_OF_BLINDS


@dataclass(frozen=True, slots=True)
class Round(Record):
    """One street of a variant, in the order they are played.

    A round either deals ``board_cards`` face up as it starts and then has a
    betting round, or is a draw (``max_discard`` > 0): each seat in the hand,
    in turn, discards 0 to ``max_discard`` cards and is dealt as many, with no
    betting. ``big_bet`` says which fixed bet a fixed-limit round uses.

    A betting round that deals nothing is skipped when fewer than two seats
    could bet in it (Draw's second round after an all-in); one that deals
    board cards is always dealt (the all-in run-out), the hands face up.
    """

    street: Street
    board_cards: int = 0
    max_discard: int = 0
    big_bet: bool = False
    first_to_act: FirstToAct = FirstToAct.LEFT_OF_BUTTON


@dataclass(frozen=True, slots=True)
class VariantRules(Record):
    """Everything that makes one game what it is (see the module docstring).

    ``rounds`` are the streets in order; the last one's betting ends in the
    showdown. Forced bets: ``blinds`` says whether the table posts a small and
    a big blind (a game without them moves only the button and refuses
    blinds in a hand's setup); ``ante_required`` whether every seat must post
    an ante (antes are allowed in every game). ``all_show`` says whether every
    hand left at showdown is tabled (Draw: "the remaining players show"); if
    not, a hand that cannot win may be mucked unless a player is all-in.
    """

    variant: Variant
    name: str
    hole_cards: int
    rounds: tuple[Round, ...]
    betting: Betting
    min_seats: int
    max_seats: int
    blinds: bool
    ante_required: bool
    ranking: Ranking
    all_show: bool

    @property
    def fixed_limit(self) -> bool:
        """Fixed bet sizes and a raise cap (else no-limit arithmetic)."""
        return self.betting == FIXED_LIMIT

    @property
    def first_street(self) -> Street:
        return self.rounds[0].street

    @property
    def has_draw(self) -> bool:
        return any(r.max_discard > 0 for r in self.rounds)

    def round_of(self, street: Street) -> Round | None:
        """The definition of ``street``, or None (showdown, or a street of another game).

        A scan, not a dict: a variant has at most a handful of rounds, and
        hashing an enum member runs Python code.
        """
        for r in self.rounds:
            if r.street == street:
                return r
        return None

    def after(self, street: Street) -> Round | None:
        """The round that follows ``street``, or None after the last (the showdown)."""
        rounds = self.rounds
        for i in range(len(rounds) - 1):
            if rounds[i].street == street:
                return rounds[i + 1]
        return None

    def seats_allowed(self, count: int) -> bool:
        return self.min_seats <= count <= self.max_seats


NLHE_RULES = VariantRules(
    variant=Variant.NLHE,
    name="No-Limit Texas Hold'em",
    hole_cards=2,
    rounds=(
        Round(Street.PREFLOP, first_to_act=FirstToAct.LEFT_OF_BLINDS),
        Round(Street.FLOP, board_cards=3),
        Round(Street.TURN, board_cards=1),
        Round(Street.RIVER, board_cards=1),
    ),
    betting=Betting.NO_LIMIT,
    min_seats=2,
    max_seats=9,
    blinds=True,
    ante_required=False,
    ranking=Ranking.HIGH,
    all_show=False,
)

DRAW5_RULES = VariantRules(
    variant=Variant.DRAW5,
    name="Five-Card Draw",
    hole_cards=5,
    rounds=(
        Round(Street.FIRST_BET),
        Round(Street.DRAW, max_discard=3),
        Round(Street.SECOND_BET, big_bet=True),
    ),
    betting=Betting.FIXED_LIMIT,
    min_seats=2,
    max_seats=6,
    blinds=False,
    ante_required=True,
    ranking=Ranking.HIGH,
    all_show=True,
)

DEFINITIONS = (NLHE_RULES, DRAW5_RULES)
VARIANTS: dict[Variant, VariantRules] = {r.variant: r for r in DEFINITIONS}
"""Every variant's definition, by variant. Read it through :func:`rules_for`."""


class UnknownVariant(ValueError):
    """A variant without a definition: it cannot be played, validated or dealt."""


def rules_for(variant: Variant) -> VariantRules:
    """The definition of ``variant``; raises :class:`UnknownVariant` when there is none.

    A scan of :data:`DEFINITIONS` rather than ``VARIANTS[variant]``: it runs for
    every command, and an enum member's hash is Python code.
    """
    for rules in DEFINITIONS:
        if rules.variant == variant:
            return rules
    raise UnknownVariant(
        f"no rules are defined for variant {variant!r}; "
        f"Felt plays {', '.join(str(v) for v in VARIANTS)}"
    )


def hand_value(ranking: Ranking, hole: tuple[Card, ...], board: tuple[Card, ...]) -> int:
    """A showdown hand's value under ``ranking`` (greater wins; equal splits)."""
    if ranking == HIGH:
        return evaluate(hole + board)
    raise UnknownVariant(f"no evaluator for hand ranking {ranking!r}")  # pragma: no cover
