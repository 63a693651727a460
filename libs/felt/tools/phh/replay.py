"""Replay PHH hands through Felt's rules core and compare the outcome.

A real hand history is play that no one here wrote, so replaying it through
``felt.core.rules`` checks the engine against the world: every recorded action
must be legal in Felt at the moment it was made, Felt must deal the board at
the moment the record does, and Felt's final stacks must equal the recorded
``finishing_stacks``.

Mapping (the PHH conventions, as PokerKit reads them):

* PHH ``p1`` is the first seat left of the button and the last player is the
  button, which is exactly Felt's dealing order, so ``pK`` is Felt seat
  ``K-1`` (index ``K-1`` of ``HandSetup.seats``) and the button is the last
  seat. Heads-up, PHH lists the big blind first (``p1``) and the button
  second, which again is Felt's dealing order; only ``antes`` and
  ``blinds_or_straddles`` are then listed small blind first, so ``p1``
  posts the second entry and ``p2`` the first.
* The deck is rebuilt from the record: hole cards from ``d dh``, the board
  from ``d db``, cards shown (``sm``) for hands dealt ``????``, and unknown
  cards filled from the unused ones. Felt deals hole cards round by round
  and the board without burn cards, so the positions follow from that.
* ``cc`` is a check or a call, whichever is legal; ``cbr X`` is a bet or a
  raise to ``X`` (an all-in when ``X`` is the seat's whole stack). Showdown
  lines are informational (Felt decides who shows), but shown cards must be
  the cards Felt dealt.

* When every other player still in the hand is all-in and the last one has
  matched the bet, there is nothing to decide: Felt deals on, but PokerKit
  still asks that player and writes its check (``cc``) into the record.
  Such a check is accepted as the no-op it is (see ``_idle_check``).

* A post (a negative ``blinds_or_straddles`` entry: a player joining the
  table pays a big blind to be dealt in) has no Felt equivalent; it is
  replayed with the same chips and action order (see ``_map_posts``) and
  the verdict notes it.

Half chips: a record that splits an odd chip into halves (``10112.5``) is
matched when Felt's integer stacks are the floor or ceiling of the recorded
ones, chips are conserved, and every odd chip Felt awarded went to the first
tied winner left of the button (RULES.md, "Ties").

Unknown hole cards that reach a showdown (``????`` never shown) decide the
result with filler cards, so the stacks are then not compared (noted in the
verdict); every action is still checked.

Why one module of this size: it is one replay (the PHH conventions mapped to
Felt's seats, every action kind, the board and draw checks, the verdict),
compiled with mypyc on the conformance verifier's hot path.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from fractions import Fraction
from pathlib import Path

from felt.core.cards import DECK_SIZE, Card, card_str
from felt.core.record import Record
from felt.core.rules.commands import Act, ActionKind, IllegalAction, StartHand
from felt.core.rules.config import HandSetup, SeatSetup, Variant
from felt.core.rules.engine import HandMachine
from felt.core.rules.events import Event, PotAwarded
from felt.core.rules.state import HandQueries
from felt.core.rules.variants import NLHE_RULES
from felt.tools.phh.parse import PhhError, PhhHand, load

__all__ = [
    "ReplayError",
    "Replayed",
    "Status",
    "Unsupported",
    "VerifyResult",
    "build_setup",
    "compare_stacks",
    "iter_phh_files",
    "replay_hand",
    "verify_file",
    "verify_hand",
    "verify_paths",
]

# PHH's "NT" is Felt's NLHE: its hole cards and seat range come from the definition.
HOLE_CARDS = NLHE_RULES.hole_cards
FULL_DECK = frozenset(range(DECK_SIZE))
MIN_SEATS, MAX_SEATS = NLHE_RULES.min_seats, NLHE_RULES.max_seats
SUPPORTED_VARIANTS = frozenset({"NT"})


class Status(StrEnum):
    """A file's verdict; a record outside what Felt plays is skipped, not failed."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"


@dataclass(frozen=True, slots=True, init=False)
class VerifyResult(Record):
    """The verdict on one file.

    ``reason`` says precisely why a file failed or was skipped; for a pass
    it is empty or notes what could not be checked or how it was mapped.
    ``stacks`` are Felt's final stacks in PHH order, in chips of the hand's
    ``scale`` (None when the replay did not finish).
    """

    path: str
    status: Status
    reason: str = ""
    stacks: tuple[int, ...] | None = None
    scale: int = 1

    def __init__(
        self,
        path: str,
        status: Status,
        reason: str = "",
        stacks: tuple[int, ...] | None = None,
        scale: int = 1,
    ) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "status", status)
        object.__setattr__(self, "reason", reason)
        object.__setattr__(self, "stacks", stacks)
        object.__setattr__(self, "scale", scale)


