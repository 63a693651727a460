"""Local best response (LBR): a lower bound on how much a bot can be beaten, heads-up.

LBR (Lisý and Bowling, 2017) plays against the bot and, at each of its own decisions,
takes the action with the highest expected value against the bot's own policy: it
keeps a belief over the bot's hidden cards, a set of seeded particles weighted by how
likely the bot's public actions were with each (the bot is asked what it would do
holding them, from the view it had), and values a call by its equity against that
belief and a bet or raise by how often the bot folds to it (asked the same way) plus
its equity against the hands that continue. After it acts it assumes no further
betting (check or call down), as the published LBR does. Its winnings are an
estimate, from below, of the bot's exploitability. It bets or raises half the pot, the
pot or all-in (``sizes``). In Hold'em its belief starts with one particle per
starting-hand class (169, weighted by their deals) and is drawn afresh, weighted by
every bot action so far, when those actions wear it down (``replenish``): a belief of a
few lucky particles made it shove into ranges it had not sampled.

Each deal is played twice with the seats swapped (duplicate), on the same decks and
with the same random streams whichever bot it plays (common random numbers), so two
bots' results can be compared deal by deal (``paired``). A Hold'em hand is scored with
the luck of the board taken out (``board_luck``): once the hand is over, both hands are
known, and each board card's effect on LBR's equity, times the pot it fell into, is
subtracted. Its mean is zero whatever the players do (a board card is uniform over the
unseen cards given everything before it), so the estimate stays unbiased; a pot all-in
before the river is so scored by its expected value over the cards to come. The result
is the mean per hand with a 95% interval, in milli big blinds (Hold'em) or milli big
bets (Draw) per hand. LBR only reads its own cards, the public record and the bot's
answers to hypothetical views; it never looks at the bot's real cards while it plays.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations

from felt.core.cards import Card, rank_of, suit_of
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
class HandRecord:
    """One hand of an LBR run, for the breakdown of its winnings by spot (``breakdown``).

    ``net`` is what the hand adds to the estimate (board luck out, thousandths of the
    unit) and ``chips`` what LBR actually won (same unit); ``street`` and ``action`` are
    those of LBR's last bet or raise of the hand (``"none"``/``"check/call"`` if it
    made none), ``facing`` how many bets and raises of the bot's on that street it
    answered, ``bot_raises`` how many the bot made in the hand; ``end`` is how the
    hand ended: ``"bot folds"``, ``"LBR folds"`` or ``"showdown"`` (all-ins included).
    """

    deal: int
    button: bool
    street: str
    action: str
    end: str
    net: float
    chips: float
    # The bot's bets and raises on the street of LBR's last bet before it (0: LBR bet
    # first or raised only the blinds), and in the whole hand.
    facing: int = 0
    bot_raises: int = 0


@dataclass(frozen=True, slots=True)
class BetRecord:
    """One bet or raise of LBR's: where, its size, whether the bot's answer was a fold,
    and the fold rate LBR's belief predicted for it."""

    street: str
    action: str
    folded: bool
    predicted: float


@dataclass(frozen=True, slots=True)
class Estimate:
    """LBR's winnings against one bot in one game: per hand, in thousandths of the unit."""

    bot: str
    variant: Variant
    hands: int
    mean: float
    half_width: float
    per_deal: tuple[float, ...] = field(default=(), repr=False)
    # The chips LBR actually won, deal by deal, with no correction (to show what it removes).
    raw: tuple[float, ...] = field(default=(), repr=False)
    # Hand by hand and bet by bet, for ``breakdown`` and ``fold_rates``.
    records: tuple[HandRecord, ...] = field(default=(), repr=False)
    bets: tuple[BetRecord, ...] = field(default=(), repr=False)

    def line(self) -> str:
        unit = "mbb/hand" if self.variant == Variant.NLHE else "mBB/hand"
        return (
            f"{self.bot:>11} {self.variant.value:>6}: {self.mean:+8.0f} {unit} "
            f"[{self.mean - self.half_width:+.0f}, {self.mean + self.half_width:+.0f}] "
            f"over {self.hands} hands"
        )

    def raw_line(self) -> str:
        """The same from the chips won alone (no all-in or board-luck correction)."""
        if len(self.raw) < 2:
            return ""
        mean, half = _mean_interval(self.raw)
        return f"chips alone {mean:+.0f} [{mean - half:+.0f}, {mean + half:+.0f}]"


