"""The bot ladder: heads-up matches played in-process with the rules core, duplicate dealt.

Why duplicate dealing: poker luck (who gets the cards) swamps skill over a few
thousand hands. Playing every deal (deck and button) twice with the seats
swapped gives both bots the same cards in the same spots, so most of the card
luck cancels inside each pair of hands. The per-pair results are then the
independent samples for the mean and its standard error.

Stacks reset every hand (Hold'em: 100 big blinds; Draw: 50 big bets), so each
hand is an independent trial and a bust cannot end a match early.

Everything is deterministic for a given seed: deck ``k`` of a variant is the
same in every pairing (common random numbers across pairings), and each seat's
random source is seeded from the seed, pairing, deal and seat.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass

from felt.bots import get_bot
from felt.bots.base import Bot
from felt.cards import deck_from_rng
from felt.rules.commands import IllegalAction, StartHand
from felt.rules.config import HandSetup, SeatSetup, Variant
from felt.rules.engine import execute
from felt.rules.events import Event
from felt.rules.legal import legal_actions
from felt.rules.views import redact_all, view_for

# The ladder's pairings, first-named bot is the one whose result is reported.
PAIRINGS: tuple[tuple[str, str], ...] = (
    ("hard", "normal"),
    ("normal", "easy"),
    ("hard", "easy"),
    ("hard", "calling_station"),
    ("normal", "calling_station"),
    ("easy", "calling_station"),
    ("hard", "random"),
    ("normal", "random"),
    ("easy", "random"),
)

# Hold'em: blinds 50/100, 100 big blinds deep. Draw: ante 25, bets 50/100, 50 big bets.
BIG_BLIND = 100
SMALL_BLIND = 50
NLHE_STACK = 100 * BIG_BLIND
DRAW_ANTE = 25
SMALL_BET = 50
BIG_BET = 100
DRAW_STACK = 50 * BIG_BET
Z95 = 1.959964


def unit_of(variant: Variant) -> int:
    """The reporting unit: the big blind in Hold'em, the big bet in Draw."""
    return BIG_BLIND if variant == Variant.NLHE else BIG_BET


def unit_name(variant: Variant) -> str:
    return "bb/100" if variant == Variant.NLHE else "BB/100"


def deck_for(variant: Variant, seed: int, deal: int) -> tuple[int, ...]:
    """Deck of deal ``deal``: the same in every pairing of one run (common random numbers)."""
    return deck_from_rng(random.Random(f"felt-ladder:{seed}:{variant.value}:{deal}"))


def hand_setup(variant: Variant, deal: int, deck: tuple[int, ...], button: int) -> HandSetup:
    """A heads-up hand between seats 0 and 1 with ``button`` on the button, fresh stacks.

    Heads-up the button posts the small blind and acts first preflop; dealing
    order starts left of the button, so the button is listed last.
    """
    other = 1 - button
    if variant == Variant.NLHE:
        seats = (
            SeatSetup(other, NLHE_STACK, f"p{other}", blind=BIG_BLIND),
            SeatSetup(button, NLHE_STACK, f"p{button}", blind=SMALL_BLIND),
        )
        return HandSetup(f"ladder-{deal}", variant, button, seats, deck, min_bet=BIG_BLIND)
    seats = (
        SeatSetup(other, DRAW_STACK, f"p{other}", ante=DRAW_ANTE),
        SeatSetup(button, DRAW_STACK, f"p{button}", ante=DRAW_ANTE),
    )
    return HandSetup(
        f"ladder-{deal}", variant, button, seats, deck, small_bet=SMALL_BET, big_bet=BIG_BET
    )


class BotError(RuntimeError):
    """A bot returned an illegal action: a bug in the bot, reported with its context."""


def play_hand(
    setup: HandSetup, bots: dict[int, Bot], rngs: dict[int, random.Random]
) -> dict[int, int]:
    """Play one hand to the end; returns each seat's net chips.

    Each bot sees only ``view_for`` its seat and the history redacted for it.
    """
    state, events = execute(None, StartHand(setup))
    history: list[Event] = list(events)
    start = {s.seat: s.stack for s in setup.seats}
    while not state.ended:
        legal = legal_actions(state)
        if legal is None:  # pragma: no cover - the engine settles until someone acts
            raise BotError("hand stalled with nobody to act")
        seat = legal.seat
        view = view_for(state, seat)
        command = bots[seat].decide(view, redact_all(history, seat), legal, rngs[seat])
        try:
            state, events = execute(state, command)
        except IllegalAction as e:
            raise BotError(f"{bots[seat].name} played {command!r}: {e.code} {e.message}") from e
        history.extend(events)
    return {s.seat: s.stack - start[s.seat] for s in state.seats}


