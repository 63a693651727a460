"""Hard's default heads-up play from the floor tables (``felt.players.bots.floor``).

``floor_decision`` answers when the hand was dealt heads-up, its public line is one
the abstraction knows (fixed-limit Draw: every line; Hold'em: preflop opens of 2 to
4.5 big blinds, 3-bets of 6 to 14, all-ins, 60 to 150 big blinds deep) and the
opponent's record shows no deviation from the floor at 95% (``floor.deviates``: its
fold rates against the floor's own, and in Hold'em its open rate); otherwise it
returns None and hard's exploitive play decides. With few hands seen nothing
deviates, so hard plays the floor.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from felt.core.rules.commands import Act
from felt.core.rules.config import Variant
from felt.core.rules.events import CardsDrawn, Event, Street
from felt.core.rules.legal import LegalActions
from felt.core.table.stats import SeatStats, stats_of
from felt.players.bots import postflop
from felt.players.bots.base import (
    Decision,
    PublicAction,
    Situation,
    all_in,
    bet_to,
    check_or_call,
    check_or_fold,
    discard,
    pot_bet_to,
)
from felt.players.bots.drawhand import standard_keep
from felt.players.bots.floor import (
    DEALT_PAIR,
    FINAL_PAIR,
    FINAL_TWO_PAIR,
    Table,
    deviates,
    draw_dealt_bucket,
    draw_final_bucket,
    draw_state,
    holdem_class,
    load,
    pick,
)
from felt.players.bots.opponents import TableStats

# How far from the floor's own frequency a rate must be, at 95%, to count as a leak.
TOLERANCE = 0.1
# Draw: shown hands a leak in what the opponent shows needs at least (``_shows_weak_bets``,
# ``_shows_odd_draws``), and the share of its shown draws that do not fit them above which
# (at 95%) it plays its dealt hand whatever it is.
LEAK_SHOWN = 15
ODD_DRAWS_LEAK = 0.5
# Draw: decisions a fold-rate leak needs at least (``_draw_leaks``; ``deviates`` asks 30 by
# default). The 95% bound already asks for more when the deviation is smaller; at 30 the
# floor kept playing against a player folding 1 of 23 first-round bets (the floor folds
# half), about half of each 250-hand ladder table: 15 won back 2.7 of the 5.4 BB/100 the
# floor cost against `loose_passive` heads-up (docs/ai.md, "The Draw floor's fold gates").
DRAW_LEAK_LEAST = 15
# Every other gate's minimum (``deviates``'s default).
LEAK_LEAST = 30
# Draw: shown bets after the draw needed before their weak share is read (see
# ``_bets_too_few_weak``). Few: a heads-up table's record shows only about 25 of them in
# 500 hands, and the read only tightens calls.
WEAK_SAMPLE = 5
# Draw: bets faced after the draw needed before the opponent's fold rate there is read
# to choose between mixed actions (``_folds_too_few_later``).
LATER_SAMPLE = 10
# Draw: the opponent's checks and bets after the draw needed before its bet rate there is
# read (``_bets_less_later``).
BETS_SAMPLE = 20


def floor_decision(
    sit: Situation,
    history: Sequence[Event],
    legal: LegalActions,
    rng: random.Random,
    table: TableStats | None,
    postflop: bool = True,
) -> Decision | None:
    """The floor's move, or None where hard's own play (or its exploits) decide.

    ``postflop``: in Hold'em, also play the postflop floor (``felt.players.bots.postflop``)
    after a preflop line the floor knows, unless the opponent's folds to later bets
    differ from the floor's own at 95%.
    """
    if sit.dealt != 2 or len(sit.opponents) != 1 or any(a.all_in for a in sit.actions):
        return None
    stats = stats_of(table, sit.opponents[0].seat)
    if sit.variant == Variant.DRAW5:
        floor = load("draw")
        if floor is None or _draw_leaks(floor, stats):
            return None
        return _draw(
            floor,
            sit,
            history,
            legal,
            rng,
            _bets_too_few_weak(floor, stats),
            _folds_too_few_later(floor, stats),
            _bets_less_later(floor, stats),
            _opens_wide(floor, stats),
        )
    floor = load("holdem")
    if floor is None or _holdem_leaks(floor, stats):
        return None
    if sit.street != Street.PREFLOP:
        if not postflop or _postflop_leaks(stats):
            return None
        return _holdem_postflop(sit, legal)
    return _holdem(floor, sit, legal, rng)


def _leak(k: int, n: int, floor: Table, name: str, least: int = LEAK_LEAST) -> bool:
    ref = floor.reference(name)
    return ref is not None and deviates(k, n, ref, TOLERANCE, least) != 0


def _draw_leaks(floor: Table, s: SeatStats) -> bool:
    # Folds after the first round in pots down to two players when the record has them
    # (a full table's multiway folds are another decision), else all of them.
    later = (s.hu_folded, s.hu_faced) if s.hu_faced else (s.folded, s.faced)
    return (
        _leak(s.first_folded, s.first_faced, floor, "fold_first", DRAW_LEAK_LEAST)
        or _leak(*later, floor, "fold_later", DRAW_LEAK_LEAST)
        or _shows_weak_bets(floor, s)
        or _shows_odd_draws(s)
    )


def _shows_weak_bets(floor: Table, s: SeatStats) -> bool:
    """Draw: are the opponent's shown bets after the draw weak far more often than the
    floor's own (``weak_bet_later``, about 36%), by more than ``TOLERANCE`` at 95%?

    A player betting at most a pair that often bets with anything (the random player's
    shown bets are over 90% weak): the floor's folds to its bets are priced for honest
    ones, and hard's own play, which reads bets by the record (``Style.credible_draw``),
    calls them down. At least ``LEAK_SHOWN`` shown bets: folds come by the dozen a table,
    shown bets by the few, and a 95% gate on fifteen shown bets already needs twelve weak.
    """
    ref = floor.reference("weak_bet_later")
    return ref is not None and (
        deviates(s.shown_bettor_weak, s.shown_bettor, ref, TOLERANCE, LEAK_SHOWN) > 0
    )


def _shows_odd_draws(s: SeatStats) -> bool:
    """Draw: do most of the opponent's shown hands not fit its draw, at 95%?

    ``shown_drawn_odd`` counts shown hands that stood pat with less than a straight or drew
    two or three to less than a pair. A player for whom that is the rule, not a bluff now
    and then (a calling station that never draws: 249 of 250), plays its dealt hand
    whatever it is, and hard's own play models it so (``Style.stands_pat``); the floor
    treats its pat as a made hand and folds to it. More than ``ODD_DRAWS_LEAK`` of its
    shown draws, at 95%, over at least ``LEAK_SHOWN`` of them.
    """
    odd = min(s.shown_drawn_odd, s.shown_drawn)
    return deviates(odd, s.shown_drawn, ODD_DRAWS_LEAK, 0.0, LEAK_SHOWN) > 0


def _bets_too_few_weak(floor: Table, s: SeatStats) -> bool:
    """Draw: are the opponent's bets after the draw rarely weak, next to the floor's own?

    Its public record counts the hands it showed down after betting after the draw
    (``shown_bettor``) and how many held at most one pair (``shown_bettor_weak``); the
    floor bets ``weak_bet_later`` (about 36%) of its own bets there with at most a
    pair, and its one-pair calls are priced for that. A bettor whose shown bets are
    weak less often (a check-raiser that raises its strong hands and few bluffs) is
    paid off by those calls. A point estimate with a minimum sample, not a 95% gate
    like ``_draw_leaks``: the read only makes the floor fold more, it never opens a new
    line to exploit, and at 95% it would wait for hundreds of showdowns (a heads-up
    table sees about 25 in 500 hands). The comparison leans toward folding: shown bets
    are the called ones, and a bluff is called less often than a value bet.
    """
    ref = floor.reference("weak_bet_later")
    if ref is None or s.shown_bettor < WEAK_SAMPLE:
        return False
    return min(s.shown_bettor_weak, s.shown_bettor) / s.shown_bettor < ref


def _folds_too_few_later(floor: Table, s: SeatStats) -> bool:
    """Draw: does the opponent fold to bets after the draw less often than the floor does?

    The floor's bluffs after the draw (bets with no pair) are priced for its own folds
    there (``fold_later``, about 55%); against a player who calls more they lose, and
    behind its check they also run into the hands it checked to raise. When this holds,
    ``_draw`` checks behind a check with no pair where the floor mixes the check in
    (``_mixed``). Like ``_bets_too_few_weak`` a point estimate with a minimum sample, not
    a 95% gate (a ladder table's 250 heads-up hands show about 50 such bets, too few
    for 95% against the floor's own rate): it only picks one of two actions the
    floor itself plays with that hand, which an opponent playing the floor's game leaves
    equally good, so a wrong read costs little, and it never bets where the floor would
    not.
    """
    ref = floor.reference("fold_later")
    folded, faced = (s.hu_folded, s.hu_faced) if s.hu_faced else (s.folded, s.faced)
    if ref is None or faced < LATER_SAMPLE:
        return False
    return folded / faced < ref


def _bets_less_later(floor: Table, s: SeatStats) -> bool:
    """Draw: does the opponent bet after the draw less often than the floor does?

    The floor bets ``bet_later`` (about 26%) of its spots after the draw where it may
    check, and its one-pair calls are priced for a bettor that bets that often, bluffs
    included. A seat that bets less has dropped hands from its bets, and the hands a
    player stops betting first are its weak ones: its bets hold fewer bluffs, and a
    call with at most a pair pays them off. When this holds ``_draw`` folds those calls
    where the floor mixes the fold in (``_mixed``). The record counts raises among its
    bets and only checks beside them (``bets / (bets + checks)``), so a raiser reads as
    betting more: the read leans toward leaving the floor's calls alone. A point estimate
    with a minimum sample (``BETS_SAMPLE``), like ``_bets_too_few_weak``, and for the
    same reason: it only picks one of two actions the floor plays with that hand.
    """
    ref = floor.reference("bet_later")
    n = s.bets + s.checks
    if ref is None or n < BETS_SAMPLE:
        return False
    return s.bets / n < ref


def _opens_wide(floor: Table, s: SeatStats) -> bool:
    """Draw: does the opponent open (bet first in before the draw) more than the floor does,
    by more than ``TOLERANCE`` at 95%?

    The floor opens ``open`` (about 30%) of its first-in spots, first to act or after a
    check; in Draw the record counts both (``opened`` / ``open_chances``). A seat opening
    far more than that opens many hands with nothing (half of all deals hold no pair), and
    the floor's folds and calls facing its open are priced for the floor's own opening
    range. Then ``_draw`` raises its lead in position with every hand without a pair: a
    deviation from the floor, so gated at 95% like ``_draw_leaks``.
    """
    ref = floor.reference("open")
    return ref is not None and deviates(s.opened, s.open_chances, ref, TOLERANCE) > 0


def _mixed(actions: str, probs: Sequence[float], letter: str) -> bool:
    """Whether the floor ever plays ``letter`` here (in its support: probability above 0)."""
    i = actions.find(letter)
    return i >= 0 and probs[i] > 0


def _holdem_leaks(floor: Table, s: SeatStats) -> bool:
    return _leak(s.late_opened, s.late_open_chances, floor, "open") or _leak(
        s.first_folded, s.first_faced, floor, "fold_to_open"
    )


def _postflop_leaks(s: SeatStats) -> bool:
    """Whether the record earns hard's exploits after the flop, at 95%.

    Folds to later-street bets are compared with the floor's own minimum-defence
    folds both ways (a folder is stolen from, a caller value-bet thinner); its share
    of bets among its later actions only one way: a player who bets less than the
    floor does bluffs too little, and hard's range reads fold to it. A player who
    bets more is left to the floor, whose minimum defence is what holds against
    steady aggression: the outside loose-aggressive bot of issue #25 beat hard's
    exploits, not a floor.
    """
    folded, faced = (s.hu_folded, s.hu_faced) if s.hu_faced else (s.folded, s.faced)
    acts = s.bets + s.calls + s.checks
    return (
        deviates(folded, faced, postflop.FOLD_REFERENCE, TOLERANCE) != 0
        or deviates(s.bets, acts, postflop.AGGRESSION_REFERENCE, TOLERANCE) < 0
    )


def _holdem_postflop(sit: Situation, legal: LegalActions) -> Act | None:
    """The postflop floor's move (``felt.players.bots.postflop``), or None off its abstraction."""
    bb = sit.unit
    if len(sit.order) != 2 or not 60 * bb <= sit.effective_stack + sit.pot // 2 <= 150 * bb:
        return None
    ip_seat = sit.order[-1]
    line = postflop.read_line(sit.actions, ip_seat, sit.street)
    if line is None:
        return None
    st = postflop.node_state(line.pre, sit.board, line.streets[:-1], line.streets[-1])
    if st is None:
        return None
    me = postflop.IP if sit.seat == ip_seat else postflop.OOP
    mine = st.ranges[me]
    moves = line.streets[-1]
    raises = sum(1 for m in moves if m.kind in "br")
    facing = None
    if sit.to_call > 0:
        facing = sit.to_call / max(sit.pot - sit.to_call, 1)
    size = postflop.SIZES[sit.street]
    stack = sit.effective_stack
    all_in_size = stack / max(sit.pot, 1)
    shove = facing is None and all_in_size <= 1.3 * size
    if shove:
        size = all_in_size
    letter = postflop.decide(st, mine, me, postflop.combo_index(sit.hole), facing, raises, size)
    if letter in "kcf":
        return check_or_call(legal) if letter != "f" else check_or_fold(legal)
    if shove or (facing is not None and sit.effective_stack <= 1.5 * sit.pot):
        return all_in(legal)
    if facing is None:
        return pot_bet_to(sit, legal, size)
    return pot_bet_to(sit, legal, postflop.RAISE_SIZE)


def _line(actions: Sequence[PublicAction]) -> str:
    out = []
    facing = False
    for a in actions:
        if a.kind == "bet":
            out.append("r" if facing else "b")
            facing = True
        elif a.kind == "call":
            out.append("c")
            facing = False
        elif a.kind == "check":
            out.append("k")
        else:
            out.append("f")
    return "".join(out)


def _limit_move(letter: str, legal: LegalActions) -> Act:
    if letter in "br" and legal.min_raise_to is not None:
        return bet_to(legal, legal.min_raise_to)
    if letter == "f":
        return check_or_fold(legal)
    return check_or_call(legal)


def _draw(
    floor: Table,
    sit: Situation,
    history: Sequence[Event],
    legal: LegalActions,
    rng: random.Random,
    tighten: bool = False,
    no_bluffs: bool = False,
    passive: bool = False,
    wide: bool = False,
) -> Decision | None:
    """The Draw floor's move; ``tighten``: after the draw, fold the calls with at most a pair;
    ``passive``: the same where the floor mixes the fold in; ``no_bluffs``: after the draw,
    check behind a check with no pair where the floor mixes the check in; ``wide``: before
    the draw, in position, raise a lead with every hand without a pair.

    ``tighten`` is ``_bets_too_few_weak``: against a bettor whose bets after the draw
    are rarely weak, a call with one pair or less is paying off its value bets.
    ``passive`` is ``_bets_less_later``: a seat betting less often than the floor after
    the draw bluffs less, so those calls pay off its value bets too. ``no_bluffs`` is
    ``_folds_too_few_later``: against a seat that calls bets after the draw more than
    the floor does, a bluff behind its check loses. Only behind a check:
    leading with nothing was measured to pay against the check-raiser (it folds its
    missed draws to a bet), so those bets stay the floor's. ``wide`` is ``_opens_wide``:
    against a seat opening far more hands than the floor, the floor's folds and calls of
    its hands with nothing or a draw give up pots that the opener's many weak opens would
    lose to a raise. Only facing a lead, in position: also raising its bet behind hard's
    own check measured worse against the loose-aggressive style.
    """
    if legal.max_discard is not None:
        return discard(legal, sit.hole, standard_keep(sit.hole))
    me = sit.order.index(sit.seat)
    first = _line(sit.on(Street.FIRST_BET))
    second = ""
    if sit.street == Street.FIRST_BET:
        if len(first) % 2 != me:
            return None
        got = floor.strategy(f"1:{first}", draw_dealt_bucket(sit.hole))
    else:
        second = _line(sit.on(Street.SECOND_BET))
        drawn: tuple[int, ...] | None = None
        thrown: tuple[int, ...] = ()
        for e in history:
            if isinstance(e, CardsDrawn) and e.seat == sit.seat:
                drawn = tuple(c for c in e.drawn if c is not None)
                thrown = tuple(c for c in e.discarded if c is not None)
        if drawn is None or len(second) % 2 != me:
            return None
        dealt = tuple(c for c in sit.hole if c not in drawn) + thrown
        if len(dealt) != 5:
            return None
        got = floor.strategy(f"2:{first}:{second}", draw_state(dealt, sit.hole))
    if got is None:
        return None
    letter = pick(*got, rng)
    if (
        letter == "c"
        and sit.street == Street.SECOND_BET
        and sit.to_call > 0
        and draw_final_bucket(sit.hole) < FINAL_TWO_PAIR
        and (tighten or (passive and _mixed(*got, "f")))
    ):
        letter = "f"  # passive: only where the floor mixes the fold in
    if (
        no_bluffs
        and letter == "b"
        and sit.street == Street.SECOND_BET
        and sit.to_call == 0
        and second == "k"
        and draw_final_bucket(sit.hole) < FINAL_PAIR
        and _mixed(*got, "k")
    ):
        letter = "k"
    if (
        wide
        and sit.street == Street.FIRST_BET
        and first == "b"
        and draw_dealt_bucket(sit.hole) < DEALT_PAIR
    ):
        letter = "b"  # in position, facing the lead of a seat that opens far too wide
    return _limit_move(letter, legal)


def _holdem(floor: Table, sit: Situation, legal: LegalActions, rng: random.Random) -> Act | None:
    bb = sit.unit
    if not 60 * bb <= sit.effective_stack + sit.bet <= 150 * bb:
        return None
    line = ""
    for a in sit.on(Street.PREFLOP):
        if a.kind == "bet":
            raises = line.count("r")
            if a.to >= 40 * bb:
                line += "a"
            elif (raises == 0 and 2 * bb <= a.to <= 4.5 * bb) or (
                raises == 1 and 6 * bb <= a.to <= 14 * bb
            ):
                line += "r"
            else:
                return None
        else:
            return None  # a limp or a check: outside the abstraction
    me = 0 if sit.in_position else 1  # the button acts first preflop and last after it
    if len(line) % 2 != me:
        return None
    got = floor.strategy(f"p:{line}", holdem_class(sit.hole))
    if got is None:
        return None
    letter = pick(*got, rng)
    if letter == "f":
        return check_or_fold(legal)
    if letter == "c":
        return check_or_call(legal)
    if letter == "a":
        return all_in(legal)
    return bet_to(legal, (2.5 if not line else 9.0) * bb)
