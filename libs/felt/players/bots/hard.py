"""The hard bot: Monte Carlo equity against ranges read from public actions.

Hold'em: each live opponent gets a weighted range. Preflop it comes from what
they did (an open raise is a top-x% range, a 3-bet tighter, a call medium with
the strongest hands down-weighted because they would have raised, a check
wide); on every later street their action re-weights the combos by how well
each one hits that street's board (a bet or raise keeps the strongest share
and a little of the rest for bluffs and draws, a call the top three quarters,
a check trims the very top). Hero's equity against those ranges comes from
``felt.players.equity.holdem_equity``. It calls when equity beats the pot odds by a
margin, raises and value-bets when equity is high with a size that grows with
equity (all-in at low stack-to-pot ratio), semi-bluffs strong draws and bluffs
with weak hands at a controlled, configurable frequency. In a hand dealt
heads-up it checks part of its strong hands on the flop and turn (``_traps``),
so that its checks are not all weak, and defends its range against bets
(``_defends``).

Draw: opponents are modelled by ``felt.players.equity.DrawOpponent`` from how many
cards they drew and whether they bet (drew three after betting: a pair;
stood pat after raising: a straight or better; bet after the draw: improved),
as a small mixture. The discard is chosen by simulating the sensible keeps
(``drawhand.candidate_keeps``) and taking the best; betting follows the same
equity-versus-pot-odds rules in fixed-limit form.

Only public information is read: the seat's own cards, the board, the
redacted history and the legal actions.

Why one module of this size: the preflop ranges, the opponent read and the
betting rules of both games are tuned against one another (``HardTuning``),
and the ladder measures them together; split apart, a change in one would
hide its effect on the others.
"""

from __future__ import annotations

import random
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache, lru_cache

from felt.core import _native
from felt.core.cards import Card
from felt.core.evaluator import HandCategory, evaluate_many
from felt.core.rules.commands import Discard
from felt.core.rules.config import Variant
from felt.core.rules.events import CardsDrawn, Event, Street
from felt.core.rules.legal import LegalActions
from felt.core.rules.views import HandView
from felt.core.table.stats import SeatStats
from felt.players.bots import postflop
from felt.players.bots.base import (
    Decision,
    Situation,
    all_in,
    bet_to,
    check_or_call,
    check_or_fold,
    pot_bet_to,
    situation,
)
from felt.players.bots.drawhand import candidate_keeps, standard_keep
from felt.players.bots.floor import deviates, wilson
from felt.players.bots.floor_play import TOLERANCE, floor_decision
from felt.players.bots.holdem import draws, preflop_percentile
from felt.players.bots.opponents import TableStats, stats_of
from felt.players.equity import DrawOpponent, Range, draw_equity, holdem_equity, top_percent

H = HandCategory
# A player entering at least this share of pots is loose (its calls and raises are
# not selective); one raising at least this share first-in is wild (a maniac).
LOOSE_VPIP = 0.6
# A field whose players enter this share of pots on average calls too much (``TableRead``).
LOOSE_FIELD = 0.5
WILD_PFR = 0.5
# ``TableRead.steal_fold``: a raise first in that meets a re-raise loses what it put in, so
# the re-raises behind count against the folds (``SeatStats.reraise_rate``: re-raises per
# first-round raise faced). Read from folds alone, a field that folds 80% of raises and
# re-raises 9-13% (the `prober`) widened hard's opens by 30 points in every seat, and its
# opens met a re-raise 37% of the time (docs/ai.md, "6-max Hold'em against re-raisers").
# Players whose re-raises are their value re-raise up to about 7% (`nit`, `tag`, `rock`
# 1-3%, `reader` 4-7%), and the widening's 0.55 was set against such fields (widening
# against `reader` too pays), so only a rate above ``RERAISE_BASE`` counts, ``RERAISE_COST``
# folds for each point. Both were measured, not derived: 5% and 4 cost 5-11 bb/100
# against `reader`; 7% and 6 keep most of the gain against `prober` without that cost.
RERAISE_BASE = 0.07
RERAISE_COST = 6.0
_CATEGORY_SHIFT = _native.CATEGORY_SHIFT
_BOARD_STREETS = ((Street.FLOP, 3), (Street.TURN, 4), (Street.RIVER, 5))
_ACE_LOW = 0x1000
# Equity by which a keep must beat the textbook draw to replace it (``HardBot._best_keep``).
_KEEP_MARGIN = 0.02
# Completions of the flop and turn boards sampled for the defence's equities (``_floor_range``).
DEFENCE_RUNOUTS = 4
# ``_value_heavy``: a record whose shown later-street bets were at most one pair less often
# than this, at 95% over at least ``VALUE_HEAVY_SHOWN`` showdowns, bets value. A quarter is
# the bluffs' share of a balanced half-pot betting range (``postflop.bluff_share(0.5)``),
# the smallest share a minimum-defence range is built against.
VALUE_HEAVY_WEAK = 0.25
VALUE_HEAVY_SHOWN = 10
# ``_value_heavy``: a heads-up player entering fewer pots than this (at 95%) is tighter than
# the range the defence's percentile assumes. The preflop floor enters about three in four
# (the button opens 72%, the big blind defends 89%); 0.7 leaves it a tolerance. At 0.5 the
# defence paid off the reference tight-aggressive bot (`tag`, entering 60 to 70%) and cost
# about 30 bb/100 against it heads-up (docs/ai.md, "The defence against tight players").
TIGHT_VPIP = 0.7


@dataclass(frozen=True, slots=True)
class HardTuning:
    """Equity thresholds of the hard bot, in one place so they can be tuned and tested.

    The defaults were tuned on duplicate heads-up matches against the normal
    bot (``felt ladder``) and are standard heads-up practice: the button
    min-raises every hand (the blind must defend a wide range or bleed), and
    re-raises for value with 58% equity against the opener's range.

    Hold'em: ``open_heads_up`` is the share of hands the button opens, with
    ``open_size_heads_up`` big blinds; ``reraise_first`` the equity against an
    opener's range to 3-bet;
    ``pre_margin_*`` the equity over pot odds a preflop call needs in/out of
    position (realising equity is harder out of position); ``value_*`` the
    equity to bet when checked to; ``raise_at`` the equity to raise a bet;
    ``call_margin`` the edge over pot odds to call after the flop.
    ``bet_keep``/``bet_rest`` and ``call_keep``/``call_rest`` say how a bet
    or a call narrows a range: the strongest ``keep`` share keeps its weight,
    the rest is multiplied by ``rest``; a check multiplies the strongest
    ``check_top`` share by ``check_weight`` (those hands would often have bet).
    A flop continuation bet by the preflop raiser narrows with ``cbet_*``
    instead (those ranges are wide). ``bluff_equity`` is the equity below
    which a checked-to hand may bluff; ``light_3bet`` lets the bluff frequency
    apply to preflop re-raises with hands that would call.
    Full tables of loose players (``TableRead.loose``): ``loose_allin_edge``
    is the equity over a fair share (1 / players) to go all-in against
    maniacs, ``loose_raise_edge`` to raise for value preflop against
    callers, ``loose_limp_slack`` how far below its share a hand may still
    enter for the minimum, ``loose_value_edge`` the edge over a fair share to
    value-bet after the flop (plus 0.3 x the field's fold rate).
    Draw: equity above a fair share (1 / players) to bet or raise, first and
    second round (``draw_bet_first_ip``: in position after a check, where the
    checker's range is weak, so stealing pays), and the margin over pot odds
    to call; heads-up, any hand bets when the opponent's fold rate (after a
    check: ``TableRead.check_fold``) beats the bet's share of the pot by
    ``draw_steal_margin``; against opponents folding at most
    ``draw_station_fold`` of the time to a bet, bets and raises are thinner.
    Hold'em in a hand dealt heads-up, on the flop and turn, a hand with at least
    ``trap_equity`` that would bet checks instead ``trap_share`` of the time out of
    position and ``trap_share_ip`` in position (``HardBot._traps``).
    Hold'em heads-up after the flop, a steal needs a fold rate a third (a
    half-pot bet's break-even) plus ``steal_margin``, and bets ``steal_size``
    of the pot (``steal_size_river`` on the river): more than half, because a
    player who calls by pot odds calls a half-pot bet (a 25% price) with any
    pair, and folds its weak pairs to a price above 30% (see ``_steals``).
    """

    open_heads_up: float = 1.0
    open_size_heads_up: float = 2.0
    reraise_first: float = 0.58
    pre_margin_ip: float = 0.03
    pre_margin_oop: float = 0.07
    value_ip: float = 0.55
    value_oop: float = 0.58
    raise_at: float = 0.72
    call_margin: float = 0.03
    bet_keep: float = 0.45
    bet_rest: float = 0.2
    call_keep: float = 0.75
    call_rest: float = 0.35
    check_top: float = 0.3
    check_weight: float = 0.3
    cbet_keep: float = 0.45
    cbet_rest: float = 0.2
    bluff_equity: float = 0.35
    light_3bet: bool = False
    loose_allin_edge: float = 0.04
    loose_raise_edge: float = 0.10
    loose_limp_slack: float = 0.03
    loose_value_edge: float = 0.08
    draw_bet_first: float = 0.10
    draw_bet_first_ip: float = -0.15
    draw_bet_second: float = 0.07
    draw_raise_first: float = 0.15
    draw_raise_second: float = 0.17
    draw_call_first: float = 0.04
    draw_call_second: float = 0.02
    draw_steal_margin: float = 0.1
    steal_margin: float = 0.15
    steal_size: float = 0.8
    steal_size_river: float = 0.75
    draw_station_fold: float = 0.3
    trap_share: float = 0.5
    trap_share_ip: float = 0.3
    trap_equity: float = 0.75