def _mean_interval(xs: Sequence[float]) -> tuple[float, float]:
    mean = sum(xs) / len(xs)
    var = sum((x - mean) ** 2 for x in xs) / max(len(xs) - 1, 1)
    return mean, Z95 * math.sqrt(var / len(xs))


def paired(a: Estimate, b: Estimate) -> Estimate:
    """LBR's winnings against ``a`` minus against ``b``, deal by deal, with a 95% interval.

    Both must have been played on the same deals and seeds (``play`` with the same
    ``deals`` and ``seed``): the shared cards' luck then largely cancels in each deal's
    difference, and the interval is that of the mean difference, not of two means.
    """
    if a.variant != b.variant or len(a.per_deal) != len(b.per_deal) or not a.per_deal:
        raise ValueError("paired estimates need the same game and the same deals")
    diffs = [x - y for x, y in zip(a.per_deal, b.per_deal, strict=True)]
    raw = tuple(x - y for x, y in zip(a.raw, b.raw, strict=True))
    mean, half = _mean_interval(diffs)
    return Estimate(f"{a.bot}-{b.bot}", a.variant, a.hands, mean, half, tuple(diffs), raw)


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

    def __init__(
        self,
        bot: Bot,
        particles: int,
        rollouts: int,
        rng: random.Random,
        sizes: Sequence[float] = (1.0,),
        refill: int = 0,
    ) -> None:
        self.bot = bot
        self.sizes = tuple(sizes)
        self.refill = refill
        self.spots: list[tuple[HandView, list[Event], LegalActions, Act]] = []
        self.size = particles
        self.rollouts = rollouts
        self.rng = rng
        self.belief: list[Particle] = []
        self.drawn = False
        self.choice: tuple[str, float] | None = None
        self._fold = 0.0

    def start(self, mine: Sequence[Card], cards_each: int) -> None:
        deck = [c for c in range(52) if c not in mine]
        self.drawn = False
        self.spots = []
        if cards_each == 2 and self.refill > 0:
            self.belief = _stratified(deck, self.rng)
            return
        self.belief = [Particle(tuple(self.rng.sample(deck, cards_each))) for _ in range(self.size)]

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
        if isinstance(actual, Act):
            self.spots.append((view, redacted, legal, actual))
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

    def _likelihood(self, hand: tuple[Card, ...], seat: int) -> float:
        """How likely the bot's moves so far were holding ``hand`` (``observe``'s weights)."""
        weight = 1.0
        p = Particle(hand)
        for view, redacted, legal, actual in self.spots:
            hv, hh = _hypothetical(view, redacted, seat, p)
            move = self.bot.decide(hv, hh, legal, random.Random(self.rng.getrandbits(32)))
            if not isinstance(move, Act):
                return 0.0
            if not _same(move, actual):
                weight *= 0.02
        return weight

    def replenish(self, view: HandView, me: int, bot_seat: int) -> None:
        """Hold'em: when the belief has worn down to a few hands, draw it afresh.

        Sequential importance sampling loses its particles when the bot's actions rule
        most of them out (after a re-raise, one or two of 16 may be left), and a best
        response to one or two guessed hands shoves into the real range. When the
        effective number of particles (sum of weights squared over the sum of squares)
        falls below half of the belief's size, ``refill`` fresh hands are drawn from
        the unseen cards, weighted by the same likelihood of every bot action so far, and
        the belief becomes ``size`` of the old and new particles drawn by weight (with
        equal weights after). Both sets are weighted samples of the same posterior, so
        the belief stays the one LBR assumes, only less noisy. The same resampling cuts
        the 169-particle stratified start (``_stratified``) down to ``size`` once the
        bot has acted.
        """
        if self.refill <= 0 or self.drawn or not self.spots or not self.belief:
            return
        if len(self.belief[0].dealt) != 2:
            return
        total = sum(p.weight for p in self.belief)
        square = sum(p.weight * p.weight for p in self.belief)
        worn = total <= 0 or total * total / square < self.size / 2
        if not worn and len(self.belief) <= self.size:
            return
        known = self._known(view, me)
        deck = [c for c in range(52) if c not in known]
        pool = [p for p in self.belief if p.weight > 0]
        for _ in range(self.refill if worn else 0):
            hand = tuple(self.rng.sample(deck, 2))
            w = self._likelihood(hand, bot_seat)
            if w > 0:
                pool.append(Particle(hand, weight=w))
        mass = sum(p.weight for p in pool)
        if mass <= 0:
            return
        # Systematic resampling: ``size`` draws by weight, duplicates merged.
        step = mass / self.size
        u = self.rng.random() * step
        chosen: dict[tuple[Card, ...], int] = {}
        acc = 0.0
        for p in pool:
            acc += p.weight
            while u < acc and sum(chosen.values()) < self.size:
                chosen[p.dealt] = chosen.get(p.dealt, 0) + 1
                u += step
        self.belief = [Particle(h, weight=float(n)) for h, n in chosen.items()]

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
        self.choice = None
        mine = tuple(c for c in view.seat(me).cards if c is not None)
        self.prune(view, me)
        self.replenish(view, me, bot_seat)
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
        spots: dict[Act, tuple[str, float]] = {}
        for label, bet in self._bets(sit, legal, limit=len(mine) == 5):
            ev = self._bet_value(state, history, bet, bot_seat, pot, mine, view.board)
            if ev is not None:
                options.append((ev, bet))
                spots[bet] = (label, self._fold)
        choice = max(options, key=lambda o: o[0])[1]
        # What the breakdown reads: the size LBR chose and the fold rate it expected.
        self.choice = spots.get(choice)
        return choice

    def _bets(self, sit: object, legal: LegalActions, limit: bool) -> list[tuple[str, Act]]:
        """LBR's bets or raises, each with its size's name (``bet_label``)."""
        if legal.min_raise_to is None:
            return []
        if legal.max_raise_to == legal.min_raise_to:
            return [("fixed" if limit else "all-in", bet_to(legal, legal.min_raise_to))]
        shove = all_in(legal)
        out = [(bet_label(f), pot_bet_to(sit, legal, f)) for f in self.sizes]  # type: ignore[arg-type]
        out = [("all-in", b) if b == shove else (n, b) for n, b in out]
        out.append(("all-in", shove))
        return [(n, b) for i, (n, b) in enumerate(out) if b not in [x for _, x in out[:i]]]

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
        self._fold = fold
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


