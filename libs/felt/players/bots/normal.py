"""The normal bot: a solid rule-based player.

Hold'em: starting ranges by position (wider on the button, tighter early and
multiway), 3-bets and defends by price, push/fold when short (stack depth);
after the flop it grades its hand relative to the board (top pair good
kicker, overpair, two pair...), discounts one pair on wet or paired boards,
values draws by their outs against the pot odds, bets for value and
protection, and gets all-in with strong hands at a low stack-to-pot ratio.

Draw: hand strength (jacks or better to open, smaller pairs in position or
heads-up), the number of opponents, four-flushes and open-enders priced by pot
odds, the textbook discards, and after the draw it reads the opponents' draw
counts (standing pat means strength, drawing three means a pair).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from felt.core.evaluator import HandCategory, category_of, evaluate
from felt.core.rules.config import Variant
from felt.core.rules.events import Event, Street
from felt.core.rules.legal import LegalActions
from felt.core.rules.views import HandView
from felt.players.bots.base import (
    Decision,
    Situation,
    all_in,
    bet_to,
    check_or_call,
    check_or_fold,
    discard,
    pot_bet_to,
    situation,
)
from felt.players.bots.drawhand import analyse, standard_keep
from felt.players.bots.holdem import Made, draws, made_hand, preflop_percentile, texture
from felt.players.bots.opponents import TableStats

JACK = 9

# Share of hands to open first in, by how many seats still act behind (blinds included).
_OPEN = {0: 0.55, 1: 0.55, 2: 0.40, 3: 0.27, 4: 0.20, 5: 0.16}
_OPEN_EARLY = 0.12


class NormalBot:
    """Position, stack depth, pot odds, texture and ranges; see the module docstring."""

    name = "normal"

    def decide(
        self,
        view: HandView,
        history: Sequence[Event],
        legal: LegalActions,
        rng: random.Random,
        table: TableStats | None = None,
    ) -> Decision:
        sit = situation(view, history, legal)
        if legal.max_discard is not None:
            return discard(legal, sit.hole, standard_keep(sit.hole))
        if sit.variant == Variant.DRAW5:
            if sit.street == Street.FIRST_BET:
                return self._draw_first(view, sit, legal, rng)
            return self._draw_second(sit, legal, rng)
        if sit.street == Street.PREFLOP:
            return self._preflop(view, sit, legal, rng)
        return self._postflop(sit, legal, rng)

    # ------------------------------------------------------------------ hold'em

    def _preflop(
        self, view: HandView, sit: Situation, legal: LegalActions, rng: random.Random
    ) -> Decision:
        pct = preflop_percentile(sit.hole)
        bb = sit.unit
        n = len(view.seats)
        index = [s.seat for s in view.seats].index(sit.seat)
        heads_up = n == 2
        # Seats acting after us preflop: in dealing order the blinds come first.
        if heads_up:
            behind = 1 if index == 1 else 0  # the button (small blind) acts first
        elif index <= 1:
            behind = 1 - index  # small blind: the big blind is behind
        else:
            behind = n + 1 - index  # later seats up to the button, then both blinds
        raises = sit.bets_on(Street.PREFLOP)
        eff_bb = sit.effective_stack / bb
        limpers = sum(1 for a in sit.on(Street.PREFLOP) if a.kind == "call")

        if eff_bb <= 15:  # push or fold: no room to play after the flop
            if raises == 0:
                push = min(0.8, _OPEN.get(behind, _OPEN_EARLY) * 1.3)
                return all_in(legal) if pct <= push else check_or_fold(legal)
            return all_in(legal) if pct <= 0.12 else check_or_fold(legal)

        if raises == 0:
            if sit.to_call == 0:  # big blind's option after limps
                return bet_to(legal, (3 + limpers) * bb) if pct <= 0.2 else check_or_call(legal)
            open_pct = _OPEN.get(behind, _OPEN_EARLY) if limpers == 0 else 0.15
            if pct <= open_pct:
                size = (2.5 if heads_up else 3.0) + limpers
                return bet_to(legal, size * bb)
            if limpers and pct <= 0.3:
                return check_or_call(legal)
            return check_or_fold(legal)

        price = sit.to_call / bb
        current = sit.bet + sit.to_call
        if raises == 1:
            three_bet = 0.10 if heads_up else 0.05
            if pct <= three_bet:
                return bet_to(legal, 3 * current + (0 if sit.in_position else current))
            call_pct = 0.45 if price <= 2 else 0.30 if price <= 4 else 0.15
            if not heads_up:
                call_pct *= 0.6
            if pct <= call_pct or (pct <= three_bet * 2.5 and rng.random() < 0.5):
                return check_or_call(legal)
            return check_or_fold(legal)
        if raises == 2:
            if pct <= 0.03:
                return bet_to(legal, 2.5 * current) if eff_bb > 40 else all_in(legal)
            if pct <= 0.10 and sit.to_call <= 0.25 * sit.effective_stack + sit.to_call:
                return check_or_call(legal)
            return check_or_fold(legal)
        if pct <= 0.025:
            return all_in(legal)
        if pct <= 0.04:
            return check_or_call(legal)
        return check_or_fold(legal)

    def _postflop(self, sit: Situation, legal: LegalActions, rng: random.Random) -> Decision:
        made = made_hand(sit.hole, sit.board)
        tex = texture(sit.board)
        dr = draws(sit.hole, sit.board)
        level = int(made)
        if tex.wet and Made.TOP_PAIR_WEAK <= made <= Made.TRIPS:
            level -= 1
        if tex.paired and made == Made.TWO_PAIR:
            level -= 1
        if sit.opponent_count >= 2 and made <= Made.OVERPAIR:
            level -= 1
        river = sit.street == Street.RIVER
        strong = level >= Made.TWO_PAIR
        good = level >= Made.TOP_PAIR_GOOD
        fair = level >= Made.WEAK_PAIR
        drawing = dr.strong and not river

        if sit.to_call == 0:
            if strong:
                return all_in(legal) if sit.spr < 1.5 else pot_bet_to(sit, legal, 0.75)
            if good:
                return pot_bet_to(sit, legal, 0.6)
            if drawing and rng.random() < (0.5 if sit.in_position else 0.35):
                return pot_bet_to(sit, legal, 0.6)
            aggressor = sit.last_aggressor(Street.PREFLOP) == sit.seat
            if (
                sit.street == Street.FLOP
                and aggressor
                and sit.opponent_count == 1
                and not tex.wet
                and rng.random() < 0.6
            ):
                return pot_bet_to(sit, legal, 0.5)
            if fair and sit.in_position and not river and rng.random() < 0.4:
                return pot_bet_to(sit, legal, 0.33)
            if river and not fair and sit.in_position and rng.random() < 0.1:
                return pot_bet_to(sit, legal, 0.6)
            return check_or_fold(legal)

        po = sit.pot_odds
        if strong:
            if sit.spr < 2.5 or sit.to_call >= sit.stack:
                return all_in(legal)
            return pot_bet_to(sit, legal, 0.9)
        if good:
            if sit.spr < 1.2:
                return all_in(legal)
            return check_or_call(legal) if po <= 0.42 else check_or_fold(legal)
        if fair:
            limit = 0.25 if river else 0.3
            return check_or_call(legal) if po <= limit else check_or_fold(legal)
        if drawing:
            cards_to_come = 2 if sit.street == Street.FLOP and sit.to_call >= sit.stack else 1
            hit = dr.outs * (0.04 if cards_to_come == 2 else 0.02)
            if sit.street == Street.FLOP and rng.random() < 0.15:
                return pot_bet_to(sit, legal, 1.0)
            return check_or_call(legal) if hit + 0.06 >= po else check_or_fold(legal)
        return check_or_fold(legal)

    # ------------------------------------------------------------------ draw

    def _draw_first(
        self, view: HandView, sit: Situation, legal: LegalActions, rng: random.Random
    ) -> Decision:
        info = analyse(sit.hole)
        cat = info.category
        opps = sit.opponent_count
        bets = sit.bets_on(Street.FIRST_BET)
        po = sit.pot_odds
        late = sit.in_position or sit.order.index(sit.seat) >= len(sit.order) - 2
        if cat >= HandCategory.TWO_PAIR:
            if cat >= HandCategory.TWO_PAIR and bets >= 3 and cat == HandCategory.TWO_PAIR:
                return check_or_call(legal)
            return bet_to(legal, sit.bet + sit.to_call + sit.unit)
        if cat == HandCategory.PAIR:
            opener = JACK if opps <= 2 or late else JACK + 2  # jacks or better; kings multiway
            if opps == 1:
                opener = 6 if late else 8
            high = info.pair_rank >= opener
            if sit.to_call == 0:
                return bet_to(legal, sit.unit) if high else check_or_call(legal)
            if bets == 1:
                if info.pair_rank >= 12 and opps == 1:
                    return bet_to(legal, sit.bet + sit.to_call + sit.unit)
                return check_or_call(legal) if high or po <= 0.3 else check_or_fold(legal)
            return check_or_call(legal) if info.pair_rank >= 11 else check_or_fold(legal)
        drawing = bool(info.flush_draw or info.straight_draw)
        if drawing:
            if sit.to_call == 0:
                return (
                    bet_to(legal, sit.unit) if late and rng.random() < 0.3 else check_or_call(legal)
                )
            need = 0.22 if info.flush_draw else 0.2
            return check_or_call(legal) if po <= need + 0.08 * (opps - 1) else check_or_fold(legal)
        # Nothing: steal from late position heads-up with high cards, else give up.
        high_card = max(c >> 2 for c in sit.hole)
        if sit.to_call == 0 and late and opps == 1 and high_card >= 11 and rng.random() < 0.35:
            return bet_to(legal, sit.unit)
        if sit.to_call and opps == 1 and high_card == 12 and po <= 0.25 and bets == 1:
            return check_or_call(legal)
        return check_or_fold(legal)

    def _draw_second(self, sit: Situation, legal: LegalActions, rng: random.Random) -> Decision:
        value = evaluate(sit.hole)
        cat = category_of(value)
        bets = sit.bets_on(Street.SECOND_BET)
        opp_draws = [sit.draws.get(o.seat, 3) for o in sit.opponents]
        fewest = min(opp_draws, default=3)
        # The hand the most dangerous opponent is credited with, from how many they drew.
        credited = {
            0: HandCategory.STRAIGHT,
            1: HandCategory.TWO_PAIR,
            2: HandCategory.THREE_OF_A_KIND,
            3: HandCategory.PAIR,
        }.get(fewest, HandCategory.HIGH_CARD)
        po = sit.pot_odds
        margin = int(cat) - int(credited)
        pair_rank = analyse(sit.hole).pair_rank
        if sit.to_call == 0:
            if (
                margin >= 1
                or (margin == 0 and cat >= HandCategory.TWO_PAIR)
                or (cat == HandCategory.PAIR and pair_rank >= 11 and credited <= HandCategory.PAIR)
            ):
                return bet_to(legal, sit.unit)
            bluff_spot = cat == HandCategory.HIGH_CARD and fewest >= 3 and sit.in_position
            if bluff_spot and rng.random() < 0.12:
                return bet_to(legal, sit.unit)
            return check_or_fold(legal)
        if margin >= 2 or (margin >= 1 and cat >= HandCategory.THREE_OF_A_KIND and bets < 3):
            return bet_to(legal, sit.bet + sit.to_call + sit.unit)
        if margin >= 1:
            return check_or_call(legal)
        if margin == 0 and (po <= 0.3 or cat >= HandCategory.TWO_PAIR):
            return check_or_call(legal)
        if cat >= HandCategory.PAIR and po <= 0.17 and bets == 1:
            return check_or_call(legal)
        return check_or_fold(legal)