class HardBot:
    """Equity against inferred ranges; see the module docstring.

    ``bluff_frequency`` is the probability of bluffing in a spot that
    qualifies (low equity, checked to, at most two opponents); semi-bluffs
    with strong draws happen at three times that rate. ``samples`` is the
    Monte Carlo budget per equity estimate. ``floor``: heads-up, play the solved
    floor (``felt.players.bots.floor_play``) unless the opponent's record shows a leak
    at 95%; off, hard exploits from the first hand (what it did before issue #25).
    ``postflop_floor``: in Hold'em heads-up, the floor also plays after the flop
    (``felt.players.bots.postflop``). Off by default: against the development half
    of the opponent styles it measured worse than hard's own postflop play (see
    docs/ai.md, "Hold'em postflop floor"). Heads-up after the flop hard's own play
    defends at least the minimum-defence share of its range against a bet unless the
    bettor's record shows honest bets (``_defends``; docs/ai.md, "Hard's heads-up
    postflop defence"), and checks part of its strong hands (``_traps``; docs/ai.md,
    "Hard's checking range").
    """

    name = "hard"

    def __init__(
        self,
        bluff_frequency: float = 0.1,
        samples: int = 1500,
        tuning: HardTuning | None = None,
        floor: bool = True,
        postflop_floor: bool = False,
    ) -> None:
        if not 0.0 <= bluff_frequency <= 1.0:
            raise ValueError(f"bluff_frequency must be in [0, 1], got {bluff_frequency}")
        if samples < 100:
            raise ValueError(f"samples must be at least 100, got {samples}")
        self.bluff_frequency = bluff_frequency
        self.samples = samples
        self.tuning = tuning or HardTuning()
        self.floor = floor
        self.postflop_floor = postflop_floor

    def decide(
        self,
        view: HandView,
        history: Sequence[Event],
        legal: LegalActions,
        rng: random.Random,
        table: TableStats | None = None,
    ) -> Decision:
        sit = situation(view, history, legal)
        if self.floor:
            move = floor_decision(sit, history, legal, rng, table, self.postflop_floor)
            if move is not None:
                return move
        read = TableRead.of(table, sit, self.bluff_frequency)
        if sit.variant == Variant.DRAW5:
            return self._draw(view, sit, history, legal, rng, read)
        return self._holdem(view, sit, legal, rng, read)

    # ------------------------------------------------------------------ hold'em

    def _holdem(
        self,
        view: HandView,
        sit: Situation,
        legal: LegalActions,
        rng: random.Random,
        read: TableRead,
    ) -> Decision:
        heads_up = len(view.seats) == 2
        raises = sit.bets_on(Street.PREFLOP)
        field = not heads_up and read.loose and sit.street == Street.PREFLOP
        if sit.street == Street.PREFLOP and raises == 0 and sit.to_call > 0 and not field:
            return self._open(view, sit, legal, read)
        sit = _contested(sit, read, in_blind=sit.seat in sit.blinds)
        ranges = [self._range(sit, o.seat, heads_up, read.style(o.seat)) for o in sit.opponents]
        equity = holdem_equity(
            sit.hole, sit.board, (), ranges, samples=self.samples, seed=rng.getrandbits(32)
        ).equity
        if field:
            return self._loose_preflop(sit, legal, equity, raises, read)
        if sit.street == Street.PREFLOP:
            return self._preflop(sit, legal, equity, raises, rng, read)
        return self._postflop(sit, legal, equity, rng, read)

    def _open(
        self, view: HandView, sit: Situation, legal: LegalActions, read: TableRead
    ) -> Decision:
        """First in (only blinds and limps before us): raise a position-wide range."""
        n = len(view.seats)
        index = [s.seat for s in view.seats].index(sit.seat)
        limpers = sum(1 for a in sit.on(Street.PREFLOP) if a.kind == "call")
        if n == 2:
            share = self.tuning.open_heads_up
        elif index == 0:
            share = 0.4
        else:
            share = {0: 0.45, 1: 0.30, 2: 0.22, 3: 0.18}.get(n - 1 - index, 0.14)
        if limpers:
            share = min(share, 0.3 if read.stations else 0.2)
        elif read.steal_fold > 0.55:
            # Those still to act give up to a raise too often: steal wider.
            share = min(1.0, share + 1.2 * (read.steal_fold - 0.55))
        pct = preflop_percentile(sit.hole)
        if pct > share:
            return check_or_fold(legal)
        if sit.effective_stack <= 12 * sit.unit:
            return all_in(legal)
        size = (self.tuning.open_size_heads_up if n == 2 else 3.0) + limpers
        return bet_to(legal, size * sit.unit)

    def _preflop(
        self,
        sit: Situation,
        legal: LegalActions,
        equity: float,
        raises: int,
        rng: random.Random,
        read: TableRead,
    ) -> Decision:
        current = sit.bet + sit.to_call
        if sit.to_call == 0:  # option after limps
            if equity >= 0.6:
                return pot_bet_to(sit, legal, 1.0)
            return check_or_call(legal)
        reraise = self.tuning.reraise_first if raises == 1 else 0.6
        if sit.opponent_count > 1:
            reraise += 0.05 * (sit.opponent_count - 1)
        committed = sit.to_call >= 0.35 * sit.stack
        if equity >= reraise and legal.can_raise:
            if sit.spr <= 4 or committed or raises >= 3:
                return all_in(legal)
            return bet_to(legal, 3 * current + (0 if sit.in_position else current))
        if committed:
            need = sit.effective_stack / (sit.pot + sit.effective_stack)
            return check_or_call(legal) if equity >= need + 0.02 else check_or_fold(legal)
        t = self.tuning
        margin = t.pre_margin_ip if sit.in_position else t.pre_margin_oop
        if equity < sit.pot_odds + margin:
            return check_or_fold(legal)
        if (
            t.light_3bet
            and raises == 1
            and sit.opponent_count == 1
            and legal.can_raise
            and rng.random() < read.bluff
        ):
            # A 3-bet bluff with a hand good enough to call: open ranges fold often.
            return bet_to(legal, 3 * current + (0 if sit.in_position else current))
        return check_or_call(legal)

    def _loose_preflop(
        self, sit: Situation, legal: LegalActions, equity: float, raises: int, read: TableRead
    ) -> Decision:
        """Preflop at a full table of loose players: play the cards' strength against the field.

        Loose players do not fold, so the pot is contested by most of the
        table and what counts is equity against all of them compared with a
        fair share (``1 / players``). Against maniacs every entry ends all-in,
        so a hand worth more than its share goes all-in and the rest fold.
        Against passive callers, hands clearly above their share raise for
        value (big: they call any size), hands near their share enter cheaply
        (the postflop edge over players who neither fold nor bet pays for the
        limp), the rest fold. No bluffs: nobody here folds.
        """
        t = self.tuning
        fair = 1.0 / (sit.opponent_count + 1)
        edge = equity - fair
        if read.wild:
            if edge >= t.loose_allin_edge:
                return all_in(legal)
            return check_or_fold(legal)
        current = sit.bet + sit.to_call
        if edge >= t.loose_raise_edge and legal.can_raise and raises < 2:
            if sit.spr <= 3:
                return all_in(legal)
            return pot_bet_to(sit, legal, 1.0 + read.value_boost)
        if sit.to_call == 0:
            return check_or_call(legal)
        if current <= 2 * sit.unit and edge >= -t.loose_limp_slack:
            return check_or_call(legal)
        if equity >= sit.pot_odds + t.pre_margin_ip and edge >= 0:
            return check_or_call(legal)
        return check_or_fold(legal)

    def _postflop(
        self,
        sit: Situation,
        legal: LegalActions,
        equity: float,
        rng: random.Random,
        read: TableRead,
    ) -> Decision:
        river = sit.street == Street.RIVER
        dr = draws(sit.hole, sit.board)
        drawing = dr.strong and not river
        extra = 0.07 * (sit.opponent_count - 1)
        t = self.tuning
        if sit.to_call == 0:
            threshold = (t.value_ip if sit.in_position else t.value_oop) + extra
            fair = 1.0 / (sit.opponent_count + 1)
            if read.stations:
                # They call with anything: a hand better than its fair share against
                # their ranges is a value bet (each caller pays into a pot we win).
                threshold = min(threshold, fair + (0.0 if sit.opponent_count == 1 else 0.2))
            if read.loose and sit.opponent_count > 1:
                # A loose field calls with worse: value-bet what beats its share by a
                # margin that grows with how often they fold (folds leave the better hands).
                threshold = min(threshold, fair + t.loose_value_edge + 0.3 * read.fold)
            if equity >= threshold:
                if self._traps(sit, read, equity, rng):
                    return check_or_call(legal)
                if equity >= 0.85 and sit.spr <= 3:
                    return all_in(legal)
                if read.loose and sit.opponent_count > 1:
                    share = (equity - fair) / (1.0 - fair)
                    if share >= 0.45 and sit.spr <= 4:
                        return all_in(legal)
                    return pot_bet_to(sit, legal, _clamp(0.5 + 1.2 * share, 0.5, 1.25))
                return pot_bet_to(sit, legal, _size(equity) + read.value_boost)
            if sit.opponent_count == 1 and self._steals(sit, read, rng):
                return pot_bet_to(sit, legal, t.steal_size_river if river else t.steal_size)
            if sit.opponent_count <= 2:
                if drawing and rng.random() < min(1.0, 3 * read.bluff):
                    return pot_bet_to(sit, legal, 0.6)
                if equity < t.bluff_equity and rng.random() < read.bluff:
                    return pot_bet_to(sit, legal, 0.6)
            return check_or_fold(legal)
        raise_at = t.raise_at + extra
        if read.stations:
            raise_at = min(raise_at, 1.0 / (sit.opponent_count + 1) + 0.35)
        if equity >= raise_at and legal.can_raise:
            if sit.spr <= 2.5 or sit.to_call >= 0.4 * sit.stack:
                return all_in(legal)
            return pot_bet_to(sit, legal, max(0.7, _size(equity) + read.value_boost))
        implied = 0.04 if drawing else 0.0
        if equity + implied >= sit.pot_odds + t.call_margin:
            if (
                drawing
                and sit.street == Street.FLOP
                and legal.can_raise
                and sit.opponent_count == 1
                and rng.random() < read.bluff
            ):
                return pot_bet_to(sit, legal, 0.8)
            return check_or_call(legal)
        if self._defends(sit, read):
            return check_or_call(legal)
        return check_or_fold(legal)

    def _defends(self, sit: Situation, read: TableRead) -> bool:
        """Heads-up after the flop, facing a bet its equity rule folds: call it anyway?

        Why: hard's read of a bet narrows the bettor's range to its strong hands, so
        against a player who bets often (and a best response bets exactly where hard
        gives up) it folded far more than the price allows: 57% to a flop half-pot
        bet, 94% to a flop shove, which a bet with no equity at all beats (docs/ai.md,
        "Where LBR wins against hard"). The floor here is minimum defence: against a
        bet of ``b`` pots, a range that folds more than ``b / (1 + b)`` of itself hands
        any two cards a profit, so hard continues with every hand whose percentile
        within its own range as it stands (``_defence_percentile``) is above that
        share; the bottom of its range still folds. It keeps the folding exploit
        against a player whose record shows, at 95%, that its bets are value
        (``TableRead.value_heavy``): paying off honest bets is what cost the
        postflop floor against the nit and the value station. Only in hands dealt
        heads-up: at full tables the ranges and prices are another game.
        """
        if (
            sit.dealt != 2
            or sit.opponent_count != 1
            or sit.street == Street.PREFLOP
            or sit.to_call <= 0
            or read.value_heavy
        ):
            return False
        pct = _defence_percentile(sit)
        if pct is None:
            return False
        size = sit.to_call / max(sit.pot - sit.to_call, 1)
        return pct > size / (1.0 + size)

    def _traps(self, sit: Situation, read: TableRead, equity: float, rng: random.Random) -> bool:
        """Heads-up on the flop or turn, a strong hand it would bet: check it instead?

        Why: hard bet every hand its equity rule rated a value bet, so a hand dealt
        heads-up that checked the flop or turn held no strong hand, and a best response
        shoved into the check with anything: hard folded 89% to a flop shove and LBR's
        flop and turn shoves were most of what it won (docs/ai.md, "Shoves after the
        defence"; measured in "Hard's checking range"). Out of position a checked strong
        hand (``trap_share``) answers a bet by the equity rule: it check-raises or calls
        a smaller bet and calls a shove, so a bet into the check is no longer free money.
        In position (``trap_share_ip``, when checked to) the check ends the street; it
        puts strong hands in the range hard carries into the next street. Not on the
        river (no later street to win the chips back on) and not against a record that
        shows honest or passive bets at 95% (``TableRead.value_heavy``): a player who
        seldom bets when checked to would just be given free cards. Before that record
        shows (its first 30 or so hands), a passive player is trapped against too.
        """
        t = self.tuning
        share = t.trap_share if not sit.in_position else t.trap_share_ip
        if (
            share <= 0.0
            or sit.dealt != 2
            or sit.opponent_count != 1
            or sit.street not in (Street.FLOP, Street.TURN)
            or equity < t.trap_equity
            or read.value_heavy
        ):
            return False
        return rng.random() < share

    def _steals(self, sit: Situation, read: TableRead, rng: random.Random) -> bool:
        """Heads-up after the flop with nothing to call: bet as a steal?

        A half-pot bet risks a third of the pot it would win, so it pays with any
        two cards against a player who folds more than that (plus
        ``steal_margin``). The steal itself is bigger (``HardTuning.steal_size``,
        0.8 of the pot, 0.75 on the river): a player who prices its calls calls a
        half-pot bet, which offers 25%, with a weak pair, the hand it most often
        checks with, and folds it at 30% and above; the fold rate read here was
        measured against the table's bets, most of them smaller, so it understates
        how often the bigger bet takes the pot. At half pot the steals lost: in a
        breakdown of hard's 6-max hands against the normal bot, the hands with a
        river steal lost about 15 big blinds each, called by pairs. After a check
        the fold rate is the one of its checks (``TableRead.check_fold``: a player
        who bets what it keeps checks what it gives up). How often a qualifying
        spot is taken stays tied to the configured bluff frequency (three times
        its table-scaled rate), so a bot configured never to bluff never steals.

        In a pot dealt to more players and left heads-up, the fold rate is the
        one measured in pots down to two players (``TableRead.hu_fold``), not
        over every pot: folding to a bet into several players overstates how
        often a player gives up heads-up, and that mistake cost hard its edge
        over the normal field at 6-max.
        """
        checked = any(a.kind == "check" and a.seat != sit.seat for a in sit.on(sit.street))
        if sit.dealt == 2:
            fold = read.check_fold[1] if checked else read.fold
        else:
            # A full-table pot left heads-up: only folds in such pots count (see ``hu_fold``).
            fold = read.hu_check_fold if checked else read.hu_fold
        if fold < 1.0 / 3.0 + self.tuning.steal_margin:
            return False
        return rng.random() < min(1.0, 3 * read.bluff)

    def _range(self, sit: Situation, seat: int, heads_up: bool, style: Style) -> Range:
        """The opponent's range: preflop read, then narrowed street by street.

        How wide each preflop action is and how much a later bet, call or
        check narrows come from the seat's observed style (``Style``): a
        player who raises every hand has a raising range of every hand, one
        who never folds keeps its whole range when it calls.
        """
        acts = sit.on(Street.PREFLOP)
        mine = [a for a in acts if a.seat == seat]
        raise_levels = [
            i + 1 for i, a in enumerate(a for a in acts if a.kind == "bet") if a.seat == seat
        ]
        big = any(a.all_in for a in mine if a.kind == "bet")
        if raise_levels:
            level = raise_levels[-1]
            pct = {1: 0.5 if heads_up else 0.22, 2: 0.14}.get(level, 0.06)
            opened = _open_rate(sit, seat, style) if level == 1 else None
            if opened is not None:
                # An open raise: as wide as this seat opens from where it sat.
                pct = max(0.04, opened)
            elif style.known:
                pfr = style.pfr
                pct = max(pct * 0.5, min(1.0, pfr * (0.5 + 0.5 * pfr) ** (level - 1)))
            if style.known and style.vpip >= LOOSE_VPIP:
                # A loose player is not selective: it raises (and shoves) from everything it plays.
                pct = max(pct, style.vpip)
            elif big:
                pct = min(pct, max(0.12, style.pfr * 0.5 if style.known else 0.0))
            pre = (_share(pct), 0.0)
        elif any(a.kind == "call" for a in mine):
            faced = sum(1 for a in acts if a.kind == "bet" and a.seat != seat)
            loose = style.vpip / 0.45 if style.known else 1.0
            if faced == 0:
                pre = (_share(0.85 * max(loose, 0.6)), 0.12)
            elif faced == 1:
                pre = (_share(0.45 * loose), 0.05)
            else:
                pre = (_share(0.16 * loose), 0.03)
        else:
            pre = (1.0, 0.10)
        steps: list[tuple[tuple[Card, ...], str]] = []
        for street, count in _BOARD_STREETS:
            if len(sit.board) < count:
                break
            acts_here = sit.on(street)
            moves = [a.kind for a in acts_here if a.seat == seat]
            first_bet = next((a for a in acts_here if a.kind == "bet"), None)
            cbet = (
                street == Street.FLOP
                and first_bet is not None
                and first_bet.seat == seat
                and sit.last_aggressor(Street.PREFLOP) == seat
                and moves.count("bet") == 1
            )
            if cbet:
                how = "cbet"  # continuation bets come from a wide range
            elif "bet" in moves:
                how = "bet"
            elif "call" in moves:
                how = "call"
            elif "check" in moves:
                how = "check"
            else:
                continue
            steps.append((tuple(sit.board[:count]), how))
        return _narrowed(pre, tuple(steps), style.tuned(self.tuning))

    # ------------------------------------------------------------------ draw

    def _draw(
        self,
        view: HandView,
        sit: Situation,
        history: Sequence[Event],
        legal: LegalActions,
        rng: random.Random,
        read: TableRead,
    ) -> Decision:
        dead: tuple[Card, ...] = ()
        for e in history:
            if isinstance(e, CardsDrawn) and e.seat == sit.seat:
                dead = tuple(c for c in e.discarded if c is not None)
        models = [self._draw_model(sit, o.seat, read.style(o.seat)) for o in sit.opponents]
        seed = rng.getrandbits(32)
        if legal.max_discard is not None or sit.street == Street.FIRST_BET:
            best_keep, equity = self._best_keep(sit.hole, dead, models, seed)
            if legal.max_discard is not None:
                throw = tuple(c for c in sit.hole if c not in best_keep)
                return Discard(legal.seat, throw[: legal.max_discard])
            styles = [read.style(o.seat) for o in sit.opponents]
            if sit.to_call == 0 and all(s.known for s in styles):
                # A bet before the draw is called by the hands each seat plays, not by
                # its whole checking range: judge the value bet against those.
                calling = [_standing_pat(_first_callers(s.first_fold), s) for s in styles]
                called = self._mixture_equity(sit.hole, best_keep, dead, calling, seed)
                equity = min(equity, called)
        else:
            equity = self._mixture_equity(sit.hole, tuple(sit.hole), dead, models, seed)
            if sit.to_call == 0 and _calls_with_pairs_only(sit, read):
                # A value bet is paid only by the hands that call: judge it against those.
                calling = [_calling_models(m) for m in models]
                called = self._mixture_equity(sit.hole, tuple(sit.hole), dead, calling, seed)
                equity = min(equity, called)
                floor = _kept_pair_floor(sit, read)
                if floor is not None:
                    # It kept one of the few pairs it calls a bet with before the draw.
                    equity = min(equity, _equity_against_pairs(sit.hole, floor))
        return self._draw_bet(sit, legal, equity, rng, read)

    def _best_keep(
        self,
        hole: tuple[Card, ...],
        dead: tuple[Card, ...],
        models: list[list[tuple[float, DrawOpponent]]],
        seed: int,
    ) -> tuple[tuple[Card, ...], float]:
        textbook = set(standard_keep(hole))
        best: tuple[tuple[Card, ...], float] = (hole, -1.0)
        best_score = -1.0
        for keep in candidate_keeps(hole):
            if len(keep) < 2:
                continue
            e = self._mixture_equity(hole, keep, dead, models, seed, scale=0.5)
            # Another keep must beat the textbook draw by more than the sampling noise of
            # these small estimates, or noise picks it (a kicker kept with a pair, say).
            score = e + (_KEEP_MARGIN if set(keep) == textbook else 0.0)
            if score > best_score:
                best, best_score = (keep, e), score
        return best

    def _mixture_equity(
        self,
        hole: tuple[Card, ...],
        keep: tuple[Card, ...],
        dead: tuple[Card, ...],
        models: list[list[tuple[float, DrawOpponent]]],
        seed: int,
        scale: float = 1.0,
    ) -> float:
        """Equity against the opponents' model mixtures.

        Heads-up every component is played; multiway the heaviest joint components
        (one component per opponent, ``_joint_components``), each with its weight's
        share of the budget. Multiway hard used to play each opponent's likeliest
        component alone: a re-raiser read as half two pair, half a pair became two pair
        or better for certain, and hard folded two pair getting seven to one.
        """
        budget = max(200, int(self.samples * scale))
        if len(models) == 1:
            total = 0.0
            for weight, model in models[0]:
                n = max(100, int(budget * weight))
                if model.draws == 0 and model.kept_min >= H.THREE_OF_A_KIND:
                    # Rare pat hands are sampled by rejection (under 4% of deals
                    # qualify): a smaller budget keeps the decision in a few ms.
                    n = min(n, 300)
                total += weight * draw_equity(hole, keep, dead, [model], n, seed).equity
            return total
        total = 0.0
        for weight, combo in _joint_components(models, _MULTIWAY_COMBOS):
            n = max(_MULTIWAY_MIN_SAMPLES, int(budget * weight))
            if any(m.draws == 0 and m.kept_min >= H.THREE_OF_A_KIND for m in combo):
                n = min(n, 300)  # rejection-sampled pat hands: see above
            total += weight * draw_equity(hole, keep, dead, combo, n, seed).equity
        return total

    def _draw_model(
        self, sit: Situation, seat: int, style: Style
    ) -> list[tuple[float, DrawOpponent]]:
        """What an opponent holds, as weighted ``DrawOpponent`` models, from public actions.

        The textbook reading (a bet means a pair, pat means a straight) is
        trusted as far as the seat's record earns it: ``style.credible`` is
        how much its bets mean strength (a maniac's mean little), and
        ``style.honest_draws`` how often its shown hands fit its draws (a
        player who stands pat with anything is not holding straights).
        """
        first = [a for a in sit.on(Street.FIRST_BET) if a.seat == seat]
        second = [a for a in sit.on(Street.SECOND_BET) if a.seat == seat]
        bet_first = any(a.kind == "bet" for a in first)
        called_first = any(a.kind == "call" for a in first)
        bets = [a.seat for a in sit.on(Street.FIRST_BET) if a.kind == "bet"]
        reraised = seat in bets[1:]
        drew = sit.draws.get(seat)
        mix: list[tuple[float, DrawOpponent]]
        if drew is None:
            if reraised or bet_first:
                floor = 0.5 if reraised else 0.25
                strong = _strong_bets(style, floor) if sit.dealt == 2 else floor
                mix = [(strong, DrawOpponent(1, H.TWO_PAIR)), (1 - strong, DrawOpponent(3, H.PAIR))]
                opened = None if reraised else _draw_open_rate(sit, seat, style)
                if opened is not None:
                    # An open from a seat that opens more hands than are dealt a pair:
                    # the rest of its opens hold nothing (drawing three to high cards).
                    made = _clamp(_DEALT_MADE / max(opened, 0.05), 0.0, 1.0)
                    mix = [(made * w, m) for w, m in mix]
                    if made < 1.0:
                        mix.append((1.0 - made, DrawOpponent(3)))
            elif called_first:
                mix = [(0.65, DrawOpponent(3, H.PAIR)), (0.35, DrawOpponent(1))]
            else:  # checked or not acted yet: weaker than a bettor
                mix = [(0.4, DrawOpponent(3, H.PAIR)), (0.6, DrawOpponent(3))]
            mix = _standing_pat(mix, style)
        elif drew == 0:
            strong = (0.85 if bet_first or called_first else 0.6) * style.honest_draws
            mix = [(strong, DrawOpponent(0, H.STRAIGHT)), (1 - strong, DrawOpponent(0))]
        elif drew == 1:
            mix = [(0.5, DrawOpponent(1, H.TWO_PAIR)), (0.5, DrawOpponent(1))]
        elif drew == 2:
            mix = [(0.8, DrawOpponent(2, H.THREE_OF_A_KIND)), (0.2, DrawOpponent(2, H.PAIR))]
        else:
            paired = (0.85 if bet_first or called_first else 0.6) * style.honest_draws
            mix = [(paired, DrawOpponent(drew, H.PAIR)), (1 - paired, DrawOpponent(drew))]
        later_bets = [a.seat for a in sit.on(Street.SECOND_BET) if a.kind == "bet"]
        # A raise after the draw reads as strong, unless the seat's shown bets were mostly
        # weak (a maniac's or a random player's): those raise with whatever they hold.
        raised_later = seat in later_bets[1:] and style.bluffs < RAISED_BLUFFS
        if any(a.kind == "bet" for a in second):
            floor = H.TWO_PAIR if drew is None or drew >= 2 else H.THREE_OF_A_KIND
            # As strong as its shown bets were: one that never showed a pair after betting
            # bets its improved hands only.
            strong = 0.6
            if style.known and sit.dealt == 2:  # heads-up: measured there only
                strong = _clamp(1.0 - style.bluffs, 0.6, 0.95)
            if raised_later:
                strong = max(strong, RAISED_STRONG)
            mix = [(strong, DrawOpponent(0, floor)), *[((1 - strong) * w, m) for w, m in mix]]
        elif any(a.kind == "call" for a in second):
            mix = [(0.4, DrawOpponent(0, H.PAIR)), *[(0.6 * w, m) for w, m in mix]]
        elif any(a.kind == "check" for a in second) and drew is not None:
            # Checked after the draw: often missed; shift weight to the unconstrained model.
            mix = [(0.4, DrawOpponent(drew)), *[(0.6 * w, m) for w, m in mix]]
        c = style.credible
        if raised_later:
            # A raise after the draw is made into a bet already showing strength: even
            # a player whose bets mean little raises there mostly with made hands.
            c = max(c, RAISED_CREDIBLE)
        if c < 1.0:
            # Bets that mean little: blend toward an unconstrained hand.
            loose = DrawOpponent(drew if drew is not None else 0)
            mix = [(1 - c, loose), *[(c * w, m) for w, m in mix]]
        return mix

    def _draw_bet(
        self,
        sit: Situation,
        legal: LegalActions,
        equity: float,
        rng: random.Random,
        read: TableRead,
    ) -> Decision:
        n = sit.opponent_count
        fair = 1.0 / (n + 1)
        second = sit.street == Street.SECOND_BET
        t = self.tuning
        if sit.to_call == 0:
            first_margin = t.draw_bet_first
            if sit.in_position:
                # The checker's range is weak only if it bets its strong hands first.
                first_margin += (t.draw_bet_first_ip - t.draw_bet_first) * _check_caps(sit, read)
            margin = t.draw_bet_second if second else first_margin
            exact = all(read.style(o.seat).stands_pat >= 0.5 for o in sit.opponents)
            if (read.stations or read.fold <= t.draw_station_fold) and (second or n == 1 or exact):
                # They pay off anything better than fair. Not multiway before the draw,
                # unless they keep what they were dealt: there the equity is already
                # against the callers (``_first_callers``), and a bet a few points over a
                # fifth of the pot barely pays for the coarse read of several drawing ranges.
                margin = min(margin, 0.0)
            if equity >= fair + margin:
                return bet_to(legal, sit.unit)
            if _kept_pair_floor(sit, read) is not None:
                # Heads-up after the draw, it kept a pair and calls with every pair: no
                # steal, no bluff.
                return check_or_fold(legal)
            if n == 1:
                # A steal: pays when they fold more often than the bet's share of the pot.
                checked = any(a.kind == "check" and a.seat != sit.seat for a in sit.on(sit.street))
                if checked:
                    fold = read.check_fold[second]
                else:
                    fold = read.later_fold if second and sit.dealt == 2 else read.fold
                if fold >= sit.unit / (sit.pot + sit.unit) + t.draw_steal_margin:
                    return bet_to(legal, sit.unit)
            elif (
                not second
                and _all_fold(sit, read) >= sit.unit / (sit.pot + sit.unit) + t.draw_steal_margin
            ):
                return bet_to(legal, sit.unit)  # the antes, from a table that gives up
            bluff = read.bluff * (2.0 if second else 1.0)
            if second and sit.dealt == 2:
                # Heads-up after the draw only where its folds after the draw pay for the bet.
                paid = read.later_fold >= sit.unit / (sit.pot + sit.unit)
                bluff = 2.0 * read.later_bluff if paid else 0.0
            if n == 1 and equity < 0.35 and rng.random() < bluff:
                return bet_to(legal, sit.unit)
            return check_or_fold(legal)
        raise_margin = t.draw_raise_second if second else t.draw_raise_first
        if read.stations or read.fold <= t.draw_station_fold:
            raise_margin = min(raise_margin, 0.05)
        if equity >= fair + raise_margin:
            return bet_to(legal, sit.bet + sit.to_call + sit.unit)
        margin = t.draw_call_second if second else t.draw_call_first
        if equity >= sit.pot_odds + margin:
            return check_or_call(legal)
        return check_or_fold(legal)