class ReplayError(Exception):
    """The record cannot be replayed in Felt; the message says where and why."""


class Unsupported(ReplayError):
    """The record is outside what Felt plays (another variant, too many seats)."""


@dataclass(slots=True)
class Replayed:
    """A replayed hand: its setup, Felt's final state and, if kept, every event.

    ``unknown`` are the players (0-based) whose hole cards the record does
    not reveal (filler cards were dealt); ``notes`` say how forced bets Felt
    does not have were mapped. ``state`` is read-only: it is the replay's own
    working copy, not a frozen snapshot (freezing cost more than the few
    questions a verdict asks of it).
    """

    setup: HandSetup
    state: HandQueries
    events: list[Event] = field(default_factory=list)
    awards: list[PotAwarded] = field(default_factory=list)
    unknown: frozenset[int] = frozenset()
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------
# setup


def _seat_name(index: int) -> str:
    return f"p{index + 1}"


def build_setup(hand: PhhHand, hand_id: str = "phh") -> HandSetup:
    """The Felt setup (seats, forced bets and the rebuilt deck) of a PHH hand."""
    return _build(hand, hand_id)[0]


def _build(hand: PhhHand, hand_id: str = "phh") -> tuple[HandSetup, frozenset[int], list[str]]:
    """The setup, the players whose hole cards stay unknown, and notes on the mapping."""
    if hand.variant not in SUPPORTED_VARIANTS:
        raise Unsupported(f"variant {hand.variant!r} is not No-Limit Hold'em ('NT')")
    n = hand.player_count
    if not MIN_SEATS <= n <= MAX_SEATS:
        raise Unsupported(f"{n} players: Felt deals NLHE to {MIN_SEATS}..{MAX_SEATS} seats")
    if hand.min_bet is None:
        raise ReplayError("min_bet is missing (NT needs it)")
    antes, blinds = list(hand.antes), list(hand.blinds_or_straddles)
    if any(a < 0 for a in antes):
        raise Unsupported("negative antes are not NLHE forced bets")
    if n == 2:
        # Heads-up: p1 is the big blind, but the lists name the small blind first.
        antes.reverse()
        blinds.reverse()
    notes: list[str] = []
    if min(blinds) < 0:
        notes = _map_posts(hand, antes, blinds)
    deck, unknown = _deck(hand)
    names = list(hand.players[:n])
    names += [""] * (n - len(names))
    # SeatSetup(seat, stack, player_id, ante, blind), positionally (this runs per file).
    seats = tuple(map(SeatSetup, range(n), hand.starting_stacks, names, antes, blinds))
    setup = HandSetup(
        hand_id=hand_id,
        variant=Variant.NLHE,
        button=n - 1,
        seats=seats,
        deck=deck,
        min_bet=hand.min_bet,
    )
    return setup, unknown, notes


def _map_posts(hand: PhhHand, antes: list[int], blinds: list[int]) -> list[str]:
    """Replay posts (negative ``blinds_or_straddles``) with Felt's forced bets.

    A post is what a player joining a table pays to be dealt in at once: a
    live bet that, unlike a straddle, does not move the start of the action.
    Felt deals newcomers in from the next hand and has no posts (its largest
    blind always decides who acts first), so the chips are placed another
    way, which gives the same action order and the same chips: a poster who
    later calls, checks or raises puts the post in with that action (the
    post never exceeds the big blind, so the total is the same), and a poster
    who folds first (or never acts) forfeits it as dead money, i.e. an ante.
    Both edits change ``antes``/``blinds`` in place.
    """
    biggest = max(blinds)
    notes = []
    for i, b in enumerate(blinds):
        if b >= 0:
            continue
        post, who = -b, _seat_name(i)
        if post > biggest:
            raise Unsupported(f"{who} posts {post}, more than the big blind: Felt has no such post")
        if post >= hand.starting_stacks[i]:
            raise Unsupported(f"{who} is all-in on a post: Felt has no posts")
        first = next(
            (a.op for a in hand.actions if a.player == i and a.op in ("f", "cc", "cbr")), "f"
        )
        blinds[i] = 0
        if first == "f":
            antes[i] += post
            notes.append(f"{who}'s post of {post} is replayed as dead money (they fold)")
        else:
            notes.append(f"{who}'s post of {post} is replayed as part of their first action")
    return notes


