"""Local best response (LBR): a lower bound on how much a bot can be beaten, heads-up.

LBR (Lisý and Bowling, 2017) plays against the bot and, at each of its own decisions,
takes the action with the highest expected value against the bot's own policy: it
keeps a belief over the bot's hidden cards, a set of seeded particles weighted by how
likely the bot's public actions were with each (the bot is asked what it would do
holding them, from the view it had), and values a call by its equity against that
belief and a bet or raise by how often the bot folds to it (asked the same way) plus
its equity against the hands that continue. After it acts it assumes no further
betting (check or call down), as the published LBR does. Its winnings are an
estimate, from below, of the bot's exploitability.

Each deal is played twice with the seats swapped (duplicate); a Hold'em pot all-in
before the river is scored by its expected value over the cards to come (both hands
known once the hand is over); the result is the mean per hand with a 95% interval,
in milli big blinds (Hold'em) or milli big bets (Draw) per hand. LBR only reads its own
cards, the public record and the bot's answers to hypothetical views; it never looks at
the bot's real cards while it plays.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace

from felt.core.cards import Card
from felt.core.evaluator import evaluate, evaluate_many
from felt.core.rules.commands import Act, ActionKind, Discard, StartHand
from felt.core.rules.config import Variant
from felt.core.rules.engine import execute
from felt.core.rules.events import CardsDrawn, Event, HoleCardsDealt
from felt.core.rules.legal import LegalActions, legal_actions
from felt.core.rules.views import HandView, redact_all, view_for
from felt.players.bots import get_bot
from felt.players.bots.base import Bot, all_in, bet_to, check_or_call, pot_bet_to, situation
from felt.players.bots.drawhand import standard_keep
from felt_dev.ladder import Z95, _derive, deck_for, hand_id_for, hand_setup, master_key, unit_of


@dataclass
class Particle:
    """One guess at the bot's cards: as dealt, what it threw and drew (Draw), and its weight."""

    dealt: tuple[Card, ...]
    thrown: tuple[Card, ...] = ()
    drawn: tuple[Card, ...] = ()
    weight: float = 1.0

    @property
    def hand(self) -> tuple[Card, ...]:
        if not self.drawn and not self.thrown:
            return self.dealt
        return tuple(c for c in self.dealt if c not in self.thrown) + self.drawn


@dataclass(frozen=True, slots=True)
class Estimate:
    """LBR's winnings against one bot in one game: per hand, in thousandths of the unit."""

    bot: str
    variant: Variant
    hands: int
    mean: float
    half_width: float

    def line(self) -> str:
        unit = "mbb/hand" if self.variant == Variant.NLHE else "mBB/hand"
        return (
            f"{self.bot:>7} {self.variant.value:>6}: {self.mean:+8.0f} {unit} "
            f"[{self.mean - self.half_width:+.0f}, {self.mean + self.half_width:+.0f}] "
            f"over {self.hands} hands"
        )


def _hypothetical(
    view: HandView, history: Sequence[Event], seat: int, p: Particle
) -> tuple[HandView, list[Event]]:
    """The view and history the bot would have had holding particle ``p``."""
    seats = tuple(replace(s, cards=p.hand) if s.seat == seat else s for s in view.seats)
    events: list[Event] = []
    for e in history:
        if isinstance(e, HoleCardsDealt) and e.seat == seat:
            e = replace(e, cards=p.dealt)
        elif isinstance(e, CardsDrawn) and e.seat == seat:
            # Always the particle's own draw: the bot's real discards must not reach it.
            e = replace(e, discarded=p.thrown, drawn=p.drawn)
        events.append(e)
    return replace(view, seats=seats), events