def _board_equity(
    mine: Sequence[Card],
    theirs: Sequence[Card],
    board: Sequence[Card],
    rng: random.Random,
    runouts: int,
) -> float:
    """``mine``'s Hold'em equity against ``theirs`` on ``board``: exact from the flop on
    (every turn and river enumerated), an unbiased sample of ``runouts`` boards pre-flop."""
    used = set(mine) | set(theirs) | set(board)
    free = [c for c in range(52) if c not in used]
    missing = 5 - len(board)
    if missing == 0:
        rests: list[tuple[int, ...]] = [()]
    elif missing <= 2:
        rests = list(combinations(free, missing))
    else:
        rests = [tuple(rng.sample(free, missing)) for _ in range(runouts)]
    a = [[*mine, *board, *r] for r in rests]
    b = [[*theirs, *board, *r] for r in rests]
    va, vb = evaluate_many(a), evaluate_many(b)
    return sum(_cmp(x, y) for x, y in zip(va, vb, strict=True)) / len(rests)


# The Hold'em chance nodes: board length before the deal -> after it.
_STREETS = {0: 3, 3: 4, 4: 5}


def board_luck(
    mine: Sequence[Card],
    theirs: Sequence[Card],
    board: Sequence[Card],
    pots: dict[int, int],
    rng: random.Random,
    runouts: int = 2000,
) -> float:
    """The chips LBR won or lost to the board cards alone, to subtract from its result.

    ``pots[k]`` is the pot when the board went from ``k`` cards to the next street. For
    each street dealt, the pot times the change of LBR's equity (both hands known) that
    its cards caused. Given everything before them, the street's cards are uniform over
    the unseen cards and the equity before them is the mean of the equity after them, so
    each term, and the sum, has mean zero whatever either player did (the chance part of
    Burch et al.'s AIVAT with a plain equity value): subtracting it leaves the estimate
    unbiased and removes the board's share of the variance. A pot all-in before the river
    is thus scored by its equity; a hand that ends by a fold keeps the luck of the streets
    before the fold removed.
    """
    out = 0.0
    cache: dict[int, float] = {}

    def eq(n: int) -> float:
        if n not in cache:
            cache[n] = _board_equity(mine, theirs, board[:n], rng, runouts)
        return cache[n]

    for before, after in _STREETS.items():
        if before in pots and len(board) >= after:
            out += pots[before] * (eq(after) - eq(before))
    return out