def _deck(hand: PhhHand) -> tuple[tuple[Card, ...], frozenset[int]]:
    """Felt's deck order for the record (hole cards round by round, then the board).

    Also returns the players with a hole card that neither ``d dh`` nor ``sm``
    reveals: filler cards stand in for them.
    """
    n = hand.player_count
    holes: list[list[Card | None]] = [[] for _ in range(n)]
    board: list[Card | None] = []
    shown: dict[int, tuple[Card | None, ...]] = {}
    for i, a in enumerate(hand.actions):
        op = a.op
        if op == "dh":
            player = a.player
            assert player is not None
            if player >= n:
                raise ReplayError(f"action {i} {a.text!r}: there is no {_seat_name(player)}")
            holes[player].extend(a.cards)
        elif op == "db":
            board.extend(a.cards)
        elif op == "sm" and a.cards and a.player is not None and a.player < n:
            shown.setdefault(a.player, a.cards)
    unknown: list[int] = []
    for p, hole in enumerate(holes):
        if len(hole) == HOLE_CARDS and None not in hole:
            continue  # the usual case: both cards dealt face up in the record
        if len(hole) > HOLE_CARDS:
            raise ReplayError(f"{_seat_name(p)} is dealt {len(hole)} hole cards; NLHE deals 2")
        hole.extend([None] * (HOLE_CARDS - len(hole)))
        revealed = iter([c for c in shown.get(p, ()) if c is not None and c not in hole])
        for r in range(HOLE_CARDS):
            if hole[r] is None:
                hole[r] = next(revealed, None)
        if None in hole:
            unknown.append(p)
    if len(board) > 5:
        raise ReplayError(f"the record deals {len(board)} board cards; NLHE has 5")
    slots = [hole[r] for r in range(HOLE_CARDS) for hole in holes]
    slots += board
    known = [c for c in slots if c is not None]
    seen = set(known)
    if len(seen) != len(known):
        twice = next(c for k, c in enumerate(known) if c in known[:k])
        raise ReplayError(f"card {card_str(twice)} is dealt twice")
    # Unknown slots get the lowest unused cards, and the rest of the deck follows.
    spare = iter(sorted(FULL_DECK.difference(seen)))
    filled = [c if c is not None else next(spare) for c in slots]
    filled.extend(spare)
    return tuple(filled), frozenset(unknown)


# ---------------------------------------------------------------------------
# replay


def _actor_hint(state: HandQueries) -> str:
    seat = state.actor_seat
    if state.ended:
        return "the hand is over"
    return f"{_seat_name(seat)} is to act" if seat is not None else "nobody is to act"


def _idle_check(state: HandQueries, setup: HandSetup, seat: int) -> bool:
    """Whether a ``cc`` of ``seat`` that Felt did not ask for is the last seat's idle check.

    True when ``seat`` is still in the hand with chips behind and every other
    seat still in is all-in: Felt never asks a seat in that position (it has
    matched the bet, or Felt would ask it to call, and nobody can answer a
    raise), so the hand has dealt on or ended. Chips behind are counted from
    the setup and what each seat put in, so that awards at the end of the
    hand do not hide who was all-in.
    """
    behind = [s.stack - x.committed for s, x in zip(setup.seats, state.seats, strict=True)]
    me = state.seats[seat]
    if me.folded or behind[seat] <= 0:
        return False
    return all(behind[i] == 0 for i, x in enumerate(state.seats) if i != seat and not x.folded)


# Commands are immutable: the amount-free ones are made once, not per action.
_ACTS = {
    (seat, kind): Act(seat, kind)
    for seat in range(MAX_SEATS)
    for kind in (ActionKind.FOLD, ActionKind.CHECK, ActionKind.CALL)
}