class LocalBestResponse:
    """The LBR player for one hand at a time; ``particles`` bounds the belief's size."""

    def __init__(self, bot: Bot, particles: int, rollouts: int, rng: random.Random) -> None:
        self.bot = bot
        self.size = particles
        self.rollouts = rollouts
        self.rng = rng
        self.belief: list[Particle] = []
        self.drawn = False

    def start(self, mine: Sequence[Card], cards_each: int) -> None:
        deck = [c for c in range(52) if c not in mine]
        self.belief = [Particle(tuple(self.rng.sample(deck, cards_each))) for _ in range(self.size)]
        self.drawn = False

    def _known(self, view: HandView, me: int) -> set[Card]:
        seen = set(view.board)
        for s in view.seats:
            if s.seat == me:
                seen.update(c for c in s.cards if c is not None)
        return seen

    def prune(self, view: HandView, me: int) -> None:
        """Rule out particles holding a card now seen; start afresh if none is left."""
        known = self._known(view, me)
        for p in self.belief:
            if known & set(p.hand):
                p.weight = 0.0
        if not any(p.weight > 0 for p in self.belief):
            deck = [c for c in range(52) if c not in known]
            size = len(self.belief[0].hand) if self.belief else 2
            self.belief = [Particle(tuple(self.rng.sample(deck, size))) for _ in self.belief]

    def observe(self, state: object, history: list[Event], seat: int, actual: object) -> None:
        """Re-weight the belief by how likely the bot's real move was with each particle."""
        view = view_for(state, seat)  # type: ignore[arg-type]
        self.prune(view_for(state, 1 - seat), 1 - seat)  # type: ignore[arg-type]
        legal = legal_actions(state)  # type: ignore[arg-type]
        assert legal is not None
        redacted = redact_all(history, seat)
        for i, p in enumerate(self.belief):
            if p.weight <= 0:
                continue
            hv, hh = _hypothetical(view, redacted, seat, p)
            move = self.bot.decide(hv, hh, legal, random.Random(self.rng.getrandbits(32) + i))
            if isinstance(actual, Discard):
                if isinstance(move, Discard) and len(move.cards) == len(actual.cards):
                    p.thrown = tuple(move.cards)
                else:
                    p.weight = 0.0
            elif not isinstance(move, Act) or not isinstance(actual, Act):
                p.weight = 0.0
            elif _same(move, actual):
                continue
            else:
                p.weight *= 0.02  # the bot mixes; never rule a hand out on one action

    def after_draw(self, view: HandView, me: int) -> None:
        """Give each particle replacement cards for what it threw (Draw)."""
        known = self._known(view, me)
        for p in self.belief:
            if p.thrown and not p.drawn:
                free = [c for c in range(52) if c not in known and c not in p.dealt]
                p.drawn = tuple(self.rng.sample(free, len(p.thrown)))

    def _equity(self, mine: tuple[Card, ...], board: tuple[Card, ...], ws: list[float]) -> float:
        """Showdown equity against the belief weighted by ``ws`` (check-down assumed)."""
        total = sum(ws)
        if total <= 0:
            return 0.5
        score = 0.0
        for p, w in zip(self.belief, ws, strict=True):
            if w <= 0:
                continue
            score += w * self._versus(mine, board, p)
        return score / total

    def _versus(self, mine: tuple[Card, ...], board: tuple[Card, ...], p: Particle) -> float:
        theirs = p.hand
        if set(theirs) & (set(mine) | set(board)):
            return 0.5
        if len(mine) == 5:  # Draw
            if self.drawn:
                return _cmp(evaluate(mine), evaluate(theirs))
            return self._draw_rollout(mine, theirs)
        used = set(mine) | set(board) | set(theirs)
        free = [c for c in range(52) if c not in used]
        a: list[list[int]] = []
        b: list[list[int]] = []
        for _ in range(self.rollouts):
            rest = list(board) + self.rng.sample(free, 5 - len(board))
            a.append([*mine, *rest])
            b.append([*theirs, *rest])
        va, vb = evaluate_many(a), evaluate_many(b)
        return sum(_cmp(x, y) for x, y in zip(va, vb, strict=True)) / self.rollouts

    def _draw_rollout(self, mine: tuple[Card, ...], theirs: tuple[Card, ...]) -> float:
        used = set(mine) | set(theirs)
        free = [c for c in range(52) if c not in used]
        keep_a = standard_keep(mine)
        keep_b = standard_keep(theirs)
        total = 0.0
        for _ in range(self.rollouts):
            fresh = self.rng.sample(free, 10 - len(keep_a) - len(keep_b))
            a = (*keep_a, *fresh[: 5 - len(keep_a)])
            b = (*keep_b, *fresh[5 - len(keep_a) :])
            total += _cmp(evaluate(a), evaluate(b))
        return total / self.rollouts

    def decide(self, state: object, history: list[Event], me: int, bot_seat: int) -> Act | Discard:
        view = view_for(state, me)  # type: ignore[arg-type]
        legal = legal_actions(state)  # type: ignore[arg-type]
        assert legal is not None
        mine = tuple(c for c in view.seat(me).cards if c is not None)
        self.prune(view, me)
        if legal.max_discard is not None:
            keep = standard_keep(mine)
            throw = tuple(c for c in mine if c not in keep)[: legal.max_discard]
            return Discard(me, throw)
        sit = situation(view, redact_all(history, me), legal)
        ws = [p.weight for p in self.belief]
        equity = self._equity(mine, view.board, ws)
        pot = view.pot
        to_call = sit.to_call
        options: list[tuple[float, Act]] = []
        if legal.call_amount is not None:
            options.append((equity * (pot + to_call) - to_call, check_or_call(legal)))
            options.append((0.0, Act(me, ActionKind.FOLD)))
        else:
            options.append((equity * pot, check_or_call(legal)))
        for bet in self._bets(sit, legal):
            ev = self._bet_value(state, history, bet, bot_seat, pot, mine, view.board)
            if ev is not None:
                options.append((ev, bet))
        return max(options, key=lambda o: o[0])[1]

    def _bets(self, sit: object, legal: LegalActions) -> list[Act]:
        if legal.min_raise_to is None:
            return []
        if legal.max_raise_to == legal.min_raise_to:
            return [bet_to(legal, legal.min_raise_to)]
        out = [pot_bet_to(sit, legal, 1.0), all_in(legal)]  # type: ignore[arg-type]
        return [b for i, b in enumerate(out) if b not in out[:i]]

    def _bet_value(
        self,
        state: object,
        history: list[Event],
        bet: Act,
        bot_seat: int,
        pot: int,
        mine: tuple[Card, ...],
        board: tuple[Card, ...],
    ) -> float | None:
        after, events = execute(state, bet)  # type: ignore[arg-type]
        legal = legal_actions(after)
        if legal is None or legal.seat != bot_seat:
            return None
        view = view_for(after, bot_seat)
        redacted = redact_all([*history, *events], bot_seat)
        me = bet.seat
        cost = view.seat(me).bet - view_for(state, me).seat(me).bet  # type: ignore[arg-type]
        theirs_more = legal.call_amount or 0
        fold_w = 0.0
        call_ws: list[float] = []
        for i, p in enumerate(self.belief):
            if p.weight <= 0:
                call_ws.append(0.0)
                continue
            hv, hh = _hypothetical(view, redacted, bot_seat, p)
            move = self.bot.decide(hv, hh, legal, random.Random(self.rng.getrandbits(32) + i))
            folds = isinstance(move, Act) and move.kind == ActionKind.FOLD
            fold_w += p.weight if folds else 0.0
            call_ws.append(0.0 if folds else p.weight)
        total = sum(p.weight for p in self.belief)
        if total <= 0:
            return None
        fold = fold_w / total
        equity = self._equity(mine, board, call_ws) if fold < 1 else 0.5
        final = pot + cost + theirs_more
        return fold * pot + (1 - fold) * (equity * final - cost)


