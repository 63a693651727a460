"""The tight-aggressive regular: sound ranges, and equity against what each action says."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import ClassVar

from felt.core.rules.events import Street
from felt.players.bots.base import Decision
from felt.players.bots.holdem import Made, made_hand
from felt.players.equity import Range, top_percent
from felt_styles.reading import POSTFLOP, Spot, draw_rank, rough_range
from felt_styles.style import Chart, Style

# How much an action keeps of each kind of hand (the action's likelihood given the hand):
# strong = top pair with a good kicker or better, medium = a weaker pair, draw = a flush or
# open-ended straight draw, air = the rest.
LIKELIHOOD = {
    "bet": {"strong": 1.0, "medium": 0.3, "draw": 0.7, "air": 0.15},
    "call": {"strong": 0.6, "medium": 1.0, "draw": 1.0, "air": 0.1},
    "check": {"strong": 0.35, "medium": 1.0, "draw": 0.8, "air": 1.0},
}


# Combos of a wide range classified per decision (see weighted_range).
SAMPLED = 150


def _straight(ranks: frozenset[int]) -> bool:
    low = ranks | {-1} if 12 in ranks else ranks
    return any(all(r + k in low for k in range(5)) for r in range(-1, 9))


@lru_cache(maxsize=8192)
def _open_ended(hole: tuple[int, int], board: tuple[int, ...]) -> bool:
    """Two or more ranks complete a straight that uses a hole card (by ranks alone, so
    cached for the 169 rank pairs of a board rather than 1326 combos)."""
    have = frozenset((*hole, *board))
    if _straight(have):
        return False
    on_board = frozenset(board)
    completing = sum(
        1
        for r in range(13)
        if r not in have and _straight(have | {r}) and not _straight(on_board | {r})
    )
    return completing >= 2


def kind_of(hole: Sequence[int], board: Sequence[int]) -> str:
    made = made_hand(hole, board)
    if made >= Made.TOP_PAIR_GOOD:
        return "strong"
    if made >= Made.WEAK_PAIR:
        return "medium"
    if len(board) < 5:
        suits = Counter(c & 3 for c in (*hole, *board))
        if any(suits[h & 3] == 4 for h in hole):
            return "draw"
        ranks = (max(hole[0] >> 2, hole[1] >> 2), min(hole[0] >> 2, hole[1] >> 2))
        if _open_ended(ranks, tuple(sorted({c >> 2 for c in board}))):
            return "draw"
    return "air"


@lru_cache(maxsize=16)
def _kinds(board: tuple[int, ...]) -> dict[tuple[int, int], str]:
    """Kinds already worked out on one board (filled as ranges ask; a hand asks again on
    every later street)."""
    return {}


def cached_kind(combo: tuple[int, int], board: tuple[int, ...]) -> str:
    table = _kinds(board)
    kind = table.get(combo)
    if kind is None:
        kind = table[combo] = kind_of(combo, board)
    return kind


def weighted_range(spot: Spot, seat: int) -> Range:
    """``seat``'s range: its preflop range, then each later action's likelihood applied on
    the board as it stood when the action was taken (cards we can see removed)."""
    start = rough_range(spot, seat) or top_percent(100)
    dead = set(spot.sit.hole) | set(spot.sit.board)
    weights = {c: w for c, w in start.items() if not dead & set(c)}
    if len(weights) > SAMPLED and any(
        a.seat == seat for a in spot.sit.actions if a.street in POSTFLOP
    ):
        # A wide range is read from an even sample of its combos (every k-th, the same
        # ones on every street, so each board classifies them once): the Monte Carlo run
        # deals a few hundred hands anyway, and classifying 1,300 combos on every board
        # would cost more than the rest of the decision.
        ordered = sorted(weights)
        step = -(-len(ordered) // SAMPLED)
        weights = {c: weights[c] for c in ordered[::step]}
    boards = {Street.FLOP: 3, Street.TURN: 4, Street.RIVER: 5}
    for street in POSTFLOP:
        acts = [a.kind for a in spot.sit.on(street) if a.seat == seat and a.kind != "fold"]
        if not acts:
            continue
        board = spot.sit.board[: boards[street]]
        for combo in list(weights):
            kind = cached_kind(combo, board)
            for act in acts:
                weights[combo] *= LIKELIHOOD[act][kind]
    kept = {c: w for c, w in weights.items() if w > 1e-4}
    return Range(kept) if kept else start.without(dead)


class TightAggressive(Style):
    """Position-wide opens (15% with a full table behind up to 45% on the button, 3 big
    blinds), 3-bets the top 6% plus a few bluffs, calls raises with 22%, 4-bets 2.5%.

    After the flop it estimates equity against each live opponent's range weighted by
    every action that opponent took (:data:`LIKELIHOOD`: a bet keeps strong hands and
    draws, a call medium ones, a check trims the top), on the board as it stood then.
    It bets two thirds of the pot for value with equity over ``VALUE`` (0.6), c-bets
    half its air on the flop with the initiative, semi-bluffs strong draws, bluffs a
    fifth of its weakest rivers after betting the turn; facing a bet it raises equity
    over 0.78 and calls when its equity beats the price.

    Draw: opens jacks or better with three or more players behind, any pair or a
    four-flush later; raises two pair or better; calls with jacks or better and with
    four-card draws at a price; after the draw bets equity over 0.6 against the
    opponents' draw counts and bluffs 15% of its missed hands when the opponent drew three.
    """

    name = "tight_aggressive"
    VALUE = 0.6
    CHART: ClassVar[Chart | None] = Chart(
        open_tight=0.15,
        open_loose=0.45,
        open_size=3.0,
        call=0.22,
        three_bet=0.06,
        bluff_3bet=0.15,
        four_bet=0.025,
        call_3bet=0.07,
    )

    def postflop(self, spot: Spot) -> Decision:
        sit, rng = spot.sit, spot.rng
        ranges = [weighted_range(spot, o.seat) for o in sit.opponents]
        eq = spot.equity(ranges)
        strong_draw = sit.street != Street.RIVER and spot.draws().strong
        if spot.facing:
            if strong_draw and spot.pot_odds < 0.3 and spot.i_checked() and rng.random() < 0.3:
                return spot.sized(0.9)
            margin = -0.05 if strong_draw else 0.0
            return spot.defend(eq, 0.78, margin)
        if eq > self.VALUE:
            return spot.sized(0.66)
        if strong_draw and rng.random() < 0.6:
            return spot.sized(0.6)
        if spot.was_aggressor() and sit.street == Street.FLOP and rng.random() < 0.5:
            return spot.sized(0.5)
        river_bluff = sit.street == Street.RIVER and spot.barrels() >= 2 and eq < 0.2
        if river_bluff and rng.random() < 0.2:
            return spot.sized(0.7)
        return spot.fold()

    def draw(self, spot: Spot) -> Decision:
        sit, rng = spot.sit, spot.rng
        if spot.first_round:
            hand = spot.hand()
            rank = draw_rank(hand)
            if rank >= 4:
                return spot.raise_()
            if not spot.facing:
                late = spot.behind <= 2
                if rank >= 3 or (late and (rank == 2 or bool(hand.flush_draw))):
                    return spot.raise_()
                return spot.fold()
            if rank >= 3 and spot.raises == 1:
                return spot.call()
            if rank == 1 and spot.pot_odds < 0.25:
                return spot.call()
            return spot.fold()
        eq = spot.equity()
        if spot.facing:
            return spot.defend(eq, 0.8)
        if eq > self.VALUE:
            return spot.raise_()
        drew_three = all(sit.draws.get(o.seat, 0) >= 3 for o in sit.opponents)
        if drew_three and eq < 0.3 and rng.random() < 0.15:
            return spot.raise_()
        return spot.fold()