def replay_hand(hand: PhhHand, *, keep_events: bool = False) -> Replayed:
    """Play the record through ``felt.core.rules``.

    Raises :class:`ReplayError` at the first divergence.

    Felt seat numbers are PHH indices (``p1`` is seat 0). ``awards`` holds
    the pots of the batch that ended the hand (what the half-chip check
    needs); ``events`` every event when ``keep_events``.
    """
    setup, unknown, notes = _build(hand)
    machine = HandMachine()
    try:
        events = machine.execute(StartHand(setup))
    except IllegalAction as e:
        raise ReplayError(f"Felt refuses the setup: {e.code}: {e.message}") from None
    kept: list[Event] = list(events) if keep_events else []
    last = events
    # One working copy for the whole hand: no snapshot per action.
    state = machine.state
    assert state is not None
    n = len(setup.seats)
    board_seen = 0
    fold, check, call = ActionKind.FOLD, ActionKind.CHECK, ActionKind.CALL
    for i, a in enumerate(hand.actions):
        op = a.op
        if op == "dh":
            continue  # hole cards were used to build the deck
        if op == "cc" or op == "f" or op == "cbr":
            seat = a.player
            assert seat is not None
            if seat >= n:
                raise ReplayError(f"action {i} {a.text!r}: there is no {_seat_name(seat)}")
            if len(state.board) != board_seen and not state.ended:
                raise ReplayError(
                    f"action {i} {a.text!r}: Felt has dealt {len(state.board)} board cards "
                    f"but the record only {board_seen} ({_actor_hint(state)} on the "
                    f"{state.street.value.lower()})"
                )
            if op == "cc":
                x = state.seats[seat]
                if state.actor != seat and _idle_check(state, setup, seat):
                    continue  # PokerKit's check with everyone else all-in: nothing to do
                command = _ACTS[seat, check if x.bet >= state.current_bet else call]
            elif op == "f":
                command = _ACTS[seat, fold]
            else:
                amount = a.amount
                assert amount is not None
                x = state.seats[seat]
                if amount == x.bet + x.stack and amount > state.current_bet:
                    command = Act(seat, ActionKind.ALL_IN)
                else:
                    kind = ActionKind.BET if state.current_bet == 0 else ActionKind.RAISE
                    command = Act(seat, kind, amount)
            try:
                last = machine.execute(command)
            except IllegalAction as e:
                hint = ""
                if e.code == "NOT_YOUR_TURN" and state.actor_seat is not None:
                    hint = f" ({_seat_name(seat)} is seat {seat}; {_actor_hint(state)})"
                raise ReplayError(f"action {i} {a.text!r}: {e.code}: {e.message}{hint}") from None
            if keep_events:
                kept.extend(last)
        elif op == "db":
            start = board_seen
            board_seen += len(a.cards)
            if len(state.board) < board_seen:
                raise ReplayError(
                    f"action {i} {a.text!r}: the record deals board card {board_seen} here, "
                    f"but Felt has dealt {len(state.board)} ({_actor_hint(state)})"
                )
            dealt = state.board[start:board_seen]
            if any(c is not None and c != d for c, d in zip(a.cards, dealt, strict=True)):
                raise ReplayError(
                    f"action {i} {a.text!r}: Felt dealt {''.join(map(card_str, dealt))}"
                )
        elif op == "sm":
            seat = a.player
            assert seat is not None
            if seat >= n:
                raise ReplayError(f"action {i} {a.text!r}: there is no {_seat_name(seat)}")
            hole = state.seats[seat].hole
            if any(c is not None and c not in hole for c in a.cards):
                raise ReplayError(
                    f"action {i} {a.text!r}: {_seat_name(seat)} was dealt "
                    f"{''.join(map(card_str, hole))}"
                )
        elif op in ("sd", "pb"):
            raise ReplayError(f"action {i} {a.text!r}: '{op}' is not an NLHE action")
        # "" is a comment.
    awards = [e for e in last if isinstance(e, PotAwarded)]
    return Replayed(setup, state, kept, awards, unknown, notes)


# ---------------------------------------------------------------------------
# verdicts


def _show(value: Fraction | int, scale: int) -> str:
    """An amount in the record's own units (``16.35``, ``10112.5``)."""
    exact = Fraction(value) / scale
    if exact.denominator == 1:
        return str(exact.numerator)
    return str(Decimal(exact.numerator) / Decimal(exact.denominator))