# Multiway mixture equity (``HardBot._mixture_equity``): at most this many joint
# components (one model component per opponent), the heaviest, each sampled at least
# this many times.
_MULTIWAY_COMBOS = 12
_MULTIWAY_MIN_SAMPLES = 60


def _joint_components(
    models: Sequence[Sequence[tuple[float, DrawOpponent]]], limit: int
) -> list[tuple[float, list[DrawOpponent]]]:
    """The ``limit`` heaviest joint components of independent per-opponent mixtures.

    A joint component picks one component of each opponent's mixture; its weight is
    the product of theirs. Built opponent by opponent keeping the ``limit`` heaviest
    partial products (a beam: exact while the product has at most ``limit`` members),
    then renormalised to sum to 1 over the components kept.
    """
    beam: list[tuple[float, list[DrawOpponent]]] = [(1.0, [])]
    for mix in models:
        grown = [(w * v, [*combo, m]) for w, combo in beam for v, m in mix if v > 0.0]
        grown.sort(key=lambda wc: -wc[0])
        beam = grown[:limit]
    mass = sum(w for w, _ in beam)
    return [(w / mass, combo) for w, combo in beam]


# After the draw, a raise (a bet over someone's bet) is two pair or better at least this
# often, and its strength is believed at least this far even from a player whose bets
# mean little (``Style.credible``): without them hard paid off raises after the draw.
RAISED_STRONG = 0.85
RAISED_CREDIBLE = 0.75
# ... except from a seat whose shown bets held at most a pair this often (``Style.bluffs``):
# the raise read cost hard most of its win against four maniacs 5-handed (docs/ai.md,
# "Draw 5-handed against raisers of anything").
RAISED_BLUFFS = 0.5
# ``_draw_open_rate``: chances to open from a seat class before Draw reads the seat's own
# open rate. The read changes hard's model only above half (the share of deals holding a
# pair), where it credits the opener with hands holding nothing. With Hold'em's 5 chances a
# short run of opens (5 of 5, a chance in 32 for a seat opening half its hands) reads 0.67
# heads-up after the shrink toward the prior, a quarter of its opens as nothing; at 20 the raw
# rate's standard error is at most 0.11 and two thirds of the shrunk rate is the record.
DRAW_OPEN_SAMPLE = 20

