"""The bot ladder: matches played in-process with the rules core, duplicate dealt.

Two table formats: heads-up, and full tables (6-max Hold'em, 5-handed Draw)
where the bot under test sits with a field of one opponent style. Why
duplicate dealing: poker luck (who gets the cards) swamps skill over a few
thousand hands. Every deal (deck and button) is played once per seat
rotation, so the bot under test gets every seat's cards in the same spot
(heads-up: twice, seats swapped). Most card luck cancels inside a deal's
group of hands; the per-deal group results are the independent samples for
the mean and its standard error.

A full table's field may also be a mix of styles, named by joining them with ``+``
(``lag+nit+value_station``): the others sit in turn from the bot under test's left,
cycling through the mix, so over the rotations each style plays from every position
relative to it. A mix is played at full tables only.

Each rotation is one table that persists for a chunk of deals: its bots are
built once and given the table's opponent model (``felt.players.bots.opponents``),
folded from the spectator-redacted events of the table's earlier hands, as
the table service does. Stacks reset every hand (Hold'em: 100 big blinds;
Draw: 50 big bets), so a bust cannot end a match early.

Secrecy: a bot must not be able to predict the deck from what it sees. A
secret master key is derived from the run's seed (SHA-256); every deck, hand
id and bot random source is an HMAC-SHA-256 of that key, so hand ids are
opaque and decks unpredictable without the seed, which no bot sees (the CLI
draws a fresh random seed unless one is given, and prints it). The run is
still reproducible from its seed: deck ``k`` of a variant and format is the
same in every pairing (common random numbers across pairings).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass

from felt.core.cards import deck_from_rng
from felt.core.rules.commands import IllegalAction, StartHand
from felt.core.rules.config import HandSetup, SeatSetup, Variant
from felt.core.rules.engine import execute
from felt.core.rules.events import Event
from felt.core.rules.legal import legal_actions
from felt.core.rules.views import redact_all, view_for
from felt.players.bots import BASELINES, get_bot
from felt.players.bots.base import Bot
from felt.players.bots.opponents import ModelBuilder

# The ladder's pairings, first-named bot is the one whose result is reported.
PAIRINGS: tuple[tuple[str, str], ...] = (
    ("hard", "normal"),
    ("normal", "easy"),
    ("hard", "easy"),
    *((level, base) for base in BASELINES for level in ("hard", "normal", "easy")),
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
# Players at a full ladder table: 6-max Hold'em, 5-handed Draw.
FULL_TABLE = {Variant.NLHE: 6, Variant.DRAW5: 5}


def unit_of(variant: Variant) -> int:
    """The reporting unit: the big blind in Hold'em, the big bet in Draw."""
    return BIG_BLIND if variant == Variant.NLHE else BIG_BET


def table_name(seats: int) -> str:
    """A table format's name: ``heads-up``, else ``N-handed``."""
    return "heads-up" if seats == 2 else f"{seats}-handed"


def unit_name(variant: Variant) -> str:
    return "bb/100" if variant == Variant.NLHE else "BB/100"


def master_key(seed: int) -> bytes:
    """The run's secret: every deck, hand id and bot random source derives from it."""
    return hashlib.sha256(f"felt-ladder-master:{seed}".encode()).digest()


def _derive(key: bytes, label: str) -> bytes:
    return hmac.new(key, label.encode(), hashlib.sha256).digest()


def deck_for(variant: Variant, key: bytes, deal: int, seats: int = 2) -> tuple[int, ...]:
    """Deck of deal ``deal``: the same in every pairing of one run (common random numbers)."""
    return deck_from_rng(random.Random(_derive(key, f"deck:{variant.value}:{seats}:{deal}")))


def hand_id_for(key: bytes, label: str) -> str:
    """An opaque hand id: nothing in it tells a bot the deal, the seed or the deck."""
    return "h-" + _derive(key, f"hand:{label}").hex()[:24]