def _odd_chips_follow_rules(awards: Sequence[PotAwarded], order: Sequence[int]) -> str | None:
    """Why an award breaks RULES.md's odd-chip rule, or None when every pot follows it."""
    rank = {seat: k for k, seat in enumerate(order)}
    for pot in awards:
        if len(pot.shares) < 2:
            continue
        chips = [c for _, c in sorted(pot.shares, key=lambda sc: rank[sc[0]])]
        low = min(chips)
        extra = [c - low for c in chips]
        if any(x > 1 for x in extra) or extra != sorted(extra, reverse=True):
            return (
                f"pot {pot.index} split {dict(pot.shares)}: odd chips must go one at a time "
                "from the first winner left of the button"
            )
    return None


def _unknown_at_showdown(replayed: Replayed) -> list[int]:
    """Players with unknown hole cards still in at a showdown (their result is unknowable)."""
    seats = replayed.state.seats
    if sum(not x.folded for x in seats) < 2:
        return []
    return sorted(p for p in replayed.unknown if not seats[p].folded)


def compare_stacks(hand: PhhHand, replayed: Replayed) -> str | None:
    """Why Felt's final stacks differ from ``finishing_stacks`` (None when they match)."""
    expected = hand.finishing_stacks
    state = replayed.state
    if expected is None or _unknown_at_showdown(replayed):
        return None
    if not state.ended:
        return f"the record ends before the hand is over ({_actor_hint(state)})"
    got = [x.stack for x in state.seats]
    scale = hand.scale
    diffs: list[str] = []
    halves = False
    for p, (want, have) in enumerate(zip(expected, got, strict=True)):
        if want == have:
            continue
        if want.denominator == 2 and abs(want - have) == Fraction(1, 2):
            halves = True  # an odd chip split in halves: checked below
            continue
        diffs.append(f"{_seat_name(p)} expected {_show(want, scale)}, got {_show(have, scale)}")
    if diffs:
        return "stacks differ: " + "; ".join(diffs)
    if halves:
        if sum(expected) != sum(got):
            return f"stacks differ: chips not conserved ({_show(sum(expected), scale)} recorded)"
        why = _odd_chips_follow_rules(replayed.awards, [s.seat for s in replayed.setup.seats])
        if why is not None:
            return f"stacks differ: {why}"
    return None


def verify_hand(hand: PhhHand, path: str = "") -> VerifyResult:
    """Replay one parsed hand and judge it."""
    try:
        replayed = replay_hand(hand)
    except Unsupported as skipped:  # distinct names: one variable per exception type
        return VerifyResult(path, Status.SKIPPED, str(skipped), scale=hand.scale)
    except ReplayError as failed:
        return VerifyResult(path, Status.FAILED, str(failed), scale=hand.scale)
    state = replayed.state
    stacks = tuple(x.stack for x in state.seats) if state.ended else None
    why = compare_stacks(hand, replayed)
    if why is not None:
        return VerifyResult(path, Status.FAILED, why, stacks, hand.scale)
    notes = list(replayed.notes)
    if not state.ended:
        notes.append(f"the record ends before the hand is over ({_actor_hint(state)})")
    hidden = _unknown_at_showdown(replayed)
    if hidden and hand.finishing_stacks is not None:
        names = ", ".join(_seat_name(p) for p in hidden)
        notes.append(f"finishing stacks not compared: hole cards of {names} unknown at showdown")
    return VerifyResult(path, Status.PASSED, "; ".join(notes), stacks, hand.scale)


def verify_file(path: str | Path) -> VerifyResult:
    """Parse and verify one ``.phh`` file; unreadable files fail with the reason."""
    name = str(path)
    try:
        hand = load(path)
    except OSError as unreadable:  # distinct names: one variable per exception type
        why = unreadable.strerror or unreadable
        return VerifyResult(name, Status.FAILED, f"cannot read: {why}")
    except PhhError as unparsable:
        return VerifyResult(name, Status.FAILED, f"cannot parse: {unparsable}")
    return verify_hand(hand, name)


def iter_phh_files(paths: Iterable[str | Path]) -> Iterator[str]:
    """Files named directly, and every ``*.phh`` under named directories (sorted, recursive)."""
    for path in paths:
        p = os.fspath(path)
        if os.path.isdir(p):
            found: list[str] = []
            for root, dirs, files in os.walk(p):
                dirs.sort()
                found.extend(os.path.join(root, f) for f in files if f.endswith(".phh"))
            yield from sorted(found)
        else:
            yield p


def verify_paths(paths: Iterable[str | Path]) -> Iterator[VerifyResult]:
    """Verify every file under ``paths`` (see :func:`iter_phh_files`), in order."""
    for p in iter_phh_files(paths):
        yield verify_file(p)