def _all_in_value(
    state: object, me: int, board: tuple[Card, ...], rng: random.Random, runouts: int = 400
) -> float:
    """LBR's expected net of a Hold'em pot all-in before the river, over the cards to come.

    The usual variance reduction for all-ins (the outcome's mean given both hands): it
    scores the decisions, not the luck of the runout, and stays unbiased.
    """
    seats = {s.seat: s for s in state.seats}  # type: ignore[attr-defined]
    mine, theirs = seats[me].hole, seats[1 - me].hole
    pot = sum(s.committed for s in seats.values())
    used = set(mine) | set(theirs) | set(board)
    free = [c for c in range(52) if c not in used]
    a: list[list[int]] = []
    b: list[list[int]] = []
    for _ in range(runouts):
        rest = [*board, *rng.sample(free, 5 - len(board))]
        a.append([*mine, *rest])
        b.append([*theirs, *rest])
    va, vb = evaluate_many(a), evaluate_many(b)
    equity = sum(_cmp(x, y) for x, y in zip(va, vb, strict=True)) / runouts
    return float(equity * pot - seats[me].committed)


def _same(a: Act, b: Act) -> bool:
    aggressive = (ActionKind.BET, ActionKind.RAISE)
    if a.kind in aggressive and b.kind in aggressive:
        return True
    return a.kind == b.kind