# A first-round raise rate at which a player's checks are read as giving up its strong hands.
_CAPPING_PFR = 0.15


def _check_caps(sit: Situation, read: TableRead) -> float:
    """How far the checks before us cap the checkers' ranges, 0 to 1 (1 if unknown).

    A player who opens its good hands checks the rest, so its check is weak;
    one who never bets before the draw checks everything, strong hands too.
    The least capped checker counts.
    """
    cap = 1.0
    for a in sit.on(sit.street):
        if a.kind == "check" and a.seat != sit.seat:
            style = read.style(a.seat)
            if style.known:
                cap = min(cap, _clamp(style.pfr / _CAPPING_PFR, 0.0, 1.0))
    return cap


def _all_fold(sit: Situation, read: TableRead) -> float:
    """How likely every live opponent folds to a bet, from each one's record (0 if unknown).

    A seat that checked folds as often as its checks do (it bets the hands it
    keeps); one yet to act as often as it folds to bets in general.
    """
    p = 1.0
    for o in sit.opponents:
        style = read.style(o.seat)
        if not style.known:
            return 0.0
        checked = any(a.kind == "check" and a.seat == o.seat for a in sit.on(sit.street))
        p *= _check_fold(style.fold, style.pfr) if checked else style.fold
    return p


def _open_rate(sit: Situation, seat: int, style: Style) -> float | None:
    """The rate ``seat`` raises first in from its seat class, if its preflop raise was an open.

    An open is a first raise with nobody in before it (only folds); late means at
    most two seats were left to act behind it (``SeatStats.late_open_chances``).
    None when the raise was not an open or the seat's record has too few chances.
    """
    folds = 0
    for a in sit.on(Street.PREFLOP):
        if a.kind in ("call", "bet") and a.seat != seat:
            return None
        if a.kind == "fold":
            folds += 1
        if a.seat == seat:
            if a.kind != "bet":
                return None
            behind = max(sit.dealt, len(sit.order)) - folds - 1
            return style.opens[behind <= 2]
    return None