def hand_setup(
    variant: Variant, hand_id: str, deck: tuple[int, ...], button: int, seats: int = 2
) -> HandSetup:
    """A hand between seats ``0..seats-1`` with ``button`` on the button, fresh stacks.

    Dealing order starts left of the button, so the button is listed last. In
    Hold'em the first two listed post the blinds, except heads-up where the
    button posts the small blind (and acts first preflop).
    """
    order = [(button + 1 + i) % seats for i in range(seats)]
    if variant == Variant.NLHE:
        blinds = (
            {order[0]: BIG_BLIND, button: SMALL_BLIND}
            if seats == 2
            else {
                order[0]: SMALL_BLIND,
                order[1]: BIG_BLIND,
            }
        )
        setups = tuple(SeatSetup(s, NLHE_STACK, f"p{s}", blind=blinds.get(s, 0)) for s in order)
        return HandSetup(hand_id, variant, button, setups, deck, min_bet=BIG_BLIND)
    setups = tuple(SeatSetup(s, DRAW_STACK, f"p{s}", ante=DRAW_ANTE) for s in order)
    return HandSetup(hand_id, variant, button, setups, deck, small_bet=SMALL_BET, big_bet=BIG_BET)


class BotError(RuntimeError):
    """A bot returned an illegal action: a bug in the bot, reported with its context."""


def play_hand(
    setup: HandSetup,
    bots: dict[int, Bot],
    rngs: dict[int, random.Random],
    model: ModelBuilder | None = None,
) -> dict[int, int]:
    """Play one hand to the end; returns each seat's net chips.

    Each bot sees only ``view_for`` its seat, the history redacted for it and
    the table's opponent model (earlier hands); the hand's spectator-redacted
    events are then folded into ``model``.
    """
    state, events = execute(None, StartHand(setup))
    history: list[Event] = list(events)
    start = {s.seat: s.stack for s in setup.seats}
    table = model.stats if model is not None else None
    while not state.ended:
        legal = legal_actions(state)
        if legal is None:  # pragma: no cover - the engine settles until someone acts
            raise BotError("hand stalled with nobody to act")
        seat = legal.seat
        view = view_for(state, seat)
        command = bots[seat].decide(view, redact_all(history, seat), legal, rngs[seat], table)
        try:
            state, events = execute(state, command)
        except IllegalAction as e:
            raise BotError(f"{bots[seat].name} played {command!r}: {e.code} {e.message}") from e
        history.extend(events)
    if model is not None:
        model.observe_all(redact_all(history, None))
    return {s.seat: s.stack - start[s.seat] for s in state.seats}


@dataclass(frozen=True, slots=True)
class Chunk:
    """A unit of work: deals ``start..start+count`` of one pairing in one variant.

    ``seats`` is 2 for heads-up, else the bot ``first`` faces ``seats - 1``
    copies of ``second``.
    """

    variant: Variant
    first: str
    second: str
    seed: int
    start: int
    count: int
    seats: int = 2


MIX = "+"  # joins the styles of a mixed field: "lag+nit+value_station"


def field_of(second: str) -> tuple[str, ...]:
    """The styles a pairing's second name seats: one, or a mix (``MIX``-joined)."""
    return tuple(second.split(MIX))


def seat_names(first: str, second: str, hero: int, seats: int) -> dict[int, str]:
    """Who sits where in rotation ``hero``: ``first`` in seat ``hero``, the field in the
    other seats from its left, cycling through a mix."""
    field = field_of(second)
    names = {hero: first}
    for k in range(1, seats):
        names[(hero + k) % seats] = field[(k - 1) % len(field)]
    return {seat: names[seat] for seat in range(seats)}