def _cmp(a: int, b: int) -> float:
    return 1.0 if a > b else 0.0 if a < b else 0.5


def play(
    variant: Variant, bot_name: str, deals: int, seed: int, particles: int = 24, rollouts: int = 8
) -> Estimate:
    """LBR against ``bot_name`` heads-up over ``deals`` duplicate deals (twice as many hands)."""
    key = master_key(seed)
    unit = unit_of(variant)
    per_deal: list[float] = []
    cards_each = 2 if variant == Variant.NLHE else 5
    for deal in range(deals):
        total = 0.0
        for lbr_seat in (0, 1):
            bot_seat = 1 - lbr_seat
            label = f"lbr:{bot_name}:{variant.value}:{deal}:{lbr_seat}"
            bot = get_bot(bot_name)
            lbr = LocalBestResponse(bot, particles, rollouts, random.Random(_derive(key, label)))
            bot_rng = random.Random(_derive(key, label + ":bot"))
            setup = hand_setup(
                variant, hand_id_for(key, label), deck_for(variant, key, deal), deal % 2
            )
            state, events = execute(None, StartHand(setup))
            history: list[Event] = list(events)
            start = {s.seat: s.stack for s in setup.seats}
            lbr_started = False
            allin_board: tuple[Card, ...] | None = None
            while not state.ended:
                legal = legal_actions(state)
                assert legal is not None
                if not lbr_started:
                    mine = tuple(
                        c for c in view_for(state, lbr_seat).seat(lbr_seat).cards if c is not None
                    )
                    lbr.start(mine, cards_each)
                    lbr_started = True
                if legal.seat == lbr_seat:
                    command: Act | Discard = lbr.decide(state, history, lbr_seat, bot_seat)
                else:
                    view = view_for(state, bot_seat)
                    command = bot.decide(view, redact_all(history, bot_seat), legal, bot_rng)
                    lbr.observe(state, history, bot_seat, command)
                board_before = state.board
                state, events = execute(state, command)
                history.extend(events)
                if state.ended and len(state.board) > len(board_before):
                    allin_board = board_before
                if any(isinstance(e, CardsDrawn) for e in events):
                    drew = [e for e in history if isinstance(e, CardsDrawn)]
                    if len(drew) == 2:
                        lbr.drawn = True
                        lbr.after_draw(view_for(state, lbr_seat), lbr_seat)
            if allin_board is not None:
                total += _all_in_value(state, lbr_seat, allin_board, lbr.rng)
            else:
                stacks = {s.seat: s.stack for s in state.seats}
                total += stacks[lbr_seat] - start[lbr_seat]
        per_deal.append(total / 2 / unit * 1000.0)
    mean = sum(per_deal) / len(per_deal)
    var = sum((x - mean) ** 2 for x in per_deal) / max(len(per_deal) - 1, 1)
    return Estimate(bot_name, variant, 2 * deals, mean, Z95 * math.sqrt(var / len(per_deal)))