def _stratified(deck: Sequence[Card], rng: random.Random) -> list[Particle]:
    """A Hold'em belief with one particle per starting-hand class (pair, suited, offsuit
    by ranks, 169 in all), a random deal of that class from ``deck``, weighted by how
    many deals of the class ``deck`` holds: a stratified sample of a uniform deal, so
    the first decisions' fold rates are not left to a few random hands."""
    classes: dict[tuple[int, int, bool], list[tuple[Card, Card]]] = {}
    for a, b in combinations(deck, 2):
        hi, lo = max(rank_of(a), rank_of(b)), min(rank_of(a), rank_of(b))
        classes.setdefault((hi, lo, suit_of(a) == suit_of(b)), []).append((a, b))
    return [
        Particle(rng.choice(deals), weight=float(len(deals)))
        for _, deals in sorted(classes.items())
    ]


def _same(a: Act, b: Act) -> bool:
    aggressive = (ActionKind.BET, ActionKind.RAISE)
    if a.kind in aggressive and b.kind in aggressive:
        return True
    return a.kind == b.kind


def _cmp(a: int, b: int) -> float:
    return 1.0 if a > b else 0.0 if a < b else 0.5


def play(
    variant: Variant,
    bot_name: str,
    deals: int,
    seed: int,
    particles: int = 24,
    rollouts: int = 8,
    sizes: Sequence[float] = (0.5, 1.0),
    luck: bool = True,
    refill: int = 72,
) -> Estimate:
    """LBR against ``bot_name`` heads-up over ``deals`` duplicate deals (twice as many hands).

    ``sizes`` are LBR's bet and raise sizes as fractions of the pot (all-in is always
    one more); ``refill`` is how many fresh hands a worn Hold'em belief draws (0: the
    old random belief of ``particles`` hands, never refilled); ``luck`` subtracts the
    board's luck from Hold'em hands (``board_luck``); without it only all-ins before the
    river are scored by their expected value. Decks,
    hand ids and random streams do not depend on the bot, so two runs with the same
    ``deals`` and ``seed`` can be compared deal by deal (``paired``).
    """
    key = master_key(seed)
    unit = unit_of(variant)
    per_deal: list[float] = []
    raw: list[float] = []
    records: list[HandRecord] = []
    bets: list[BetRecord] = []
    cards_each = 2 if variant == Variant.NLHE else 5
    for deal in range(deals):
        total = 0.0
        chips = 0.0
        for lbr_seat in (0, 1):
            bot_seat = 1 - lbr_seat
            label = f"lbr:{variant.value}:{deal}:{lbr_seat}"
            bot = get_bot(bot_name)
            lbr = LocalBestResponse(
                bot, particles, rollouts, random.Random(_derive(key, label)), sizes, refill
            )
            bot_rng = random.Random(_derive(key, label + ":bot"))
            setup = hand_setup(
                variant, hand_id_for(key, label), deck_for(variant, key, deal), deal % 2
            )
            state, events = execute(None, StartHand(setup))
            history: list[Event] = list(events)
            start = {s.seat: s.stack for s in setup.seats}
            lbr_started = False
            allin_board: tuple[Card, ...] | None = None
            pots: dict[int, int] = {}
            last: tuple[str, str] = ("none", "check/call")
            pending: tuple[str, str, float] | None = None
            # The bot's bets and raises, by street, and when LBR last bet.
            raises: dict[str, int] = {}
            facing = 0
            while not state.ended:
                legal = legal_actions(state)
                assert legal is not None
                if not lbr_started:
                    mine = tuple(
                        c for c in view_for(state, lbr_seat).seat(lbr_seat).cards if c is not None
                    )
                    lbr.start(mine, cards_each)
                    lbr_started = True
                street = _street_of(variant, state.board, history)
                if legal.seat == lbr_seat:
                    command: Act | Discard = lbr.decide(state, history, lbr_seat, bot_seat)
                    if isinstance(command, Act) and lbr.choice is not None:
                        last = (street, lbr.choice[0])
                        pending = (street, lbr.choice[0], lbr.choice[1])
                        facing = raises.get(street, 0)
                else:
                    view = view_for(state, bot_seat)
                    command = bot.decide(view, redact_all(history, bot_seat), legal, bot_rng)
                    lbr.observe(state, history, bot_seat, command)
                    if isinstance(command, Act) and (
                        command.kind in _AGGRESSIVE
                        or (command.kind == ActionKind.ALL_IN and not legal.call_is_all_in)
                    ):
                        raises[street] = raises.get(street, 0) + 1
                    if pending is not None and isinstance(command, Act):
                        folded = command.kind == ActionKind.FOLD
                        bets.append(BetRecord(*pending[:2], folded, pending[2]))
                        pending = None
                board_before = state.board
                state, events = execute(state, command)
                history.extend(events)
                if state.ended and len(state.board) > len(board_before):
                    allin_board = board_before
                for before in _STREETS:
                    if len(board_before) <= before < len(state.board):
                        pots[before] = sum(s.committed for s in state.seats)
                if any(isinstance(e, CardsDrawn) for e in events):
                    drew = [e for e in history if isinstance(e, CardsDrawn)]
                    if len(drew) == 2:
                        lbr.drawn = True
                        lbr.after_draw(view_for(state, lbr_seat), lbr_seat)
            stacks = {s.seat: s.stack for s in state.seats}
            net = float(stacks[lbr_seat] - start[lbr_seat])
            chips += net
            if variant == Variant.NLHE and luck:
                holes = {s.seat: s.hole for s in state.seats}
                luck_rng = random.Random(_derive(key, label + ":luck"))
                net -= board_luck(holes[lbr_seat], holes[bot_seat], state.board, pots, luck_rng)
            elif allin_board is not None:
                net = _all_in_value(state, lbr_seat, allin_board, lbr.rng)
            total += net
            end = "showdown"
            if isinstance(command, Act) and command.kind == ActionKind.FOLD:
                end = "LBR folds" if command.seat == lbr_seat else "bot folds"
            scale = 1000.0 / unit
            records.append(
                HandRecord(
                    deal,
                    lbr_seat == deal % 2,
                    *last,
                    end,
                    net * scale,
                    float(stacks[lbr_seat] - start[lbr_seat]) * scale,
                    facing,
                    sum(raises.values()),
                )
            )
        per_deal.append(total / 2 / unit * 1000.0)
        raw.append(chips / 2 / unit * 1000.0)
    mean, half = _mean_interval(per_deal)
    return Estimate(
        bot_name,
        variant,
        2 * deals,
        mean,
        half,
        tuple(per_deal),
        tuple(raw),
        tuple(records),
        tuple(bets),
    )