def _draw_open_rate(sit: Situation, seat: int, style: Style) -> float | None:
    """Draw: the rate ``seat`` opens from its seat class, if its first-round bet was an open.

    An open is the round's first bet, with only checks and folds before it; late means
    at most two seats were left to act behind it (``SeatStats.late_open_chances``).
    The rate is the seat's own record (``Style.draw_opens``), not the textbook's or the
    floor's: a loose opener opens with hands that hold nothing, and a read of its bet as
    a pair or better folds too much against it before the draw. None when the bet was
    not an open or the record has fewer than ``DRAW_OPEN_SAMPLE`` chances from that seat
    class (then the textbook read stands).
    """
    folds = 0
    for a in sit.on(Street.FIRST_BET):
        if a.seat == seat:
            # Its first action: a bet here is an open; after its own check, a bet is a
            # check-raise (the round ends when everyone checks).
            if a.kind != "bet":
                return None
            behind = max(sit.dealt, len(sit.order)) - folds - 1
            return style.draw_opens[behind <= 2]
        if a.kind in ("bet", "call"):
            return None
        if a.kind == "fold":
            folds += 1
    return None


def _calls_with_pairs_only(sit: Situation, read: TableRead) -> bool:
    """After the draw, do the live opponents call a bet only with a pair or better?

    Every player with a known record that folds to bets and is not wild
    (aggression at most 0.4: not a maniac or a random bettor) plays that way
    after the draw: what folds is the busted hands, what calls is a pair up.
    Stations (folding under a tenth of the time) call with anything.
    """
    styles = [read.style(o.seat) for o in sit.opponents]
    return bool(styles) and all(s.known and s.aggression <= 0.4 and s.fold >= 0.1 for s in styles)


