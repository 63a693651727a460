"""Differential tests of Felt's rules against PokerKit, both variants, at every decision.

Random hands are played on Felt's engine and on PokerKit side by side with
identical cards: Hold'em through PokerKit's ``NoLimitTexasHoldem``,
Five-Card Draw through its generic ``State`` (fixed limit, one draw, a
standard high hand). At every decision the seat to act and its legal
actions (fold, check, call and its amount, whether it is all-in, bet or
raise and their bounds, the cap) are compared with what RULES.md allows,
and at the end every stack. PokerKit is an oracle only: Felt never plays by it.

The expected legal actions come from PokerKit's state (whose turn, bets,
stacks, who can still put in chips) and from a small model of the betting
round written from RULES.md's text (:class:`RoundModel`). Where RULES.md
settles a point differently from PokerKit, the model encodes RULES.md and the
point is named where it is encoded (``RULES.md vs PokerKit:``), and listed in
docs/rules-vs-pokerkit.md. Everywhere else the model must agree with PokerKit
itself, so it cannot drift from the oracle unnoticed.

A short seeded run is part of the unit tests (tests/unit/test_differential.py);
the long run is a command::

    python -m tests.differential --hands 100000 --variant holdem
    python -m tests.differential --hands 100000 --variant draw --workers 2
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import warnings
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from pokerkit import (
    Automation,
    BettingStructure,
    Deck,
    Hand,
    Mode,
    NoLimitTexasHoldem,
    Opening,
    StandardHighHand,
    State,
    Street,
)
from pokerkit import Card as PkCard

from felt.core.cards import Card, card_str, cards_str, full_deck
from felt.core.rules.commands import Act, ActionKind, Discard, StartHand
from felt.core.rules.config import HandSetup, SeatSetup, Variant
from felt.core.rules.engine import HandMachine
from felt.core.rules.events import CardsDrawn, HandEnded, PotAwarded
from felt.core.rules.events import Street as FeltStreet
from felt.core.rules.legal import LegalActions, legal_actions

HOLDEM, DRAW = "holdem", "draw"
AUTOMATIONS = (
    Automation.ANTE_POSTING,
    Automation.BET_COLLECTION,
    Automation.BLIND_OR_STRADDLE_POSTING,
    Automation.RUNOUT_COUNT_SELECTION,
)


class Disagreement(AssertionError):
    """Felt and the expectation (PokerKit with RULES.md's settled points) differ."""


# ---------------------------------------------------------------------------
# Random tables


@dataclass
class Table:
    """One random hand's setup, in dealing order (index i is Felt seat i and PokerKit player i)."""

    variant: str
    stacks: list[int]
    ante: int
    small_blind: int = 0
    big_blind: int = 0
    small_bet: int = 0
    big_bet: int = 0
    cap: int = 4
    deck: tuple[Card, ...] = ()

    @property
    def n(self) -> int:
        return len(self.stacks)

    def blinds(self) -> list[int]:
        """Each seat's blind in dealing order (heads-up: big blind, then the button's small)."""
        if self.variant == DRAW:
            return [0] * self.n
        if self.n == 2:
            return [self.big_blind, self.small_blind]
        return [self.small_blind, self.big_blind] + [0] * (self.n - 2)


def _stack(rng: random.Random, unit: int, least: int) -> int:
    """Stacks from a few chips to very deep, often short enough to go all-in."""
    kind = rng.random()
    if kind < 0.25:
        high = 3 * unit
    elif kind < 0.6:
        high = 12 * unit
    else:
        high = 60 * unit
    return max(least, rng.randint(1, high))


def random_table(rng: random.Random, variant: str) -> Table:
    deck = list(full_deck())
    rng.shuffle(deck)
    if variant == HOLDEM:
        n = rng.randint(2, 9)
        big = rng.choice([2, 2, 4, 10, 100])
        small = rng.choice([big // 2, big // 2, 1, big])
        ante = rng.choice([0, 0, 0, 1, big // 2, big])
        table = Table(HOLDEM, [], ante, small, big, deck=tuple(deck))
        blinds = table.blinds() if n > 2 else [big, small]
        # RULES.md vs PokerKit (short blinds): a player all-in for less than the big
        # blind does not lower the amount to call in Felt; PokerKit lowers it, so the two
        # cannot be played side by side from the first decision. Blind posters here cover
        # their blind and ante; the rule itself is tested in test_differential.py.
        table.stacks = [
            _stack(rng, big, ante + (blinds[i] if i < len(blinds) else 0)) for i in range(n)
        ]
        return table
    n = rng.randint(2, 6)
    small_bet = rng.choice([2, 2, 4, 6, 10, 20])
    big_bet = rng.choice([2 * small_bet, 2 * small_bet, small_bet, 3 * small_bet])
    ante = rng.choice([1, 1, 2, small_bet // 2, small_bet])  # PokerKit needs a forced bet
    cap = rng.choice([4, 4, 4, 1, 2, 3, 5])
    stacks = [_stack(rng, small_bet, 1) for _ in range(n)]
    return Table(
        DRAW, stacks, ante, small_bet=small_bet, big_bet=big_bet, cap=cap, deck=tuple(deck)
    )


def felt_setup(table: Table) -> HandSetup:
    blinds = table.blinds()
    seats = tuple(
        SeatSetup(i, s, f"p{i}", ante=table.ante, blind=blinds[i])
        for i, s in enumerate(table.stacks)
    )
    if table.variant == HOLDEM:
        return HandSetup("d", Variant.NLHE, table.n - 1, seats, table.deck, min_bet=table.big_blind)
    return HandSetup(
        "d",
        Variant.DRAW5,
        table.n - 1,
        seats,
        table.deck,
        small_bet=table.small_bet,
        big_bet=table.big_bet,
        raise_cap=table.cap,
    )


def pokerkit_state(table: Table) -> State:
    """PokerKit's state for the same hand (antes are not trimmed: dead money, as in Felt)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if table.variant == HOLDEM:
            return NoLimitTexasHoldem.create_state(
                AUTOMATIONS,
                False,
                table.ante,
                (table.small_blind, table.big_blind),
                table.big_blind,
                tuple(table.stacks),
                table.n,
                mode=Mode.TOURNAMENT,
            )
        return State(
            AUTOMATIONS,
            Deck.STANDARD,
            (StandardHighHand,),
            (
                Street(False, (False,) * 5, 0, False, Opening.POSITION, table.small_bet, table.cap),
                Street(False, (), 0, True, Opening.POSITION, table.big_bet, table.cap),
            ),
            BettingStructure.FIXED_LIMIT,
            False,
            table.ante,
            0,
            0,
            tuple(table.stacks),
            table.n,
            mode=Mode.TOURNAMENT,
        )


# ---------------------------------------------------------------------------
# RULES.md's betting round


@dataclass
class RoundModel:
    """What RULES.md says about one betting round, beyond the chips PokerKit counts.

    ``acted``/``matched``: whether each seat has acted this round and the bet
    it faced when it last did. ``last_full`` (Hold'em) is the size of the last
    full bet or raise (at least the big blind); ``full_level`` (Draw) the last
    bet level that counted as a full bet, ``full`` how many full bets and
    raises count toward the cap; ``short`` whether an all-in for less than a
    full bet or raise was made this round (where PokerKit may differ).
    """

    n: int
    big_blind: int = 0
    acted: list[bool] = field(default_factory=list)
    matched: list[int] = field(default_factory=list)
    last_full: int = 0
    full_level: int = 0
    full: int = 0
    short: bool = False

    def __post_init__(self) -> None:
        self.acted = [False] * self.n
        self.matched = [0] * self.n
        self.last_full = self.big_blind


def expected_legal(
    table: Table, pk: State, model: RoundModel, seat: int, bet: int
) -> tuple[LegalActions, tuple[bool, int | None, int | None]]:
    """RULES.md's legal actions for ``seat`` (``bet``: Draw's fixed bet this round).

    Also returns PokerKit's own raise answer (can raise, min to, max to) for the
    caller to hold against the model where RULES.md and PokerKit agree.
    """
    bets, stacks, live = list(pk.bets), list(pk.stacks), list(pk.statuses)
    current = max(bets)
    to_call = current - bets[seat]
    behind = stacks[seat]
    can_check = to_call <= 0
    call = None if can_check else min(to_call, behind)
    call_all_in = call is not None and call == behind
    if table.variant == HOLDEM:
        threshold = max(model.last_full, table.big_blind)
        capped = False
    else:
        threshold = (bet + 1) // 2  # half a bet, rounded up: "at least half a bet"
        capped = model.full >= table.cap
    # RULES.md: the betting is reopened to a seat that already acted only once the bet
    # has grown by a full raise (Draw: half a bet) since it acted, judged for that seat.
    reopened = not model.acted[seat] or current - model.matched[seat] >= threshold
    # RULES.md: no bet or raise unless another live seat can put in more than the bet.
    answerable = any(
        j != seat and live[j] and stacks[j] + bets[j] > current for j in range(table.n)
    )
    most = bets[seat] + behind
    low = high = None
    all_in_to = most if call_all_in else None
    if behind > max(to_call, 0) and reopened and answerable and not capped:
        if table.variant == HOLDEM:
            low, high = current + threshold, most
        else:
            low = high = model.full_level + bet
        if most <= low:
            low = high = most
        if high == most:
            all_in_to = most
    expected = LegalActions(
        seat=seat,
        street=FeltStreet.PREFLOP,  # not compared
        can_fold=not can_check,
        can_check=can_check,
        call_amount=call,
        call_is_all_in=call_all_in,
        min_raise_to=low,
        max_raise_to=high,
        bet=current == 0,
        all_in_to=all_in_to,
    )
    pk_raise = pk.can_complete_bet_or_raise_to()
    pk_bounds = (
        pk_raise,
        pk.min_completion_betting_or_raising_to_amount if pk_raise else None,
        pk.max_completion_betting_or_raising_to_amount if pk_raise else None,
    )
    return expected, pk_bounds


def _fields(legal: LegalActions) -> tuple[object, ...]:
    return (
        legal.seat,
        legal.can_fold,
        legal.can_check,
        legal.call_amount,
        legal.call_is_all_in,
        legal.min_raise_to,
        legal.max_raise_to,
        legal.bet,
        legal.all_in_to,
    )


def _record(model: RoundModel, table: Table, seat: int, current: int, to: int, bet: int) -> None:
    """Fold a wager to ``to`` (or a call/check/fold when ``to <= current``) into the model."""
    if to > current:
        if table.variant == HOLDEM:
            full = to - current >= max(model.last_full, table.big_blind)
            if full:
                model.last_full = to - current
        else:
            # RULES.md (TDA 47-B): a short all-in of at least half a bet counts as a full
            # bet or raise, measured from the last full level; only full ones count toward
            # the cap. RULES.md vs PokerKit (limit short all-ins): PokerKit counts every
            # raise toward the cap and puts the next raise one bet above the all-in.
            full = 2 * (to - model.full_level) >= bet
            if full:
                model.full_level = to
                model.full += 1
        if not full or (table.variant == DRAW and to - current < bet):
            # An all-in for less than a whole bet or raise: PokerKit's and RULES.md's
            # answers may part from here on in this round (named where encoded).
            model.short = True
        model.matched[seat] = to
    else:
        model.matched[seat] = current
    model.acted[seat] = True


# ---------------------------------------------------------------------------
# One hand, side by side


@dataclass
class Stats:
    hands: int = 0
    decisions: int = 0
    draws: int = 0
    idle_checks: int = 0
    short_rounds: int = 0
    unplayable_raises: int = 0
    odd_chip_differences: int = 0
    disagreements: list[str] = field(default_factory=list)

    def add(self, other: Stats) -> None:
        self.hands += other.hands
        self.decisions += other.decisions
        self.draws += other.draws
        self.idle_checks += other.idle_checks
        self.short_rounds += other.short_rounds
        self.unplayable_raises += other.unplayable_raises
        self.odd_chip_differences += other.odd_chip_differences
        self.disagreements.extend(other.disagreements)


def _cards(cs: Sequence[Card]) -> str:
    return "".join(card_str(c) for c in cs)


def _fail(table: Table, log: list[str], message: str) -> Disagreement:
    return Disagreement(f"{message}\n  table: {table}\n  actions: {' '.join(log)}")


def play(table: Table, rng: random.Random, stats: Stats) -> None:
    """Play one random hand on both engines; raise :class:`Disagreement` at the first difference."""
    setup = felt_setup(table)
    felt = HandMachine()
    felt.execute(StartHand(setup))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _play(table, rng, stats, setup, felt, pokerkit_state(table))


def _play(
    table: Table, rng: random.Random, stats: Stats, setup: HandSetup, felt: HandMachine, pk: State
) -> None:
    n = table.n
    log: list[str] = []
    hole = {i: list(table.deck[i : (5 if table.variant == DRAW else 2) * n : n]) for i in range(n)}
    board = list(table.deck[2 * n : 2 * n + 5])
    drawn: dict[int, list[Card]] = {}
    model: RoundModel | None = None
    round_key: object = None
    expected_final: list[int] | None = None
    showdown: tuple[list[bool], list[list[PkCard]]] | None = None
    state = felt.state
    assert state is not None
    while pk.status:
        if pk.can_deal_hole():
            i = pk.hole_dealee_index
            assert i is not None
            cs = drawn.pop(i) if table.variant == DRAW and i in drawn else hole[i]
            pk.deal_hole(_cards(cs))
            continue
        if pk.can_burn_card():
            pk.burn_card("??")
            continue
        if pk.can_deal_board():
            count = pk.street.board_dealing_count if pk.street is not None else 0
            dealt = len(list(pk.get_board_cards(0)))
            pk.deal_board(_cards(board[dealt : dealt + count]))
            continue
        if pk.can_stand_pat_or_discard():
            i = pk.stand_patter_or_discarder_index
            assert i is not None
            if state.street != FeltStreet.DRAW or state.actor_seat != i:
                raise _fail(
                    table,
                    log,
                    f"PokerKit's player {i} draws; Felt: {state.street}, "
                    f"seat {state.actor_seat} to act",
                )
            mine = list(state.seats[i].hole)
            k = rng.choice([0, 1, 1, 2, 3, 3])
            out = tuple(rng.sample(mine, k))
            events = felt.execute(Discard(i, out))
            draw = next(e for e in events if isinstance(e, CardsDrawn))
            drawn[i] = [c for c in draw.drawn if c is not None]
            pk.stand_pat_or_discard(_cards(out))
            log.append(f"p{i}:sd{cards_str(out) or '-'}")
            stats.draws += 1
            continue
        if pk.actor_index is not None:
            i = pk.actor_index
            key = (pk.street_index, "bet")
            if key != round_key:
                round_key = key
                if model is not None and model.short:
                    stats.short_rounds += 1
                model = RoundModel(n, table.big_blind if table.variant == HOLDEM else 0)
            assert model is not None
            bet = (
                table.big_bet if pk.street_index == 1 and table.variant == DRAW else table.small_bet
            )
            current = max(pk.bets)
            others_all_in = all(pk.stacks[j] == 0 for j in range(n) if j != i and pk.statuses[j])
            if felt.state is None or state.ended or state.actor_seat != i:
                # RULES.md vs PokerKit (the last seat's check): when every other player in
                # the hand is all-in and the bet is matched, there is nothing to decide; Felt
                # deals on, PokerKit still asks the last seat to check.
                if pk.checking_or_calling_amount == 0 and others_all_in:
                    pk.check_or_call()
                    log.append(f"p{i}:cc(idle)")
                    stats.idle_checks += 1
                    continue
                raise _fail(
                    table,
                    log,
                    f"PokerKit's player {i} is to act; Felt: seat {state.actor_seat}"
                    f" on {state.street}{' (ended)' if state.ended else ''}",
                )
            stats.decisions += 1
            expected, pk_bounds = expected_legal(table, pk, model, i, bet)
            got = legal_actions(state)
            if got is None or _fields(got) != _fields(expected):
                raise _fail(
                    table,
                    log,
                    f"legal actions of seat {i}:\n  Felt     {got}\n  RULES.md {expected}",
                )
            model_bounds = (expected.can_raise, expected.min_raise_to, expected.max_raise_to)
            if model_bounds != pk_bounds and not model.short:
                # Only the named points (incomplete all-ins this round) may part the two.
                raise _fail(
                    table, log, f"model vs PokerKit for seat {i}: {model_bounds} vs {pk_bounds}"
                )
            if (
                expected.call_amount is not None
                and expected.call_amount != pk.checking_or_calling_amount
            ):
                raise _fail(
                    table,
                    log,
                    f"call amount {expected.call_amount} "
                    f"vs PokerKit {pk.checking_or_calling_amount}",
                )
            # Choose a move both engines accept.
            moves: list[tuple[str, int]] = []
            if expected.can_fold:
                moves.append(("f", 0))
            moves += [("cc", 0)] * 3
            if expected.can_raise:
                assert expected.min_raise_to is not None and expected.max_raise_to is not None
                low, high = expected.min_raise_to, expected.max_raise_to
                for to in {low, high, rng.randint(low, high)}:
                    moves.append(("cbr", to))
                    moves.append(("cbr", to))
            op, to = rng.choice(moves)
            if op == "cbr" and not pk.can_complete_bet_or_raise_to(to):
                stats.unplayable_raises += 1
                op = "cc"
            if op == "f":
                felt.execute(Act(i, ActionKind.FOLD))
                pk.fold()
                _record(model, table, i, current, 0, bet)
            elif op == "cc":
                kind = ActionKind.CHECK if expected.can_check else ActionKind.CALL
                if expected.call_is_all_in and rng.random() < 0.3:
                    kind = ActionKind.ALL_IN
                felt.execute(Act(i, kind))
                pk.check_or_call()
                _record(model, table, i, current, 0, bet)
            else:
                if to == expected.all_in_to and rng.random() < 0.5:
                    command = Act(i, ActionKind.ALL_IN)
                else:
                    command = Act(i, ActionKind.BET if expected.bet else ActionKind.RAISE, to)
                felt.execute(command)
                pk.complete_bet_or_raise_to(to)
                _record(model, table, i, current, to, bet)
            log.append(f"p{i}:{op}{to if op == 'cbr' else ''}")
            continue
        if showdown is None and (
            pk.can_show_or_muck_hole_cards() or pk.can_kill_hand() or pk.can_push_chips()
        ):
            # Who is still in, and their cards, before PokerKit kills the losers' hands.
            showdown = (list(pk.statuses), [list(h) for h in pk.hole_cards])
        if pk.can_show_or_muck_hole_cards():
            pk.show_or_muck_hole_cards(True)
            continue
        if pk.can_kill_hand():
            pk.kill_hand()
            continue
        if pk.can_push_chips():
            if expected_final is None:
                before = list(pk.stacks)
                assert showdown is not None
                if sum(showdown[0]) == 1:  # uncontested: the pot and any bet still out
                    before[showdown[0].index(True)] += pk.total_pot_amount
                    expected_final = before
                else:
                    contributed = [a - b for a, b in zip(table.stacks, before, strict=True)]
                    assert showdown is not None
                    live, holes = showdown
                    board_cards = [c for cs in pk.board_cards for c in cs]
                    hands = [
                        StandardHighHand.from_game(h, board_cards) if alive else None
                        for h, alive in zip(holes, live, strict=True)
                    ]
                    expected_final = _award(before, contributed, live, hands)
            pk.push_chips()
            continue
        if pk.can_pull_chips():
            pk.pull_chips()
            continue
        if pk.can_collect_bets():
            pk.collect_bets()
            continue
        raise _fail(table, log, "PokerKit is stuck")  # pragma: no cover
    if not state.ended:
        raise _fail(
            table,
            log,
            f"PokerKit's hand is over, Felt's is not ({state.actor_seat} to act on {state.street})",
        )
    if model is not None and model.short:
        stats.short_rounds += 1
    if table.variant == HOLDEM and len(state.board) == 5 and list(state.board) != board:
        raise _fail(table, log, f"Felt's board {_cards(state.board)} is not {_cards(board)}")
    end = felt.events[-1] if felt.events else None
    assert isinstance(end, HandEnded), end
    final = [stack for _, stack in end.stacks]
    if expected_final is None:
        expected_final = list(pk.stacks)
    elif expected_final != list(pk.stacks):
        stats.odd_chip_differences += 1
    if final != expected_final:
        awards = [e for e in felt.events if isinstance(e, PotAwarded)]
        raise _fail(
            table,
            log,
            f"final stacks: Felt {final}, RULES.md {expected_final}, PokerKit {list(pk.stacks)}"
            f"\n  Felt's awards: {awards}\n  PokerKit's pots: {list(pk.pots)}",
        )
    if sum(final) != sum(table.stacks):
        raise _fail(table, log, "chips were made or lost")
    stats.hands += 1


def _award(
    stacks: list[int], contributed: list[int], live: list[bool], hands: Sequence[Hand | None]
) -> list[int]:
    """RULES.md's award of the pot, from what each seat put in.

    RULES.md: "the pot is split by eligible contributions; an all-in player is
    eligible only for the pots they contributed to"; each pot goes to its best
    hands, split evenly, odd chips one at a time clockwise from the left of the
    button (dealing order), so nobody gets more than one from a pot.

    RULES.md vs PokerKit (antes a seat cannot cover; pots split separately):
    PokerKit (antes not trimmed) puts every ante in one pot that any seat still
    in can win, so a seat all-in for part of its ante wins the others' whole
    antes; here it wins only as much as it paid from each. Pots are cut only
    where a seat in the hand is all-in (adjacent levels with the same eligible
    seats are one pot, split once), and each pot is split separately.
    """
    out = list(stacks)
    levels = sorted({c for c, alive in zip(contributed, live, strict=True) if alive})
    previous = 0
    pots: list[tuple[int, tuple[int, ...]]] = []
    for level in levels:
        amount = sum(min(c, level) - min(c, previous) for c in contributed)
        eligible = tuple(i for i, c in enumerate(contributed) if live[i] and c >= level)
        if pots and pots[-1][1] == eligible:
            pots[-1] = (pots[-1][0] + amount, eligible)
        else:
            pots.append((amount, eligible))
        previous = level
    # Folded chips above the highest live contribution (an uncalled bet cannot be
    # folded, so these are none) would go to the last pot.
    rest = sum(max(0, c - previous) for c in contributed)
    if rest:
        pots[-1] = (pots[-1][0] + rest, pots[-1][1])
    for amount, eligible in pots:
        if len(eligible) > 1:
            best = max(h for i in eligible if (h := hands[i]) is not None)
            winners = [i for i in eligible if hands[i] == best]
        else:
            winners = list(eligible)
        share, odd = divmod(amount, len(winners))
        for k, w in enumerate(winners):
            out[w] += share + (1 if k < odd else 0)
    return out


# ---------------------------------------------------------------------------
# Runs


def run(variant: str, hands: int, seed: int) -> Stats:
    """Play ``hands`` random hands from ``seed``; disagreements are collected, not raised."""
    rng = random.Random(seed)
    stats = Stats()
    for _ in range(hands):
        table = random_table(rng, variant)
        try:
            play(table, rng, stats)
        except Disagreement as e:
            stats.disagreements.append(str(e))
    return stats


def _chunk(args: tuple[str, int, int]) -> Stats:
    return run(*args)


def run_parallel(variant: str, hands: int, seed: int, workers: int) -> Stats:
    size = 1000
    chunks = [(variant, min(size, hands - k), seed * 1_000_003 + k) for k in range(0, hands, size)]
    total = Stats()
    if workers <= 1:
        for c in chunks:
            total.add(_chunk(c))
        return total
    with ProcessPoolExecutor(workers) as pool:
        for stats in pool.map(_chunk, chunks):
            total.add(stats)
    return total


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=10_000)
    parser.add_argument("--variant", choices=[HOLDEM, DRAW, "both"], default="both")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--show", type=int, default=3, help="disagreements to print")
    args = parser.parse_args(argv)
    variants = [HOLDEM, DRAW] if args.variant == "both" else [args.variant]
    failed = False
    for variant in variants:
        start = time.perf_counter()
        stats = run_parallel(variant, args.hands, args.seed, args.workers)
        took = time.perf_counter() - start
        print(
            f"{variant}: {stats.hands + len(stats.disagreements)} hands, "
            f"{len(stats.disagreements)} disagreements, {stats.decisions} decisions, "
            f"{stats.draws} draws, {stats.short_rounds} rounds with a short all-in, "
            f"{stats.idle_checks} idle last-seat checks, {stats.unplayable_raises} raises "
            f"PokerKit refuses (RULES.md's amount), {stats.odd_chip_differences} hands where "
            f"PokerKit's own award differs, {took:.1f} s"
        )
        for text in stats.disagreements[: args.show]:
            print(text)
        failed = failed or bool(stats.disagreements)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