_AGGRESSIVE = (ActionKind.BET, ActionKind.RAISE)
_HOLDEM_STREETS = {0: "preflop", 3: "flop", 4: "turn", 5: "river"}


def _street_of(variant: Variant, board: Sequence[Card], history: Sequence[Event]) -> str:
    if variant == Variant.NLHE:
        return _HOLDEM_STREETS[len(board)]
    return "post-draw" if any(isinstance(e, CardsDrawn) for e in history) else "pre-draw"


def bet_label(fraction: float) -> str:
    """The name of a bet of ``fraction`` of the pot: ``half-pot``, ``pot``, ``0.75-pot``."""
    return {0.5: "half-pot", 1.0: "pot"}.get(fraction, f"{fraction:g}-pot")


# The breakdown's dimensions: a hand record's bucket under each.
SPOTS: dict[str, Callable[[HandRecord], str]] = {
    "street of LBR's last bet": lambda r: "no bet" if r.street == "none" else r.street,
    "LBR's last bet": lambda r: r.action if r.street == "none" else f"{r.street} {r.action}",
    "LBR's last bet, over the bot's raises": lambda r: (
        r.action
        if r.street == "none"
        else f"{r.street} {r.action} " + ("first in" if not r.facing else f"over {r.facing}")
    ),
    "bot's bets and raises in the hand": lambda r: "3+" if r.bot_raises >= 3 else str(r.bot_raises),
    "position": lambda r: "LBR on the button" if r.button else "LBR in the big blind",
    "end": lambda r: r.end,
    "last bet, end": lambda r: (
        f"{r.action}, {r.end}" if r.street == "none" else f"{r.street} {r.action}, {r.end}"
    ),
}