@dataclass(frozen=True, slots=True)
class Chunk:
    """A unit of work: deals ``start..start+count`` of one pairing in one variant."""

    variant: Variant
    first: str
    second: str
    seed: int
    start: int
    count: int


def play_chunk(chunk: Chunk) -> tuple[Chunk, list[float]]:
    """Each deal played twice with seats swapped; returns the first bot's net per pair, in units.

    A picklable top-level function so ``multiprocessing`` can run chunks in parallel.
    """
    unit = unit_of(chunk.variant)
    out: list[float] = []
    for deal in range(chunk.start, chunk.start + chunk.count):
        deck = deck_for(chunk.variant, chunk.seed, deal)
        button = deal % 2
        total = 0
        for swap in (0, 1):
            names = {swap: chunk.first, 1 - swap: chunk.second}
            bots = {seat: get_bot(name) for seat, name in names.items()}
            rngs = {
                seat: random.Random(
                    f"{chunk.seed}:{chunk.first}:{chunk.second}:{chunk.variant.value}"
                    f":{deal}:{swap}:{seat}"
                )
                for seat in (0, 1)
            }
            net = play_hand(hand_setup(chunk.variant, deal, deck, button), bots, rngs)
            total += net[swap]
        out.append(total / unit)
    return chunk, out


@dataclass(frozen=True, slots=True)
class PairingResult:
    """The first bot's result against the second, per 100 hands, with a 95% interval.

    ``per100`` is in big blinds (Hold'em) or big bets (Draw) per 100 hands;
    the interval is mean +/- 1.96 standard errors of the per-duplicate-pair
    results (a pair's two hands are not independent, the pairs are).
    """

    variant: str
    first: str
    second: str
    hands: int
    per100: float
    stderr: float
    ci_low: float
    ci_high: float
    unit: str

    @property
    def significant(self) -> bool:
        """The interval excludes zero."""
        return self.ci_low > 0 or self.ci_high < 0

    @property
    def pairing(self) -> str:
        return f"{self.first} vs {self.second}"

    def as_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["significant"] = self.significant
        d["pairing"] = self.pairing
        return d


def summarize(variant: Variant, first: str, second: str, pairs: Sequence[float]) -> PairingResult:
    """Mean and 95% interval from per-pair results (each pair = 2 hands, value = their sum)."""
    n = len(pairs)
    mean_pair = sum(pairs) / n if n else 0.0
    var = sum((x - mean_pair) ** 2 for x in pairs) / (n - 1) if n > 1 else 0.0
    # per-hand mean = pair mean / 2; per 100 hands x100.
    per100 = mean_pair / 2 * 100
    stderr = math.sqrt(var / n) / 2 * 100 if n else 0.0
    return PairingResult(
        variant=variant.value,
        first=first,
        second=second,
        hands=2 * n,
        per100=per100,
        stderr=stderr,
        ci_low=per100 - Z95 * stderr,
        ci_high=per100 + Z95 * stderr,
        unit=unit_name(variant),
    )


def chunks(
    variants: Sequence[Variant],
    pairings: Sequence[tuple[str, str]],
    deals: int,
    seed: int,
    size: int = 100,
) -> Iterator[Chunk]:
    """Split the run into chunks, interleaving pairings so progress is even across them."""
    starts = range(0, deals, size)
    for start in starts:
        for variant in variants:
            for first, second in pairings:
                yield Chunk(variant, first, second, seed, start, min(size, deals - start))


def format_table(results: Sequence[PairingResult]) -> str:
    """A plain-text results table (fixed width, for terminals and logs)."""
    header = (
        f"{'variant':<7} {'pairing':<26} {'hands':>7} {'result':>9} {'95% CI':>20}  "
        f"{'unit':<7} significant"
    )
    lines = [header, "-" * len(header)]
    for r in results:
        ci = f"[{r.ci_low:+.2f}, {r.ci_high:+.2f}]"
        sig = "yes" if r.significant else "no"
        lines.append(
            f"{r.variant:<7} {r.pairing:<26} {r.hands:>7} {r.per100:>+9.2f} {ci:>20}  "
            f"{r.unit:<7} {sig}"
        )
    return "\n".join(lines)