# Share of five-card deals holding a pair or better (a pair 42.3%, two pair 4.8%, trips 2.1%...).
_DEALT_MADE = 0.5
# Share of five-card deals holding two pair or better (two pair 4.8%, trips 2.1%, pat 0.8%).
_DEALT_TWO_PAIR = 0.076


def _strong_bets(style: Style, floor: float) -> float:
    """The share of a first-round bet (or raise) that is two pair or better, at least ``floor``.

    A seat bets first-round pots with its top ``pfr`` share of hands: one that bets
    only one hand in thirteen bets two pair or better, one that bets a third of its
    hands mostly pairs (``floor``, the textbook read, stays).
    """
    if not style.known:
        return floor
    return _q(_clamp(_DEALT_TWO_PAIR / max(style.pfr, 0.01), floor, 0.95))


# Share of five-card deals holding a pair of one given rank (42.3% / 13).
_DEALT_PAIR_OF_RANK = 0.0325
_ACE = 12
_DECK = range(52)


def _kept_pair_floor(sit: Situation, read: TableRead) -> int | None:
    """After the draw heads-up: the lowest pair rank the opponent can hold, if it is selective.

    A seat that called a bet before the draw and then drew three kept a pair;
    if it folds most hands to such bets (``first_fold``), the pairs it calls
    with are its top ones: its continuing share (``1 - first_fold``) less the
    two pair and better, in pairs from aces down (a rock calling with jacks or
    better shows about a sixth of hands continuing: three or four ranks).
    Rounded up: the range errs a rank wide (a seat calling a little wider than
    its fold rate says is still value-bet), never narrower than it is. None when
    the read does not apply: not heads-up, it did not call a first-round bet,
    did not draw three, or calls with more than half its pairs.
    """
    if sit.street != Street.SECOND_BET or sit.dealt != 2:
        return None
    seat = sit.opponents[0].seat
    style = read.style(seat)
    if not style.known or sit.draws.get(seat) != 3:
        return None
    called = any(a.kind == "call" and a.seat == seat for a in sit.on(Street.FIRST_BET))
    if not called:
        return None
    pairs = (1.0 - style.first_fold - _DEALT_TWO_PAIR) / _DEALT_PAIR_OF_RANK
    ranks = max(1, -int(-pairs // 1))  # ceil
    if ranks > 6:
        return None
    return _ACE + 1 - ranks


@cache
def _pair_draw_values(floor: int) -> tuple[int, ...]:
    """Sorted final hand values of a pair of rank ``floor`` or better kept, three cards drawn.

    Sampled once per floor with a fixed seed (card removal by hero's cards is ignored).
    """
    rng = random.Random(floor)
    hands = []
    for _ in range(3000):
        rank = rng.randint(floor, _ACE)
        a, b = rng.sample(range(4), 2)
        pair = (rank * 4 + a, rank * 4 + b)
        rest = [c for c in rng.sample(_DECK, 5) if c not in pair][:3]
        hands.append((*pair, *rest))
    return tuple(sorted(evaluate_many(hands)))


def _equity_against_pairs(hole: Sequence[Card], floor: int) -> float:
    """Showdown equity of hero's final five cards against ``_pair_draw_values(floor)``."""
    values = _pair_draw_values(floor)
    v = evaluate_many([tuple(hole)])[0]
    return (bisect_left(values, v) + bisect_right(values, v)) / (2 * len(values))


def _first_callers(fold: float) -> list[tuple[float, DrawOpponent]]:
    """The hands that call a bet before the draw, from how often the seat folds to one.

    The seat folds its worst hands: what calls is its top ``1 - fold`` share,
    every made hand first (a pair drawing three, some two pair drawing one),
    then unpaired hands, modelled as two kept cards drawing three. A player
    folding most bets calls with made hands only; one who never folds with
    anything.
    """
    made = _clamp(_DEALT_MADE / max(0.05, 1.0 - fold), 0.0, 1.0)
    mix = [(0.85 * made, DrawOpponent(3, H.PAIR)), (0.15 * made, DrawOpponent(1, H.TWO_PAIR))]
    if made < 1.0:
        mix.append((1.0 - made, DrawOpponent(3)))
    return mix


def _standing_pat(
    mix: list[tuple[float, DrawOpponent]], style: Style
) -> list[tuple[float, DrawOpponent]]:
    """A pre-draw model blended toward the dealt hand kept pat, as far as the seat does that."""
    w = style.stands_pat
    if w <= 0.0:
        return mix
    return [(w, DrawOpponent(0)), *[((1.0 - w) * x, m) for x, m in mix]]


def _calling_models(
    mix: list[tuple[float, DrawOpponent]],
) -> list[tuple[float, DrawOpponent]]:
    """An opponent's draw model restricted to the hands that call a bet: a pair or better kept."""
    out = []
    for weight, model in mix:
        if model.kept_min < H.PAIR and model.draws <= 3:
            model = DrawOpponent(model.draws, H.PAIR)
        out.append((weight, model))
    return out


def _contested(sit: Situation, read: TableRead, in_blind: bool) -> Situation:
    """``sit`` with only the opponents expected to contest the pot when facing a bet.

    Opponents who already matched the bet (or are all-in) are in. Those still
    to act facing it continue as often as their record says they do not
    fold: the expected number of them (the least folding first) is kept and
    the rest dropped. Counting every seat still to act as a caller would
    price a big raise as if the whole table called it, folding aces to a
    random player's shove because five hands are out; against a field that
    folds half the time only about half of them are. Seats with no record
    yet all count.

    A field that is not loose (``TableRead.loose`` False) is thinned only before the
    flop and only for a seat that posted no blind (``in_blind`` False, from
    ``Situation.blinds``): there the seats still to act are mostly the blinds, who
    fold to a raise most of the time, and counting each as a random hand that calls
    priced every open (and every re-raise of hard's own open) as a pot against two
    more random hands: at 6-max hard called or re-raised an open on the button 2% of
    the time where the prober, a development style that prices its calls, did 24% and
    won by it (docs/ai.md, "6-max Hold'em: the seats behind an open (stop 42)"). A
    seat that is kept still counts as a random hand, so the estimate stays cautious
    where someone behind is expected to go on. From the small blind (whose calls
    play out of position) thinning measured no better; the big blind acts last
    before the flop, so only a re-raise after its call leaves seats behind it. After
    the flop a tight field's few callers hold strong hands, which a count of them
    alone would not capture, so every seat still counts there.
    """
    if sit.to_call <= 0 or sit.opponent_count < 2:
        return sit
    if not read.loose and (in_blind or sit.street != Street.PREFLOP):
        return sit
    current = sit.bet + sit.to_call
    behind = [o for o in sit.opponents if o.bet < current and o.stack > 0]
    styles = [read.style(o.seat) for o in behind]
    if not behind or not all(s.known for s in styles):
        return sit
    expected = sum(1.0 - s.fold for s in styles)
    ranked = [
        o.seat
        for _, o in sorted(zip((s.fold for s in styles), behind, strict=True), key=lambda x: x[0])
    ]
    kept = set(ranked[: int(expected + 0.5)])
    opponents = tuple(o for o in sit.opponents if o not in behind or o.seat in kept)
    if not opponents:
        return sit
    return replace(sit, opponents=opponents)


def _floor_range(sit: Situation) -> tuple[postflop.StreetState, tuple[float, ...], int] | None:
    """Hard's own range at this decision, as the postflop floor's range model has it.

    Both players' ranges start the flop from the preflop floor's line (``"rc"``,
    ``"rrc"``; any other line, a limp say, from every combo) and each public action
    since narrows its player's range by the floor's rules (``postflop.street_start``
    and ``postflop.narrow``). The street's strengths are each combo's equity against
    the opponent's range at the start of the street, over ``DEFENCE_RUNOUTS``
    completions of the board (exact on the river): the floor's ten cost about 20 ms of
    CPU a street, and a river decision with no street cached pays for three, over
    hard's 50 ms budget. Cached by public line (``_own_range``), so the other hole
    cards a best response asks about and the hand's later streets reuse it. Returns
    the street's state, hard's weights in it and its player index (``postflop.IP``
    or ``OOP``), or None when the line cannot be read.
    """
    if len(sit.order) != 2:
        return None
    ip_seat = sit.order[-1]
    line = postflop.read_line(sit.actions, ip_seat, sit.street, sit.unit)
    if line is None:
        return None
    me = postflop.IP if sit.seat == ip_seat else postflop.OOP
    found = _own_range(line.pre, sit.board, line.streets[:-1], line.streets[-1], me)
    if found is None:
        return None
    return found[0], found[1], me


@lru_cache(maxsize=64)
def _own_range(
    pre: str,
    board: tuple[Card, ...],
    past: tuple[tuple[postflop.Move, ...], ...],
    moves: tuple[postflop.Move, ...],
    me: int,
) -> tuple[postflop.StreetState, tuple[float, ...]] | None:
    """The street's state and ``me``'s range after the street's ``moves`` (``_floor_range``)."""
    st = postflop.street_start(pre, board, past, DEFENCE_RUNOUTS)
    if st is None:
        return None
    return st, postflop.narrow(st, board, moves)[me]


def _defence_percentile(sit: Situation) -> float | None:
    """Where hard's hand stands in its own range (``_floor_range``), 0 the bottom, 1 the top.

    By equity against the bettor's range at the start of the street, ties in the
    floor's fixed shuffle of the board; None when there is no range to stand in.
    """
    found = _floor_range(sit)
    if found is None:
        return None
    st, weights, me = found
    return postflop.percentile(st, weights, me, postflop.combo_index(sit.hole))


def _value_heavy(stats: SeatStats) -> bool:
    """Does the record show, at 95%, that this player's bets after the flop are rarely bluffs?

    Any of three public measures, each at 95% (Wilson) over at least 30 observations
    (showdowns: ``VALUE_HEAVY_SHOWN``):

    - its shown hands after betting a later street were at most one pair less often
      than a balanced half-pot bettor bluffs (``VALUE_HEAVY_WEAK``);
    - it bets a smaller share of its later actions than the postflop floor does
      (``postflop.AGGRESSION_REFERENCE`` less the floor's tolerance, as ``floor_play``
      reads a passive record): a player who seldom bets leaves its bluffs out;
    - it enters fewer than ``TIGHT_VPIP`` of its pots: its range after the flop is
      strong hands, and so are its bets. Showdowns after a bet come slowly (a nit
      showed ten in 400 heads-up hands, none weak, still short of 95% against a
      quarter), while every hand shows whether it entered: without this, hard's
      defence paid off the nit's bets for the first few hundred hands of a table.

    With few hands, none holds, and hard defends.
    """
    shown = stats.shown_bettor
    if shown >= VALUE_HEAVY_SHOWN and wilson(stats.shown_bettor_weak, shown)[1] < VALUE_HEAVY_WEAK:
        return True
    acts = stats.bets + stats.calls + stats.checks
    if deviates(stats.bets, acts, postflop.AGGRESSION_REFERENCE, TOLERANCE) < 0:
        return True
    return stats.hands >= 30 and wilson(stats.vpip, stats.hands)[1] < TIGHT_VPIP


def _q(x: float, step: float = 0.05) -> float:
    """Round to ``step`` so that ranges and tunings built from rates stay few (and cached)."""
    return round(round(x / step) * step, 4)


def _share(x: float) -> float:
    """A preflop range share from rates: on a 2% grid, never empty, at most every hand."""
    return _clamp(round(x / 0.02) * 0.02, 0.04, 1.0)


def _clamp(x: float, low: float, high: float) -> float:
    return max(low, min(high, x))


def _opens(stats: SeatStats, late: bool, heads_up: bool, sample: int = 5) -> float | None:
    """Its first-in raise rate from early or late seats, or None with fewer than ``sample``
    chances there (5 for Hold'em's open read; Draw's reads more, ``DRAW_OPEN_SAMPLE``).

    The prior is a sound player's: half the hands on the button heads-up, a
    third from the button and small blind, a sixth earlier.
    """
    chances = stats.late_open_chances if late else stats.open_chances - stats.late_open_chances
    if chances < sample:
        return None
    prior = 0.5 if heads_up else (0.33 if late else 0.17)
    return _q(stats.open_rate(late, prior), 0.02)


@dataclass(frozen=True, slots=True)
class Style:
    """One opponent's style read from its public record (``SeatStats``), shrunk to priors.

    ``known`` is False while too few hands were seen to trust the rates.
    """

    known: bool = False
    vpip: float = 0.45
    pfr: float = 0.22
    aggression: float = 0.3
    fold: float = 0.4
    check_fold: tuple[float, float] = (0.4, 0.4)
    bluffs: float = 0.3
    odd_draws: float = 0.1
    first_fold: float = 0.5
    pat: float = 0.05
    # Folds to a bet after the first round only (Draw: after the draw).
    later_fold: float = 0.4
    # How often it raises first in from (early, late) seats; None until it had chances.
    opens: tuple[float | None, float | None] = (None, None)
    # The same, None until it had ``DRAW_OPEN_SAMPLE`` chances there (``_draw_open_rate``).
    draw_opens: tuple[float | None, float | None] = (None, None)

    @classmethod
    def of(cls, stats: SeatStats, heads_up: bool) -> Style:
        if stats.hands < 8:
            return cls()
        return cls(
            known=True,
            vpip=_q(stats.vpip_rate(0.6 if heads_up else 0.3)),
            pfr=_q(stats.pfr_rate(0.5 if heads_up else 0.2)),
            aggression=_q(stats.aggression()),
            # Folds to a bet in any round: a table where nobody bets after the flop
            # still shows who folds to raises before it.
            fold=_q(
                stats.rate(
                    stats.folded + stats.first_folded, stats.faced + stats.first_faced, 0.4, 5
                )
            ),
            bluffs=_q(stats.bluff_rate()),
            odd_draws=_q(stats.odd_draw_rate()),
            first_fold=_q(stats.steal_fold_rate()),
            pat=_q(stats.pat_rate()),
            later_fold=_q(stats.fold_rate()),
            opens=(_opens(stats, False, heads_up), _opens(stats, True, heads_up)),
            draw_opens=(
                _opens(stats, False, heads_up, DRAW_OPEN_SAMPLE),
                _opens(stats, True, heads_up, DRAW_OPEN_SAMPLE),
            ),
        )

    @property
    def credible(self) -> float:
        """How much its bets mean strength: 1 for a normal player, low for a maniac or a bluffer."""
        by_aggression = 1.0 - _clamp((self.aggression - 0.4) / 0.45, 0.0, 0.8)
        by_showdowns = 1.0 - _clamp((self.bluffs - 0.35) / 0.5, 0.0, 0.8)
        return _q(min(by_aggression, by_showdowns))

    @property
    def credible_draw(self) -> float:
        """``credible`` for Draw, by aggression only.

        A shown one-pair bet counts as a bluff in ``bluffs`` (right in
        Hold'em), but in Draw a pair is a hand players bet for value, so
        there the showdowns would call an honest bettor a bluffer.
        """
        return _q(1.0 - _clamp((self.aggression - 0.4) / 0.45, 0.0, 0.8))

    @property
    def honest_draws(self) -> float:
        """How far its draw counts can be read the textbook way (Draw)."""
        return _q(_clamp((1.0 - self.odd_draws) / 0.9, 0.1, 1.0))

    @property
    def stands_pat(self) -> float:
        """Draw, before its draw: the chance it will keep five cards whatever they are.

        A player who stands pat in most hands that reach the draw, showing
        hands that do not fit it, does not improve: its hand is the one dealt.
        """
        return _q(self.pat * (1.0 - self.honest_draws))

    def tuned(self, t: HardTuning) -> HardTuning:
        """``t`` with the range-narrowing shares fitted to this style."""
        if not self.known:
            return t
        keep = _q(_clamp(t.bet_keep * self.aggression / 0.3, 0.25, 1.0))
        rest = _q(_clamp(t.bet_rest * self.bluffs / 0.3, 0.05, 1.0))
        rest = max(rest, _q(1.0 - self.credible))
        call_keep = _q(_clamp(t.call_keep * (1.0 - self.fold) / 0.6, 0.4, 1.0))
        call_rest = t.call_rest
        if self.fold < 0.4:
            call_rest = _q(_clamp(call_rest + (0.4 - self.fold) / 0.4 * 0.65, 0.2, 1.0))
        check_weight = _q(_clamp(1.0 - 0.7 * self.aggression / 0.3, t.check_weight, 1.0))
        return replace(
            t,
            bet_keep=keep,
            bet_rest=rest,
            cbet_keep=max(keep, t.cbet_keep),
            cbet_rest=max(rest, t.cbet_rest),
            call_keep=call_keep,
            call_rest=call_rest,
            check_weight=check_weight,
        )


@dataclass(frozen=True, slots=True)
class TableRead:
    """What the hard bot takes from the table's opponent model for one decision.

    ``bluff`` is the bluff probability: the configured frequency scaled by
    how often the live opponents fold to a bet (the one folding least counts:
    all must fold), so nothing against players who never fold and up to 2.5x
    against players who fold too much. ``stations`` is True when every live
    opponent folds rarely (value-bet thinner, bigger by ``value_boost``).
    ``steal_fold`` is how often the opponents fold to a first-round raise, net of
    the re-raises above a value re-raiser's 7% that take the pot back (``_steal_fold``).
    ``loose`` is True when the live opponents enter half the pots or more (a field that
    calls: cheap entries pay through implied odds, thin value bets get paid),
    ``wild`` when one of them raises most hands (every entry will end all-in),
    ``fold`` the lowest fold-to-a-bet rate among them. ``check_fold`` is,
    per betting round (first, later), how often a seat that checked folds
    to a bet, estimated for the one folding least: a player who bets the
    hands it keeps (``pfr``, ``aggression``) checks the ones it gives up, so
    its fold rate is concentrated in its checks. ``hu_fold`` and
    ``hu_check_fold`` are the same two reads (later rounds) counted only in
    pots down to two players (``SeatStats.hu_faced``), for steals in pots a
    full table left heads-up. ``later_fold`` is the lowest fold rate to a bet
    after the first round alone and ``later_bluff`` the bluff probability
    scaled by it (Draw after the draw: a player who folds most hands to a bet
    before the draw but calls down the ones it kept is not bluffed there).
    ``value_heavy``: heads-up, the opponent's record shows at 95% that its bets
    after the flop are rarely bluffs (``_value_heavy``), so hard's minimum defence
    (``HardBot._defends``) is off and it folds by its equity read. Computed when read,
    from ``heads_up_record`` (the opponent's record in a heads-up pot, None otherwise):
    only heads-up decisions after the flop ask, facing a bet (``_defends``) or about to
    value-bet (``_traps``).
    """

    styles: tuple[tuple[int, Style], ...]
    bluff: float
    stations: bool
    value_boost: float
    steal_fold: float
    loose: bool = False
    wild: bool = False
    fold: float = 0.4
    check_fold: tuple[float, float] = (0.4, 0.4)
    hu_fold: float = 0.4
    hu_check_fold: float = 0.4
    later_fold: float = 0.4
    later_bluff: float = 0.1
    heads_up_record: SeatStats | None = None

    @classmethod
    def of(cls, table: TableStats | None, sit: Situation, bluff_frequency: float) -> TableRead:
        heads_up = len(sit.opponents) == 1 and len(sit.order) == 2
        styles = tuple((o.seat, Style.of(stats_of(table, o.seat), heads_up)) for o in sit.opponents)
        known = [s for _, s in styles if s.known]
        record = stats_of(table, sit.opponents[0].seat) if heads_up else None
        if not known or len(known) < len(styles):
            return cls(
                styles,
                bluff_frequency,
                False,
                0.0,
                0.5,
                later_bluff=bluff_frequency,
                heads_up_record=record,
            )
        fold = min(s.fold for s in known)
        later_fold = min(s.later_fold for s in known)
        stations = fold <= 0.2
        seen = [stats_of(table, seat) for seat, _ in styles]
        steal = sum(_steal_fold(s) for s in seen) / len(seen)
        return cls(
            styles,
            bluff=_bluff(bluff_frequency, fold),
            stations=stations,
            value_boost=0.25 if stations else 0.0,
            steal_fold=steal,
            loose=sum(s.vpip for s in known) / len(known) >= LOOSE_FIELD,
            wild=any(s.pfr >= WILD_PFR for s in known),
            fold=fold,
            check_fold=(
                min(_check_fold(s.steal_fold_rate(), s.pfr_rate()) for s in seen),
                min(_check_fold(s.fold_rate(), s.aggression()) for s in seen),
            ),
            hu_fold=_q(min(s.hu_fold_rate() for s in seen)),
            hu_check_fold=min(_check_fold(s.hu_fold_rate(), s.aggression()) for s in seen),
            later_fold=later_fold,
            later_bluff=_bluff(bluff_frequency, later_fold),
            heads_up_record=record,
        )

    @property
    def value_heavy(self) -> bool:
        """Heads-up, does the opponent's record show honest bets at 95% (``_value_heavy``)?"""
        return self.heads_up_record is not None and _value_heavy(self.heads_up_record)

    def style(self, seat: int) -> Style:
        for s, style in self.styles:
            if s == seat:
                return style
        return Style()


def _steal_fold(stats: SeatStats) -> float:
    """How often a seat folds to a first-round raise, less ``RERAISE_COST`` times its
    re-raise rate above ``RERAISE_BASE`` (``SeatStats.reraise_rate``): what a raise first
    in earns from it, at least 0 (one seat that re-raises everything ends the widening
    without outweighing the rest of the field in the mean)."""
    extra = max(0.0, stats.reraise_rate(RERAISE_BASE) - RERAISE_BASE)
    return max(0.0, stats.steal_fold_rate() - RERAISE_COST * extra)


def _bluff(frequency: float, fold: float) -> float:
    """The bluff probability: ``frequency`` scaled by a fold rate (none at 10%, 2.5x at 85%)."""
    return min(1.0, frequency * _clamp((fold - 0.1) / 0.3, 0.0, 2.5))


def _check_fold(fold: float, bets: float) -> float:
    """Fold rate after a check: the folds come from the share of hands that do not bet."""
    return _q(_clamp(fold / max(0.05, 1.0 - bets), 0.0, 0.95))


def warm_up() -> None:
    """Build the one-time tables the hard bot uses, so no live decision pays for them.

    The native draw sampler builds its table of pat hands on first use (tens of
    ms), and the range helpers cache starting ranges and the straight-draw
    table; a server calls this once at start-up.
    """
    hero = (51, 46, 41, 36, 0)  # As Qh Jd Ts 2c
    for category in (H.PAIR, H.TWO_PAIR, H.THREE_OF_A_KIND, H.STRAIGHT):
        draw_equity(hero, hero, (), [DrawOpponent(0, category)], 100, 0)
    _straight_draw_table()
    for floor in range(_ACE + 1 - 6, _ACE + 1):
        _pair_draw_values(floor)
    for share in (0.06, 0.12, 0.14, 0.16, 0.5, 0.22):
        _preflop_range(share, 0.0)
    postflop.warm_up()


def _size(equity: float) -> float:
    """Pot fraction a value bet can carry: a third of the pot near 55%, the pot near 95%."""
    return max(0.33, min(1.0, 1.6 * (equity - 0.5) + 0.25))


# --------------------------------------------------------------------------- ranges


@cache
def _preflop_range(share: float, top_discount: float) -> Range:
    """The top ``share`` of hands, with its best ``top_discount`` share at weight 0.3.

    The discount models hands that would have raised instead of calling or checking.
    """
    base = top_percent(share * 100)
    if top_discount <= 0:
        return base
    top = set(top_percent(top_discount * 100).combos)
    return Range((c, 0.3 if c in top else 1.0) for c in base.combos)


@cache
def _straight_draw_table() -> tuple[bool, ...]:
    """For a 13-bit rank mask: is it one rank short of a straight in two ways (open-ended)?"""
    windows = [0x100F] + [0x1F << low for low in range(9)]  # wheel, then 6-high .. ace-high

    def straight(mask: int) -> bool:
        return any(mask & w == w for w in windows)

    out = []
    for mask in range(1 << 13):
        if straight(mask):
            out.append(False)
            continue
        ways = sum(1 for r in range(13) if not mask >> r & 1 and straight(mask | 1 << r))
        out.append(ways >= 2)
    return tuple(out)


_PAIR_FLOOR = int(H.PAIR) << _CATEGORY_SHIFT
_TWO_PAIR_FLOOR = int(H.TWO_PAIR) << _CATEGORY_SHIFT


@lru_cache(maxsize=4096)
def _narrowed(
    pre: tuple[float, float], steps: tuple[tuple[tuple[Card, ...], str], ...], t: HardTuning
) -> Range:
    """A preflop range narrowed by ``(board, action)`` steps, memoised.

    Opponents with the same public line share one range, and each street
    reuses the previous street's result, so a decision narrows at most one
    new street per distinct line instead of replaying the hand for every
    opponent. (Hero's own cards are not removed here: the equity sampler
    drops combos that touch known cards, which keeps the cache hero-free.)
    """
    if not steps:
        return _preflop_range(*pre)
    board, how = steps[-1]
    return _narrow(_narrowed(pre, steps[:-1], t), board, how, t)


def _narrow(rng_: Range, board: tuple[Card, ...], how: str, t: HardTuning) -> Range:
    """Re-weight a range by how an opponent acted on ``board``.

    Combos are ranked by made-hand value, with strong draws (flush draws and
    open-enders) ranked like a pair so that they stay in a betting range.
    """
    blocked = set(board)
    items = [(c, w) for c, w in rng_.items() if c[0] not in blocked and c[1] not in blocked]
    if not items:
        return rng_
    values = evaluate_many([(a, b, *board) for (a, b), _ in items])
    if len(board) < 5:
        table = _straight_draw_table()
        suits = [0, 0, 0, 0]
        for c in board:
            suits[c & 3] += 1
        mask = 0
        for c in board:
            mask |= 1 << (c >> 2)
        keyed = []
        for ((a, b), w), v in zip(items, values, strict=True):
            sa, sb = a & 3, b & 3
            flush_draw = (suits[sa] + 1 + (sa == sb) == 4) or (suits[sb] + 1 + (sa == sb) == 4)
            oesd = table[mask | 1 << (a >> 2) | 1 << (b >> 2)]
            drawing = (flush_draw or oesd) and v < _TWO_PAIR_FLOOR
            key = max(v, _PAIR_FLOOR + 1) if drawing else v
            keyed.append((key, (a, b), w))
    else:
        keyed = [(v, c, w) for (c, w), v in zip(items, values, strict=True)]
    keyed.sort(key=lambda t: t[0], reverse=True)
    total = sum(w for _, _, w in keyed)
    if how == "bet":
        keep, low = t.bet_keep, t.bet_rest
    elif how == "cbet":
        keep, low = t.cbet_keep, t.cbet_rest
    elif how == "call":
        keep, low = t.call_keep, t.call_rest
    else:  # check: the very top would often have bet
        keep, low = t.check_top, 1.0
    out: list[tuple[tuple[Card, Card], float]] = []
    seen = 0.0
    for _, combo, w in keyed:
        above = seen < keep * total
        seen += w
        if how == "check":
            out.append((combo, w * (t.check_weight if above else 1.0)))
        else:
            out.append((combo, w if above else w * low))
    return Range(out)