@dataclass(frozen=True, slots=True)
class Bucket:
    """One spot's share of an estimate: ``mean`` is the bucket's hands' winnings summed
    and divided by all hands (so the buckets of a dimension add up to the estimate), with
    its 95% interval over deals; ``chips`` the same from the chips alone."""

    label: str
    hands: int
    mean: float
    half_width: float
    chips: float


def breakdown(est: Estimate, spot: Callable[[HandRecord], str]) -> list[Bucket]:
    """``est``'s winnings split by ``spot`` (one of ``SPOTS``), largest share first.

    Each bucket's share is, deal by deal, the bucket's hands' ``net`` over the deal's two
    hands, averaged over the deals: the shares of all buckets add up to ``est.mean``."""
    deals = len(est.per_deal)
    if not est.records or deals == 0:
        return []
    shares: dict[str, list[float]] = {}
    chips: dict[str, float] = {}
    count: dict[str, int] = {}
    for r in est.records:
        label = spot(r)
        row = shares.setdefault(label, [0.0] * deals)
        row[r.deal] += r.net / 2
        chips[label] = chips.get(label, 0.0) + r.chips / 2 / deals
        count[label] = count.get(label, 0) + 1
    out = [
        Bucket(label, count[label], *_mean_interval(row), chips[label])
        for label, row in shares.items()
    ]
    return sorted(out, key=lambda b: -b.mean)


def paired_breakdown(
    a: Estimate, b: Estimate, spot: Callable[[HandRecord], str]
) -> dict[str, tuple[float, float]]:
    """Each bucket's share in ``a`` minus in ``b``, deal by deal (same deals and seed),
    as (mean, 95% half-width): where the difference of the two estimates comes from."""
    if len(a.per_deal) != len(b.per_deal) or not a.records or not b.records:
        raise ValueError("a paired breakdown needs the same deals, played with records")
    deals = len(a.per_deal)
    diffs: dict[str, list[float]] = {}
    for sign, est in ((1.0, a), (-1.0, b)):
        for r in est.records:
            diffs.setdefault(spot(r), [0.0] * deals)[r.deal] += sign * r.net / 2
    return {label: _mean_interval(row) for label, row in diffs.items()}


def fold_rates(est: Estimate) -> dict[tuple[str, str], tuple[int, int, float]]:
    """For each street and size of LBR's bets: how many, how many the bot folded to, and
    the mean fold rate LBR's belief predicted for them."""
    out: dict[tuple[str, str], tuple[int, int, float]] = {}
    for b in est.bets:
        n, folds, predicted = out.get((b.street, b.action), (0, 0, 0.0))
        out[(b.street, b.action)] = (n + 1, folds + b.folded, predicted + b.predicted)
    return {k: (n, f, p / n) for k, (n, f, p) in out.items()}