def play_chunk(chunk: Chunk) -> tuple[Chunk, list[float]]:
    """Each deal played once per seat rotation; returns the first bot's net per deal, in units.

    Rotation ``r`` is one persistent table (bots and opponent model) on which
    the first bot sits in seat ``r``. A picklable top-level function so
    ``multiprocessing`` can run chunks in parallel.
    """
    unit = unit_of(chunk.variant)
    n = chunk.seats
    key = master_key(chunk.seed)
    match = f"{chunk.first}:{chunk.second}:{chunk.variant.value}:{n}"
    totals = [0] * chunk.count
    for hero in range(n):
        names = seat_names(chunk.first, chunk.second, hero, n)
        bots = {seat: get_bot(name) for seat, name in names.items()}
        model = ModelBuilder()
        for i, deal in enumerate(range(chunk.start, chunk.start + chunk.count)):
            label = f"{match}:{deal}:{hero}"
            rngs = {s: random.Random(_derive(key, f"rng:{label}:{s}")) for s in range(n)}
            setup = hand_setup(
                chunk.variant,
                hand_id_for(key, label),
                deck_for(chunk.variant, key, deal, n),
                deal % n,
                n,
            )
            totals[i] += play_hand(setup, bots, rngs, model)[hero]
    return chunk, [t / unit for t in totals]


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
    seats: int = 2

    @property
    def significant(self) -> bool:
        """The interval excludes zero."""
        return self.ci_low > 0 or self.ci_high < 0

    @property
    def pairing(self) -> str:
        if self.seats == 2:
            return f"{self.first} vs {self.second}"
        if MIX in self.second:
            return f"{self.first} vs mix {self.second}"
        return f"{self.first} vs {self.seats - 1}x {self.second}"

    def as_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["significant"] = self.significant
        d["pairing"] = self.pairing
        return d


def summarize(
    variant: Variant, first: str, second: str, pairs: Sequence[float], seats: int = 2
) -> PairingResult:
    """Mean and 95% interval from per-deal results (each deal = ``seats`` hands, their sum)."""
    n = len(pairs)
    mean_pair, se_pair = mean_and_stderr(pairs)
    # per-hand mean = deal mean / seats; per 100 hands x100.
    per100 = mean_pair / seats * 100
    stderr = se_pair / seats * 100
    return PairingResult(
        variant=variant.value,
        first=first,
        second=second,
        hands=seats * n,
        per100=per100,
        stderr=stderr,
        ci_low=per100 - Z95 * stderr,
        ci_high=per100 + Z95 * stderr,
        unit=unit_name(variant),
        seats=seats,
    )


def mean_and_stderr(xs: Sequence[float]) -> tuple[float, float]:
    """The sample mean and its standard error (0 for fewer than two samples)."""
    n = len(xs)
    if n == 0:
        return 0.0, 0.0
    mean = sum(xs) / n
    if n == 1:
        return mean, 0.0
    var = sum((x - mean) ** 2 for x in xs) / (n - 1)
    return mean, math.sqrt(var / n)


def chunks(
    variants: Sequence[Variant],
    pairings: Sequence[tuple[str, str]],
    hands: int,
    seed: int,
    size: int = 100,
    formats: Sequence[str] = ("heads-up",),
) -> Iterator[Chunk]:
    """Split the run into chunks, interleaving pairings so progress is even across them.

    ``hands`` per pairing, variant and format (``"heads-up"`` or ``"full"``):
    ``hands // seats`` deals each played ``seats`` times.
    """
    tables = [
        (variant, 2 if f == "heads-up" else FULL_TABLE[variant])
        for f in formats
        for variant in variants
    ]
    longest = max(hands // n for _, n in tables)
    for start in range(0, longest, size):
        for variant, n in tables:
            deals = hands // n
            if start >= deals:
                continue
            for first, second in pairings:
                if n == 2 and MIX in second:
                    continue  # a mix needs a full table
                yield Chunk(variant, first, second, seed, start, min(size, deals - start), n)


def format_table(results: Sequence[PairingResult]) -> str:
    """A plain-text results table (fixed width, for terminals and logs)."""
    header = (
        f"{'variant':<7} {'pairing':<30} {'hands':>7} {'result':>9} {'95% CI':>20}  "
        f"{'unit':<7} significant"
    )
    lines = [header, "-" * len(header)]
    for r in results:
        ci = f"[{r.ci_low:+.2f}, {r.ci_high:+.2f}]"
        sig = "yes" if r.significant else "no"
        lines.append(
            f"{r.variant:<7} {r.pairing:<30} {r.hands:>7} {r.per100:>+9.2f} {ci:>20}  "
            f"{r.unit:<7} {sig}"
        )
    return "\n".join(lines)
